/* nmt translate: raw sentences in, translations out, one line per line.
 * Also the translator that `nmt compare` uses (cli/translate.h). */
#include "cli/translate.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/unknown.h"
#include "nmt/align.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "nmt/vocab.h"

/* ---- the translator ----------------------------------------------------------- */

struct translator {
    const nmt_model *model;
    translate_opts opts;
    nmt_decoder *decoder;
    int dec_B, dec_T;   /* the decoder's batch and longest source (units + </s>) */
    int32_t *src;       /* [dec_B * dec_T] time-major ids */
    int *src_len;       /* [dec_B] */
    const char **words; /* [words_cap] target units (words or pieces) of one hypothesis */
    size_t words_cap;
    size_t lines_done;  /* lines of earlier calls, so messages number lines as the input does */
    size_t n_units, n_unk; /* source units decoded so far, and those <unk> */
};

void translate_opts_default(translate_opts *o)
{
    nmt_decode_opts_standard(&o->decode);
    o->batch_size = TRANSLATE_BATCH;
    o->replace_unk = 0;
    o->alignments = 0;
}

void translated_free(translated *t)
{
    for (int k = 0; k < t->n_hyp; k++)
        free(t->hyp[k].text);
    free(t->hyp);
    for (int j = 0; j < t->n_src; j++)
        free(t->src[j]);
    for (int i = 0; i < t->n_tgt; i++)
        free(t->tgt[i]);
    free(t->src);
    free(t->tgt);
    free(t->att);
    memset(t, 0, sizeof *t);
}

int translator_create(translator **out, const nmt_model *m, const translate_opts *o)
{
    *out = NULL;
    if (m->cfg.attention == NMT_ATT_NONE && (o->replace_unk || o->alignments))
        return nmt_set_error(NMT_ERR_ARG, "%s needs a model with attention (this one has "
                             "attention none)", o->replace_unk ? "--replace-unk" : "--alignments");
    if (o->batch_size < 1)
        return nmt_set_error(NMT_ERR_ARG, "bad batch size %d", o->batch_size);
    translator *t = calloc(1, sizeof *t);
    if (!t)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    t->model = m;
    t->opts = *o;
    t->opts.decode.attention = o->replace_unk || o->alignments;
    *out = t;
    return NMT_OK;
}

void translator_free(translator *t)
{
    if (!t)
        return;
    nmt_decoder_free(t->decoder);
    free(t->src);
    free(t->src_len);
    free(t->words);
    free(t);
}

/* A decoder for B sources of up to T positions (made again when a longer
 * source or a larger batch comes, so memory follows what is needed). */
static int ensure_decoder(translator *t, int B, int T)
{
    if (t->decoder && T <= t->dec_T && B <= t->dec_B)
        return NMT_OK;
    nmt_decoder_free(t->decoder);
    t->decoder = NULL;
    free(t->src);
    free(t->src_len);
    t->src = malloc((size_t)B * (size_t)T * sizeof *t->src);
    t->src_len = malloc((size_t)B * sizeof *t->src_len);
    if (!t->src || !t->src_len)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for a batch of %d x %d", B, T);
    t->dec_B = B;
    t->dec_T = T;
    return nmt_decoder_create(&t->decoder, t->model, B, T, &t->opts.decode);
}

/* The batch size for sources of up to T positions. Keeping attention costs
 * the decoder about 2 * beam * length limit * T floats per sentence; a
 * batch of very long sentences is made smaller to stay within 64 M floats
 * (256 MB). */
static int batch_for(const translator *t, int T)
{
    int B = t->opts.batch_size;
    if (!t->opts.decode.attention)
        return B;
    double per = 2.0 * t->opts.decode.beam * nmt_decode_length_limit(&t->opts.decode, T) * T;
    double fit = (double)(64 << 20) / per;
    return fit < 1 ? 1 : fit < B ? (int)fit : B;
}

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c ? memcpy(c, s, n) : NULL;
}

/* The source unit (not </s>) row i of the attention looks at most; ties go
 * to the first. */
static int most_attended(const float *att, int i, int src_len)
{
    const float *row = att + (size_t)i * (size_t)src_len;
    int best = 0;
    for (int j = 1; j < src_len - 1; j++)
        if (row[j] > row[best])
            best = j;
    return best;
}

/* The attention of the best hypothesis, with its tokens, into out. */
static int keep_alignment(translated *out, const nmt_tokens *src, const nmt_hypothesis *h,
                          const char *const *words)
{
    int n_src = (int)src->n + 1, n_tgt = h->len + h->finished;
    out->src = calloc((size_t)n_src, sizeof *out->src);
    out->tgt = calloc((size_t)n_tgt, sizeof *out->tgt);
    out->att = malloc((size_t)n_src * (size_t)n_tgt * sizeof *out->att);
    if (!out->src || !out->tgt || !out->att)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for alignments");
    out->n_src = n_src;
    out->n_tgt = n_tgt;
    int ok = 1;
    for (int j = 0; j < n_src; j++)
        ok &= (out->src[j] = copy_string(j < n_src - 1 ? src->tok[j] : "</s>")) != NULL;
    for (int i = 0; i < n_tgt; i++)
        ok &= (out->tgt[i] = copy_string(i < h->len ? words[i] : "</s>")) != NULL;
    memcpy(out->att, h->att, (size_t)n_src * (size_t)n_tgt * sizeof *out->att);
    return ok ? NMT_OK : nmt_set_error(NMT_ERR_NOMEM, "out of memory for alignments");
}

/* The decoder's hypotheses of batch row b (source tokens src) as text. */
static int fill_result(translator *t, translated *out, int b, const nmt_tokens *src)
{
    const nmt_vocab *tv = t->model->tgt_vocab;
    int n = nmt_decoder_n_results(t->decoder, b);
    out->hyp = calloc((size_t)(n ? n : 1), sizeof *out->hyp);
    if (!out->hyp)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        const nmt_hypothesis *h = nmt_decoder_result(t->decoder, b, k);
        if ((size_t)h->len > t->words_cap) {
            const char **w = realloc(t->words, (size_t)h->len * sizeof *w);
            if (!w)
                return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
            t->words = w;
            t->words_cap = (size_t)h->len;
        }
        for (int i = 0; i < h->len; i++) {
            /* <unk>: the source unit the decoder looked at most while
             * producing it (the source has one: empty lines are not
             * decoded); a source piece the model does not know is its
             * text, which decoding keeps as it is */
            if (h->ids[i] == NMT_UNK && t->opts.replace_unk && h->att)
                t->words[i] = src->tok[most_attended(h->att, i, (int)src->n + 1)];
            else
                t->words[i] = nmt_vocab_token(tv, h->ids[i]);
        }
        translated_hyp *r = &out->hyp[k];
        r->text = nmt_units_join(t->model, t->words, (size_t)h->len);
        r->score = h->score;
        r->norm_score = h->norm_score;
        out->n_hyp = k + 1;
        if (!r->text)
            return NMT_ERR_NOMEM; /* the message is set */
        if (k == 0 && t->opts.alignments && h->att) {
            int rc = keep_alignment(out, src, h, t->words);
            if (rc)
                return rc;
        }
    }
    return NMT_OK;
}

static const nmt_tokens *sort_tokens; /* for by_length (qsort has no context) */

/* Shorter sources first, then input order: batches of similar lengths. */
static int by_length(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    size_t la = sort_tokens[a].n, lb = sort_tokens[b].n;
    if (la != lb)
        return la < lb ? -1 : 1;
    return (a > b) - (a < b);
}

static int run_batches(translator *t, const nmt_tokens *toks, const size_t *order, size_t n_order,
                       translated *out, size_t n_empty,
                       void (*progress)(void *ctx, size_t done), void *ctx)
{
    const nmt_vocab *sv = t->model->src_vocab;
    for (size_t start = 0; start < n_order;) {
        /* sorted shortest first: a batch's last source is its longest */
        size_t left = n_order - start;
        int B = left < (size_t)t->opts.batch_size ? (int)left : t->opts.batch_size;
        const size_t *idx = order + start;
        int fit = batch_for(t, (int)toks[idx[B - 1]].n + 1);
        B = fit < B ? fit : B;
        int T = (int)toks[idx[B - 1]].n + 1;
        int rc = ensure_decoder(t, B, T);
        if (rc)
            return rc;
        memset(t->src, 0, (size_t)B * (size_t)T * sizeof *t->src);
        for (int b = 0; b < B; b++) {
            const nmt_tokens *s = &toks[idx[b]];
            for (size_t j = 0; j < s->n; j++) {
                int32_t id = nmt_vocab_id(sv, s->tok[j], s->len[j]);
                t->src[j * (size_t)B + (size_t)b] = id;
                t->n_unk += id == NMT_UNK;
            }
            t->n_units += s->n;
            t->src[s->n * (size_t)B + (size_t)b] = NMT_EOS;
            t->src_len[b] = (int)s->n + 1;
        }
        if ((rc = nmt_decode(t->decoder, t->src, t->src_len, B, T)))
            return rc;
        for (int b = 0; b < B; b++)
            if ((rc = fill_result(t, &out[idx[b]], b, &toks[idx[b]])))
                return rc;
        start += (size_t)B;
        if (progress)
            progress(ctx, n_empty + start);
    }
    return NMT_OK;
}

int translator_run(translator *t, const char *const *lines, size_t n, translated *out,
                   void (*progress)(void *ctx, size_t done), void *ctx)
{
    memset(out, 0, n * sizeof *out);
    nmt_tokens *toks = calloc(n ? n : 1, sizeof *toks);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int rc = toks && order ? NMT_OK : nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    size_t n_order = 0;
    for (size_t i = 0; i < n && rc == NMT_OK; i++) {
        rc = nmt_units_split(t->model, lines[i], strlen(lines[i]), &toks[i]);
        /* the model's passes take at most 1 << 16 positions (units + </s>) */
        if (rc == NMT_OK && toks[i].n >= (size_t)1 << 16)
            rc = nmt_set_error(NMT_ERR_ARG, "line %zu: a sentence of %zu %s is too long "
                               "(at most %d)", t->lines_done + i + 1, toks[i].n,
                               nmt_units_name(t->model), (1 << 16) - 1);
        if (rc == NMT_OK && toks[i].n > 0) {
            order[n_order++] = i;
        } else if (rc == NMT_OK) {
            /* an empty line stays empty */
            out[i].hyp = calloc(1, sizeof *out[i].hyp);
            if (out[i].hyp && (out[i].hyp[0].text = copy_string("")))
                out[i].n_hyp = 1;
            else
                rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        }
    }
    if (rc == NMT_OK) {
        sort_tokens = toks;
        qsort(order, n_order, sizeof *order, by_length);
        rc = run_batches(t, toks, order, n_order, out, n - n_order, progress, ctx);
    }
    for (size_t i = 0; toks && i < n; i++)
        nmt_tokens_free(&toks[i]);
    free(toks);
    free(order);
    t->lines_done += n;
    return rc;
}

void translator_unknown(const translator *t, size_t *unk, size_t *units)
{
    *unk = t->n_unk;
    *units = t->n_units;
}

/* ---- nmt translate -------------------------------------------------------------- */

static void help(void)
{
    printf("Usage: nmt translate -m FILE [OPTIONS]\n\n"
           "Translates source sentences, one per line (plain text or gzip, from -i or\n"
           "standard input), into one line each (to -o or standard output); an empty line\n"
           "gives an empty line. Sentences are tokenized as the model was trained (its\n"
           "vocabulary, its lowercase setting), translated in batches of similar length,\n"
           "and detokenized. A model that reads subwords splits them into the pieces of\n"
           "the SentencePiece model it carries and decodes its pieces back into text;\n"
           "its units below are then pieces where they say words.\n\n"
           "Options:\n"
           "  -m, --model FILE     the model (or checkpoint) file\n"
           "  -i, --input FILE     source sentences (default: standard input)\n"
           "  -o, --output FILE    translations (default: standard output)\n"
           "  -b, --beam K         beam size; 1 is greedy decoding (default %d, the same as\n"
           "                       nmt align and nmt compare)\n"
           "      --alpha A        length normalisation: hypotheses are ranked by\n"
           "                       log-probability / length^A, the length counting </s>\n"
           "                       (default %.1f; 0 ranks by log-probability alone)\n"
           "      --max-ratio R    a translation stops after R x source words + %d words\n"
           "                       (default %.1f)\n"
           "      --n-best N       write the N best hypotheses of each sentence (N <= K),\n"
           "                       Moses style: 'i ||| translation ||| score' with i the\n"
           "                       0-based line number and score the normalised\n"
           "                       log-probability the search ranked by: the finished\n"
           "                       hypotheses best first, then any cut at the length\n"
           "                       limit, best first; an empty line\n"
           "                       gives one entry with an empty translation and score 0\n"
           "      --replace-unk    replace each <unk> in the output by the source word the\n"
           "                       model attended to most (attention models only)\n"
           "      --alignments F   write the attention of each translation to F, one JSON\n"
           "                       object a line: {\"source\": [...], \"target\": [...],\n"
           "                       \"attention\": [[...], ...]} (tokens with </s>; an empty\n"
           "                       line gives empty lists; attention models only)\n"
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
           "On a terminal a progress line is shown on stderr.\n",
           TRANSLATE_BEAM, (double)TRANSLATE_ALPHA, TRANSLATE_MAX_EXTRA,
           (double)TRANSLATE_MAX_RATIO, TRANSLATE_BATCH, 64 * TRANSLATE_BATCH);
}

typedef struct translate_args {
    const char *model, *input, *output, *alignments;
    translate_opts opts;
    int n_best_given, threads, quiet, verbose;
} translate_args;

static int parse_args(translate_args *a, int argc, char **argv)
{
    enum { OPT_RATIO = 256, OPT_NBEST, OPT_UNK, OPT_ALIGN };
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
        CLI_OPTION_BATCH_SIZE,
        CLI_OPTION_THREADS,
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    translate_opts_default(&a->opts);
    a->threads = cli_default_threads();
    nmt_decode_opts *d = &a->opts.decode;
    const cli_model_opts shared = {.beam = &d->beam, .alpha = &d->alpha,
                                   .batch_size = &a->opts.batch_size, .threads = &a->threads};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:i:o:b:qvh", long_options, NULL)) != -1) {
        switch (c) {
        case 'm': a->model = optarg; break;
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
        case OPT_UNK: a->opts.replace_unk = 1; break;
        case OPT_ALIGN: a->alignments = optarg; a->opts.alignments = 1; break;
        case 'q': a->quiet = 1; break;
        case 'v': a->verbose = 1; break;
        case 'h': help(); return -1;
        default: {
            int r = cli_model_option(c, optarg, &shared);
            if (r == 1)
                return cli_usage_error();
            if (r)
                return 2;
        }
        }
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s'", argv[optind]);
        return cli_usage_error();
    }
    if (!a->model) {
        cli_error("--model is required");
        return cli_usage_error();
    }
    if (d->n_best > d->beam) {
        cli_error("--n-best: %d is more than the beam (%d); raise --beam", d->n_best, d->beam);
        return 2;
    }
    if ((long)d->beam * a->opts.batch_size > 1L << 20) {
        cli_error("--beam %d x --batch-size %d: too many hypotheses at once", d->beam,
                  a->opts.batch_size);
        return 2;
    }
    return 0;
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
static int write_window(FILE *out, FILE *align, const translated *r, size_t n, size_t base,
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

static void free_window(char **lines, translated *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(lines[i]);
        translated_free(&r[i]);
    }
}

static FILE *open_output(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        cli_error("%s: cannot write: %s", path, strerror(errno));
    return f;
}

static int close_output(FILE *f, const char *path)
{
    if (!f)
        return 0;
    int bad = ferror(f);
    bad |= (f == stdout ? fflush(f) : fclose(f)) != 0;
    if (bad)
        cli_error("%s: write failed", f == stdout ? "standard output" : path);
    return bad ? -1 : 0;
}

static void remove_partial(const FILE *f, const char *path)
{
    struct stat st;
    if (f && path && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        unlink(path);
}

int cmd_translate(int argc, char **argv)
{
    translate_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    cli_set_threads(a.threads);
    nmt_model *m = NULL;
    translator *t = NULL;
    nmt_reader *in = NULL;
    FILE *out = NULL, *align = NULL;
    const size_t window = 64 * (size_t)a.opts.batch_size;
    char **lines = calloc(window, sizeof *lines);
    translated *res = calloc(window, sizeof *res);
    int status = 1;
    if (!lines || !res) {
        cli_error("out of memory");
        goto done;
    }
    double t_start = now_seconds(), t_loaded = 0, t_translating = 0;
    if (nmt_model_load(&m, a.model, NULL) || translator_create(&t, m, &a.opts) ||
        nmt_reader_open(&in, a.input ? a.input : "-")) {
        cli_lib_error();
        goto done;
    }
    out = a.output ? open_output(a.output) : stdout;
    if (!out || (a.alignments && !(align = open_output(a.alignments))))
        goto done;
    t_loaded = now_seconds() - t_start;
    progress_state prog = {0};
    int show = !a.quiet && isatty(STDERR_FILENO), warned = 0;
    for (;;) {
        size_t n = 0;
        const char *line;
        size_t len;
        while (n < window && (rc = nmt_reader_next(in, &line, &len)) == 1) {
            if (!(lines[n] = copy_string(line))) {
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
        if (n == 0)
            break;
        double t0 = now_seconds();
        int failed = translator_run(t, (const char *const *)lines, n, res,
                                    show ? show_progress : NULL, &prog);
        t_translating += now_seconds() - t0;
        if (failed) {
            free_window(lines, res, n);
            cli_error("%s: %s", nmt_reader_path(in), nmt_error_message());
            goto done;
        }
        /* said as soon as it shows, not after hours of translating <unk>s */
        size_t unk, units;
        translator_unknown(t, &unk, &units);
        if (!warned && cli_unknown_high(unk, units)) {
            if (prog.shown) /* below the progress line */
                fputc('\n', stderr);
            warned = cli_warn_unknown(a.input ? a.input : "the input", unk, units,
                                      nmt_units_name(m));
        }
        int bad = write_window(out, align, res, n, prog.base, a.n_best_given);
        free_window(lines, res, n);
        if (bad)
            goto done; /* close_output below names what failed */
        prog.base += n;
        if (rc == 0)
            break;
    }
    if (prog.shown)
        fputc('\n', stderr);
    if (a.verbose)
        fprintf(stderr,
                "nmt translate: %zu sentences, model loaded in %.3f s, translated in %.3f s "
                "(%.1f sentences/s)\n",
                prog.base, t_loaded, t_translating,
                t_translating > 0 ? (double)prog.base / t_translating : 0.0);
    status = 0;
done:
    if (close_output(align, a.alignments) || close_output(out, a.output))
        status = 1;
    if (status) {
        /* no partial output: remove what this run wrote (only regular files,
         * never a device or pipe given as the output) */
        remove_partial(align, a.alignments);
        remove_partial(out == stdout ? NULL : out, a.output);
    }
    nmt_reader_close(in);
    translator_free(t);
    nmt_model_free(m);
    free(lines);
    free(res);
    return status;
}
