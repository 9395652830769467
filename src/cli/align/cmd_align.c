/* nmt align: the attention matrix of each sentence pair, as a terminal
 * heatmap, TSV, JSON Lines, Pharaoh links, SVG or PNG pictures, or one HTML
 * page for a whole test set (align/cmd_align_html.c), and the alignment error rate
 * against gold links.
 *
 * With --tgt the given target is forced through the decoder (teacher
 * forcing). Without it the model translates first (with the search of nmt
 * translate: beam NMT_DEFAULT_BEAM unless --beam says otherwise) and its own
 * output is then forced the same way: that replays exactly the decoder
 * states of the translation, so the attention is the one the translation was
 * made with, and no second decoder is needed here. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "align/cmd_align_args.h"
#include "align/cmd_align_ensemble.h"
#include "align/cmd_align_html.h"
#include "draw/heatmap.h"
#include "align/cmd_align_input.h"
#include "align/cmd_align_em.h"
#include "align/cmd_align_links.h"
#include "align/cmd_align_pairs.h"
#include "commands.h"
#include "cli_opts.h"
#include "cli_outfile.h"
#include "cli_unknown.h"
#include "nmt/align.h"
#include "nmt/bleu.h"
#include "nmt/decode.h"
#include "nmt/error.h"
#include "nmt/extract.h"
#include "nmt/modelfile.h"
#include "draw/png.h"
#include "draw/svg.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "nmt/vocab.h"

/* One pair being aligned: tokens (strings owned by the nmt_tokens or the
 * vocabulary), ids, and the attention; resized for each pair. */
typedef struct pair_buf {
    nmt_tokens src_tok, tgt_tok;
    const char **src, **tgt;    /* [n_src], [n_tgt] tokens as shown */
    int32_t *src_ids, *tgt_ids; /* [n_src], [n_tgt] ids, each ending in </s> */
    int n_src, n_tgt;
    float *att;                 /* [n_tgt, n_src] */
    float *att_all;             /* --per-head: [n_maps, n_tgt, n_src] */
    nmt_link *hard;             /* [n_tgt] */
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
    free(b->att_all);
    free(b->hard);
    memset(b, 0, sizeof *b);
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

/* The columns a text heatmap may take: --width, else $COLUMNS, else the
 * terminal's width, else no limit. */
static int pick_width(int given, FILE *f)
{
    if (given >= 0)
        return given;
    const char *env = getenv("COLUMNS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (!*end && v > 0 && v < 100000)
            return (int)v;
    }
    struct winsize ws;
    if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

/* One picture, into the folder (several pairs) or the single file. */
static int write_picture(const align_args *a, const nmt_alignment *al, const nmt_align_view *v,
                         int folder)
{
    char path_buf[4096];
    const char *path = a->out;
    if (folder) {
        snprintf(path_buf, sizeof path_buf, "%s/line-%04ld.%s", a->out, v->line,
                 a->format == FMT_SVG ? "svg" : "png");
        path = path_buf;
    }
    cli_outfile o;
    if (cli_out_open(&o, path))
        return -1;
    int rc = a->format == FMT_SVG ? nmt_svg_heatmap_view(o.f, al, v)
                                  : nmt_png_heatmap_view(o.f, al, v);
    if (rc) {
        cli_lib_error();
        cli_out_abort(&o);
        return -1;
    }
    return cli_out_commit(&o);
}

/* ---- aligning ------------------------------------------------------------ */

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

/* Where the alignments go: a stream (text, tsv, json, pharaoh), pictures,
 * or the page. */
typedef struct sink {
    int write;          /* 0: --gold alone, the scores only */
    cli_outfile out;    /* streams */
    nmt_color_mode color;
    int width;
    int folder;         /* pictures: one file per pair in the folder -o */
    html_doc *html;
} sink;

/* What one model did over the pairs. */
typedef struct model_result {
    nmt_aer aer;
    nmt_aer *per_map; /* --per-head: [n_maps], each map's AER */
    char *per_head;   /* --per-head: its table, written while the model is loaded */
    size_t per_head_len;
    nmt_bleu *bleu; /* corpus BLEU of its translations, with --ref */
    size_t unk[2], units[2];
} model_result;

/* The model's target for pair b: the given line, or the ensemble's
 * translation (ens_ids, ens_len when ens_ids is not NULL), or its own
 * translation (whose text, for BLEU, goes to *hyp when hyp is not NULL). */
static int make_target(const align_args *a, const inputs *in, size_t line, const nmt_model *m,
                       nmt_decoder *dec, const int32_t *ens_ids, int ens_len, pair_buf *b,
                       model_result *r, char **hyp)
{
    if (a->tgt) {
        if (side_from_text(&b->tgt_tok, in->tgt.line[line], m, m->tgt_vocab, &b->tgt,
                           &b->tgt_ids, &b->n_tgt))
            return -1;
        count_unknown(b->tgt_ids, b->n_tgt, &r->unk[1], &r->units[1]);
        return 0;
    }
    nmt_hypothesis joint = {.ids = ens_ids, .len = ens_len};
    const nmt_hypothesis *h = &joint;
    if (!ens_ids) {
        int rc = nmt_decode(dec, b->src_ids, &b->n_src, 1, b->n_src);
        if (rc)
            return rc;
        h = nmt_decoder_result(dec, 0, 0);
    }
    if (side_resize(&b->tgt, &b->tgt_ids, h->len + 1))
        return -1;
    for (int i = 0; i < h->len; i++) {
        b->tgt_ids[i] = h->ids[i];
        b->tgt[i] = nmt_vocab_token(m->tgt_vocab, h->ids[i]);
    }
    /* A translation cut at the length limit still gets its </s> row: every
     * matrix has the same shape of rows. */
    b->tgt_ids[h->len] = NMT_EOS;
    b->tgt[h->len] = "</s>";
    b->n_tgt = h->len + 1;
    if (hyp && !(*hyp = nmt_units_join_ids(m, h->ids, (size_t)h->len)))
        return -1;
    return 0;
}

/* Adds pair k's links under alignment al to *sum against the gold; AER is
 * always of words, so a subword model's pieces are grouped first. The
 * pair's own AER goes to *pair_aer when it is not NULL. */
static int add_aer(nmt_aer *sum, double *pair_aer, const nmt_model *m, const nmt_alignment *al,
                   const nmt_link_rules *rules, const inputs *in, size_t k)
{
    nmt_word_alignment words = {0};
    const nmt_alignment *by_word = al;
    nmt_link *h = NULL;
    int rc = m->subwords ? nmt_align_words(al, &words) : 0;
    if (!rc && m->subwords)
        by_word = &words.a;
    if (!rc && !(h = malloc((size_t)by_word->n_tgt * sizeof *h)))
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    nmt_aer one = {0};
    if (!rc)
        rc = nmt_aer_add_opts(&one, h, (size_t)nmt_align_links(by_word, rules, h),
                              in->gold_links[k], in->n_gold[k], in->aer_flags);
    free(h);
    nmt_word_alignment_free(&words);
    if (rc)
        return rc;
    if (pair_aer)
        *pair_aer = nmt_aer_rate(&one);
    nmt_aer_merge(sum, &one);
    return 0;
}

/* Forces pair b through the decoder: b->att gets map `map`, and when
 * `every` b->att_all every map (with --per-head, their AER added to
 * r->per_map). */
static int force_pair(const align_args *a, const nmt_model *m, nmt_infer *st, int map, int every,
                      const nmt_link_rules *rules, const inputs *in, size_t k, pair_buf *b,
                      model_result *r)
{
    size_t plane = (size_t)b->n_src * b->n_tgt;
    if (resize(&b->att, plane, sizeof *b->att) || resize(&b->hard, (size_t)b->n_tgt, sizeof *b->hard))
        return -1;
    if (!every) {
        int rc = nmt_align_forced(m, st, b->src_ids, b->n_src, b->tgt_ids, b->n_tgt, b->att);
        if (!rc && rules->shift) /* every output shows the rows links are read from */
            nmt_align_shift_rows(b->att, b->n_tgt, b->n_src);
        return rc;
    }
    int n_maps = nmt_model_attention_maps(m);
    if (resize(&b->att_all, (size_t)n_maps * plane, sizeof *b->att_all))
        return -1;
    int rc = nmt_align_forced_maps(m, st, b->src_ids, b->n_src, b->tgt_ids, b->n_tgt, b->att_all);
    if (rc)
        return rc;
    for (int mp = 0; mp < n_maps && rules->shift; mp++)
        nmt_align_shift_rows(b->att_all + (size_t)mp * plane, b->n_tgt, b->n_src);
    memcpy(b->att, b->att_all + (size_t)map * plane, plane * sizeof *b->att);
    for (int mp = 0; mp < n_maps && a->per_head && !rc; mp++) {
        nmt_alignment al = {b->n_src, b->n_tgt, b->src, b->tgt, b->att_all + (size_t)mp * plane};
        rc = add_aer(&r->per_map[mp], NULL, m, &al, rules, in, k);
    }
    return rc;
}

/* The grid of a model's maps: layers down, heads and their mean across
 * (*rows = 0: the model's maps have no layers, as an RNN's one map). */
static void grid_shape(const nmt_model *m, int *rows, int *heads)
{
    *rows = *heads = 0;
    while (nmt_model_attention_map_at(m, *rows, NMT_MAP_MEAN) >= 0)
        ++*rows;
    while (*rows && nmt_model_attention_map_at(m, 0, *heads) >= 0)
        ++*heads;
    nmt_clear_error(); /* the probes' refusals */
}

/* The map at row r, column c of the grid (c == heads: the layer's mean). */
static int grid_map(const nmt_model *m, int r, int c, int heads)
{
    return nmt_model_attention_map_at(m, r, c < heads ? c : NMT_MAP_MEAN);
}

/* The explorer's grid for pair b: every map of b->att_all in the units
 * shown, with its model links and the pair's AER under it, added with the
 * map shown large. */
static int html_add_with_grid(const align_args *a, html_doc *html, int mi, size_t k,
                              const nmt_model *m, const nmt_link_rules *rules,
                              const pair_buf *b, int words_out,
                              const inputs *in, const nmt_alignment *shown, int n_hard,
                              const char *hyp, double aer, double bleu)
{
    int rows, heads;
    grid_shape(m, &rows, &heads);
    int n = rows * (heads + 1), rc = 0;
    if (!rows)
        return html_add(html, mi, k, shown, b->hard, n_hard, hyp, aer, bleu, NULL, 0)
                   ? nmt_set_error(NMT_ERR_NOMEM, "out of memory")
                   : 0;
    size_t plane = (size_t)b->n_src * b->n_tgt;
    html_map *maps = calloc((size_t)n, sizeof *maps);
    nmt_alignment *al = calloc((size_t)n, sizeof *al);
    nmt_word_alignment *words = calloc((size_t)n, sizeof *words);
    nmt_link *hard = malloc((size_t)n * b->n_tgt * sizeof *hard);
    if (!maps || !al || !words || !hard)
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (int g = 0; g < n && !rc; g++) {
        int mp = grid_map(m, g / (heads + 1), g % (heads + 1), heads);
        al[g] = (nmt_alignment){b->n_src, b->n_tgt, b->src, b->tgt, b->att_all + mp * plane};
        if (words_out && nmt_align_words(&al[g], &words[g]))
            rc = -1;
        maps[g].a = words_out ? &words[g].a : &al[g];
        maps[g].hard = hard + (size_t)g * b->n_tgt;
        maps[g].n_hard = rc ? 0 : nmt_align_links(maps[g].a, rules, hard + (size_t)g * b->n_tgt);
        maps[g].aer = -1;
        nmt_aer one = {0};
        if (!rc && a->gold)
            rc = add_aer(&one, &maps[g].aer, m, &al[g], rules, in, k);
    }
    if (!rc && html_add(html, mi, k, shown, b->hard, n_hard, hyp, aer, bleu, maps, n))
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (int g = 0; words && g < n; g++)
        nmt_word_alignment_free(&words[g]);
    free(maps);
    free(al);
    free(words);
    free(hard);
    return rc;
}

static const char *mode_name(const align_args *a, char *buf, size_t cap)
{
    if (a->tgt)
        return "given target";
    const char *whose = a->ensemble ? "ensemble's " : "";
    if (a->beam == 1)
        snprintf(buf, cap, "%sgreedy translation", whose);
    else
        snprintf(buf, cap, "%sbeam %d translation", whose, a->beam);
    return buf;
}

/* Aligns every chosen pair with model mi and sends each to the sink. */
static int align_model(const align_args *a, const inputs *in, int mi, const nmt_model *m,
                       int map, const nmt_link_rules *rules, const ensemble_targets *ens,
                       sink *out, model_result *r)
{
    int status = -1;
    pair_buf b = {0};
    nmt_infer *st = NULL;
    nmt_decoder *dec = NULL;
    nmt_word_alignment words = {0};
    char *hyp = NULL, mode_buf[64];
    const char *mode = mode_name(a, mode_buf, sizeof mode_buf);
    int fmt = a->format;
    /* a subword model's alignments are shown per word when asked, and
     * Pharaoh links and gold marks are of words unless pieces are asked for */
    int words_out = m->subwords &&
                    (a->units == UNITS_WORDS ||
                     (a->units == UNITS_DEFAULT && (fmt == FMT_PHARAOH || a->gold)));

    /* every map at once for --per-head, and for the explorer's grid */
    int every = a->per_head || (out->html && nmt_model_attention_maps(m) > 1);

    /* The longest chosen source sets the decoder's size. */
    int max_T = 1;
    for (size_t k = 0; k < in->n; k++) {
        const char *line = in->src.line[in->sel[k]];
        if (nmt_units_split(m, line, strlen(line), &b.src_tok))
            goto lib_error;
        max_T = (int)b.src_tok.n + 1 > max_T ? (int)b.src_tok.n + 1 : max_T;
    }
    /* forced decoding takes a step per target token: remade larger for a
     * longer target */
    int st_steps = 2 * max_T + 10;
    if (nmt_infer_create(&st, m, 1, max_T, 1, st_steps) || nmt_infer_set_attention_map(st, map))
        goto lib_error;
    if (!a->tgt && !ens) {
        nmt_decode_opts opts;
        nmt_decode_opts_standard(&opts);
        opts.beam = a->beam;
        if (nmt_decoder_create(&dec, m, 1, max_T, &opts))
            goto lib_error;
    }
    for (size_t k = 0; k < in->n; k++) {
        size_t line = in->sel[k];
        if (side_from_text(&b.src_tok, in->src.line[line], m, m->src_vocab, &b.src, &b.src_ids,
                           &b.n_src))
            goto lib_error;
        count_unknown(b.src_ids, b.n_src, &r->unk[0], &r->units[0]);
        free(hyp);
        hyp = NULL;
        int failed = make_target(a, in, line, m, dec, ens ? ens->ids[k] : NULL,
                                 ens ? ens->len[k] : 0, &b, r,
                                 a->ref || out->html ? &hyp : NULL);
        if (!failed && b.n_tgt > st_steps) {
            nmt_infer_free(st);
            st = NULL;
            st_steps = b.n_tgt > 2 * st_steps ? b.n_tgt : 2 * st_steps;
            if (nmt_infer_create(&st, m, 1, max_T, 1, st_steps) ||
                nmt_infer_set_attention_map(st, map))
                goto lib_error;
        }
        if (!failed)
            failed = force_pair(a, m, st, map, every, rules, in, k, &b, r);
        if (failed == NMT_ERR_NUMERIC) /* the model is broken, not the line */
            goto model_error;
        if (failed)
            goto lib_error;
        nmt_alignment al = {b.n_src, b.n_tgt, b.src, b.tgt, b.att};
        nmt_word_alignment_free(&words);
        if (words_out && nmt_align_words(&al, &words))
            goto lib_error;
        const nmt_alignment *shown = words_out ? &words.a : &al;
        int n_hard = nmt_align_links(shown, rules, b.hard);
        double pair_aer = -1, bleu = -1;
        if (a->gold && add_aer(&r->aer, &pair_aer, m, &al, rules, in, k))
            goto lib_error;
        if (a->ref) {
            nmt_bleu_stats stats;
            const char *const ref[1] = {in->ref.line[line]};
            nmt_bleu_opts sentence;
            nmt_bleu_opts_init(&sentence);
            sentence.effective_order = 1; /* as sacreBLEU's sentence_bleu */
            nmt_bleu_score score;
            if (nmt_bleu_add(r->bleu, &stats, hyp, ref, 1))
                goto lib_error;
            nmt_bleu_compute(&score, &stats, &sentence);
            bleu = score.score;
        }
        if (out->html) {
            if (mi == 0 && html_set_pair(out->html, k, (long)line + 1, in->src.line[line],
                                         a->ref ? in->ref.line[line] : NULL,
                                         a->gold ? in->gold_links[k] : NULL,
                                         a->gold ? in->n_gold[k] : 0, a->gold != NULL))
                goto nomem;
            if (html_add_with_grid(a, out->html, mi, k, m, rules, &b, words_out, in, shown, n_hard,
                                   a->tgt ? NULL : hyp, pair_aer, bleu))
                goto lib_error;
            continue;
        }
        if (!out->write)
            continue;
        char title[640];
        if (a->n_models > 1) /* --ensemble: whose attention this is */
            snprintf(title, sizeof title, "line %zu, %s, attention of %s", line + 1, mode,
                     a->model[mi]);
        else
            snprintf(title, sizeof title, "line %zu, %s", line + 1, mode);
        nmt_align_view v = {.line = (long)line + 1, .title = title,
                            .model = a->ensemble ? a->model[mi] : NULL,
                            .gold = a->gold ? in->gold_links[k] : NULL,
                            .n_gold = a->gold ? in->n_gold[k] : 0, .has_gold = a->gold != NULL,
                            .width = out->width, .color = out->color,
                            .hard = b.hard, .n_hard = n_hard, .has_hard = 1};
        int rc = 0;
        switch (fmt) {
        case FMT_TEXT: rc = nmt_align_write_text_view(out->out.f, shown, &v); break;
        case FMT_TSV: rc = nmt_align_write_tsv(out->out.f, shown); break;
        case FMT_JSON: rc = nmt_align_write_json_view(out->out.f, shown, &v); break;
        case FMT_PHARAOH: rc = nmt_align_write_links(out->out.f, b.hard, n_hard); break;
        default:
            if (write_picture(a, shown, &v, out->folder))
                goto done;
        }
        if (rc)
            goto lib_error;
    }
    status = 0;
    goto done;
nomem:
    cli_error("out of memory");
    goto done;
model_error:
    cli_error("%s: %s", a->model[mi], nmt_error_message());
    goto done;
lib_error:
    cli_lib_error();
done:
    free(hyp);
    nmt_word_alignment_free(&words);
    nmt_decoder_free(dec);
    nmt_infer_free(st);
    pair_free(&b);
    return status;
}

/* Loads model mi, refuses one without attention, and chooses its map
 * (*map): --layer and --head, or the model's default. */
static nmt_model *load_model(const char *path, const align_args *a, int *map,
                             nmt_link_rules *rules)
{
    nmt_model *m;
    if (nmt_model_load(&m, path, NULL)) {
        cli_lib_error();
        return NULL;
    }
    if (nmt_model_attention_maps(m) == 0) {
        cli_error("%s: this model has no attention (attention=none): it has no alignments", path);
        nmt_model_free(m);
        return NULL;
    }
    /* a guided model's trained head, read at its step, unless --layer or
     * --head choose a map: that map is read at the predicting step unless
     * --shift says otherwise */
    int chosen = a->layer_given || a->head_given;
    nmt_align_model_defaults(m, map, rules);
    if (chosen) {
        *map = nmt_model_attention_map_at(m, a->layer, a->head);
        rules->shift = 0;
    }
    if (*map < 0) {
        cli_error("%s: --layer/--head: %s", path, nmt_error_message());
        nmt_model_free(m);
        return NULL;
    }
    if (a->shift >= 0)
        rules->shift = a->shift;
    rules->eos_unaligned = a->eos_unaligned;
    rules->min_weight = a->min_weight;
    if (nmt_align_rules_check(m, rules)) {
        cli_error("%s: --shift: %s", path, nmt_error_message());
        nmt_model_free(m);
        return NULL;
    }
    return m;
}

/* Model mi in the explorer's header: its kind, which of several maps is
 * shown, its corpus figures, and its grid of maps. */
static int html_model(const align_args *a, html_doc *html, int mi, const nmt_model *m, int map,
                      const model_result *r)
{
    char mode[64], kind[128];
    nmt_bleu_score s = {.score = -1};
    if (r->bleu)
        nmt_bleu_result(r->bleu, &s);
    int n = nmt_config_describe(&m->cfg, kind, sizeof kind);
    if (nmt_model_attention_maps(m) > 1 && n > 0 && (size_t)n < sizeof kind - 2) {
        memcpy(kind + n, ", ", 2);
        nmt_model_attention_map_name(m, map, kind + n + 2, sizeof kind - (size_t)n - 2);
    }
    html_grid grid = {0};
    grid_shape(m, &grid.rows, &grid.cols);
    grid.cols += 1; /* the mean */
    int cells = grid.rows * grid.cols, rc = 0;
    char (*names)[48] = cells ? calloc((size_t)cells, sizeof *names) : NULL;
    const char **name_of = cells ? calloc((size_t)cells, sizeof *name_of) : NULL;
    if (cells && (!names || !name_of))
        rc = -1;
    for (int g = 0; g < cells && !rc; g++) {
        int mp = grid_map(m, g / grid.cols, g % grid.cols, grid.cols - 1);
        nmt_model_attention_map_name(m, mp, names[g], sizeof names[g]);
        name_of[g] = names[g];
        if (mp == map)
            grid.shown = g;
    }
    grid.names = name_of;
    if (!rc)
        rc = html_set_model(html, mi, a->model[mi], kind, mode_name(a, mode, sizeof mode),
                            a->gold ? nmt_aer_rate(&r->aer) : -1, s.score, cells ? &grid : NULL);
    free(names);
    free(name_of);
    return rc;
}

/* --per-head: the AER of every map, as a table of layers by heads and their
 * mean when the model's maps have layers (a Transformer), else one row per
 * map; '*' marks the map shown. */
static void put_per_head(FILE *f, const nmt_model *m, int shown, const model_result *r)
{
    int layers, heads;
    grid_shape(m, &layers, &heads);
    fprintf(f, "AER of every attention map (%zu pairs; * the map shown):\n",
            r->per_map ? r->per_map[0].pairs : (size_t)0);
    if (!layers) {
        for (int mp = 0; mp < nmt_model_attention_maps(m); mp++) {
            char name[64];
            nmt_model_attention_map_name(m, mp, name, sizeof name);
            fprintf(f, "  %-16s %.4f%s\n", name, nmt_aer_rate(&r->per_map[mp]),
                    mp == shown ? "*" : "");
        }
        return;
    }
    fprintf(f, "  %-9s", "");
    for (int t = 0; t < heads; t++)
        fprintf(f, "  head %-2d", t);
    fprintf(f, "  mean\n");
    for (int l = 0; l < layers; l++) {
        fprintf(f, "  layer %-3d", l);
        for (int t = 0; t <= heads; t++) {
            int mp = grid_map(m, l, t, heads);
            fprintf(f, "  %.4f%s", nmt_aer_rate(&r->per_map[mp]), mp == shown ? "*" : " ");
        }
        fputc('\n', f);
    }
}

/* The scores of one model, on f: AER (with --gold), BLEU (with --ref). */
static void put_scores(FILE *f, const align_args *a, int mi, const model_result *r)
{
    if (a->n_models > 1)
        fprintf(f, "%s: ", a->model[mi]);
    if (a->gold)
        align_put_aer(f, &r->aer);
    if (r->bleu) {
        nmt_bleu_score s;
        nmt_bleu_result(r->bleu, &s);
        fprintf(f, "%sBLEU %.2f", a->gold ? "  " : "", s.score);
    }
    fputc('\n', f);
}

/* Creates the pictures' folder or opens the stream -o names. */
static int open_outputs(const align_args *a, sink *out)
{
    if (out->folder && mkdir(a->out, 0777) && errno != EEXIST) {
        cli_error("%s: %s", a->out, strerror(errno));
        return -1;
    }
    int fmt = a->format;
    if (out->write && fmt != FMT_SVG && fmt != FMT_PNG && fmt != FMT_HTML) {
        if (cli_out_open(&out->out, a->out))
            return -1;
        out->color = pick_color(a->color, out->out.f);
        out->width = pick_width(a->width, out->out.f);
    }
    return 0;
}

static int run(const align_args *a)
{
    int status = 1, fmt = a->format;
    inputs in = {0};
    sink out = {0};
    ensemble_targets ens = {0};
    model_result res[MAX_MODELS];
    memset(res, 0, sizeof res);
    int write = !a->gold || a->format_given || a->out;
    int pictures = fmt == FMT_SVG || fmt == FMT_PNG;

    out.write = write;
    align_files files = {a->src, a->tgt, a->gold, a->ref, a->line_spec, a->gold_reverse,
                         a->gold_partial ? NMT_AER_PARTIAL : 0u};
    if (align_read_inputs(&files, &in))
        goto done;
    if (write && pictures) {
        if (in.n > 1 && (!a->out || !strcmp(a->out, "-"))) {
            cli_error("%zu pairs make %zu pictures: give -o FOLDER, or one pair with --line N",
                      in.n, in.n);
            goto done;
        }
        int e = a->out ? align_ext_format(a->out) : -1;
        if (in.n > 1 && (e == FMT_SVG || e == FMT_PNG)) {
            cli_error("%zu pairs make %zu pictures, but -o %s names one file: give -o FOLDER "
                      "(it gets line-NNNN.%s files), or one pair with --line N",
                      in.n, in.n, a->out, align_format_names[fmt]);
            goto done;
        }
        if (!a->out && isatty(STDOUT_FILENO)) {
            cli_error("not writing a picture to the terminal: give -o FILE");
            goto done;
        }
        out.folder = in.n > 1;
    }
    if (fmt == FMT_HTML && !(out.html = html_create(in.n, a->n_models))) {
        cli_error("out of memory");
        goto done;
    }
    if (a->ensemble && align_ensemble_translate(a, &in, &ens))
        goto done;

    for (int mi = 0; mi < a->n_models; mi++) {
        int map;
        nmt_link_rules rules;
        nmt_model *m = load_model(a->model[mi], a, &map, &rules);
        if (!m)
            goto done;
        /* gold links of words the pair does not have, refused before the
         * first output (words are the model's: each model is checked) */
        if (a->gold && align_check_gold(&files, &in, m, a->n_models > 1 ? a->model[mi] : NULL)) {
            nmt_model_free(m);
            goto done;
        }
        /* the output only once a model loaded: a refused model leaves nothing */
        if (mi == 0 && open_outputs(a, &out)) {
            nmt_model_free(m);
            goto done;
        }
        nmt_bleu_opts bo;
        nmt_bleu_opts_init(&bo);
        int rc = a->ref && nmt_bleu_create(&res[mi].bleu, &bo);
        if (rc)
            cli_lib_error();
        if (!rc && a->per_head &&
            !(res[mi].per_map = calloc((size_t)nmt_model_attention_maps(m), sizeof(nmt_aer)))) {
            cli_error("out of memory");
            rc = -1;
        }
        /* links alone of given pairs: split over --threads (cmd_align_links.c) */
        int links_only = a->tgt && a->n_models == 1 && !a->per_head &&
                         (fmt == FMT_PHARAOH || !out.write);
        if (!rc && links_only)
            rc = align_pairs_run(a, &in, m, map, &rules, out.write ? out.out.f : NULL,
                                 a->gold ? &res[mi].aer : NULL, res[mi].unk, res[mi].units);
        else if (!rc)
            rc = align_model(a, &in, mi, m, map, &rules, a->ensemble ? &ens : NULL, &out,
                             &res[mi]);
        if (!rc && a->per_head) {
            FILE *t = open_memstream(&res[mi].per_head, &res[mi].per_head_len);
            if (t) {
                put_per_head(t, m, map, &res[mi]);
                fclose(t);
            } else {
                cli_error("out of memory");
                rc = -1;
            }
        }
        if (!rc && out.html && (rc = html_model(a, out.html, mi, m, map, &res[mi])))
            cli_error("out of memory");
        const char *units = nmt_units_name(m);
        nmt_model_free(m);
        if (rc)
            goto done;
        cli_warn_unknown(strcmp(a->src, "-") ? a->src : "standard input", res[mi].unk[0],
                         res[mi].units[0], units);
        if (a->tgt)
            cli_warn_unknown(strcmp(a->tgt, "-") ? a->tgt : "standard input", res[mi].unk[1],
                             res[mi].units[1], units);
    }
    if (out.html) {
        char title[512];
        const char *src = strcmp(a->src, "-") ? a->src : "standard input";
        const char *base = strrchr(src, '/');
        snprintf(title, sizeof title, "Alignments of %s", base ? base + 1 : src);
        cli_outfile page;
        if (cli_out_open(&page, a->out))
            goto done;
        if (html_write(page.f, out.html, title)) {
            cli_error("%s: write failed", page.name);
            cli_out_abort(&page);
            goto done;
        }
        if (cli_out_commit(&page))
            goto done;
    }
    if (cli_out_commit(&out.out))
        goto done;
    if (a->gold || a->ref) {
        /* The numbers go to stdout unless the alignments already do. */
        FILE *f = write && !pictures && (!a->out || !strcmp(a->out, "-")) ? stderr : stdout;
        for (int mi = 0; mi < a->n_models; mi++) {
            put_scores(f, a, mi, &res[mi]);
            if (res[mi].per_head)
                fputs(res[mi].per_head, f);
        }
    }
    status = 0;
done:
    cli_out_abort(&out.out); /* a failed run leaves what -o held */
    html_free(out.html);
    for (int mi = 0; mi < a->n_models; mi++) {
        nmt_bleu_free(res[mi].bleu);
        free(res[mi].per_map);
        free(res[mi].per_head);
    }
    align_inputs_free(&in);
    align_ensemble_free(&ens);
    return status;
}

int cmd_align(int argc, char **argv)
{
    align_args a;
    int rc = align_parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.em)
        return align_em_run(&a);
    if (a.links)
        return align_links_run(&a);
    cli_set_threads(a.threads);
    return run(&a);
}
