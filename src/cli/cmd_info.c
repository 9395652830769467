/* nmt info: a model file's settings, vocabularies and parameter count, and
 * whether it is a checkpoint that training can resume from. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "cli_opts.h"
#include "nmt/blas.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"

static void help(void)
{
    printf("Usage: nmt info [OPTIONS] FILE\n"
           "       nmt info [OPTIONS]\n\n"
           "A model file's settings, vocabulary sizes, parameter count and size, what\n"
           "text it reads (words, or the pieces of the SentencePiece model it carries),\n"
           "a joint vocabulary (one list and one embedding table for both sides),\n"
           "the head trained toward word links (nmt train --guided-links), and\n"
           "whether it is a resumable checkpoint (with its step and epoch). The whole\n"
           "file is checked as `nmt translate` would load it (header, shapes, crc32, the\n"
           "SentencePiece model).\n\n"
           "Without a file: what nmt runs on. The BLAS library and its version, the\n"
           "kernel in use and who chose it, the CPU's vector extensions, and the\n"
           "threads. When OpenBLAS runs a kernel below what the CPU can run (a CPU\n"
           "it does not know gets its oldest, Prescott), nmt sets OPENBLAS_CORETYPE\n"
           "and runs itself again before any work, saying so on stderr (not with\n"
           "-q); a variable you set is never touched, and NMT_BLAS_KERNEL=keep keeps\n"
           "OpenBLAS's choice (docs/benchmarks.md#the-blas-kernel).\n\n"
           "Options:\n"
           "  -v, --verbose   also every tensor with its shape and parameter count, and\n"
           "                  the metadata beyond the model's settings\n"
           "  -h, --help      this help\n");
}

static void print_shape(char *buf, size_t cap, int ndim, const int shape[NMT_MAX_NDIM])
{
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < ndim && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%d", d ? ", " : "", shape[d]);
    if (o < cap)
        snprintf(buf + o, cap - o, "]");
}

/* "step 1200, epoch 3" from whichever keys the file has. */
static void print_progress(const nmt_file *f, const char *prefix)
{
    char key[64];
    snprintf(key, sizeof key, "%sstep", prefix);
    const char *step = nmt_file_meta(f, key);
    snprintf(key, sizeof key, "%sepoch", prefix);
    const char *epoch = nmt_file_meta(f, key);
    if (step)
        printf(", step %s", step);
    if (epoch)
        printf(", epoch %s", epoch);
}

static void print_info(const char *path, const nmt_model *m, const nmt_file *f, int verbose)
{
    const nmt_config *c = &m->cfg;
    printf("file            %s (%llu bytes)\n", path, nmt_file_size(f));
    printf("format          %s\n", nmt_file_meta(f, "format"));
    const char *setting;
    char value[64];
    for (int i = 0; nmt_config_setting(c, i, &setting, value, sizeof value); i++)
        printf("%-15s %s\n", setting, value);
    printf("tied            %s\n", c->tied ? "true (the output matrix is tgt_emb)" : "false");
    /* said only of a joint model, so that every other model's lines stay */
    if (c->joint_vocab)
        printf("joint vocab     true (one vocabulary; tgt_emb embeds both sides)\n");
    /* said only of a guided model, likewise */
    if (c->align.trained)
        printf("aligned head    layer %d head %d, trained toward word links at the step that "
               "%s each target word; nmt align's default map and step\n", c->align.layer, c->align.head,
               c->align.shift ? "reads" : "predicts");
    printf("lowercase       %s\n", c->lowercase ? "true" : "false");
    const nmt_subwords *sw = m->subwords;
    if (sw) {
        const char *norm = nmt_subwords_normalization(sw);
        printf("units           subwords: SentencePiece %s, %d pieces, normalization %s%s\n",
               nmt_subwords_type(sw), nmt_subwords_size(sw), *norm ? norm : "(none)",
               nmt_subwords_byte_fallback(sw) ? ", byte fallback" : "");
    } else {
        printf("units           words\n");
    }
    if (c->joint_vocab) {
        printf("vocab           %d (source and target)\n", c->tgt_vocab);
    } else {
        printf("src vocab       %d\n", c->src_vocab);
        printf("tgt vocab       %d\n", c->tgt_vocab);
    }
    printf("parameters      %zu\n", m->n_params);

    /* tensors beyond the parameters and the SentencePiece model */
    int n_extra = nmt_file_n_tensors(f) - m->n_tensors - (sw != NULL);
    if (nmt_file_meta(f, "state.step")) {
        printf("checkpoint      resumable");
        print_progress(f, "state.");
        printf(", %d optimizer tensors\n", n_extra);
    } else if (n_extra > 0) {
        printf("checkpoint      no (%d extra tensors, but no training state)\n", n_extra);
    } else {
        printf("checkpoint      no (a model: weights only)");
        print_progress(f, "best.");
        printf("\n");
    }
    if (!verbose)
        return;

    char shape[48];
    printf("\n%-24s %-16s %s\n", "tensor", "shape", "parameters");
    for (int k = 0; k < m->n_tensors; k++) {
        const nmt_tensor_info *t = &m->tensors[k];
        print_shape(shape, sizeof shape, t->ndim, t->shape);
        printf("%-24s %-16s %zu\n", t->name, shape, t->size);
    }
    size_t n_bytes = 0;
    if (sw && nmt_file_bytes(f, "subwords", &n_bytes)) {
        snprintf(shape, sizeof shape, "[%zu] U8", n_bytes);
        printf("%-24s %-16s %s\n", "subwords", shape, "(the SentencePiece model)");
    }
    if (n_extra > 0) {
        printf("\n%-24s %-16s %s\n", "extra tensor", "shape", "values");
        for (int k = 0; k < nmt_file_n_tensors(f); k++) {
            const char *name = nmt_file_tensor_name(f, k);
            if (nmt_model_tensor(m, name) || !strcmp(name, "subwords"))
                continue;
            int ndim = 0, sh[NMT_MAX_NDIM];
            if (!nmt_file_tensor(f, name, &ndim, sh)) {
                printf("%-24s (more than %d dimensions)\n", name, NMT_MAX_NDIM);
                continue;
            }
            print_shape(shape, sizeof shape, ndim, sh);
            size_t n = 1;
            for (int d = 0; d < ndim; d++)
                n *= (size_t)sh[d];
            printf("%-24s %-16s %zu\n", name, shape, n);
        }
    }
    int header = 0;
    for (int k = 0; k < nmt_file_n_meta(f); k++) {
        const char *key = nmt_file_meta_key(f, k);
        if (nmt_file_is_model_key(key))
            continue;
        if (!header++)
            printf("\nmetadata\n");
        printf("  %s = %s\n", key, nmt_file_meta(f, key));
    }
}

/* nmt info without a file: the BLAS, its kernel and the CPU. */
static void print_machine(void)
{
    nmt_cpu_features f;
    nmt_cpu_features_read(&f);
    char kernel[256], features[160];
    nmt_blas_describe(kernel, sizeof kernel);
    nmt_cpu_features_format(&f, features, sizeof features);
    static const char *const levels[] = {"SSE", "AVX", "AVX2 and FMA", "AVX-512"};
    int level = nmt_cpu_level(&f);
    const char *want = nmt_blas_kernel_for(nmt_blas_kernel(), &f);
    printf("nmt             %s\n", NMT_VERSION);
    printf("blas            %s\n", nmt_blas_config());
    printf("kernel          %s\n", kernel);
    printf("cpu             %s (level %d: %s; the kernel for it: %s)\n", features, level,
           levels[level], want ? want : "the one running");
    printf("threads         %d (nmt's default --threads: the cores it may run on); OpenBLAS "
           "%d of its own, of which nmt uses 1 per thread\n",
           cli_default_threads(), nmt_blas_threads());
}

int cmd_info(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int verbose = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "vh", long_options, NULL)) != -1) {
        switch (c) {
        case 'v': verbose = 1; break;
        case 'h': help(); return 0;
        default: return cli_usage_error();
        }
    }
    if (argc == optind) {
        print_machine();
        return 0;
    }
    if (argc - optind != 1) {
        cli_error("expects one model file (or none), not %d", argc - optind);
        return cli_usage_error();
    }
    const char *path = argv[optind];
    nmt_model *m;
    nmt_file *f;
    if (nmt_model_load(&m, path, &f)) {
        cli_lib_error();
        return 1;
    }
    print_info(path, m, f, verbose);
    nmt_file_free(f);
    nmt_model_free(m);
    return 0;
}
