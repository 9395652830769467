/* nmt bleu: corpus BLEU of a hypothesis file against reference files, printed
 * as sacreBLEU prints it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "nmt/bleu.h"
#include "nmt/error.h"
#include "nmt/text.h"

static void help(void)
{
    printf(
        "Usage: nmt bleu [OPTIONS] REF [REF...] < HYP\n"
        "       nmt bleu [OPTIONS] -i HYP REF [REF...]\n"
        "       nmt bleu [OPTIONS] REF HYP          (nothing on stdin, see below)\n\n"
        "Corpus BLEU of the hypothesis (one detokenized sentence a line) against one or\n"
        "more reference files, computed and printed exactly as sacreBLEU %s does:\n"
        "  BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:%s = 48.53 82.4/..\n"
        "Files may be plain text or gzip. The hypothesis and every reference must have\n"
        "the same number of lines.\n\n"
        "Where the hypothesis comes from: -i HYP if given; otherwise standard input,\n"
        "and every file named is a reference. One exception, for `nmt bleu REF HYP`:\n"
        "when exactly two files are named, there is no -i and standard input has\n"
        "nothing to read (a terminal, /dev/null, an empty file; not a pipe), the\n"
        "second file is the hypothesis (a note on stderr says so).\n\n"
        "Options:\n"
        "  -i, --input HYP        the hypothesis file ('-' for standard input)\n"
        "  -t, --tokenize KIND    13a (mteval-v13a, default) or none\n"
        "  -l, --lc, --lowercase  case-insensitive BLEU\n"
        "  -s, --smooth METHOD    exp (default), none, floor or add-k\n"
        "      --smooth-value X   the value of floor (default 0.1) or add-k (default 1)\n"
        "  -w, --width N          decimals of the score (default 2; 0 to 10)\n"
        "      --json             sacreBLEU's JSON output (name, score, signature, ...)\n"
        "      --short            the short signature (#:1|c:mixed|e:no|...)\n"
        "  -b, --score-only       print the score alone\n"
        "      --sentence         sentence BLEU for each line (effective order, as\n"
        "                         sacreBLEU --sentence-level)\n"
        "      --stats            print the sufficient statistics instead of a score:\n"
        "                         hyp_len ref_len, matches n=1..4, n-grams n=1..4\n"
        "      --by-length        add a table of BLEU per sentence-length bucket (1-10,\n"
        "                         11-20, .., 41-50, 51+) with the sentences in each;\n"
        "                         the length is the whitespace-separated words of the\n"
        "                         --src line, or else of the first reference's line\n"
        "      --src FILE         the source sentences, for --by-length\n"
        "  -q, --quiet            no notes on stderr\n"
        "  -h, --help             this help\n\n"
        "sacreBLEU's own command line defaults to JSON with one decimal; `nmt bleu\n"
        "--json -w 1` prints what `sacrebleu REF -i HYP` prints. The signature names\n"
        "the sacreBLEU version whose algorithm and numbers this matches.\n",
        NMT_BLEU_SACREBLEU_VERSION, NMT_BLEU_SACREBLEU_VERSION);
}

typedef struct bleu_args {
    const char *hyp;
    const char **refs;
    size_t n_refs;
    const char *src;
    nmt_bleu_opts opts;
    int width, json, short_sig, score_only, sentence, stats, by_length;
} bleu_args;

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

static void print_stats(const nmt_bleu_stats *st)
{
    printf("%ld %ld", st->sys_len, st->ref_len);
    for (int n = 0; n < NMT_BLEU_ORDER; n++)
        printf(" %ld", st->correct[n]);
    for (int n = 0; n < NMT_BLEU_ORDER; n++)
        printf(" %ld", st->total[n]);
    putchar('\n');
}

/* One result in sacreBLEU's text form: "BLEU|SIG = 48.53 VERBOSE". */
static void print_text(const nmt_bleu_score *s, const char *sig, const bleu_args *a)
{
    char verbose[256];
    nmt_bleu_verbose(verbose, sizeof verbose, s);
    if (a->score_only)
        printf("%.*f\n", a->width, s->score);
    else
        printf("BLEU|%s = %.*f %s\n", sig, a->width, s->score, verbose);
}

/* sacreBLEU's JSON (json.dumps with indent=1): name, score, signature,
 * verbose_score, then each signature field as a string. */
static void print_json(const nmt_bleu_score *s, const char *sig, const bleu_args *a,
                       const nmt_bleu *buckets[], const size_t *bucket_count)
{
    char num[64], verbose[256];
    json_number(num, sizeof num, s->score, a->width);
    nmt_bleu_verbose(verbose, sizeof verbose, s);
    printf("{\n \"name\": \"BLEU\",\n \"score\": %s,\n \"signature\": \"%s\",\n"
           " \"verbose_score\": \"%s\"", num, sig, verbose);
    /* The fields, split from the signature "k:v|k:v|..." as sacreBLEU does. */
    char fields[512];
    snprintf(fields, sizeof fields, "%s", sig);
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
            nmt_bleu_score bs;
            nmt_bleu_result(buckets[k], &bs);
            json_number(num, sizeof num, bs.score, a->width);
            printf("%s\n  {\n   \"length\": \"%s\",\n   \"sentences\": %zu,\n   \"score\": %s\n  }",
                   k ? "," : "", nmt_bleu_bucket_label(k), bucket_count[k],
                   bucket_count[k] ? num : "null");
        }
        printf("\n ]");
    }
    printf("\n}\n");
}

static void print_by_length(nmt_bleu *const buckets[], const size_t *count, const bleu_args *a)
{
    printf("\n%-8s %9s %7s\n", "length", "sentences", "BLEU");
    for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++) {
        nmt_bleu_score s;
        nmt_bleu_result(buckets[k], &s);
        if (count[k])
            printf("%-8s %9zu %7.*f\n", nmt_bleu_bucket_label(k), count[k], a->width, s.score);
        else
            printf("%-8s %9zu %7s\n", nmt_bleu_bucket_label(k), count[k], "-");
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

/* ---- the command ------------------------------------------------------------ */

static int run(const bleu_args *a)
{
    inputs in = {0};
    nmt_bleu *corpus = NULL;
    nmt_bleu *buckets[NMT_BLEU_N_BUCKETS] = {0};
    size_t bucket_count[NMT_BLEU_N_BUCKETS] = {0};
    int status = 1;
    char sig[256];

    if (open_inputs(&in, a))
        goto done;
    nmt_bleu_opts sent_opts = a->opts;
    sent_opts.effective_order = 1;
    if (nmt_bleu_create(&corpus, &a->opts)) {
        cli_lib_error();
        goto done;
    }
    for (int k = 0; a->by_length && k < NMT_BLEU_N_BUCKETS; k++)
        if (nmt_bleu_create(&buckets[k], &a->opts)) {
            cli_lib_error();
            goto done;
        }
    if (a->sentence)
        nmt_bleu_signature(sig, sizeof sig, &sent_opts, (long)a->n_refs, a->short_sig);

    int rc;
    while ((rc = next_lines(&in)) == 1) {
        const char *hyp = in.line[0];
        const char *const *refs = in.line + 1;
        nmt_bleu_stats st;
        if (nmt_bleu_add(corpus, &st, hyp, refs, a->n_refs)) {
            cli_lib_error();
            goto done;
        }
        if (a->sentence) {
            nmt_bleu_score s;
            nmt_bleu_compute(&s, &st, &sent_opts);
            if (a->stats)
                print_stats(&st);
            else
                print_text(&s, sig, a);
        }
        if (a->by_length) {
            const char *ruler = a->src ? in.line[in.n - 1] : refs[0];
            int k = nmt_bleu_bucket(nmt_bleu_count_words(ruler));
            nmt_bleu_add_stats(buckets[k], &st, a->n_refs);
            bucket_count[k]++;
        }
    }
    if (rc < 0)
        goto done;
    if (nmt_bleu_sentences(corpus) == 0) {
        cli_error("%s: no sentences", nmt_reader_path(in.r[0]));
        goto done;
    }
    if (!a->sentence) {
        nmt_bleu_score s;
        nmt_bleu_result(corpus, &s);
        nmt_bleu_signature(sig, sizeof sig, &a->opts, nmt_bleu_nrefs(corpus), a->short_sig && !a->json);
        if (a->stats)
            print_stats(nmt_bleu_totals(corpus));
        else if (a->json && !a->score_only) /* sacreBLEU: -b wins over JSON */
            print_json(&s, sig, a, a->by_length ? (const nmt_bleu **)buckets : NULL, bucket_count);
        else
            print_text(&s, sig, a);
        if (a->by_length && !a->json)
            print_by_length(buckets, bucket_count, a);
    }
    status = fflush(stdout) ? 1 : 0;
    if (status)
        cli_error("cannot write the output");
done:
    for (int k = 0; k < NMT_BLEU_N_BUCKETS; k++)
        nmt_bleu_free(buckets[k]);
    nmt_bleu_free(corpus);
    close_inputs(&in);
    return status;
}

/* Whether standard input can hold a hypothesis: a pipe, a socket or a
 * non-empty file. A terminal, /dev/null, an empty file or a closed stdin
 * cannot, which lets `nmt bleu REF HYP` mean what it says. */
static int stdin_has_text(void)
{
    struct stat st;
    if (isatty(STDIN_FILENO) || fstat(STDIN_FILENO, &st) != 0)
        return 0;
    if (S_ISREG(st.st_mode))
        return st.st_size > 0;
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
}

enum {
    OPT_SMOOTH_VALUE = 256,
    OPT_JSON,
    OPT_SHORT,
    OPT_SENTENCE,
    OPT_STATS,
    OPT_BY_LENGTH,
    OPT_SRC,
    OPT_FORMAT,
};

int cmd_bleu(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"input", required_argument, NULL, 'i'},
        {"tokenize", required_argument, NULL, 't'},
        {"lc", no_argument, NULL, 'l'},
        {"lowercase", no_argument, NULL, 'l'},
        {"smooth", required_argument, NULL, 's'},
        {"smooth-method", required_argument, NULL, 's'},
        {"smooth-value", required_argument, NULL, OPT_SMOOTH_VALUE},
        {"width", required_argument, NULL, 'w'},
        {"json", no_argument, NULL, OPT_JSON},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"short", no_argument, NULL, OPT_SHORT},
        {"score-only", no_argument, NULL, 'b'},
        {"sentence", no_argument, NULL, OPT_SENTENCE},
        {"sentence-level", no_argument, NULL, OPT_SENTENCE},
        {"stats", no_argument, NULL, OPT_STATS},
        {"by-length", no_argument, NULL, OPT_BY_LENGTH},
        {"src", required_argument, NULL, OPT_SRC},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const char *const tokenizers[] = {"13a", "none", NULL};
    static const char *const smoothers[] = {"exp", "none", "floor", "add-k", NULL};
    static const char *const formats[] = {"text", "json", NULL};
    bleu_args a = {0};
    nmt_bleu_opts_init(&a.opts);
    a.width = 2;
    int smooth_value_given = 0, k;
    double smooth_value = 0.0;

    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "i:t:ls:w:bqh", long_options, NULL)) != -1) {
        switch (c) {
        case 'i': a.hyp = optarg; break;
        case 't':
            if ((k = opt_choice("--tokenize", optarg, tokenizers)) < 0)
                return 2;
            a.opts.tokenize = k == 0 ? NMT_BLEU_TOK_13A : NMT_BLEU_TOK_NONE;
            break;
        case 'l': a.opts.lowercase = 1; break;
        case 's':
            if ((k = opt_choice("--smooth", optarg, smoothers)) < 0)
                return 2;
            a.opts.smooth = (nmt_bleu_smooth)k;
            break;
        case OPT_SMOOTH_VALUE:
            if (opt_double("--smooth-value", optarg, 0.0, 1e9, &smooth_value))
                return 2;
            smooth_value_given = 1;
            break;
        case 'w':
            if (opt_int("--width", optarg, 0, 10, &a.width))
                return 2;
            break;
        case OPT_JSON: a.json = 1; break;
        case OPT_FORMAT:
            if ((k = opt_choice("--format", optarg, formats)) < 0)
                return 2;
            a.json = k == 1;
            break;
        case OPT_SHORT: a.short_sig = 1; break;
        case 'b': a.score_only = 1; break;
        case OPT_SENTENCE: a.sentence = 1; break;
        case OPT_STATS: a.stats = 1; break;
        case OPT_BY_LENGTH: a.by_length = 1; break;
        case OPT_SRC: a.src = optarg; break;
        case 'q': cli_verbosity = 0; break;
        case 'h': help(); return 0;
        default: return cli_usage_error();
        }
    }
    a.opts.smooth_value = smooth_value_given ? smooth_value : nmt_bleu_smooth_default(a.opts.smooth);
    if (smooth_value_given && a.opts.smooth != NMT_BLEU_SMOOTH_FLOOR &&
        a.opts.smooth != NMT_BLEU_SMOOTH_ADD_K) {
        cli_error("--smooth-value: only floor and add-k smoothing take a value");
        return 2;
    }
    if (a.src && !a.by_length) {
        cli_error("--src: only used with --by-length");
        return 2;
    }
    if (a.sentence && (a.json || a.by_length)) {
        cli_error("--sentence: cannot be combined with %s", a.json ? "--json" : "--by-length");
        return 2;
    }

    int n_files = argc - optind;
    if (!a.hyp && n_files == 2 && !stdin_has_text()) {
        a.hyp = argv[argc - 1];
        n_files = 1;
        if (cli_verbosity > 0)
            fprintf(stderr, "nmt bleu: note: reading the hypothesis from %s (two files named, no -i, "
                            "nothing on standard input)\n", a.hyp);
    }
    if (n_files < 1) {
        cli_error("no reference file given");
        return cli_usage_error();
    }
    if (!a.hyp)
        a.hyp = "-";
    a.refs = (const char **)(argv + optind);
    a.n_refs = (size_t)n_files;
    return run(&a);
}
