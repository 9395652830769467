/* chrF and chrF++ (Popović 2015, 2017), computed exactly as sacreBLEU 2.x
 * computes them; the BLEU library's sibling (nmt/bleu.h).
 *
 * A score is built from sufficient statistics: for each n-gram order, the
 * hypothesis n-grams, the reference n-grams and how many of them match
 * (clipped by the reference's count). The orders are the character n-grams
 * n = 1..char_order, then the word n-grams n = 1..word_order (chrF++ is
 * word order 2). With several references a sentence keeps the statistics of
 * the reference that gives it the highest chrF (the first one on a tie). The
 * statistics are summed over the corpus and turned into one F-score at the
 * end, as for BLEU.
 *
 * Text is UTF-8; a character is a Unicode code point (sacreBLEU works on
 * Python strings). Before counting, each sentence is lowercased when asked
 * (as Python's str.lower) and stripped of trailing whitespace (as sacreBLEU's
 * command line does on reading); character n-grams skip whitespace unless
 * asked to keep it; words are the whitespace-separated tokens with one
 * ASCII punctuation character split off their end or else their start.
 *
 * sacreBLEU's oddities kept on purpose, since users compare our numbers with
 * its: an order for which the reference has no n-grams counts no hypothesis
 * n-grams either (so an empty reference adds nothing to a corpus), and by
 * default the F-score is of the precision and recall averaged over the
 * orders that have n-grams on both sides ("eff:yes"), not chrF++.py's mean of
 * per-order F-scores with 1e-16 for the empty ones (eps_smoothing). */
#ifndef NMT_CHRF_H
#define NMT_CHRF_H

#include <stddef.h>

/* Limits of the orders (sacreBLEU has none; 6 and 2 are what is used). */
#define NMT_CHRF_MAX_CHAR_ORDER 10
#define NMT_CHRF_MAX_WORD_ORDER 10
#define NMT_CHRF_MAX_ORDER (NMT_CHRF_MAX_CHAR_ORDER + NMT_CHRF_MAX_WORD_ORDER)
#define NMT_CHRF_MAX_BETA 100

typedef struct nmt_chrf_opts {
    int char_order;    /* character n-grams 1..char_order; sacreBLEU: 6 */
    int word_order;    /* word n-grams 1..word_order; 0, or 2 for chrF++ */
    int beta;          /* recall weighs beta times precision; 2 */
    int lowercase;     /* case-insensitive */
    int whitespace;    /* keep whitespace in character n-grams; off */
    int eps_smoothing; /* chrF++.py's smoothing; off (effective order) */
} nmt_chrf_opts;

/* sacreBLEU's defaults: chrF2, 6 character orders, no words, mixed case. */
void nmt_chrf_opts_init(nmt_chrf_opts *opts);

/* The statistics of a sentence or a corpus, one entry per order: index
 * k < char_order holds character (k+1)-grams, index char_order + k word
 * (k+1)-grams; entries past char_order + word_order stay 0. */
typedef struct nmt_chrf_stats {
    long hyp[NMT_CHRF_MAX_ORDER];   /* hypothesis n-grams (0 if the reference has none) */
    long ref[NMT_CHRF_MAX_ORDER];   /* reference n-grams */
    long match[NMT_CHRF_MAX_ORDER]; /* matches, each n-gram clipped by its reference count */
} nmt_chrf_stats;

/* sacreBLEU's _compute_f_score: the chrF of summed statistics, 0..100. */
double nmt_chrf_compute(const nmt_chrf_stats *stats, const nmt_chrf_opts *opts);

/* An accumulator of corpus statistics. */
typedef struct nmt_chrf nmt_chrf;

/* NMT_ERR_ARG for orders or beta out of range (char_order 0..10, word_order
 * 0..10, not both 0; beta 0..100). */
int nmt_chrf_create(nmt_chrf **out, const nmt_chrf_opts *opts);
void nmt_chrf_free(nmt_chrf *c);
/* Forgets the sentences added so far (the options stay). */
void nmt_chrf_reset(nmt_chrf *c);
const nmt_chrf_opts *nmt_chrf_options(const nmt_chrf *c);

/* The statistics of one sentence against its references (n_refs >= 1,
 * NUL-terminated UTF-8; invalid bytes count as one character each), those
 * of the best reference, without adding them to the corpus. Returns NMT_OK,
 * NMT_ERR_ARG or NMT_ERR_NOMEM. */
int nmt_chrf_sentence_stats(nmt_chrf *c, nmt_chrf_stats *out, const char *hyp,
                            const char *const *refs, size_t n_refs);
/* Adds one sentence to the corpus; `out` (may be NULL) receives its own
 * statistics. */
int nmt_chrf_add(nmt_chrf *c, nmt_chrf_stats *out, const char *hyp,
                 const char *const *refs, size_t n_refs);
/* Adds statistics computed elsewhere (counts as one sentence of n_refs). */
void nmt_chrf_add_stats(nmt_chrf *c, const nmt_chrf_stats *stats, size_t n_refs);
/* The corpus chrF of everything added so far. */
double nmt_chrf_result(const nmt_chrf *c);
const nmt_chrf_stats *nmt_chrf_totals(const nmt_chrf *c);
size_t nmt_chrf_sentences(const nmt_chrf *c);
/* The number of references per sentence, or -1 when it varied ("var"). */
long nmt_chrf_nrefs(const nmt_chrf *c);

/* The metric's name as sacreBLEU prints it: "chrF" beta, then one '+' per
 * word order ("chrF2", "chrF2++"). Returns the length it needs (as snprintf). */
int nmt_chrf_name(char *buf, size_t cap, const nmt_chrf_opts *opts);
/* sacreBLEU's signature, e.g. "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|
 * space:no|version:2.6.0"; `short_form` gives "#:1|c:mixed|e:yes|nc:6|nw:0|
 * s:no|v:2.6.0". nrefs < 0 prints "var". Returns the length it needs. */
int nmt_chrf_signature(char *buf, size_t cap, const nmt_chrf_opts *opts, long nrefs,
                       int short_form);

#endif
