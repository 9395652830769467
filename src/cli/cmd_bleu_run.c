/* nmt bleu's run: reads the hypothesis and the references line by line,
 * feeds every chosen metric (BLEU, chrF, chrF++) and prints the scores as
 * sacreBLEU's command line prints them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_bleu.h"
#include "cli_opts.h"
#include "nmt/error.h"
#include "nmt/text.h"

/* ---- one metric's accumulator ---------------------------------------------- */

typedef struct scorer {
    int metric; /* METRIC_*; the accumulator of its kind is set */
    nmt_bleu *bleu;
    nmt_chrf *chrf;
} scorer;

/* The statistics of one sentence, of whichever kind. */
typedef struct sent_stats {
    nmt_bleu_stats bleu;
    nmt_chrf_stats chrf;
} sent_stats;

/* One printed result: "NAME|SIG = SCORE VERBOSE". */
typedef struct result {
    char name[32];
    char sig[256];
    char verbose[256]; /* BLEU's precisions and lengths; empty for chrF */
    double score;
} result;

static int scorer_create(scorer *s, int metric, const bleu_args *a)
{
    s->metric = metric;
    int rc = metric == METRIC_BLEU ? nmt_bleu_create(&s->bleu, &a->opts)
                                   : nmt_chrf_create(&s->chrf, &a->chrf[metric]);
    if (rc)
        cli_lib_error();
    return rc ? -1 : 0;
}

static void scorer_free(scorer *s)
{
    nmt_bleu_free(s->bleu);
    nmt_chrf_free(s->chrf);
    s->bleu = NULL;
    s->chrf = NULL;
}

static int scorer_add(scorer *s, sent_stats *st, const char *hyp, const char *const *refs,
                      size_t n_refs)
{
    int rc = s->bleu ? nmt_bleu_add(s->bleu, &st->bleu, hyp, refs, n_refs)
                     : nmt_chrf_add(s->chrf, &st->chrf, hyp, refs, n_refs);
    if (rc)
        cli_lib_error();
    return rc ? -1 : 0;
}

static void scorer_add_stats(scorer *s, const sent_stats *st, size_t n_refs)
{
    if (s->bleu)
        nmt_bleu_add_stats(s->bleu, &st->bleu, n_refs);
    else
        nmt_chrf_add_stats(s->chrf, &st->chrf, n_refs);
}

static size_t scorer_sentences(const scorer *s)
{
    return s->bleu ? nmt_bleu_sentences(s->bleu) : nmt_chrf_sentences(s->chrf);
}

/* The result of the corpus so far, or (`sentence`) of one sentence's
 * statistics as sacreBLEU's --sentence-level scores it: BLEU then takes the
 * effective order, chrF is unchanged. */
static void scorer_result(const scorer *s, result *out, const sent_stats *sentence, long nrefs,
                          int short_sig)
{
    memset(out, 0, sizeof *out);
    if (s->bleu) {
        nmt_bleu_opts o = *nmt_bleu_options(s->bleu);
        nmt_bleu_score bs;
        if (sentence) {
            o.effective_order = 1;
            nmt_bleu_compute(&bs, &sentence->bleu, &o);
        } else {
            nmt_bleu_result(s->bleu, &bs);
        }
        snprintf(out->name, sizeof out->name, "BLEU");
        nmt_bleu_signature(out->sig, sizeof out->sig, &o, nrefs, short_sig);
        nmt_bleu_verbose(out->verbose, sizeof out->verbose, &bs);
        out->score = bs.score;
    } else {
        const nmt_chrf_opts *o = nmt_chrf_options(s->chrf);
        nmt_chrf_name(out->name, sizeof out->name, o);
        nmt_chrf_signature(out->sig, sizeof out->sig, o, nrefs, short_sig);
        out->score = sentence ? nmt_chrf_compute(&sentence->chrf, o) : nmt_chrf_result(s->chrf);
    }
}

static long scorer_nrefs(const scorer *s)
{
    return s->bleu ? nmt_bleu_nrefs(s->bleu) : nmt_chrf_nrefs(s->chrf);
}

/* ---- printing ------------------------------------------------------------ */

/* The score as JSON shows it: sacreBLEU rounds to `width` decimals, makes a
 * Python float of that and prints its repr, so "48.50" appears as 48.5 and
 * "49" as 49.0. */
static void json_number(char *buf, size_t cap, double x, int width)
{
    snprintf(buf, cap, "%.*f", width, x);
    char *dot = strchr(buf, '.');
    if (!dot) {
        strncat(buf, ".0", cap - strlen(buf) - 1);
        return;
    }
    char *end = buf + strlen(buf) - 1;
    while (end > dot + 1 && *end == '0')
        *end-- = '\0';
}

/* The sufficient statistics: BLEU's hyp_len ref_len, matches n=1..4,
 * n-grams n=1..4; chrF's hypothesis, reference and matching n-grams of each
 * order in turn, as sacreBLEU lists them. */
static void print_stats(const scorer *s, const sent_stats *st)
{
    if (s->bleu) {
        const nmt_bleu_stats *b = &st->bleu;
        printf("%ld %ld", b->sys_len, b->ref_len);
        for (int n = 0; n < NMT_BLEU_ORDER; n++)
            printf(" %ld", b->correct[n]);
        for (int n = 0; n < NMT_BLEU_ORDER; n++)
            printf(" %ld", b->total[n]);
    } else {
        const nmt_chrf_opts *o = nmt_chrf_options(s->chrf);
        for (int k = 0; k < o->char_order + o->word_order; k++)
            printf("%s%ld %ld %ld", k ? " " : "", st->chrf.hyp[k], st->chrf.ref[k], st->chrf.match[k]);
    }
    putchar('\n');
}

static void stats_of_totals(const scorer *s, sent_stats *st)
{
    memset(st, 0, sizeof *st);
    if (s->bleu)
        st->bleu = *nmt_bleu_totals(s->bleu);
    else
        st->chrf = *nmt_chrf_totals(s->chrf);
}

/* One result in sacreBLEU's text form, into buf. */
static void text_line(char *buf, size_t cap, const result *r, const bleu_args *a)
{
    if (a->score_only)
        snprintf(buf, cap, "%.*f", a->width, r->score);
    else
        snprintf(buf, cap, "%s|%s = %.*f%s%s", r->name, r->sig, a->width, r->score,
                 r->verbose[0] ? " " : "", r->verbose);
}

/* sacreBLEU's print_single_results for text: several lines are aligned on
 * their first '=' by right-justifying what stands before it; lines without
 * one (scores only) are printed as they are, first. */
static void print_text_lines(char lines[][640], int n)
{
    size_t left[N_METRICS], w = 0;
    int aligned[N_METRICS];
    for (int i = 0; i < n; i++) {
        char *eq = strchr(lines[i], '=');
        aligned[i] = n > 1 && eq && eq > lines[i];
        if (!aligned[i]) {
            printf("%s\n", lines[i]);
            continue;
        }
        left[i] = (size_t)(eq - lines[i]) - 1;
        w = left[i] > w ? left[i] : w;
    }
    for (int i = 0; i < n; i++)
        if (aligned[i])
            printf("%*s%s\n", (int)(w - left[i]), "", lines[i]);
}

/* sacreBLEU's JSON (json.dumps with indent=1): name, score, signature,
 * verbose_score (BLEU), then each signature field as a string; no newline
 * after the closing brace. `buckets` adds nmt's table by length. */
static void print_json_object(const result *r, const bleu_args *a, scorer *const *buckets,
                              const size_t *bucket_count, int metric_index)
{
    char num[64];
    json_number(num, sizeof num, r->score, a->width);
    printf("{\n \"name\": \"%s\",\n \"score\": %s,\n \"signature\": \"%s\"", r->name, num, r->sig);
    if (r->verbose[0])
        printf(",\n \"verbose_score\": \"%s\"", r->verbose);
    /* The fields, split from the signature "k:v|k:v|..." as sacreBLEU does. */
    char fields[512];
    snprintf(fields, sizeof fields, "%s", r->sig);
    for (char *save = NULL, *kv = strtok_r(fields, "|", &save); kv; kv = strtok_r(NULL, "|", &save)) {
        char *colon = strchr(kv, ':');
        if (colon) {
            *colon = '\0';
            printf(",\n \"%s\": \"%s\"", kv, colon + 1);
        }
    }
    if (buckets) {
        printf(",\n \"by_length\": [");
        for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++) {
            result br;
            scorer_result(&buckets[k][metric_index], &br, NULL, 0, 0);
            json_number(num, sizeof num, br.score, a->width);
            printf("%s\n  {\n   \"length\": \"%s\",\n   \"sentences\": %zu,\n   \"score\": %s\n  }",
                   k ? "," : "", nmt_bleu_bucket_label(k), bucket_count[k],
                   bucket_count[k] ? num : "null");
        }
        printf("\n ]");
    }
    printf("\n}");
}

/* The table by length: one column per metric. */
static void print_by_length(scorer *const *buckets, const size_t *count, int n_metrics,
                            const bleu_args *a)
{
    printf("\n%-8s %9s", "length", "sentences");
    for (int m = 0; m < n_metrics; m++) {
        result r;
        scorer_result(&buckets[0][m], &r, NULL, 0, 0);
        printf(" %7s", r.name);
    }
    putchar('\n');
    for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++) {
        printf("%-8s %9zu", nmt_bleu_bucket_label(k), count[k]);
        for (int m = 0; m < n_metrics; m++) {
            result r;
            scorer_result(&buckets[k][m], &r, NULL, 0, 0);
            if (count[k])
                printf(" %7.*f", a->width, r.score);
            else
                printf(" %7s", "-");
        }
        putchar('\n');
    }
}

/* ---- reading -------------------------------------------------------------- */

/* The readers of one run: [0] the hypothesis, [1..n_refs] the references,
 * then the source when --by-length has one. */
typedef struct inputs {
    nmt_reader **r;
    size_t n;
    const char **line;
} inputs;

static void close_inputs(inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        nmt_reader_close(in->r[i]);
    free(in->r);
    free(in->line);
}

static int open_inputs(inputs *in, const bleu_args *a)
{
    in->n = 1 + a->n_refs + (a->src ? 1 : 0);
    in->r = calloc(in->n, sizeof *in->r);
    in->line = calloc(in->n, sizeof *in->line);
    if (!in->r || !in->line) {
        cli_error("out of memory");
        return -1;
    }
    for (size_t i = 0; i < in->n; i++) {
        const char *path = i == 0 ? a->hyp : i <= a->n_refs ? a->refs[i - 1] : a->src;
        if (nmt_reader_open(&in->r[i], path)) {
            cli_lib_error();
            return -1;
        }
    }
    return 0;
}

/* After one file ended before another: count every file to the end, so that
 * the message names all of them with their line counts. */
static void report_line_counts(inputs *in)
{
    char msg[2048] = "line counts differ:";
    int hint = 0;
    for (size_t i = 0; i < in->n; i++) {
        const char *line;
        size_t len;
        size_t lines = nmt_reader_lineno(in->r[i]);
        int rc;
        while ((rc = nmt_reader_next(in->r[i], &line, &len)) == 1)
            lines = nmt_reader_lineno(in->r[i]);
        if (rc < 0) {
            cli_lib_error();
            return;
        }
        size_t used = strlen(msg);
        snprintf(msg + used, sizeof msg - used, "%s %s has %zu line%s", i ? "," : "",
                 nmt_reader_path(in->r[i]), lines, lines == 1 ? "" : "s");
        if (i == 0 && lines == 0 && !strcmp(nmt_reader_path(in->r[0]), "<stdin>"))
            hint = 1;
    }
    cli_error("%s%s", msg, hint ? " (the hypothesis is read from standard input unless -i HYP names it)" : "");
}

/* Reads the next line of every file: 1 when all have one, 0 when all ended
 * together, -1 on an error (reported). */
static int next_lines(inputs *in)
{
    size_t got = 0;
    for (size_t i = 0; i < in->n; i++) {
        size_t len;
        int rc = nmt_reader_next(in->r[i], &in->line[i], &len);
        if (rc < 0) {
            cli_lib_error();
            return -1;
        }
        got += rc == 1;
    }
    if (got == in->n)
        return 1;
    if (got == 0)
        return 0;
    report_line_counts(in);
    return -1;
}

/* ---- the run ------------------------------------------------------------------ */

/* The corpus results, printed as sacreBLEU prints one system's. */
static void print_corpus(scorer *corpus, int n_metrics, const bleu_args *a, scorer *const *buckets,
                         const size_t *bucket_count)
{
    char lines[N_METRICS][640];
    if (a->stats) {
        for (int m = 0; m < n_metrics; m++) {
            sent_stats st;
            stats_of_totals(&corpus[m], &st);
            print_stats(&corpus[m], &st);
        }
    } else if (a->json) {
        /* several results make a list; -b turns each into its bare score */
        if (n_metrics > 1)
            printf("[\n");
        for (int m = 0; m < n_metrics; m++) {
            result r;
            scorer_result(&corpus[m], &r, NULL, scorer_nrefs(&corpus[m]), 0);
            if (m)
                printf(",\n");
            if (a->score_only)
                printf("%.*f", a->width, r.score);
            else
                print_json_object(&r, a, a->by_length ? buckets : NULL, bucket_count, m);
        }
        printf(n_metrics > 1 ? "\n]\n" : "\n");
    } else {
        for (int m = 0; m < n_metrics; m++) {
            result r;
            scorer_result(&corpus[m], &r, NULL, scorer_nrefs(&corpus[m]), a->short_sig);
            text_line(lines[m], sizeof lines[m], &r, a);
        }
        print_text_lines(lines, n_metrics);
    }
    if (a->by_length && !a->json)
        print_by_length(buckets, bucket_count, n_metrics, a);
}

int bleu_run(const bleu_args *a)
{
    inputs in = {0};
    scorer corpus[N_METRICS] = {{0}};
    scorer buckets_mem[NMT_BLEU_N_BUCKETS][N_METRICS] = {{{0}}};
    scorer *buckets[NMT_BLEU_N_BUCKETS];
    size_t bucket_count[NMT_BLEU_N_BUCKETS] = {0};
    int n_metrics = 0, status = 1;

    for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++)
        buckets[k] = buckets_mem[k];
    if (open_inputs(&in, a))
        goto done;
    for (int metric = 0; metric < N_METRICS; metric++) {
        if (!a->metric[metric])
            continue;
        if (scorer_create(&corpus[n_metrics], metric, a))
            goto done;
        for (int k = 0; a->by_length && k < NMT_BLEU_N_BUCKETS; k++)
            if (scorer_create(&buckets[k][n_metrics], metric, a))
                goto done;
        n_metrics++;
    }

    int rc;
    while ((rc = next_lines(&in)) == 1) {
        const char *hyp = in.line[0];
        const char *const *refs = in.line + 1;
        int k = 0;
        if (a->by_length) {
            const char *ruler = a->src ? in.line[in.n - 1] : refs[0];
            k = nmt_bleu_bucket(nmt_bleu_count_words(ruler));
            bucket_count[k]++;
        }
        for (int m = 0; m < n_metrics; m++) {
            sent_stats st;
            if (scorer_add(&corpus[m], &st, hyp, refs, a->n_refs))
                goto done;
            if (a->sentence && a->stats) {
                print_stats(&corpus[m], &st);
            } else if (a->sentence) {
                result r;
                char line[640];
                scorer_result(&corpus[m], &r, &st, (long)a->n_refs, a->short_sig);
                text_line(line, sizeof line, &r, a);
                printf("%s\n", line);
            }
            if (a->by_length)
                scorer_add_stats(&buckets[k][m], &st, a->n_refs);
        }
    }
    if (rc < 0)
        goto done;
    if (scorer_sentences(&corpus[0]) == 0) {
        cli_error("%s: no sentences", nmt_reader_path(in.r[0]));
        goto done;
    }
    if (!a->sentence)
        print_corpus(corpus, n_metrics, a, buckets, bucket_count);
    status = fflush(stdout) ? 1 : 0;
    if (status)
        cli_error("cannot write the output");
done:
    for (int m = 0; m < N_METRICS; m++) {
        scorer_free(&corpus[m]);
        for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++)
            scorer_free(&buckets[k][m]);
    }
    close_inputs(&in);
    return status;
}
