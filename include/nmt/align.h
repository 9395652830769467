/* Alignments: the attention matrix of one sentence pair written as data (TSV,
 * JSON Lines), as hard links (Pharaoh), and scored against gold links
 * (alignment error rate, precision, recall). The heatmaps that show them
 * (terminal, SVG, PNG, the HTML explorer) are the command line's, in src/cli/.
 * src/align/ has a file per part: formats.c (the check, the writers, hard
 * links), forced.c (attention from a model), words.c (pieces to words),
 * gold.c (reading gold lines), score.c (AER).
 *
 * The writers write to a FILE* the caller gives; they return NMT_OK or
 * NMT_ERR_IO (a failed write) and never print on their own. */
#ifndef NMT_ALIGN_H
#define NMT_ALIGN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nmt/model.h"

/* One sentence pair and its attention. Both token lists include the final
 * "</s>" (the decoder attends while predicting it, and the encoder reads it),
 * so att has n_tgt rows of n_src weights, each row a distribution. */
typedef struct nmt_alignment {
    int n_src;               /* source tokens, "</s>" included */
    int n_tgt;               /* target tokens, "</s>" included */
    const char *const *src;  /* [n_src] UTF-8 tokens */
    const char *const *tgt;  /* [n_tgt] UTF-8 tokens */
    const float *att;        /* [n_tgt, n_src] row-major: att[i * n_src + j] */
} nmt_alignment;

/* A link: source index - target index, 0-based, as Pharaoh writes it. A
 * gold link is sure (possible 0) or only possible (1: annotators thought
 * it likely but not certain, or disagreed); the model's links and a links
 * file's are 0. The field comes last, so {src, tgt} still makes a sure
 * link. */
typedef struct nmt_link {
    int src;
    int tgt;
    int possible;
} nmt_link;

/* ---- how a pair is shown ------------------------------------------------- */

typedef enum {
    NMT_COLOR_NONE = 0,      /* shaded blocks ' ░▒▓█' only */
    NMT_COLOR_256 = 1,       /* xterm 256-colour backgrounds, plus the blocks' order */
    NMT_COLOR_TRUE = 2,      /* 24-bit backgrounds */
} nmt_color_mode;

/* How one pair is shown by the heatmaps (text, SVG, PNG) and JSON Lines;
 * zero everywhere ({0}) is the plain picture. */
typedef struct nmt_align_view {
    long line;            /* the pair's line in its corpus (1-based); 0: unknown */
    const char *title;    /* pictures: NULL for "Attention"; text: a header line
                           * above the heatmap, or none when NULL */
    const nmt_link *gold; /* gold links (source-target word indices, as Pharaoh),
                           * drawn on their cells; links outside the matrix or
                           * on "</s>" are not drawn */
    size_t n_gold;
    int has_gold;         /* 1: gold links were given (perhaps none for this
                           * pair): JSON writes "gold", pictures a legend */
    int width;            /* text: columns to fit (0: no limit) */
    nmt_color_mode color; /* text */
    const char *model;    /* JSON: the model whose attention this is, or NULL */
    const nmt_link *hard; /* pictures: the model's links to mark, when has_hard
                           * (nmt_align_links under the rules asked for); else
                           * the pictures mark nmt_align_hard's */
    int n_hard, has_hard;
} nmt_align_view;

/* NMT_OK if a is a pair the writers can show: at least "</s>" on each side
 * and finite weights (NMT_ERR_ARG or NMT_ERR_NUMERIC, with a message). */
int nmt_alignment_check(const nmt_alignment *a);

/* Whether (src, tgt) is one of the view's gold links: 0 no, 1 a sure one,
 * 2 only possible (a link listed both ways is sure). */
int nmt_align_view_gold(const nmt_align_view *v, int src, int tgt);
/* Whether any of the view's gold links is only possible: the pictures'
 * legends then say which mark is which. */
int nmt_align_view_has_possible(const nmt_align_view *v);

/* ---- attention from a model ---------------------------------------------- */

/* The attention of one pair under teacher forcing: encodes the source (n_src
 * ids, the last one </s>) and feeds <s> tgt[0] .. tgt[n_tgt - 2] to the
 * decoder, keeping the weights of each of the n_tgt steps in att [n_tgt,
 * n_src] (tgt normally ends in </s>, so its row is the attention while
 * predicting the end). Forcing a model's own translation replays the very
 * states it was decoded with, so this also gives the attention of a greedy or
 * beam translation: `nmt translate --alignments` needs only this and
 * nmt_align_write_json. st must hold one source of n_src positions, one row
 * and n_tgt steps (nmt_infer_create(&st, m, 1, max_len, 1, max_steps)).
 * NMT_ERR_ARG for a model without attention; NMT_ERR_NUMERIC when a step's
 * log-probabilities are not finite (weights that are NaN, or so large that
 * the pass overflows). */
int nmt_align_forced(const nmt_model *m, nmt_infer *st, const int32_t *src, int n_src,
                     const int32_t *tgt, int n_tgt, float *att);
/* nmt_align_forced for every attention map of the model at once (a
 * Transformer's layers and heads and each layer's mean, in the numbering
 * of nmt_model_attention_map_name): att [n_maps, n_tgt, n_src], map k's
 * matrix at att + k * n_tgt * n_src. st keeps the map it was set to. */
int nmt_align_forced_maps(const nmt_model *m, nmt_infer *st, const int32_t *src, int n_src,
                          const int32_t *tgt, int n_tgt, float *att);

/* ---- pieces and words ----------------------------------------------------- */

/* The alignment of a subword model's pieces, shown per word. A piece that
 * starts with U+2581 (SentencePiece's mark of a space before it) begins a
 * word, as do the first piece and "</s>" (a word of its own); the other
 * pieces continue the word before them. A target word's row is the mean of
 * its pieces' rows and a source word's column the sum of its pieces'
 * columns, so each row still sums to 1. Each word is its pieces joined,
 * their marks dropped ("▁Fuß" "ball" -> "Fußball"). */
typedef struct nmt_word_alignment {
    nmt_alignment a;      /* the words and their weights; a.src, a.tgt, a.att
                           * point at the arrays below */
    char **src, **tgt;    /* [a.n_src], [a.n_tgt] the words */
    float *att;           /* [a.n_tgt, a.n_src] */
    int *src_word;        /* [pieces' n_src] the word of each source piece */
    int *tgt_word;        /* [pieces' n_tgt] the word of each target piece */
} nmt_word_alignment;

/* How many words nmt_align_words makes of n units that do not end in
 * "</s>": n when they are a word model's tokens (pieces == 0), and for a
 * subword model's pieces those that begin a word. A gold link's indices
 * count these words. */
int nmt_align_word_count(const char *const *units, int n, int pieces);

/* Fills w (free it with nmt_word_alignment_free, also after a failure).
 * NMT_OK, NMT_ERR_ARG for a malformed alignment, or NMT_ERR_NOMEM. */
int nmt_align_words(const nmt_alignment *pieces, nmt_word_alignment *w);
void nmt_word_alignment_free(nmt_word_alignment *w);

/* ---- data formats --------------------------------------------------------- */

/* TSV: a header row (an empty cell, then the source tokens), then one row per
 * target token (the token, then its n_src weights), then a blank line. Tabs
 * and newlines inside tokens (which the tokenizer never makes) are written as
 * spaces so the table stays rectangular. */
int nmt_align_write_tsv(FILE *f, const nmt_alignment *a);

/* JSON Lines: one line {"source": [...], "target": [...], "attention":
 * [[...], ...]} with the tokens escaped as JSON strings (", \, control
 * characters) and each weight printed with enough digits to round-trip a
 * float. This is also what `nmt translate --alignments F` writes. */
int nmt_align_write_json(FILE *f, const nmt_alignment *a);

/* The same object with, first, "line": N (when v->line > 0), then "model":
 * NAME (when v->model is not NULL) and, last,
 * "gold": [[i, j], ...] (when v->has_gold), i the source and j the target
 * word of each gold link, sure and possible, and after it, when some are
 * only possible, "possible": [[i, j], ...] those again. */
int nmt_align_write_json_view(FILE *f, const nmt_alignment *a, const nmt_align_view *v);

/* Hard links from the attention: every target word but the final "</s>" is
 * linked to the source word (not "</s>") it attends to most; on a tie the
 * lower source index wins. Writes at most n_tgt - 1 links into `links`
 * (room for n_tgt entries is always enough) and returns their count, in
 * target order. A source of only "</s>" gives no links. */
int nmt_align_hard(const nmt_alignment *a, nmt_link *links);

/* Pharaoh: the hard links as "i-j" (source-target) separated by spaces, then
 * a newline (an empty line when there are none). */
int nmt_align_write_pharaoh(FILE *f, const nmt_alignment *a);

/* Any links as one Pharaoh line: "i-j" separated by spaces, in the order
 * given, then a newline (every link as "-": a hypothesis has no possible
 * links). */
int nmt_pharaoh_write(FILE *f, const nmt_link *links, size_t n);

/* ---- quality against gold ------------------------------------------------- */

/* Parses one Pharaoh line: links separated by blanks, each "i-j" (sure),
 * or "i?j" (possible, as the JHU and WPT gold files write it) or "ipj"
 * (possible, the talp notation of the WPT03 gold). Duplicates are removed;
 * a link given both as sure and as possible is sure. *links is malloc'ed
 * (NULL when *n is 0) and belongs to the caller. NMT_ERR_FORMAT with a
 * message naming the bad token otherwise. A hypothesis read this way has
 * its links' possible flags ignored by the scores below. */
int nmt_pharaoh_parse(const char *line, nmt_link **links, size_t *n);

/* Swaps each link's two sides: for a gold file written target-source. */
void nmt_links_reverse(nmt_link *links, size_t n);

/* The index of the first of links[n] that is not inside a pair of n_src
 * source and n_tgt target words (indices from 0, below each count, so
 * never on "</s>"; n_tgt < 0 leaves the target side unchecked), or -1 when
 * every link is inside. */
long nmt_links_outside(const nmt_link *links, size_t n, int n_src, int n_tgt);

/* Alignment quality accumulated over a corpus, after Och and Ney (2003):
 * with A the hypothesis links, S the sure gold links and P the possible
 * ones (S included: a sure link is possible too),
 *   AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|), precision = |A∩P| / |A|,
 *   recall = |A∩S| / |S|, the sizes summed over all pairs.
 * With only sure links (P = S) that is 1 - 2|A∩S| / (|A| + |S|).
 * Empty cases (defined so that nothing is divided by zero): with no
 * hypothesis links precision is 1 (no link is wrong); with no sure gold
 * links recall is 1 (no link was missed); with neither, AER is 0. */
typedef struct nmt_aer {
    size_t pairs;
    size_t hyp;           /* |A| */
    size_t gold;          /* |S| */
    size_t both;          /* |A∩S| */
    size_t possible;      /* |P|, S included */
    size_t both_possible; /* |A∩P| */
} nmt_aer;

/* nmt_aer_add_opts's flags. NMT_AER_PARTIAL: the gold comes from partial
 * annotation (only some words of a pair were linked), so a hypothesis link
 * counts (in |A|, |A∩S|, |A∩P|) only when its source word and its target
 * word each stand in some gold link of the pair, sure or possible. */
enum { NMT_AER_PARTIAL = 1 };

/* Adds one pair (duplicate links within a list are counted once; a gold
 * link both sure and possible is sure). Returns NMT_OK or NMT_ERR_NOMEM.
 * nmt_aer_add is nmt_aer_add_opts with no flags. */
int nmt_aer_add(nmt_aer *acc, const nmt_link *hyp, size_t n_hyp,
                const nmt_link *gold, size_t n_gold);
int nmt_aer_add_opts(nmt_aer *acc, const nmt_link *hyp, size_t n_hyp,
                     const nmt_link *gold, size_t n_gold, unsigned flags);
/* Adds the sums of `more` to acc. */
void nmt_aer_merge(nmt_aer *acc, const nmt_aer *more);
double nmt_aer_rate(const nmt_aer *acc);
double nmt_aer_precision(const nmt_aer *acc);
double nmt_aer_recall(const nmt_aer *acc);

#endif
