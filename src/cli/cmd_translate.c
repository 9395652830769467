/* nmt translate: raw sentences in, translations out, one line per line,
 * through the library's translator (nmt/translator.h). */
#include "nmt/translator.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "cli_opts.h"
#include "cli_outfile.h"
#include "cli_unknown.h"
#include "nmt/align.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "nmt/vocab.h"

/* ---- nmt translate -------------------------------------------------------------- */

static void help(void)
{
    printf("Usage: nmt translate -m FILE [-m FILE ...] [OPTIONS]\n\n"
           "Translates source sentences, one per line (plain text or gzip, from -i or\n"
           "standard input), into one line each (to -o or standard output); an empty line\n"
           "gives an empty line. Sentences are tokenized as the model was trained (its\n"
           "vocabulary, its lowercase setting), translated in batches of similar length,\n"
           "and detokenized. A model that reads subwords splits them into the pieces of\n"
           "the SentencePiece model it carries and decodes its pieces back into text;\n"
           "its units below are then pieces where they say words.\n\n"
           "Options:\n"
           "  -m, --model FILE     the model (or checkpoint) file; given several times, an\n"
           "                       ensemble of up to %d models (see below)\n"
           "  -i, --input FILE     source sentences (default: standard input)\n"
           "  -o, --output FILE    translations (default or '-': standard output); a file\n"
           "                       is replaced at the end, when complete, and may not be\n"
           "                       the input or the model\n"
           "  -b, --beam K         beam size; 1 is greedy decoding (default %d, the same as\n"
           "                       nmt align and nmt compare)\n"
           "      --alpha A        length normalisation: hypotheses are ranked by\n"
           "                       log-probability / length^A, the length counting </s>\n"
           "                       (default: the model's, which nmt train chose on its\n"
           "                       validation set (nmt info shows it), else %.1f; an\n"
           "                       ensemble's: the mean of its models'; 0 ranks by\n"
           "                       log-probability alone)\n"
           "      --max-ratio R    a translation stops after R x source words + %d words\n"
           "                       (default %.1f)\n"
           "      --n-best N       write the N best hypotheses of each sentence (N <= K;\n"
           "                       with --sample, N samples, listed the same way),\n"
           "                       Moses style: 'i ||| translation ||| score' with i the\n"
           "                       0-based line number and score the normalised\n"
           "                       log-probability the search ranked by: the finished\n"
           "                       hypotheses best first, then any cut at the length\n"
           "                       limit, best first; an empty line\n"
           "                       gives one entry with an empty translation and score 0\n"
           "      --sample         draw each token at random instead of searching (needs\n"
           "                       --beam 1; the same --seed draws the same samples, but\n"
           "                       for rounding: see Batches below); with --n-best N,\n"
           "                       N independent samples per sentence, listed as the\n"
           "                       beam's n-best: score = log-probability under the model\n"
           "                       (temperature 1) / length^alpha, best first\n"
           "      --temperature T  sample from softmax(logits / T) (default 1; T > 0, near\n"
           "                       0 is greedy decoding)\n"
           "      --top-k K        sample among the K most probable tokens only (default 0:\n"
           "                       all)\n"
           "      --top-p P        sample among the smallest set of most probable tokens\n"
           "                       whose probability reaches P, in (0, 1] (default 1: all)\n"
           "      --seed S         seeds the samples: sentence i (0-based line) draws from a\n"
           "                       generator seeded by (S, i) (default 0)\n"
           "      --prefix FILE    one target prefix per input line (plain or gzip): each\n"
           "                       translation is forced through its prefix's units,\n"
           "                       then continues freely (greedy, beam or sampling), and\n"
           "                       starts with the prefix exactly as written (but for the\n"
           "                       whitespace at its ends; text such as </s> is text,\n"
           "                       split into units); an empty line means no prefix.\n"
           "                       FILE must have as many lines as the input: when both\n"
           "                       are files they are counted first, and a mismatch\n"
           "                       writes nothing; an input on standard input or a pipe\n"
           "                       is counted as it is read, so the translations made\n"
           "                       before the shorter one ended are on standard output\n"
           "                       when the mismatch is refused (a -o file is left as it\n"
           "                       was)\n"
           "      --replace-unk    replace each <unk> in the output by the source word the\n"
           "                       model attended to most (attention models only; an\n"
           "                       ensemble: the mean of its models' attention)\n"
           "      --alignments F   write the attention of each translation to F, one JSON\n"
           "                       object a line: {\"source\": [...], \"target\": [...],\n"
           "                       \"attention\": [[...], ...]} (tokens with </s>; an empty\n"
           "                       line gives empty lists; attention models only; an\n"
           "                       ensemble writes the mean of its models' attention)\n"
           "      --batch-size N   sentences decoded together (default %d)\n"
           "      --threads N      threads for the matrix products (default: every core\n"
           "                       this process may use)\n"
           "  -q, --quiet          no progress line\n"
           "  -v, --verbose        at the end, on stderr: sentences, the seconds spent\n"
           "                       loading the model and translating, sentences/s\n"
           "  -h, --help           this help\n\n"
           "Beam search keeps K hypotheses per sentence and stops when K have produced\n"
           "</s> or none still open can beat the best finished ones; a translation that\n"
           "ended beats one cut at the length limit. Input is read in windows of %d\n"
           "lines, which are sorted by length for speed; the output keeps the input order.\n"
           "On a terminal a progress line is shown on stderr.\n\n"
           "Batches: a translation does not depend on --batch-size, --threads or the\n"
           "sentences that share its batch, but for the rounding of the matrix products\n"
           "(OpenBLAS rounds a row by where it falls among a product's rows): scores may\n"
           "differ in their last printed digits, and where a sampled draw (or a beam's\n"
           "choice) falls within that rounding of another token, the output takes that\n"
           "token and goes on from it (see docs/decoding.md).\n\n"
           "Ensembles: with -m given more than once the models translate together. Each\n"
           "step every model scores the next word, and the ensemble's log-probability of a\n"
           "word is the mean of the models' log-probabilities; greedy and beam search,\n"
           "--n-best, --sample and --prefix all work on that mean, and scores are sums of\n"
           "it. The models may be any mix of RNNs and Transformers but must read and\n"
           "write the same units: the same source and target vocabularies (same words, same\n"
           "order), the same subword model (or none) and the same --lowercase setting.\n"
           "Models that differ are refused with what differs. nmt align --ensemble shows\n"
           "each model's attention on the ensemble's translation.\n",
           NMT_MAX_ENSEMBLE, NMT_TRANSLATE_BEAM, (double)NMT_TRANSLATE_ALPHA, NMT_TRANSLATE_MAX_EXTRA,
           (double)NMT_TRANSLATE_MAX_RATIO, NMT_TRANSLATE_BATCH, 64 * NMT_TRANSLATE_BATCH);
}

typedef struct translate_args {
    const char *model[NMT_MAX_ENSEMBLE]; /* -m, in order: one model or an ensemble */
    int n_models;
    const char *input, *output, *alignments, *prefix;
    nmt_translate_opts opts;
    int n_best_given, threads, quiet, verbose;
    int beam_given; /* -b given: --sample refuses a beam > 1, not the default beam */
    const char *sampling_option; /* the first sampling setting given, for its refusal */
} translate_args;

static int parse_args(translate_args *a, int argc, char **argv)
{
    enum { OPT_RATIO = 256, OPT_NBEST, OPT_UNK, OPT_ALIGN, OPT_SAMPLE, OPT_TEMP, OPT_TOPK,
           OPT_TOPP, OPT_SEED, OPT_PREFIX };
    static const struct option long_options[] = {
        {"model", required_argument, NULL, 'm'},
        {"input", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},
        CLI_OPTION_BEAM,
        CLI_OPTION_ALPHA,
        {"max-ratio", required_argument, NULL, OPT_RATIO},
        {"n-best", required_argument, NULL, OPT_NBEST},
        {"replace-unk", no_argument, NULL, OPT_UNK},
        {"alignments", required_argument, NULL, OPT_ALIGN},
        {"sample", no_argument, NULL, OPT_SAMPLE},
        {"temperature", required_argument, NULL, OPT_TEMP},
        {"top-k", required_argument, NULL, OPT_TOPK},
        {"top-p", required_argument, NULL, OPT_TOPP},
        {"seed", required_argument, NULL, OPT_SEED},
        {"prefix", required_argument, NULL, OPT_PREFIX},
        CLI_OPTION_BATCH_SIZE,
        CLI_OPTION_THREADS,
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    nmt_translate_opts_default(&a->opts);
    a->threads = cli_default_threads();
    nmt_decode_opts *d = &a->opts.decode;
    const cli_model_opts shared = {.beam = &d->beam, .alpha = &d->alpha,
                                   .batch_size = &a->opts.batch_size, .threads = &a->threads};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:i:o:b:qvh", long_options, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (opt_model(optarg, a->model, &a->n_models, NMT_MAX_ENSEMBLE))
                return 2;
            break;
        case 'i': a->input = optarg; break;
        case 'o': a->output = optarg; break;
        case OPT_RATIO:
            if (opt_float("--max-ratio", optarg, 0, 1000, &d->max_ratio))
                return 2;
            break;
        case OPT_NBEST:
            if (opt_int("--n-best", optarg, 1, 1000, &d->n_best))
                return 2;
            a->n_best_given = 1;
            break;
        case OPT_SAMPLE: d->sample = 1; break;
        case OPT_TEMP:
            /* parsed wide, so that 0 and negatives get the message below */
            if (opt_float("--temperature", optarg, -1e30, 1e30, &d->temperature))
                return 2;
            if (!(d->temperature > 0)) {
                cli_error("--temperature: %s is not > 0 (near 0 is greedy decoding)", optarg);
                return 2;
            }
            a->sampling_option = a->sampling_option ? a->sampling_option : "--temperature";
            break;
        case OPT_TOPK:
            if (opt_int("--top-k", optarg, 0, 1 << 30, &d->top_k))
                return 2;
            a->sampling_option = a->sampling_option ? a->sampling_option : "--top-k";
            break;
        case OPT_TOPP:
            if (opt_float("--top-p", optarg, -1e30, 1e30, &d->top_p))
                return 2;
            if (!(d->top_p > 0 && d->top_p <= 1)) {
                cli_error("--top-p: %s is not in (0, 1]", optarg);
                return 2;
            }
            a->sampling_option = a->sampling_option ? a->sampling_option : "--top-p";
            break;
        case OPT_SEED:
            if (opt_u64("--seed", optarg, &d->seed))
                return 2;
            a->sampling_option = a->sampling_option ? a->sampling_option : "--seed";
            break;
        case OPT_PREFIX: a->prefix = optarg; break;
        case OPT_UNK: a->opts.replace_unk = 1; break;
        case OPT_ALIGN: a->alignments = optarg; a->opts.alignments = 1; break;
        case 'q': a->quiet = 1; break;
        case 'v': a->verbose = 1; break;
        case 'h': help(); return -1;
        default:
            if (cli_model_option_or_usage(c, optarg, &shared))
                return 2;
            a->beam_given |= c == 'b';
        }
    }
    if (cli_no_operands(argc, argv))
        return 2;
    if (!a->n_models) {
        cli_error("--model is required");
        return cli_usage_error();
    }
    if (a->sampling_option && !d->sample) {
        cli_error("%s: only with --sample", a->sampling_option);
        return 2;
    }
    if (d->sample) {
        /* sampling draws one token per sample: there is no beam */
        if (a->beam_given && d->beam > 1) {
            cli_error("--sample: not with --beam %d (sampling takes no beam; --n-best N "
                      "draws N samples)", d->beam);
            return 2;
        }
        d->beam = 1;
    } else if (d->n_best > d->beam) {
        cli_error("--n-best: %d is more than the beam (%d); raise --beam", d->n_best, d->beam);
        return 2;
    }
    int per = d->sample ? d->n_best : d->beam;
    if ((long)per * a->opts.batch_size > 1L << 20) {
        cli_error("%s %d x --batch-size %d: too many hypotheses at once",
                  d->sample ? "--n-best" : "--beam", per, a->opts.batch_size);
        return 2;
    }
    if (a->prefix && !strcmp(a->prefix, "-") && (!a->input || !strcmp(a->input, "-"))) {
        cli_error("--prefix: standard input is already the input; give -i FILE");
        return 2;
    }
    /* -i x -o x would read its own translations back */
    cli_file in[2 + NMT_MAX_ENSEMBLE] = {{"-i", a->input ? a->input : "-"},
                                         {"--prefix", a->prefix}};
    int n_in = a->prefix ? 2 : 1;
    for (int k = 0; k < a->n_models; k++)
        in[n_in++] = (cli_file){"-m", a->model[k]};
    const cli_file out[] = {{"-o", a->output ? a->output : "-"}, {"--alignments", a->alignments}};
    return cli_check_outputs(out, 2, in, n_in);
}

/* Monotonic seconds, for -v. */
static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct progress_state {
    size_t base; /* lines of earlier windows */
    int shown;
} progress_state;

static void show_progress(void *ctx, size_t done)
{
    progress_state *p = ctx;
    fprintf(stderr, "\rtranslated %zu lines", p->base + done);
    fflush(stderr);
    p->shown = 1;
}

/* Writes one window's results; 0 or an I/O failure (-1). */
static int write_window(FILE *out, FILE *align, const nmt_translated *r, size_t n, size_t base,
                        int n_best_format)
{
    for (size_t i = 0; i < n; i++) {
        if (n_best_format) {
            for (int k = 0; k < r[i].n_hyp; k++)
                fprintf(out, "%zu ||| %s ||| %.6f\n", base + i, r[i].hyp[k].text,
                        (double)r[i].hyp[k].norm_score);
        } else {
            fputs(r[i].hyp[0].text, out);
            fputc('\n', out);
        }
        if (!align)
            continue;
        if (r[i].n_src == 0) {
            fputs("{\"source\": [], \"target\": [], \"attention\": []}\n", align);
            continue;
        }
        nmt_alignment al = {r[i].n_src, r[i].n_tgt, (const char *const *)r[i].src,
                            (const char *const *)r[i].tgt, r[i].att};
        if (nmt_align_write_json(align, &al))
            return -1;
    }
    return ferror(out) || (align && ferror(align)) ? -1 : 0;
}

static void free_window(char **lines, nmt_translated *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(lines[i]);
        lines[i] = NULL; /* a window cut short frees only what it read */
        nmt_translated_free(&r[i]);
    }
}

/* Reads the n prefixes of a window of n input lines; 0, or 1 after an error
 * said (a read error, or the prefix file ending before the input: then both
 * files are counted to the end for the message). */
static int read_prefixes(nmt_reader *pre, nmt_reader *in, char **out, size_t n, size_t base)
{
    const char *line;
    size_t len;
    for (size_t i = 0; i < n; i++) {
        int rc = nmt_reader_next(pre, &line, &len);
        if (rc < 0) {
            cli_lib_error();
            return 1;
        }
        if (rc == 0) {
            size_t inputs = base + n;
            while ((rc = nmt_reader_next(in, &line, &len)) == 1)
                inputs++;
            cli_error("--prefix: %s has %zu lines, the input %zu", nmt_reader_path(pre),
                      base + i, inputs);
            return 1;
        }
        if (!(out[i] = strdup(line))) {
            cli_error("out of memory");
            return 1;
        }
    }
    return 0;
}

/* Whether path names a regular file (not standard input, a FIFO or a
 * device): one that can be read twice. */
static int regular_file(const char *path)
{
    struct stat st;
    return path && strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The lines of a file (plain or gzip), or -1 after an error said. */
static long long count_lines(const char *path)
{
    nmt_reader *r;
    if (nmt_reader_open(&r, path)) {
        cli_lib_error();
        return -1;
    }
    const char *line;
    size_t len;
    long long n = 0;
    int rc;
    while ((rc = nmt_reader_next(r, &line, &len)) == 1)
        n++;
    if (rc < 0) {
        cli_lib_error();
        n = -1;
    }
    nmt_reader_close(r);
    return n;
}

/* With the input and the prefixes both in files, their line counts are
 * compared before anything is translated, so that a mismatch writes
 * nothing, to standard output either. Input from standard input or a FIFO
 * is read once only: its count is checked as it is read (read_prefixes,
 * and at the end), after the translations before the mismatch went out.
 * 0, or 1 after saying what is wrong. */
static int check_prefix_count(const translate_args *a, const nmt_reader *pre)
{
    if (!regular_file(a->input) || !regular_file(a->prefix))
        return 0;
    long long inputs = count_lines(a->input), prefixes = inputs < 0 ? -1 : count_lines(a->prefix);
    if (inputs < 0 || prefixes < 0)
        return 1;
    if (inputs == prefixes)
        return 0;
    cli_error("--prefix: %s has %lld lines, the input %lld", nmt_reader_path(pre), prefixes,
              inputs);
    return 1;
}

/* Loads every -m into models[] and checks that they can translate together
 * (the message names the two files that differ); NMT_OK or the error. */
static int load_models(const translate_args *a, nmt_model **models)
{
    for (int k = 0; k < a->n_models; k++) {
        int rc = nmt_model_load(&models[k], a->model[k], NULL);
        if (rc)
            return rc;
    }
    return nmt_ensemble_check((const nmt_model *const *)models, a->model, a->n_models);
}

int cmd_translate(int argc, char **argv)
{
    translate_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    cli_set_threads(a.threads);
    nmt_model *models[NMT_MAX_ENSEMBLE] = {0};
    nmt_translator *t = NULL;
    nmt_reader *in = NULL, *pre = NULL;
    cli_outfile out = {0}, align = {0};
    const size_t window = 64 * (size_t)a.opts.batch_size;
    char **lines = calloc(window, sizeof *lines);
    char **prefixes = calloc(window, sizeof *prefixes);
    nmt_translated *res = calloc(window, sizeof *res);
    int status = 1;
    if (!lines || !res || !prefixes) {
        cli_error("out of memory");
        goto done;
    }
    double t_start = now_seconds(), t_loaded = 0, t_translating = 0;
    if (load_models(&a, models) ||
        nmt_translator_create_ensemble(&t, (const nmt_model *const *)models, a.n_models,
                                       &a.opts) ||
        nmt_reader_open(&in, a.input ? a.input : "-") ||
        (a.prefix && nmt_reader_open(&pre, a.prefix))) {
        cli_lib_error();
        goto done;
    }
    if (pre && check_prefix_count(&a, pre))
        goto done;
    if (cli_out_open(&out, a.output) || (a.alignments && cli_out_open(&align, a.alignments)))
        goto done;
    t_loaded = now_seconds() - t_start;
    progress_state prog = {0};
    int show = !a.quiet && isatty(STDERR_FILENO), warned = 0;
    for (;;) {
        size_t n = 0;
        const char *line;
        size_t len;
        while (n < window && (rc = nmt_reader_next(in, &line, &len)) == 1) {
            if (!(lines[n] = strdup(line))) {
                cli_error("out of memory");
                goto done;
            }
            n++;
        }
        if (rc < 0) {
            free_window(lines, res, n);
            cli_lib_error();
            goto done;
        }
        if (pre && read_prefixes(pre, in, prefixes, n, prog.base)) {
            free_window(lines, res, n);
            free_window(prefixes, res, n);
            goto done;
        }
        if (n == 0)
            break;
        double t0 = now_seconds();
        int failed = nmt_translator_run_prefixed(t, (const char *const *)lines,
                                                 pre ? (const char *const *)prefixes : NULL,
                                                 n, res, show ? show_progress : NULL, &prog);
        t_translating += now_seconds() - t0;
        if (failed) {
            free_window(lines, res, n);
            free_window(prefixes, res, n);
            /* a model whose outputs are not finite is to blame, not the input */
            cli_error("%s: %s", failed != NMT_ERR_NUMERIC ? nmt_reader_path(in)
                                : a.n_models == 1 ? a.model[0] : "the ensemble",
                      nmt_error_message());
            goto done;
        }
        /* said as soon as it shows, not after hours of translating <unk>s */
        size_t unk, units;
        nmt_translator_unknown(t, &unk, &units);
        if (!warned && cli_unknown_high(unk, units)) {
            if (prog.shown) /* below the progress line */
                fputc('\n', stderr);
            warned = cli_warn_unknown(a.input ? a.input : "the input", unk, units,
                                      nmt_units_name(models[0]));
        }
        int bad = write_window(out.f, align.f, res, n, prog.base, a.n_best_given);
        free_window(lines, res, n);
        free_window(prefixes, res, n);
        if (bad) {
            if (!cli_out_failed(&align))
                cli_out_failed(&out);
            goto done;
        }
        prog.base += n;
        if (rc == 0)
            break;
    }
    if (pre) {
        /* the input ended: the prefixes must too */
        const char *line;
        size_t len, more = 0;
        while ((rc = nmt_reader_next(pre, &line, &len)) == 1)
            more++;
        if (rc < 0 || more) {
            if (rc < 0)
                cli_lib_error();
            else
                cli_error("--prefix: %s has %zu lines, the input %zu", nmt_reader_path(pre),
                          prog.base + more, prog.base);
            goto done;
        }
    }
    if (prog.shown)
        fputc('\n', stderr);
    if (a.verbose)
        fprintf(stderr,
                "nmt translate: %zu sentences, model loaded in %.3f s, translated in %.3f s "
                "(%.1f sentences/s)\n",
                prog.base, t_loaded, t_translating,
                t_translating > 0 ? (double)prog.base / t_translating : 0.0);
    status = cli_out_commit(&align) || cli_out_commit(&out) ? 1 : 0;
done:
    /* no partial output: a file given keeps what it held */
    cli_out_abort(&align);
    cli_out_abort(&out);
    nmt_reader_close(in);
    nmt_reader_close(pre);
    nmt_translator_free(t);
    for (int k = 0; k < a.n_models; k++)
        nmt_model_free(models[k]);
    free(lines);
    free(prefixes);
    free(res);
    return status;
}
