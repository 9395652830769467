/* nmt bleu: corpus BLEU, chrF and chrF++ of a hypothesis file against
 * reference files, printed as sacreBLEU prints them. This file reads the
 * options; cli/bleu_run.c scores and prints. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bleu_cmd.h"
#include "commands.h"
#include "opts.h"
#include "nmt/bleu.h"
#include "nmt/chrf.h"
#include "nmt/error.h"

static void help(void)
{
    printf(
        "Usage: nmt bleu [OPTIONS] REF [REF...] < HYP\n"
        "       nmt bleu [OPTIONS] -i HYP REF [REF...]\n"
        "       nmt bleu [OPTIONS] REF HYP          (nothing on stdin, see below)\n\n"
        "Corpus BLEU (and with -m, chrF or chrF++) of the hypothesis (one detokenized\n"
        "sentence a line) against one or more reference files, computed and printed\n"
        "exactly as sacreBLEU %s does:\n"
        "  BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:%s = 48.53 82.4/..\n"
        "  chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:%s = 59.73\n"
        "Files may be plain text or gzip. The hypothesis and every reference must have\n"
        "the same number of lines.\n\n"
        "Where the hypothesis comes from: -i HYP if given; otherwise standard input,\n"
        "and every file named is a reference. One exception, for `nmt bleu REF HYP`:\n"
        "when exactly two files are named, there is no -i and standard input has\n"
        "nothing to read (a terminal, /dev/null, an empty file; not a pipe), the\n"
        "second file is the hypothesis (a note on stderr says so).\n\n"
        "Options:\n"
        "  -i, --input HYP        the hypothesis file ('-' for standard input)\n"
        "  -m, --metrics LIST     bleu (default), chrf, chrf++, or several joined by\n"
        "                         commas (-m bleu,chrf); may be repeated. Several print\n"
        "                         one line each, BLEU then chrF then chrF++, aligned on\n"
        "                         '=' as `sacrebleu -m bleu chrf` prints them\n"
        "  -l, --lc, --lowercase  case-insensitive scores (every metric: sacreBLEU's\n"
        "                         -lc for BLEU and --chrf-lowercase for chrF)\n"
        "BLEU:\n"
        "  -t, --tokenize KIND    13a (mteval-v13a, default) or none\n"
        "  -s, --smooth METHOD    exp (default), none, floor or add-k\n"
        "      --smooth-value X   the value of floor (default 0.1) or add-k (default 1)\n"
        "chrF (sacreBLEU's --chrf-* options):\n"
        "      --chrf-char-order N   character n-grams up to N (default 6; 0 to %d)\n"
        "      --chrf-word-order N   word n-grams up to N (default 0; 0 to %d); 2 is\n"
        "                            chrF++, which -m chrf++ also names\n"
        "      --chrf-beta N         recall weighs N times precision (default 2; 0\n"
        "                            to %d)\n"
        "      --chrf-whitespace     keep whitespace in character n-grams\n"
        "      --chrf-eps-smoothing  chrF++.py's smoothing (mean of per-order F-scores)\n"
        "                            instead of the effective order (eff:no)\n"
        "Output:\n"
        "  -w, --width N          decimals of the score (default 2; 0 to 10)\n"
        "      --json             sacreBLEU's JSON output (name, score, signature, ...);\n"
        "                         a list of objects for several metrics\n"
        "      --short            the short signature (#:1|c:mixed|e:no|...)\n"
        "  -b, --score-only       print the score alone (one line per metric)\n"
        "      --sentence         the score of each line (BLEU with the effective\n"
        "                         order, as sacreBLEU --sentence-level); one metric\n"
        "      --stats            print the sufficient statistics instead of a score,\n"
        "                         a line per metric: BLEU's hyp_len ref_len, matches\n"
        "                         n=1..4, n-grams n=1..4; chrF's hypothesis, reference\n"
        "                         and matching n-grams of each order in turn (the\n"
        "                         character orders, then the word orders)\n"
        "      --by-length        add a table of the scores per sentence-length bucket\n"
        "                         (1-10, 11-20, .., 41-50, 51+) with the sentences in\n"
        "                         each; the length is the whitespace-separated words of\n"
        "                         the --src line, or else of the first reference's line\n"
        "      --src FILE         the source sentences, for --by-length\n"
        "  -q, --quiet            no notes on stderr\n"
        "  -h, --help             this help\n\n"
        "sacreBLEU's own command line defaults to JSON with one decimal; `nmt bleu\n"
        "--json -w 1` prints what `sacrebleu REF -i HYP` prints. The signature names\n"
        "the sacreBLEU version whose algorithm and numbers this matches.\n",
        NMT_BLEU_SACREBLEU_VERSION, NMT_BLEU_SACREBLEU_VERSION, NMT_BLEU_SACREBLEU_VERSION,
        NMT_CHRF_MAX_CHAR_ORDER, NMT_CHRF_MAX_WORD_ORDER, NMT_CHRF_MAX_BETA);
}

/* -m LIST: comma-separated names, any case, added to those already chosen. */
static int parse_metrics(const char *list, int *chosen)
{
    static const char *const names[] = {"bleu", "chrf", "chrf++", NULL};
    char item[32];
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof item) {
            cli_error("--metrics: %s in '%s' (expected names among bleu, chrf, chrf++ joined by commas)",
                      n ? "an unknown name" : "an empty name", list);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            item[i] = (char)tolower((unsigned char)p[i]);
        item[n] = '\0';
        int k = opt_choice("--metrics", item, names);
        if (k < 0)
            return -1;
        chosen[k] = 1;
        if (!p[n])
            return 0;
        p += n + 1;
    }
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
    OPT_CHRF_CHAR_ORDER,
    OPT_CHRF_WORD_ORDER,
    OPT_CHRF_BETA,
    OPT_CHRF_WHITESPACE,
    OPT_CHRF_EPS,
};

/* The checks that need every option: an option of a metric that is not
 * chosen does nothing, which is refused rather than ignored. */
static int check_args(bleu_args *a, const char *bleu_opt, const char *chrf_opt,
                      int word_order_given)
{
    int n_metrics = a->metric[METRIC_BLEU] + a->metric[METRIC_CHRF] + a->metric[METRIC_CHRFPP];
    if (bleu_opt && !a->metric[METRIC_BLEU]) {
        cli_error("%s: a BLEU option, and bleu is not among --metrics", bleu_opt);
        return -1;
    }
    if (chrf_opt && !a->metric[METRIC_CHRF] && !a->metric[METRIC_CHRFPP]) {
        cli_error("%s: a chrF option, and neither chrf nor chrf++ is among --metrics", chrf_opt);
        return -1;
    }
    if (word_order_given && a->metric[METRIC_CHRFPP] && !a->metric[METRIC_CHRF] &&
        a->chrf[METRIC_CHRF].word_order != 2) {
        cli_error("--chrf-word-order: chrf++ is word order 2 (for another: -m chrf --chrf-word-order %d)",
                  a->chrf[METRIC_CHRF].word_order);
        return -1;
    }
    if (a->metric[METRIC_CHRF] && a->chrf[METRIC_CHRF].char_order + a->chrf[METRIC_CHRF].word_order == 0) {
        cli_error("--chrf-char-order: 0 needs --chrf-word-order 1 or more (nothing to count)");
        return -1;
    }
    if (a->src && !a->by_length) {
        cli_error("--src: only used with --by-length");
        return -1;
    }
    if (a->sentence && (a->json || a->by_length)) {
        cli_error("--sentence: cannot be combined with %s", a->json ? "--json" : "--by-length");
        return -1;
    }
    if (a->sentence && n_metrics > 1) {
        cli_error("--sentence: one metric at a time (as sacreBLEU's --sentence-level)");
        return -1;
    }
    return 0;
}

int cmd_bleu(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"input", required_argument, NULL, 'i'},
        {"metrics", required_argument, NULL, 'm'},
        {"metric", required_argument, NULL, 'm'},
        {"tokenize", required_argument, NULL, 't'},
        {"lc", no_argument, NULL, 'l'},
        {"lowercase", no_argument, NULL, 'l'},
        {"smooth", required_argument, NULL, 's'},
        {"smooth-method", required_argument, NULL, 's'},
        {"smooth-value", required_argument, NULL, OPT_SMOOTH_VALUE},
        {"chrf-char-order", required_argument, NULL, OPT_CHRF_CHAR_ORDER},
        {"chrf-word-order", required_argument, NULL, OPT_CHRF_WORD_ORDER},
        {"chrf-beta", required_argument, NULL, OPT_CHRF_BETA},
        {"chrf-whitespace", no_argument, NULL, OPT_CHRF_WHITESPACE},
        {"chrf-eps-smoothing", no_argument, NULL, OPT_CHRF_EPS},
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
    nmt_chrf_opts chrf;
    nmt_chrf_opts_init(&chrf);
    a.width = 2;
    int smooth_value_given = 0, metrics_given = 0, word_order_given = 0, k;
    double smooth_value = 0.0;
    const char *bleu_opt = NULL, *chrf_opt = NULL; /* the first of each kind given */

    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "i:m:t:ls:w:bqh", long_options, NULL)) != -1) {
        switch (c) {
        case 'i': a.hyp = optarg; break;
        case 'm':
            if (parse_metrics(optarg, a.metric))
                return 2;
            metrics_given = 1;
            break;
        case 't':
            if ((k = opt_choice("--tokenize", optarg, tokenizers)) < 0)
                return 2;
            a.opts.tokenize = k == 0 ? NMT_BLEU_TOK_13A : NMT_BLEU_TOK_NONE;
            bleu_opt = bleu_opt ? bleu_opt : "--tokenize";
            break;
        case 'l': a.opts.lowercase = chrf.lowercase = 1; break;
        case 's':
            if ((k = opt_choice("--smooth", optarg, smoothers)) < 0)
                return 2;
            a.opts.smooth = (nmt_bleu_smooth)k;
            bleu_opt = bleu_opt ? bleu_opt : "--smooth";
            break;
        case OPT_SMOOTH_VALUE:
            if (opt_double("--smooth-value", optarg, 0.0, 1e9, &smooth_value))
                return 2;
            smooth_value_given = 1;
            bleu_opt = bleu_opt ? bleu_opt : "--smooth-value";
            break;
        case OPT_CHRF_CHAR_ORDER:
            if (opt_int("--chrf-char-order", optarg, 0, NMT_CHRF_MAX_CHAR_ORDER, &chrf.char_order))
                return 2;
            chrf_opt = chrf_opt ? chrf_opt : "--chrf-char-order";
            break;
        case OPT_CHRF_WORD_ORDER:
            if (opt_int("--chrf-word-order", optarg, 0, NMT_CHRF_MAX_WORD_ORDER, &chrf.word_order))
                return 2;
            word_order_given = 1;
            chrf_opt = chrf_opt ? chrf_opt : "--chrf-word-order";
            break;
        case OPT_CHRF_BETA:
            if (opt_int("--chrf-beta", optarg, 0, NMT_CHRF_MAX_BETA, &chrf.beta))
                return 2;
            chrf_opt = chrf_opt ? chrf_opt : "--chrf-beta";
            break;
        case OPT_CHRF_WHITESPACE:
            chrf.whitespace = 1;
            chrf_opt = chrf_opt ? chrf_opt : "--chrf-whitespace";
            break;
        case OPT_CHRF_EPS:
            chrf.eps_smoothing = 1;
            chrf_opt = chrf_opt ? chrf_opt : "--chrf-eps-smoothing";
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
    if (!metrics_given)
        a.metric[METRIC_BLEU] = 1;
    a.opts.smooth_value = smooth_value_given ? smooth_value : nmt_bleu_smooth_default(a.opts.smooth);
    if (smooth_value_given && a.opts.smooth != NMT_BLEU_SMOOTH_FLOOR &&
        a.opts.smooth != NMT_BLEU_SMOOTH_ADD_K) {
        cli_error("--smooth-value: only floor and add-k smoothing take a value");
        return 2;
    }
    a.chrf[METRIC_CHRF] = chrf;
    a.chrf[METRIC_CHRFPP] = chrf;
    a.chrf[METRIC_CHRFPP].word_order = 2;
    if (check_args(&a, bleu_opt, chrf_opt, word_order_given))
        return 2;

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
    return bleu_run(&a);
}
