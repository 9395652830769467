/* nmt bleu: corpus BLEU, chrF and chrF++ of a hypothesis file against
 * reference files, printed as sacreBLEU prints them. This file reads the
 * options; cmd_bleu_run.c scores and prints. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_bleu.h"
#include "commands.h"
#include "cli_opts.h"
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
        "Options may stand before, between or after the files. sacreBLEU's spellings\n"
        "mean what they mean in sacreBLEU: its single-dash words (-lc, -tok, -sl, -sh,\n"
        "-sv, -cc, -cw, -nc, also as -tok=none) as well as its letters, and\n"
        "-m bleu chrf as well as -m bleu,chrf.\n\n"
        "Options:\n"
        "  -i, --input HYP        the hypothesis file ('-' for standard input)\n"
        "  -m, --metrics LIST     bleu (default), chrf, chrf++, or several joined by\n"
        "                         commas (-m bleu,chrf) or spaces (-m bleu chrf); may\n"
        "                         be repeated. Several print one line each, BLEU then\n"
        "                         chrF then chrF++, aligned on '=' as sacreBLEU does\n"
        "      --lc               case-insensitive scores, every metric\n"
        "  -l, --language-pair SRC-TRG\n"
        "                         sacreBLEU's language pair (en-de); it changes nothing,\n"
        "                         but with BLEU and no -tok a zh, ja or ko target is\n"
        "                         refused (sacreBLEU would take a tokenizer nmt lacks)\n"
        "  -e, --encoding utf-8   the only encoding nmt bleu reads\n"
        "BLEU:\n"
        "  -tok, -t, --tokenize KIND\n"
        "                         13a (mteval-v13a, default) or none\n"
        "  -lc, --lowercase       case-insensitive BLEU\n"
        "  -s, --smooth-method, --smooth METHOD\n"
        "                         exp (default), none, floor or add-k\n"
        "  -sv, --smooth-value X  the value of floor (default 0.1) or add-k (default 1)\n"
        "      --force            does nothing (nmt bleu never warns about tokenized\n"
        "                         input; sacreBLEU's --force silences that warning)\n"
        "chrF (sacreBLEU's --chrf-* options):\n"
        "  -cc, --chrf-char-order N  character n-grams up to N (default 6; 0 to %d)\n"
        "  -cw, --chrf-word-order N  word n-grams up to N (default 0; 0 to %d); 2 is\n"
        "                            chrF++, which -m chrf++ also names\n"
        "      --chrf-beta N         recall weighs N times precision (default 2; 0\n"
        "                            to %d)\n"
        "      --chrf-whitespace     keep whitespace in character n-grams\n"
        "      --chrf-lowercase      case-insensitive chrF\n"
        "      --chrf-eps-smoothing  chrF++.py's smoothing (mean of per-order F-scores)\n"
        "                            instead of the effective order (eff:no)\n"
        "Output:\n"
        "  -f, --format FORMAT    text (default) or json: sacreBLEU's JSON (name, score,\n"
        "                         signature, verbose_score for BLEU, then each field of\n"
        "                         the signature), a list of objects for several metrics\n"
        "      --json             -f json\n"
        "  -w, --width N          decimals of the score (default 2; 0 to 10)\n"
        "  -sh, --short           the short signature (#:1|c:mixed|e:no|...); JSON keeps\n"
        "                         the long one, as in sacreBLEU\n"
        "  -b, --score-only       print the score alone (one line per metric)\n"
        "  -sl, --sentence-level, --sentence\n"
        "                         the score of each line (BLEU with the effective\n"
        "                         order, as sacreBLEU does); one metric\n"
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
        "  -nc, --no-color        does nothing (nmt bleu prints no colours)\n"
        "  -h, --help             this help\n\n"
        "sacreBLEU's own command line defaults to JSON with one decimal; `nmt bleu\n"
        "-f json -w 1` prints what `sacrebleu REF -i HYP` prints. The signature names\n"
        "the sacreBLEU version whose algorithm and numbers this matches. Not offered:\n"
        "sacreBLEU's test sets (its -t; here -t is -tok: give the reference files),\n"
        "TER, confidence intervals and significance tests.\n",
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
    OPT_TOKENIZE,
    OPT_LC,
    OPT_LOWERCASE,
    OPT_JSON,
    OPT_SHORT,
    OPT_SENTENCE,
    OPT_STATS,
    OPT_BY_LENGTH,
    OPT_SRC,
    OPT_CHRF_CHAR_ORDER,
    OPT_CHRF_WORD_ORDER,
    OPT_CHRF_BETA,
    OPT_CHRF_WHITESPACE,
    OPT_CHRF_LOWERCASE,
    OPT_CHRF_EPS,
    OPT_IGNORED,
};

static const char short_options[] = "i:m:t:l:e:s:f:w:bqh";
static const struct option long_options[] = {
    {"input", required_argument, NULL, 'i'},
    {"metrics", required_argument, NULL, 'm'},
    {"metric", required_argument, NULL, 'm'},
    {"language-pair", required_argument, NULL, 'l'},
    {"encoding", required_argument, NULL, 'e'},
    {"tokenize", required_argument, NULL, OPT_TOKENIZE},
    {"lc", no_argument, NULL, OPT_LC},
    {"lowercase", no_argument, NULL, OPT_LOWERCASE},
    {"smooth", required_argument, NULL, 's'},
    {"smooth-method", required_argument, NULL, 's'},
    {"smooth-value", required_argument, NULL, OPT_SMOOTH_VALUE},
    {"force", no_argument, NULL, OPT_IGNORED},
    {"chrf-char-order", required_argument, NULL, OPT_CHRF_CHAR_ORDER},
    {"chrf-word-order", required_argument, NULL, OPT_CHRF_WORD_ORDER},
    {"chrf-beta", required_argument, NULL, OPT_CHRF_BETA},
    {"chrf-whitespace", no_argument, NULL, OPT_CHRF_WHITESPACE},
    {"chrf-lowercase", no_argument, NULL, OPT_CHRF_LOWERCASE},
    {"chrf-eps-smoothing", no_argument, NULL, OPT_CHRF_EPS},
    {"width", required_argument, NULL, 'w'},
    {"json", no_argument, NULL, OPT_JSON},
    {"format", required_argument, NULL, 'f'},
    {"short", no_argument, NULL, OPT_SHORT},
    {"score-only", no_argument, NULL, 'b'},
    {"sentence", no_argument, NULL, OPT_SENTENCE},
    {"sentence-level", no_argument, NULL, OPT_SENTENCE},
    {"stats", no_argument, NULL, OPT_STATS},
    {"by-length", no_argument, NULL, OPT_BY_LENGTH},
    {"src", required_argument, NULL, OPT_SRC},
    {"quiet", no_argument, NULL, 'q'},
    {"no-color", no_argument, NULL, OPT_IGNORED},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* ---- sacreBLEU's spellings --------------------------------------------------
 * sacreBLEU (Python's argparse) has single-dash words that getopt would read
 * as clusters of letters: -lc as -l -c, -tok as -t ok. Each such word is
 * rewritten to its long form before getopt_long sees the line, so that one
 * parser reads both spellings and they cannot drift apart. getopt_long_only
 * would read -lc too, but it tries every cluster (-bq, -snone) as a long name
 * first. sacreBLEU's one-letter options (-i -m -s -w -b -q -f -l -e) are
 * getopt's own letters. */
static const struct {
    const char *word, *long_form;
} sacrebleu_words[] = {
    {"-lc", "--lowercase"},
    {"-tok", "--tokenize"},
    {"-sv", "--smooth-value"},
    {"-sl", "--sentence-level"},
    {"-sh", "--short"},
    {"-cc", "--chrf-char-order"},
    {"-cw", "--chrf-word-order"},
    {"-nc", "--no-color"},
};

/* The long option named by "--name" or "--name=value", by its full name or
 * a prefix as getopt_long takes it; NULL if none or ambiguous. */
static const struct option *long_option_of(const char *word)
{
    const char *name = word + 2;
    size_t n = strcspn(name, "=");
    const struct option *found = NULL;
    for (const struct option *o = long_options; o->name; o++) {
        if (strncmp(o->name, name, n))
            continue;
        if (strlen(o->name) == n)
            return o;
        if (found && (found->val != o->val || found->has_arg != o->has_arg))
            return NULL;
        found = o;
    }
    return found;
}

/* What getopt_long will make of a word that starts with '-': the option that
 * ends it (a letter or a long option's code; 0 if getopt will refuse it), and
 * in *value_next whether that option's value is the next word. */
static int last_option(const char *word, int *value_next)
{
    *value_next = 0;
    if (word[1] == '-') {
        const struct option *o = long_option_of(word);
        if (!o)
            return 0;
        *value_next = o->has_arg == required_argument && !strchr(word, '=');
        return o->val;
    }
    for (const char *c = word + 1; *c; c++) {
        const char *spec = *c == ':' ? NULL : strchr(short_options, *c);
        if (!spec)
            return 0;
        if (spec[1] == ':' || !c[1]) {
            *value_next = spec[1] == ':' && !c[1];
            return *c;
        }
    }
    return 0;
}

/* sacreBLEU's -m takes its metrics as separate words (-m bleu chrf): the names
 * it knows and nmt's chrf++. A name given to -m that nmt does not compute is
 * refused by --metrics rather than read as a reference file. */
static int is_metric_word(const char *word)
{
    static const char *const names[] = {"bleu", "chrf", "chrf++", "ter", NULL};
    for (int i = 0; names[i]; i++)
        if (!strcmp(word, names[i]))
            return 1;
    return 0;
}

/* The long form of one of sacreBLEU's words ("-tok" gives "--tokenize", and
 * "-tok=none" too with *value "none"), or else the word itself. */
static const char *sacrebleu_long_form(const char *word, const char **value)
{
    *value = NULL;
    for (size_t k = 0; k < sizeof sacrebleu_words / sizeof *sacrebleu_words; k++) {
        const char *long_form = sacrebleu_words[k].long_form;
        size_t len = strlen(sacrebleu_words[k].word);
        if (strncmp(word, sacrebleu_words[k].word, len))
            continue;
        if (!word[len])
            return long_form;
        if (word[len] == '=' && long_option_of(long_form)->has_arg == required_argument) {
            *value = word + len + 1;
            return long_form;
        }
    }
    return word;
}

/* Writes into out (room for 2 * argc + 1 words) the command line with
 * sacreBLEU's words in their long forms and each further metric of
 * "-m bleu chrf" as "-m chrf"; returns the new count. Option values and
 * everything after "--" are left as they are. */
static int rewrite_sacrebleu_words(const char **out, int argc, char **argv)
{
    int n = 0, metrics_open = 0;
    out[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *word = argv[i], *value;
        if (!strcmp(word, "--")) {
            while (i < argc)
                out[n++] = argv[i++];
            break;
        }
        if (word[0] != '-' || !word[1]) { /* a file, or "-" for stdin */
            metrics_open = metrics_open && is_metric_word(word);
            if (metrics_open)
                out[n++] = "-m";
            out[n++] = word;
            continue;
        }
        word = sacrebleu_long_form(word, &value);
        out[n++] = word;
        if (value)
            out[n++] = value;
        int value_next;
        metrics_open = last_option(word, &value_next) == 'm';
        if (value_next && !value && i + 1 < argc)
            out[n++] = argv[++i];
    }
    out[n] = NULL;
    return n;
}

/* The options as read, with what the checks that need them all must know. */
typedef struct {
    bleu_args a;
    nmt_chrf_opts chrf; /* chrF's and chrF++'s alike */
    double smooth_value;
    int smooth_value_given, metrics_given, word_order_given, tokenize_given;
    const char *target_lang;          /* of --language-pair */
    const char *bleu_opt, *chrf_opt;  /* the first of each kind given */
} bleu_parse;

/* A language code of --language-pair: letters, digits or '_' (zh_TW). */
static int is_language_code(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return n > 0;
}

/* SRC-TRG as sacreBLEU's -l takes it; *target points at TRG. */
static int parse_language_pair(const char *pair, const char **target)
{
    const char *dash = strchr(pair, '-');
    if (!dash || !is_language_code(pair, (size_t)(dash - pair)) ||
        !is_language_code(dash + 1, strlen(dash + 1))) {
        cli_error("--language-pair: '%s' is not a language pair such as en-de (sacreBLEU's -l; "
                  "-lc lowercases BLEU, --lc every metric)", pair);
        return -1;
    }
    *target = dash + 1;
    return 0;
}

/* sacreBLEU reads all of Python's spellings of UTF-8 and other encodings;
 * nmt reads UTF-8 only, which this takes in any of the usual spellings. */
static int parse_encoding(const char *name)
{
    char plain[16];
    size_t n = 0;
    for (const char *c = name; *c && n + 1 < sizeof plain; c++)
        if (*c != '-' && *c != '_')
            plain[n++] = (char)tolower((unsigned char)*c);
    plain[n] = '\0';
    if (!strcmp(plain, "utf8") && strlen(name) < sizeof plain)
        return 0;
    cli_error("--encoding: '%s': nmt bleu reads UTF-8 only", name);
    return -1;
}

static void note_bleu_opt(bleu_parse *p, const char *name)
{
    p->bleu_opt = p->bleu_opt ? p->bleu_opt : name;
}

static void note_chrf_opt(bleu_parse *p, const char *name)
{
    p->chrf_opt = p->chrf_opt ? p->chrf_opt : name;
}

/* One option from getopt_long (not -h): 0, or 2 after a message. */
static int take_option(bleu_parse *p, int c, const char *arg)
{
    static const char *const tokenizers[] = {"13a", "none", NULL};
    static const char *const smoothers[] = {"exp", "none", "floor", "add-k", NULL};
    static const char *const formats[] = {"text", "json", NULL};
    bleu_args *a = &p->a;
    int k;
    switch (c) {
    case 'i': a->hyp = arg; return 0;
    case 'm':
        p->metrics_given = 1;
        return parse_metrics(arg, a->metric) ? 2 : 0;
    case 'l': return parse_language_pair(arg, &p->target_lang) ? 2 : 0;
    case 'e': return parse_encoding(arg) ? 2 : 0;
    case 't':
    case OPT_TOKENIZE:
        if ((k = opt_choice("--tokenize", arg, tokenizers)) < 0) {
            if (c == 't')
                cli_error("-t: here --tokenize (sacreBLEU's -tok); sacreBLEU's -t, a test set to "
                          "download, is not offered: name the reference files");
            return 2;
        }
        a->opts.tokenize = k == 0 ? NMT_BLEU_TOK_13A : NMT_BLEU_TOK_NONE;
        p->tokenize_given = 1;
        note_bleu_opt(p, "--tokenize");
        return 0;
    case OPT_LC: a->opts.lowercase = p->chrf.lowercase = 1; return 0;
    case OPT_LOWERCASE:
        a->opts.lowercase = 1;
        note_bleu_opt(p, "--lowercase");
        return 0;
    case 's':
        if ((k = opt_choice("--smooth", arg, smoothers)) < 0)
            return 2;
        a->opts.smooth = (nmt_bleu_smooth)k;
        note_bleu_opt(p, "--smooth");
        return 0;
    case OPT_SMOOTH_VALUE:
        if (opt_double("--smooth-value", arg, 0.0, 1e9, &p->smooth_value))
            return 2;
        p->smooth_value_given = 1;
        note_bleu_opt(p, "--smooth-value");
        return 0;
    case OPT_CHRF_CHAR_ORDER:
        if (opt_int("--chrf-char-order", arg, 0, NMT_CHRF_MAX_CHAR_ORDER, &p->chrf.char_order))
            return 2;
        note_chrf_opt(p, "--chrf-char-order");
        return 0;
    case OPT_CHRF_WORD_ORDER:
        if (opt_int("--chrf-word-order", arg, 0, NMT_CHRF_MAX_WORD_ORDER, &p->chrf.word_order))
            return 2;
        p->word_order_given = 1;
        note_chrf_opt(p, "--chrf-word-order");
        return 0;
    case OPT_CHRF_BETA:
        if (opt_int("--chrf-beta", arg, 0, NMT_CHRF_MAX_BETA, &p->chrf.beta))
            return 2;
        note_chrf_opt(p, "--chrf-beta");
        return 0;
    case OPT_CHRF_WHITESPACE:
        p->chrf.whitespace = 1;
        note_chrf_opt(p, "--chrf-whitespace");
        return 0;
    case OPT_CHRF_LOWERCASE:
        p->chrf.lowercase = 1;
        note_chrf_opt(p, "--chrf-lowercase");
        return 0;
    case OPT_CHRF_EPS:
        p->chrf.eps_smoothing = 1;
        note_chrf_opt(p, "--chrf-eps-smoothing");
        return 0;
    case 'w': return opt_int("--width", arg, 0, 10, &a->width) ? 2 : 0;
    case OPT_JSON: a->json = 1; return 0;
    case 'f':
        if ((k = opt_choice("--format", arg, formats)) < 0)
            return 2;
        a->json = k == 1;
        return 0;
    case OPT_SHORT: a->short_sig = 1; return 0;
    case 'b': a->score_only = 1; return 0;
    case OPT_SENTENCE: a->sentence = 1; return 0;
    case OPT_STATS: a->stats = 1; return 0;
    case OPT_BY_LENGTH: a->by_length = 1; return 0;
    case OPT_SRC: a->src = arg; return 0;
    case 'q': cli_verbosity = 0; return 0;
    case OPT_IGNORED: return 0;
    default: return cli_usage_error();
    }
}

/* The checks that need every option: an option of a metric that is not
 * chosen does nothing, which is refused rather than ignored. */
static int check_args(const bleu_parse *p)
{
    const bleu_args *a = &p->a;
    int n_metrics = a->metric[METRIC_BLEU] + a->metric[METRIC_CHRF] + a->metric[METRIC_CHRFPP];
    if (p->bleu_opt && !a->metric[METRIC_BLEU]) {
        cli_error("%s: a BLEU option, and bleu is not among --metrics%s", p->bleu_opt,
                  strcmp(p->bleu_opt, "--lowercase") ? ""
                  : " (as in sacreBLEU, -lc is BLEU's: --chrf-lowercase is chrF's, --lc every metric's)");
        return -1;
    }
    if (p->chrf_opt && !a->metric[METRIC_CHRF] && !a->metric[METRIC_CHRFPP]) {
        cli_error("%s: a chrF option, and neither chrf nor chrf++ is among --metrics", p->chrf_opt);
        return -1;
    }
    if (p->word_order_given && a->metric[METRIC_CHRFPP] && !a->metric[METRIC_CHRF] &&
        a->chrf[METRIC_CHRF].word_order != 2) {
        cli_error("--chrf-word-order: chrf++ is word order 2 (for another: -m chrf --chrf-word-order %d)",
                  a->chrf[METRIC_CHRF].word_order);
        return -1;
    }
    if (a->metric[METRIC_CHRF] && a->chrf[METRIC_CHRF].char_order + a->chrf[METRIC_CHRF].word_order == 0) {
        cli_error("--chrf-char-order: 0 needs --chrf-word-order 1 or more (nothing to count)");
        return -1;
    }
    /* sacreBLEU's BLEU takes the tokenizer named by the target language when
     * none is given: zh, ja-mecab and ko-mecab, none of which nmt has */
    static const char *const own_tokenizer[][2] = {{"zh", "zh"}, {"ja", "ja-mecab"}, {"ko", "ko-mecab"}};
    for (size_t i = 0; p->target_lang && i < sizeof own_tokenizer / sizeof *own_tokenizer; i++)
        if (a->metric[METRIC_BLEU] && !p->tokenize_given && !strcmp(p->target_lang, own_tokenizer[i][0])) {
            cli_error("--language-pair: sacreBLEU tokenizes a %s target with its %s tokenizer, which nmt "
                      "bleu does not have (-tok 13a or -tok none names one it has)",
                      own_tokenizer[i][0], own_tokenizer[i][1]);
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

/* Reads the options of the rewritten line: 0 to run, 1 after --help, 2 on a
 * usage error. */
static int parse_options(bleu_parse *p, int argc, char **argv)
{
    bleu_args *a = &p->a;
    nmt_bleu_opts_init(&a->opts);
    nmt_chrf_opts_init(&p->chrf);
    a->width = 2;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
        if (c == 'h') {
            help();
            return 1;
        }
        if (take_option(p, c, optarg))
            return 2;
    }
    if (!p->metrics_given)
        a->metric[METRIC_BLEU] = 1;
    a->opts.smooth_value = p->smooth_value_given ? p->smooth_value : nmt_bleu_smooth_default(a->opts.smooth);
    if (p->smooth_value_given && a->opts.smooth != NMT_BLEU_SMOOTH_FLOOR &&
        a->opts.smooth != NMT_BLEU_SMOOTH_ADD_K) {
        cli_error("--smooth-value: only floor and add-k smoothing take a value");
        return 2;
    }
    a->chrf[METRIC_CHRF] = p->chrf;
    a->chrf[METRIC_CHRFPP] = p->chrf;
    a->chrf[METRIC_CHRFPP].word_order = 2;
    return check_args(p) ? 2 : 0;
}

/* After the options, the files: the references, and the hypothesis unless
 * -i or standard input gives it. */
static int run_on_files(bleu_args *a, int argc, char **argv)
{
    int n_files = argc - optind;
    if (!a->hyp && n_files == 2 && !stdin_has_text()) {
        a->hyp = argv[argc - 1];
        n_files = 1;
        if (cli_verbosity > 0)
            fprintf(stderr, "nmt bleu: note: reading the hypothesis from %s (two files named, no -i, "
                            "nothing on standard input)\n", a->hyp);
    }
    if (n_files < 1) {
        cli_error("no reference file given");
        return cli_usage_error();
    }
    if (!a->hyp)
        a->hyp = "-";
    a->refs = (const char **)(argv + optind);
    a->n_refs = (size_t)n_files;
    return bleu_run(a);
}

int cmd_bleu(int argc, char **argv)
{
    const char **words = malloc((2 * (size_t)argc + 1) * sizeof *words);
    if (!words) {
        cli_error("out of memory");
        return 1;
    }
    int n = rewrite_sacrebleu_words(words, argc, argv);
    /* getopt_long reorders the array, never the strings */
    char **line = (char **)words;
    bleu_parse p = {0};
    int r = parse_options(&p, n, line);
    if (r == 0)
        r = run_on_files(&p.a, n, line);
    else if (r == 1)
        r = 0;
    free(words);
    return r;
}
