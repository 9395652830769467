/* nmt align: the attention matrix of each sentence pair, as a terminal
 * heatmap, TSV, JSON Lines, Pharaoh links, SVG or PNG pictures, and the
 * alignment error rate against gold links.
 *
 * With --tgt the given target is forced through the decoder (teacher
 * forcing). Without it the model translates first (greedy, or beam search
 * with --beam) and its own output is then forced the same way: that replays
 * exactly the decoder states of the translation, so the attention is the one
 * the translation was made with, and no second decoder is needed here. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "cli/unknown.h"
#include "nmt/align.h"
#include "nmt/decode.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/png.h"
#include "nmt/svg.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "nmt/vocab.h"

enum { FMT_TEXT, FMT_TSV, FMT_JSON, FMT_PHARAOH, FMT_SVG, FMT_PNG };
static const char *const format_names[] = {"text", "tsv", "json", "pharaoh", "svg", "png", NULL};
static const char *const color_names[] = {"auto", "always", "never", NULL};
enum { UNITS_DEFAULT = -1, UNITS_PIECES = 0, UNITS_WORDS = 1 };
static const char *const unit_names[] = {"pieces", "words", NULL};

static void help(void)
{
    printf(
        "Usage: nmt align -m MODEL [--src FILE] [--tgt FILE] [--format FMT] [-o OUT]\n"
        "                 [--gold FILE] [--beam K] [--color WHEN]\n\n"
        "The attention of an attention model over each sentence pair: which source\n"
        "words the decoder looked at while it produced each target word. Both sides\n"
        "include the final </s>, so each row of weights sums to 1.\n\n"
        "With --tgt, the pairs are the lines of --src and --tgt and the given target\n"
        "is forced through the decoder. Without it, the model translates each source\n"
        "(greedy, or beam search with --beam) and the attention is that of its own\n"
        "translation. Sources come from --src or standard input; plain text or gzip.\n\n"
        "Options:\n"
        "  -m, --model FILE     the model (a .safetensors file written by nmt)\n"
        "  -s, --src FILE       source sentences, one a line ('-': standard input)\n"
        "  -t, --tgt FILE       target sentences, line by line with the sources\n"
        "  -f, --format FMT     text     a heatmap for the terminal: target words down,\n"
        "                                source words across (written downwards),\n"
        "                                shades ' ░▒▓█', with colour on a terminal\n"
        "                       tsv      per pair a header row of source tokens, one row\n"
        "                                per target token with its weights, a blank line\n"
        "                       json     JSON Lines: {\"source\", \"target\", \"attention\"}\n"
        "                       pharaoh  hard links i-j (source-target, 0-based, </s>\n"
        "                                left out): each target word to the source word\n"
        "                                it attends most (the lower index on a tie)\n"
        "                       svg, png a heatmap picture per pair\n"
        "                       Default: from the -o name's extension (.svg .png .json\n"
        "                       .jsonl .tsv .txt), else text on a terminal, else tsv.\n"
        "  -o, --output OUT     where to write (default standard output). For svg and png\n"
        "                       with several pairs, OUT is a folder (created if needed)\n"
        "                       that gets pair-0001.svg, pair-0002.svg, ...\n"
        "  -g, --gold FILE      gold alignments, one Pharaoh line per pair (i-j, or i?j,\n"
        "                       all counted as sure links): prints the alignment error\n"
        "                       rate, precision and recall of the model's hard links,\n"
        "                       summed over all pairs. Alignments are then written only\n"
        "                       if --format or -o asks for them.\n"
        "  -b, --beam K         beam size for the model's own translation (default 1:\n"
        "                       greedy)\n"
        "  -u, --units U        for a model that reads subwords: pieces (default) shows\n"
        "                       the SentencePiece pieces the model reads and writes;\n"
        "                       words groups them into words (a piece starting with\n"
        "                       \u2581 begins one): a target word's row is the mean of\n"
        "                       its pieces' rows, a source word's column the sum of its\n"
        "                       pieces' columns, so each row still sums to 1. Pharaoh\n"
        "                       links are of words unless --units pieces is given, and\n"
        "                       --gold always compares words. A model that reads words\n"
        "                       has words only\n"
        "      --threads N      threads for the matrix products (default: every core\n"
        "                       this process may use)\n"
        "      --color WHEN     auto (default: when writing text to a terminal, and\n"
        "                       NO_COLOR is not set), always or never; 24-bit colour\n"
        "                       when COLORTERM says truecolor, else 256 colours\n"
        "  -h, --help           this help\n\n"
        "AER = 1 - 2|A∩S| / (|A| + |S|), precision = |A∩S| / |A|, recall = |A∩S| / |S|\n"
        "(A the model's links, S the gold ones). With no model links precision is 1,\n"
        "with no gold links recall is 1, with neither AER is 0.\n");
}

/* Every line of a file (plain or gzip), kept: svg and png need the number of
 * pairs before the first is written. */
typedef struct lines {
    char **line;
    size_t n, cap;
} lines;

static void lines_free(lines *l)
{
    for (size_t k = 0; k < l->n; k++)
        free(l->line[k]);
    free(l->line);
}

static int lines_read(lines *l, const char *path)
{
    nmt_reader *r;
    if (nmt_reader_open(&r, path))
        return -1;
    const char *text;
    size_t len;
    int rc;
    while ((rc = nmt_reader_next(r, &text, &len)) == 1) {
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 64;
            char **grown = realloc(l->line, cap * sizeof *grown);
            if (!grown) {
                rc = nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            l->line = grown;
            l->cap = cap;
        }
        if (!(l->line[l->n] = strdup(text))) {
            rc = nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        l->n++;
    }
    nmt_reader_close(r);
    return rc < 0 ? -1 : 0;
}

/* One pair being aligned: tokens (strings owned by the nmt_tokens or the
 * vocabulary), ids, and the attention; resized for each pair. */
typedef struct pair_buf {
    nmt_tokens src_tok, tgt_tok;
    const char **src, **tgt;    /* [n_src], [n_tgt] tokens as shown */
    int32_t *src_ids, *tgt_ids; /* [n_src], [n_tgt] ids, each ending in </s> */
    int n_src, n_tgt;
    float *att;                 /* [n_tgt, n_src] */
} pair_buf;

static int resize(void *p, size_t n, size_t size)
{
    void *q = realloc(*(void **)p, (n ? n : 1) * size);
    if (!q)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    *(void **)p = q;
    return 0;
}

/* Room for n tokens on one side. */
static int side_resize(const char ***shown, int32_t **ids, int n)
{
    return resize(shown, (size_t)n, sizeof **shown) || resize(ids, (size_t)n, sizeof **ids);
}

static void pair_free(pair_buf *b)
{
    nmt_tokens_free(&b->src_tok);
    nmt_tokens_free(&b->tgt_tok);
    free(b->src);
    free(b->tgt);
    free(b->src_ids);
    free(b->tgt_ids);
    free(b->att);
}

typedef struct align_args {
    const char *model, *src, *tgt, *out, *gold;
    int format, format_given, beam, color, threads, units;
} align_args;

static int parse_args(int argc, char **argv, align_args *a)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},  {"src", required_argument, NULL, 's'},
        {"tgt", required_argument, NULL, 't'},    {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'}, {"gold", required_argument, NULL, 'g'},
        {"beam", required_argument, NULL, 'b'},   {"color", required_argument, NULL, 'C'},
        {"colour", required_argument, NULL, 'C'}, {"units", required_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},         {"threads", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->src = "-";
    a->beam = 1;
    a->format = -1;
    a->threads = cli_default_threads();
    a->units = UNITS_DEFAULT;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:s:t:f:o:g:b:u:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': a->model = optarg; break;
        case 's': a->src = optarg; break;
        case 't': a->tgt = optarg; break;
        case 'o': a->out = optarg; break;
        case 'g': a->gold = optarg; break;
        case 'f':
            if ((a->format = opt_choice("--format", optarg, format_names)) < 0)
                return 2;
            a->format_given = 1;
            break;
        case 'b':
            if (opt_int("--beam", optarg, 1, 100, &a->beam))
                return 2;
            break;
        case 'T':
            if (opt_int("--threads", optarg, 1, 1024, &a->threads))
                return 2;
            break;
        case 'C':
            if ((a->color = opt_choice("--color", optarg, color_names)) < 0)
                return 2;
            break;
        case 'u':
            if ((a->units = opt_choice("--units", optarg, unit_names)) < 0)
                return 2;
            break;
        case 'h': help(); return 0;
        case ':':
            cli_error("option '%s' needs a value", argv[optind - 1]);
            return cli_usage_error();
        default:
            cli_error("unknown option '%s'", argv[optind - 1]);
            return cli_usage_error();
        }
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s'", argv[optind]);
        return cli_usage_error();
    }
    if (!a->model) {
        cli_error("which model? give -m FILE");
        return cli_usage_error();
    }
    if (a->tgt && !strcmp(a->tgt, "-") && !strcmp(a->src, "-")) {
        cli_error("--src and --tgt cannot both be standard input");
        return 2;
    }
    if (a->gold && a->units == UNITS_PIECES) {
        cli_error("--gold links words to words: it cannot be used with --units pieces");
        return 2;
    }
    return -1; /* go on */
}

/* The format when none is asked for: from -o's extension, else text for a
 * terminal and tsv otherwise. */
static int default_format(const char *out)
{
    static const struct { const char *ext; int fmt; } by_ext[] = {
        {".svg", FMT_SVG}, {".png", FMT_PNG}, {".json", FMT_JSON}, {".jsonl", FMT_JSON},
        {".tsv", FMT_TSV}, {".txt", FMT_TEXT}, {".align", FMT_PHARAOH},
    };
    if (out) {
        const char *dot = strrchr(out, '.');
        for (size_t k = 0; dot && k < sizeof by_ext / sizeof by_ext[0]; k++)
            if (!strcmp(dot, by_ext[k].ext))
                return by_ext[k].fmt;
        return FMT_TSV;
    }
    return isatty(STDOUT_FILENO) ? FMT_TEXT : FMT_TSV;
}

static nmt_color_mode pick_color(int when, FILE *f)
{
    if (when == 2)
        return NMT_COLOR_NONE;
    if (when == 0) {
        const char *term = getenv("TERM"), *no = getenv("NO_COLOR");
        if (!isatty(fileno(f)) || (no && *no) || (term && !strcmp(term, "dumb")))
            return NMT_COLOR_NONE;
    }
    const char *ct = getenv("COLORTERM");
    if (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")))
        return NMT_COLOR_TRUE;
    return NMT_COLOR_256;
}

/* Splits a line into the model's units and looks them up; the units as
 * written are what the pictures show (an unknown word keeps its spelling),
 * "</s>" ends both. */
static int side_from_text(nmt_tokens *tok, const char *line, const nmt_model *m,
                          const nmt_vocab *v, const char ***shown, int32_t **ids, int *n)
{
    if (nmt_units_split(m, line, strlen(line), tok))
        return -1;
    if (tok->n > 100000)
        return nmt_set_error(NMT_ERR_ARG, "a line of %zu tokens is too long to align", tok->n);
    int need = (int)tok->n + 1;
    if (side_resize(shown, ids, need))
        return -1;
    for (size_t k = 0; k < tok->n; k++) {
        (*shown)[k] = tok->tok[k];
        (*ids)[k] = nmt_vocab_id(v, tok->tok[k], tok->len[k]);
    }
    (*shown)[tok->n] = "</s>";
    (*ids)[tok->n] = NMT_EOS;
    *n = need;
    return 0;
}

/* Adds a side's <unk> ids and units (its </s> left out) to the counts. */
static void count_unknown(const int32_t *ids, int n, size_t *unk, size_t *units)
{
    for (int k = 0; k + 1 < n; k++)
        *unk += ids[k] == NMT_UNK;
    *units += n > 0 ? (size_t)(n - 1) : 0;
}

/* Opens -o or names standard output. */
static FILE *open_out(const char *path, const char *mode)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, mode);
    if (!f)
        cli_error("%s: %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (f == stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (bad) {
        cli_error("%s: write failed", path && strcmp(path, "-") ? path : "standard output");
        return -1;
    }
    return 0;
}

/* One picture of pair k, into the folder or the single file. */
static int write_picture(const align_args *a, const nmt_alignment *al, size_t k, size_t n_pairs)
{
    char title[160], path_buf[4096];
    snprintf(title, sizeof title, "Attention, pair %zu (%s)", k + 1,
             a->tgt ? "given target" : a->beam > 1 ? "beam search translation" : "greedy translation");
    const char *path = a->out;
    if (n_pairs > 1) {
        snprintf(path_buf, sizeof path_buf, "%s/pair-%04zu.%s", a->out, k + 1,
                 a->format == FMT_SVG ? "svg" : "png");
        path = path_buf;
    }
    FILE *f = open_out(path, "wb");
    if (!f)
        return -1;
    int rc = a->format == FMT_SVG ? nmt_svg_heatmap(f, al, title) : nmt_png_heatmap(f, al, title);
    if (rc) {
        cli_lib_error();
        if (f != stdout)
            fclose(f);
        return -1;
    }
    return close_out(f, path);
}

static int check_same_count(const lines *x, const char *xp, const lines *y, const char *yp)
{
    if (x->n == y->n)
        return 0;
    cli_error("%s has %zu lines but %s has %zu: they must pair up line by line",
              !strcmp(xp, "-") ? "standard input" : xp, x->n, yp, y->n);
    return -1;
}

static int run(const align_args *a, nmt_model *m)
{
    int status = 1;
    lines src = {0}, tgt = {0}, gold = {0};
    pair_buf b = {0};
    nmt_infer *st = NULL;
    nmt_decoder *dec = NULL;
    FILE *out = NULL;
    int write = !a->gold || a->format_given || a->out;
    int fmt = a->format;
    /* a subword model's alignments are shown per word when asked, and
     * Pharaoh links are of words unless pieces are asked for */
    int words_out = m->subwords && (a->units == UNITS_WORDS ||
                                    (a->units == UNITS_DEFAULT && fmt == FMT_PHARAOH));
    nmt_word_alignment words = {0};

    if (lines_read(&src, a->src) || (a->tgt && lines_read(&tgt, a->tgt)) ||
        (a->gold && lines_read(&gold, a->gold))) {
        cli_lib_error();
        goto done;
    }
    if ((a->tgt && check_same_count(&src, a->src, &tgt, a->tgt)) ||
        (a->gold && check_same_count(&src, a->src, &gold, a->gold)))
        goto done;
    if (src.n == 0) {
        cli_error("no sentences to align");
        goto done;
    }
    int pictures = fmt == FMT_SVG || fmt == FMT_PNG;
    if (write && pictures) {
        if (src.n > 1 && !a->out) {
            cli_error("%zu pairs make %zu pictures: give -o FOLDER", src.n, src.n);
            goto done;
        }
        if (!a->out && isatty(STDOUT_FILENO)) {
            cli_error("not writing a picture to the terminal: give -o FILE");
            goto done;
        }
        if (src.n > 1 && mkdir(a->out, 0777) && errno != EEXIST) {
            cli_error("%s: %s", a->out, strerror(errno));
            goto done;
        }
    }
    if (write && !pictures && !(out = open_out(a->out, "w")))
        goto done;
    nmt_color_mode color = out ? pick_color(a->color, out) : NMT_COLOR_NONE;

    /* The longest source sets the decoder's size. */
    int max_T = 1;
    nmt_tokens tmp = {0};
    for (size_t k = 0; k < src.n; k++) {
        if (nmt_units_split(m, src.line[k], strlen(src.line[k]), &tmp)) {
            nmt_tokens_free(&tmp);
            cli_lib_error();
            goto done;
        }
        max_T = (int)tmp.n + 1 > max_T ? (int)tmp.n + 1 : max_T;
    }
    nmt_tokens_free(&tmp);
    if (nmt_infer_create(&st, m, 1, max_T, 1)) {
        cli_lib_error();
        goto done;
    }
    if (!a->tgt) {
        nmt_decode_opts opts;
        nmt_decode_opts_default(&opts);
        opts.beam = a->beam;
        if (nmt_decoder_create(&dec, m, 1, max_T, &opts)) {
            cli_lib_error();
            goto done;
        }
    }

    nmt_aer acc = {0};
    size_t unk[2] = {0, 0}, units[2] = {0, 0}; /* source, target: for a warning */
    for (size_t k = 0; k < src.n; k++) {
        if (side_from_text(&b.src_tok, src.line[k], m, m->src_vocab, &b.src, &b.src_ids,
                           &b.n_src)) {
            cli_lib_error();
            goto done;
        }
        count_unknown(b.src_ids, b.n_src, &unk[0], &units[0]);
        if (a->tgt) {
            if (side_from_text(&b.tgt_tok, tgt.line[k], m, m->tgt_vocab, &b.tgt, &b.tgt_ids,
                               &b.n_tgt)) {
                cli_lib_error();
                goto done;
            }
            count_unknown(b.tgt_ids, b.n_tgt, &unk[1], &units[1]);
        } else {
            if (nmt_decode(dec, b.src_ids, &b.n_src, 1, b.n_src)) {
                cli_lib_error();
                goto done;
            }
            const nmt_hypothesis *h = nmt_decoder_result(dec, 0, 0);
            if (side_resize(&b.tgt, &b.tgt_ids, h->len + 1)) {
                cli_lib_error();
                goto done;
            }
            for (int i = 0; i < h->len; i++) {
                b.tgt_ids[i] = h->ids[i];
                b.tgt[i] = nmt_vocab_token(m->tgt_vocab, h->ids[i]);
            }
            /* A translation cut at the length limit still gets its </s> row:
             * every matrix has the same shape of rows. */
            b.tgt_ids[h->len] = NMT_EOS;
            b.tgt[h->len] = "</s>";
            b.n_tgt = h->len + 1;
        }
        if (resize(&b.att, (size_t)b.n_src * b.n_tgt, sizeof *b.att) ||
            nmt_align_forced(m, st, b.src_ids, b.n_src, b.tgt_ids, b.n_tgt, b.att)) {
            cli_lib_error();
            goto done;
        }
        nmt_alignment al = {b.n_src, b.n_tgt, b.src, b.tgt, b.att};
        /* pieces grouped into words where words are asked for or meant */
        nmt_word_alignment_free(&words);
        if (m->subwords && (a->gold || words_out) && nmt_align_words(&al, &words)) {
            cli_lib_error();
            goto done;
        }
        const nmt_alignment *shown = words_out ? &words.a : &al;
        if (a->gold) {
            const nmt_alignment *by_word = m->subwords ? &words.a : &al;
            nmt_link *g, *h = malloc((size_t)by_word->n_tgt * sizeof *h);
            size_t n_g;
            if (!h) {
                cli_error("out of memory");
                goto done;
            }
            int n_h = nmt_align_hard(by_word, h);
            if (nmt_pharaoh_parse(gold.line[k], &g, &n_g)) {
                free(h);
                cli_error("%s, line %zu: %s", a->gold, k + 1, nmt_error_message());
                goto done;
            }
            int rc = nmt_aer_add(&acc, h, (size_t)n_h, g, n_g);
            free(h);
            free(g);
            if (rc) {
                cli_lib_error();
                goto done;
            }
        }
        if (!write)
            continue;
        int rc = 0;
        switch (fmt) {
        case FMT_TEXT: rc = nmt_align_write_text(out, shown, color); break;
        case FMT_TSV: rc = nmt_align_write_tsv(out, shown); break;
        case FMT_JSON: rc = nmt_align_write_json(out, shown); break;
        case FMT_PHARAOH: rc = nmt_align_write_pharaoh(out, shown); break;
        default:
            if (write_picture(a, shown, k, src.n))
                goto done;
        }
        if (rc) {
            cli_lib_error();
            goto done;
        }
    }
    if (out) {
        FILE *f = out;
        out = NULL;
        if (close_out(f, a->out))
            goto done;
    }
    cli_warn_unknown(strcmp(a->src, "-") ? a->src : "standard input", unk[0], units[0],
                     nmt_units_name(m));
    if (a->tgt)
        cli_warn_unknown(strcmp(a->tgt, "-") ? a->tgt : "standard input", unk[1], units[1],
                         nmt_units_name(m));
    if (a->gold) {
        /* The numbers go to stdout unless the alignments already do. */
        FILE *f = write && !pictures && (!a->out || !strcmp(a->out, "-")) ? stderr : stdout;
        fprintf(f, "AER %.4f  precision %.4f  recall %.4f  (%zu pairs, %zu model links, "
                   "%zu gold links, %zu in both)\n",
                nmt_aer_rate(&acc), nmt_aer_precision(&acc), nmt_aer_recall(&acc), acc.pairs,
                acc.hyp, acc.gold, acc.both);
    }
    status = 0;
done:
    if (out && out != stdout)
        fclose(out);
    nmt_word_alignment_free(&words);
    nmt_decoder_free(dec);
    nmt_infer_free(st);
    pair_free(&b);
    lines_free(&src);
    lines_free(&tgt);
    lines_free(&gold);
    return status;
}

int cmd_align(int argc, char **argv)
{
    align_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    cli_set_threads(a.threads);
    nmt_model *m;
    if (nmt_model_load(&m, a.model, NULL)) {
        cli_lib_error();
        return 1;
    }
    if (m->cfg.attention == NMT_ATT_NONE) {
        cli_error("this model has no attention (attention=none): it has no alignments");
        nmt_model_free(m);
        return 1;
    }
    if (!a.format_given)
        a.format = default_format(a.out);
    rc = run(&a, m);
    nmt_model_free(m);
    return rc;
}
