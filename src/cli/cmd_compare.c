/* nmt compare: training runs side by side on one test set. Each run's best
 * model translates the source; the table shows BLEU and chrF overall, BLEU per
 * source-length bucket (the buckets of `nmt bleu --by-length`), and what the
 * run's log.tsv says about validation, speed and time. -o draws BLEU against
 * sentence length for every run (Bahdanau et al. 2015, Figure 2). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "cli_opts.h"
#include "cli_outfile.h"
#include "nmt/translator.h"
#include "nmt/bleu.h"
#include "nmt/chrf.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "draw/svg.h"
#include "nmt/progress.h"
#include "nmt/runlog.h"
#include "nmt/train.h"

static void help(void)
{
    printf("Usage: nmt compare RUN_A RUN_B [RUN...] --src F --ref F [OPTIONS]\n\n"
           "Training runs side by side on one test set. A RUN is a folder written by nmt\n"
           "train, whose DIR/best.safetensors (or, with a note, DIR/checkpoint.safetensors\n"
           "when the run has no best model) translates --src, or a model file itself\n"
           "(its folder's log.tsv is read when the folder holds a run). Runs are labelled\n"
           "by their last path part, with more of the path where two would read alike.\n"
           "What is not known (no log.tsv, no validation) shows as -. The table gives,\n"
           "per run:\n"
           "  model            cell/attention\n"
           "  parameters       the model's parameter count\n"
           "  steps            the last step in DIR/log.tsv\n"
           "  training time    elapsed_s of the last log.tsv row\n"
           "  tok/s            the median of log.tsv's tok_per_s (the first rows' warm-up\n"
           "                   and any slow stretch do not pull it)\n"
           "  valid ppl, BLEU  of the best validation row (highest valid_bleu, then lowest\n"
           "                   valid_ppl: the rule by which nmt train keeps best.safetensors)\n"
           "  test BLEU        corpus BLEU as sacreBLEU computes it (13a tokenizer)\n"
           "  test chrF2       corpus chrF as sacreBLEU computes it (its defaults: character\n"
           "                   n-grams up to 6, beta 2; nmt bleu -m chrf)\n"
           "  by length        BLEU per source-length bucket (1-10, 11-20, ..., 51+ source\n"
           "                   words, as nmt bleu --by-length --src counts them), with the\n"
           "                   number of sentences in each bucket\n\n"
           "Options:\n"
           "      --src FILE       test source sentences (plain or gzip)\n"
           "      --ref FILE       their reference translations, line by line\n"
           "  -o, --output FILE    also write an SVG line chart of BLEU against source\n"
           "                       length, one line per run (replaced when complete;\n"
           "                       never one of the files read)\n"
           "  -b, --beam K         beam size (default %d; 1 is greedy)\n"
           "      --alpha A        length normalisation (default: each model's, else\n"
           "                       %.1f, as nmt translate)\n"
           "      --lc             case-insensitive BLEU and chrF. Without it they are\n"
           "                       case-insensitive only when a model lowercases its\n"
           "                       text (its output could not match capitals); then it\n"
           "                       is so for every run, so that the columns compare\n"
           "      --batch-size N   sentences decoded together (default %d)\n"
           "      --threads N      threads for the matrix products (default: every core\n"
           "                       this process may use)\n"
           "  -q, --quiet          no progress line\n"
           "  -h, --help           this help\n",
           NMT_TRANSLATE_BEAM, (double)NMT_TRANSLATE_ALPHA, NMT_TRANSLATE_BATCH);
}

typedef struct compare_args {
    const char *src, *ref, *svg;
    char **dirs;
    int n_dirs;
    nmt_translate_opts opts;
    int threads, lc, quiet;
} compare_args;

static int parse_args(compare_args *a, int argc, char **argv)
{
    enum { OPT_SRC = 256, OPT_REF, OPT_LC };
    static const struct option long_options[] = {
        {"src", required_argument, NULL, OPT_SRC},
        {"ref", required_argument, NULL, OPT_REF},
        {"output", required_argument, NULL, 'o'},
        CLI_OPTION_BEAM,
        CLI_OPTION_ALPHA,
        {"lc", no_argument, NULL, OPT_LC},
        CLI_OPTION_BATCH_SIZE,
        CLI_OPTION_THREADS,
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    nmt_translate_opts_default(&a->opts);
    a->threads = cli_default_threads();
    const cli_model_opts shared = {.beam = &a->opts.decode.beam, .alpha = &a->opts.decode.alpha,
                                   .batch_size = &a->opts.batch_size, .threads = &a->threads};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:b:qh", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_SRC: a->src = optarg; break;
        case OPT_REF: a->ref = optarg; break;
        case 'o': a->svg = optarg; break;
        case OPT_LC: a->lc = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h': help(); return -1;
        default:
            if (cli_model_option_or_usage(c, optarg, &shared))
                return 2;
        }
    }
    a->dirs = argv + optind;
    a->n_dirs = argc - optind;
    if (a->n_dirs < 1) {
        cli_error("no run folders given");
        return cli_usage_error();
    }
    if (!a->src || !a->ref) {
        cli_error("%s is required", !a->src ? "--src" : "--ref");
        return cli_usage_error();
    }
    if (a->svg && !strcmp(a->svg, "-")) {
        cli_error("-o -: the table goes to standard output; give the chart a file name");
        return 2;
    }
    const cli_file in[] = {{"--src", a->src}, {"--ref", a->ref}};
    const cli_file out = {"-o", a->svg};
    int rc = cli_check_outputs(&out, 1, in, 2);
    return rc ? rc : cli_check_run_outputs(&out, (const char *const *)a->dirs, a->n_dirs, 1);
}

/* ---- log.tsv ---------------------------------------------------------------------- */

typedef struct run_log {
    int rows;
    double last_step, elapsed_s, median_tok_s;
    double valid_ppl, valid_bleu; /* NaN without validation rows */
} run_log;

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Reads DIR/log.tsv (nmt/runlog.h); a run without one (dir NULL, or no
 * such file) knows nothing of its training, which the table shows as -.
 * Returns 0, or -1 after printing why. */
static int read_log(run_log *out, const char *dir)
{
    char path[4096];
    *out = (run_log){.last_step = NAN, .elapsed_s = NAN, .median_tok_s = NAN,
                     .valid_ppl = NAN, .valid_bleu = NAN};
    if (!dir)
        return 0;
    snprintf(path, sizeof path, "%s/log.tsv", dir);
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        fprintf(stderr, "nmt compare: %s has no log.tsv: its steps, time and validation "
                        "show as -\n", dir);
        return 0;
    }
    nmt_runlog log;
    if (nmt_runlog_read(&log, path)) {
        cli_lib_error();
        return -1;
    }
    double *tok_s = malloc((log.n ? log.n : 1) * sizeof *tok_s);
    if (!tok_s) {
        nmt_runlog_free(&log);
        cli_error("out of memory");
        return -1;
    }
    size_t n_tok = 0;
    for (size_t i = 0; i < log.n; i++) {
        out->rows++;
        out->last_step = log.step[i];
        out->elapsed_s = log.elapsed_s[i];
        if (!isnan(log.tok_per_s[i]))
            tok_s[n_tok++] = log.tok_per_s[i];
        double ppl = log.valid_ppl[i], bleu = log.valid_bleu[i];
        if (isnan(bleu) && isnan(ppl))
            continue;
        /* nmt train's rule for best.safetensors; a log without BLEU falls
         * back to the lowest perplexity */
        double b = isnan(bleu) ? -(double)INFINITY : bleu;
        double best_b = isnan(out->valid_bleu) ? -(double)INFINITY : out->valid_bleu;
        int first = isnan(out->valid_ppl) && isnan(out->valid_bleu);
        if (first || b > best_b || (b == best_b && ppl < out->valid_ppl)) {
            out->valid_bleu = bleu;
            out->valid_ppl = ppl;
        }
    }
    if (n_tok) {
        qsort(tok_s, n_tok, sizeof *tok_s, compare_doubles);
        out->median_tok_s = n_tok % 2 ? tok_s[n_tok / 2]
                                      : (tok_s[n_tok / 2 - 1] + tok_s[n_tok / 2]) / 2;
    }
    free(tok_s);
    nmt_runlog_free(&log);
    return 0;
}

/* ---- one run ---------------------------------------------------------------------- */

typedef struct run_result {
    char name[256];       /* a label no other run has (unique_names) */
    char model_kind[64];  /* cell/attention */
    char file[64];        /* "best", "checkpoint", or a given file's name */
    size_t params;
    run_log log;
    double bleu, chrf;
    double bucket_bleu[NMT_BLEU_N_BUCKETS]; /* NaN for an empty bucket */
    char **hyps;          /* [n] the best translation of each test line */
} run_result;

/* The last `parts` parts of a path (trailing slashes and a model file's
 * ".safetensors" left out): "runs/a/" -> "a" (1), "runs/a" (2). */
static void run_name(char *out, size_t cap, const char *path, int parts)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    const char *ext = ".safetensors";
    size_t ne = strlen(ext);
    size_t end = n;
    if (n > ne && !strncmp(path + n - ne, ext, ne))
        end = n - ne;
    size_t start = n;
    for (int k = 0; k < parts && start > 0; k++) {
        while (start > 0 && path[start - 1] == '/' && k > 0)
            start--;
        while (start > 0 && path[start - 1] != '/')
            start--;
    }
    snprintf(out, cap, "%.*s", (int)(end - start), path + start);
}

/* Labels that tell the runs apart: the last part of each path, and for runs
 * that would share a label, one more part at a time for all of them until
 * they differ; paths alike to the end (one run given twice) are numbered. */
static void unique_names(run_result *r, char **paths, int n)
{
    int *parts = malloc((size_t)(n ? n : 1) * sizeof *parts);
    char *clash = malloc((size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        run_name(r[i].name, sizeof r[i].name, paths[i], 1);
    for (int i = 0; parts && clash && i < n; i++)
        parts[i] = 1;
    for (int round = 0; parts && clash && round < 64; round++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            clash[i] = 0;
            for (int j = 0; j < n && !clash[i]; j++)
                clash[i] = i != j && !strcmp(r[i].name, r[j].name);
        }
        for (int i = 0; i < n; i++) {
            char longer[256];
            run_name(longer, sizeof longer, paths[i], parts[i] + 1);
            if (clash[i] && strcmp(longer, r[i].name)) {
                parts[i]++;
                snprintf(r[i].name, sizeof r[i].name, "%s", longer);
                changed = 1;
            }
        }
        if (!changed)
            break;
    }
    /* a run given twice (paths alike to the end): its short label, numbered below */
    for (int i = 0; clash && i < n; i++) {
        clash[i] = 0;
        for (int j = 0; j < n; j++)
            clash[i] |= i != j && !strcmp(r[i].name, r[j].name);
    }
    for (int i = 0; clash && i < n; i++)
        if (clash[i])
            run_name(r[i].name, sizeof r[i].name, paths[i], 1);
    for (int i = n - 1; i > 0; i--) {
        int same = 0;
        for (int j = 0; j < i; j++)
            same += !strcmp(r[i].name, r[j].name);
        if (same) {
            char numbered[256];
            snprintf(numbered, sizeof numbered, "%.240s#%d", r[i].name, same + 1);
            snprintf(r[i].name, sizeof r[i].name, "%s", numbered);
        }
    }
    free(parts);
    free(clash);
}

typedef struct progress_ctx {
    const char *name;
    size_t total;
} progress_ctx;

static void show_progress(void *ctx, size_t done)
{
    const progress_ctx *p = ctx;
    fprintf(stderr, "\r%s: translated %zu of %zu lines", p->name, done, p->total);
    fflush(stderr);
}

/* The model file of a run given as `arg` (a run folder or a model file)
 * into path, and the folder whose log.tsv tells of its training into
 * log_dir ("" when there is none to read). */
static int find_model(run_result *r, const char *arg, char *path, size_t cap, char *log_dir,
                      size_t log_cap)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISREG(st.st_mode)) {
        snprintf(path, cap, "%s", arg);
        run_name(r->file, sizeof r->file, arg, 1);
        /* a model file inside a run folder (its best.safetensors, a snapshot)
         * has that run's log; a model file elsewhere has none */
        const char *slash = strrchr(arg, '/');
        if (slash)
            snprintf(log_dir, log_cap, "%.*s", (int)(slash - arg), arg);
        else
            snprintf(log_dir, log_cap, ".");
        char probe[4128];
        snprintf(probe, sizeof probe, "%s/checkpoint.safetensors", log_dir);
        if (access(probe, F_OK) != 0)
            log_dir[0] = '\0';
        return 0;
    }
    snprintf(log_dir, log_cap, "%s", arg);
    snprintf(r->file, sizeof r->file, "best");
    snprintf(path, cap, "%s/best.safetensors", arg);
    if (access(path, F_OK) == 0)
        return 0;
    snprintf(path, cap, "%s/checkpoint.safetensors", arg);
    snprintf(r->file, sizeof r->file, "checkpoint");
    if (access(path, F_OK) != 0) {
        cli_error("%s: neither best.safetensors nor checkpoint.safetensors (a run folder), "
                  "nor a model file", arg);
        return -1;
    }
    fprintf(stderr, "nmt compare: %s has no best.safetensors (no validation ran); "
                    "using checkpoint.safetensors\n", arg);
    return 0;
}

/* Loads the run's model and translates the test set into r->hyps. */
static int translate_run(run_result *r, const char *arg, const compare_args *a, char **src,
                         size_t n, int *lowercased)
{
    char path[4096], log_dir[4096];
    if (find_model(r, arg, path, sizeof path, log_dir, sizeof log_dir) ||
        read_log(&r->log, log_dir[0] ? log_dir : NULL))
        return -1;
    nmt_model *m = NULL;
    nmt_translator *t = NULL;
    nmt_translated *out = calloc(n, sizeof *out);
    r->hyps = calloc(n, sizeof *r->hyps);
    int status = -1;
    if (!out || !r->hyps) {
        cli_error("out of memory");
        goto done;
    }
    if (nmt_model_load(&m, path, NULL) || nmt_translator_create(&t, m, &a->opts)) {
        cli_lib_error();
        goto done;
    }
    nmt_config_describe(&m->cfg, r->model_kind, sizeof r->model_kind);
    r->params = m->n_params;
    *lowercased |= m->cfg.lowercase;
    progress_ctx pc = {r->name, n};
    int show = !a->quiet && isatty(STDERR_FILENO);
    int rc = nmt_translator_run(t, (const char *const *)src, n, out, show ? show_progress : NULL, &pc);
    if (show)
        fputc('\n', stderr);
    if (rc) {
        cli_lib_error();
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        /* keep the best text, free the rest */
        r->hyps[i] = out[i].hyp[0].text;
        out[i].hyp[0].text = NULL;
    }
    status = 0;
done:
    for (size_t i = 0; out && i < n; i++)
        nmt_translated_free(&out[i]);
    free(out);
    nmt_translator_free(t);
    nmt_model_free(m);
    return status;
}

/* BLEU of a run's translations overall and per bucket, chrF overall. */
static int score_run(run_result *r, char **refs, size_t n, const int *bucket, int lowercase)
{
    nmt_bleu_opts bo;
    nmt_bleu_opts_init(&bo);
    bo.lowercase = lowercase;
    nmt_chrf_opts co;
    nmt_chrf_opts_init(&co);
    co.lowercase = lowercase;
    nmt_bleu *all = NULL, *by[NMT_BLEU_N_BUCKETS] = {0};
    nmt_chrf *chrf = NULL;
    int rc = nmt_bleu_create(&all, &bo);
    if (!rc)
        rc = nmt_chrf_create(&chrf, &co);
    for (int k = 0; k < NMT_BLEU_N_BUCKETS && !rc; k++)
        rc = nmt_bleu_create(&by[k], &bo);
    for (size_t i = 0; i < n && !rc; i++) {
        nmt_bleu_stats st;
        const char *ref = refs[i];
        rc = nmt_bleu_add(all, &st, r->hyps[i], &ref, 1);
        if (!rc)
            nmt_bleu_add_stats(by[bucket[i]], &st, 1);
        if (!rc)
            rc = nmt_chrf_add(chrf, NULL, r->hyps[i], &ref, 1);
    }
    if (!rc) {
        nmt_bleu_score s;
        nmt_bleu_result(all, &s);
        r->bleu = s.score;
        r->chrf = nmt_chrf_result(chrf);
        for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++) {
            nmt_bleu_result(by[k], &s);
            r->bucket_bleu[k] = nmt_bleu_sentences(by[k]) ? s.score : (double)NAN;
        }
    }
    for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++)
        nmt_bleu_free(by[k]);
    nmt_bleu_free(all);
    nmt_chrf_free(chrf);
    if (rc)
        cli_lib_error();
    return rc ? -1 : 0;
}

/* ---- the table and the chart ------------------------------------------------------ */

static void number_or_dash(char *buf, size_t cap, double v, int decimals)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.*f", decimals, v);
}

/* One row: a label, then one cell per run, right-aligned in `width`. */
static void print_row(const char *label, char cells[][64], int n, int width)
{
    printf("%-24s", label);
    for (int i = 0; i < n; i++)
        printf("  %*s", width, cells[i]);
    putchar('\n');
}

static void print_table(const run_result *r, int n, const size_t *bucket_count, size_t n_sent,
                        int lowercase, int beam)
{
    if (n < 1)
        return;
    int width = 12;
    for (int i = 0; i < n; i++) {
        int w = (int)strlen(r[i].name);
        width = w > width ? w : width;
        w = (int)strlen(r[i].model_kind);
        width = w > width ? w : width;
        w = (int)strlen(r[i].file);
        width = w > width ? w : width;
    }
    char (*cells)[64] = calloc((size_t)n, sizeof *cells);
    if (!cells)
        return;
#define ROW(label, ...)                                    \
    do {                                                   \
        for (int i = 0; i < n; i++)                        \
            snprintf(cells[i], sizeof cells[i], __VA_ARGS__); \
        print_row(label, cells, n, width);                 \
    } while (0)
    ROW("run", "%s", r[i].name);
    ROW("model", "%s", r[i].model_kind);
    ROW("model file", "%s", r[i].file);
    ROW("parameters", "%zu", r[i].params);
    for (int i = 0; i < n; i++)
        number_or_dash(cells[i], sizeof cells[i], r[i].log.last_step, 0);
    print_row("steps", cells, n, width);
    for (int i = 0; i < n; i++) {
        if (isnan(r[i].log.elapsed_s))
            snprintf(cells[i], sizeof cells[i], "-");
        else
            nmt_format_duration(cells[i], sizeof cells[i], r[i].log.elapsed_s);
    }
    print_row("training time", cells, n, width);
    for (int i = 0; i < n; i++)
        number_or_dash(cells[i], sizeof cells[i], r[i].log.median_tok_s, 0);
    print_row("tok/s (median)", cells, n, width);
    for (int i = 0; i < n; i++)
        number_or_dash(cells[i], sizeof cells[i], r[i].log.valid_ppl, 2);
    print_row("valid ppl (best row)", cells, n, width);
    for (int i = 0; i < n; i++)
        number_or_dash(cells[i], sizeof cells[i], r[i].log.valid_bleu, 2);
    print_row("valid BLEU (best row)", cells, n, width);
    char label[64];
    snprintf(label, sizeof label, "test BLEU (%zu)", n_sent);
    ROW(label, "%.2f", r[i].bleu);
    nmt_chrf_opts co;
    nmt_chrf_opts_init(&co);
    co.lowercase = lowercase;
    char chrf_name[32];
    nmt_chrf_name(chrf_name, sizeof chrf_name, &co);
    snprintf(label, sizeof label, "test %s (%zu)", chrf_name, n_sent);
    ROW(label, "%.2f", r[i].chrf);
    printf("BLEU by source length (sentences):\n");
    for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++) {
        snprintf(label, sizeof label, "  %s (%zu)", nmt_bleu_bucket_label(k), bucket_count[k]);
        for (int i = 0; i < n; i++)
            number_or_dash(cells[i], sizeof cells[i], r[i].bucket_bleu[k], 2);
        print_row(label, cells, n, width);
    }
#undef ROW
    free(cells);
    nmt_bleu_opts bo;
    nmt_bleu_opts_init(&bo);
    bo.lowercase = lowercase;
    char sig[256];
    nmt_bleu_signature(sig, sizeof sig, &bo, 1, 0);
    printf("BLEU: %s; beam %d\n", sig, beam);
    nmt_chrf_signature(sig, sizeof sig, &co, 1, 0);
    printf("%s: %s\n", chrf_name, sig);
}

/* The x of a bucket on the chart: its middle (55 for 51+). */
static double bucket_middle(int k)
{
    return 10.0 * k + 5.5;
}

static int write_chart(const char *path, const run_result *r, int n, int lowercase)
{
    double x[NMT_BLEU_N_BUCKETS];
    for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++)
        x[k] = bucket_middle(k);
    nmt_svg_series *series = calloc((size_t)n, sizeof *series);
    char (*names)[320] = calloc((size_t)n, sizeof *names);
    if (!series || !names) {
        free(series);
        free(names);
        cli_error("out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "%s (%s)", r[i].name, r[i].model_kind);
        series[i] = (nmt_svg_series){names[i], NMT_BLEU_N_BUCKETS, x, r[i].bucket_bleu};
    }
    nmt_svg_chart chart = {
        .title = "BLEU by source sentence length",
        .x_title = "source sentence length in words (points at the middles of 1-10, 11-20, ..., 51+)",
        .y_title = lowercase ? "BLEU (case-insensitive)" : "BLEU",
        .series = series,
        .n_series = n,
        .x_min = 0,
        .x_max = 60,
    };
    cli_outfile o;
    int status = cli_out_open(&o, path);
    if (!status && nmt_svg_line_chart(o.f, &chart)) {
        cli_lib_error();
        cli_out_abort(&o);
        status = -1;
    }
    if (!status)
        status = cli_out_commit(&o);
    free(series);
    free(names);
    return status;
}

int cmd_compare(int argc, char **argv)
{
    compare_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    cli_set_threads(a.threads);
    char **src = NULL, **refs = NULL;
    size_t n_src = 0, n_ref = 0;
    int *bucket = NULL, status = 1, lowercased = a.lc;
    size_t bucket_count[NMT_BLEU_N_BUCKETS] = {0};
    run_result *runs = calloc((size_t)a.n_dirs, sizeof *runs);
    if (!runs) {
        cli_error("out of memory");
        goto done;
    }
    if (nmt_read_lines(a.src, &src, &n_src) || nmt_read_lines(a.ref, &refs, &n_ref)) {
        cli_lib_error();
        goto done;
    }
    if (n_src != n_ref) {
        cli_error("--src has %zu lines but --ref has %zu", n_src, n_ref);
        goto done;
    }
    if (n_src == 0) {
        cli_error("%s: no sentences", a.src);
        goto done;
    }
    if (!(bucket = malloc(n_src * sizeof *bucket))) {
        cli_error("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_src; i++) {
        bucket[i] = nmt_bleu_bucket(nmt_bleu_count_words(src[i]));
        bucket_count[bucket[i]]++;
    }
    unique_names(runs, a.dirs, a.n_dirs);
    /* BLEU is case-insensitive for all runs when one model lowercases: the
     * same measure for every column */
    for (int i = 0; i < a.n_dirs; i++)
        if (translate_run(&runs[i], a.dirs[i], &a, src, n_src, &lowercased))
            goto done;
    for (int i = 0; i < a.n_dirs; i++)
        if (score_run(&runs[i], refs, n_src, bucket, lowercased))
            goto done;
    print_table(runs, a.n_dirs, bucket_count, n_src, lowercased, a.opts.decode.beam);
    if (fflush(stdout) != 0) {
        cli_error("writing the table failed");
        goto done;
    }
    if (a.svg && write_chart(a.svg, runs, a.n_dirs, lowercased))
        goto done;
    status = 0;
done:
    nmt_free_lines(src, n_src);
    nmt_free_lines(refs, n_ref);
    free(bucket);
    for (int i = 0; runs && i < a.n_dirs; i++)
        nmt_free_lines(runs[i].hyps, runs[i].hyps ? n_src : 0);
    free(runs);
    return status;
}
