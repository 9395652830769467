/* Corpus and sentence BLEU, computed exactly as sacreBLEU 2.x computes it.
 *
 * A score is built from sufficient statistics: for each sentence the number
 * of hypothesis n-grams (n = 1..4), how many of them the references contain
 * (clipped by the largest count in any one reference), the hypothesis length
 * and the reference length closest to it (ties go to the shorter reference).
 * The statistics are summed over the corpus and turned into a score only at
 * the end, so an accumulator can be fed one sentence at a time, e.g. by the
 * training loop's validation, without files.
 *
 * Text is UTF-8. Before counting, each sentence is lowercased when asked
 * (Unicode, as Python's str.lower), stripped of trailing whitespace and
 * tokenized with the mteval-v13a rules (or not at all), then split on
 * whitespace (Unicode, as Python's str.split). */
#ifndef NMT_BLEU_H
#define NMT_BLEU_H

#include <stddef.h>

#define NMT_BLEU_ORDER 4
/* The sacreBLEU release whose algorithm this matches and whose test numbers
 * it was checked against; printed in signatures ("version:2.6.0"). */
#define NMT_BLEU_SACREBLEU_VERSION "2.6.0"

typedef enum nmt_bleu_tokenize {
    NMT_BLEU_TOK_13A,  /* mteval-v13a, sacreBLEU's default */
    NMT_BLEU_TOK_NONE, /* split on whitespace only */
} nmt_bleu_tokenize;

typedef enum nmt_bleu_smooth {
    NMT_BLEU_SMOOTH_EXP,   /* zero-count orders get 1/(2^k · total), k = 1, 2, .. */
    NMT_BLEU_SMOOTH_NONE,
    NMT_BLEU_SMOOTH_FLOOR, /* zero-count orders get value/total (default 0.1) */
    NMT_BLEU_SMOOTH_ADD_K, /* add value (default 1) to matches and totals of n > 1 */
} nmt_bleu_smooth;

typedef struct nmt_bleu_opts {
    nmt_bleu_tokenize tokenize;
    int lowercase;       /* sacreBLEU --lc */
    nmt_bleu_smooth smooth;
    double smooth_value; /* for floor and add-k; see nmt_bleu_smooth_default */
    int effective_order; /* average only over orders with n-grams (sentence BLEU) */
} nmt_bleu_opts;

/* sacreBLEU's defaults: 13a, mixed case, exp smoothing, no effective order. */
void nmt_bleu_opts_init(nmt_bleu_opts *opts);
/* The default smoothing value of a method: 0.1 for floor, 1 for add-k, 0
 * for the others (which take none). */
double nmt_bleu_smooth_default(nmt_bleu_smooth method);

/* The sufficient statistics of a sentence or of a whole corpus. */
typedef struct nmt_bleu_stats {
    long sys_len;                 /* hypothesis tokens */
    long ref_len;                 /* closest reference tokens */
    long correct[NMT_BLEU_ORDER]; /* clipped n-gram matches, n = 1..4 */
    long total[NMT_BLEU_ORDER];   /* hypothesis n-grams, n = 1..4 */
} nmt_bleu_stats;

typedef struct nmt_bleu_score {
    double score;                      /* 0..100 */
    double precisions[NMT_BLEU_ORDER]; /* 0..100, smoothed as sacreBLEU shows them */
    double bp;                         /* brevity penalty */
    double ratio;                      /* sys_len / ref_len, 0 without reference */
    nmt_bleu_stats stats;              /* as counted (before any add-k) */
} nmt_bleu_score;

/* sacreBLEU's compute_bleu: the score of summed statistics. */
void nmt_bleu_compute(nmt_bleu_score *out, const nmt_bleu_stats *stats,
                      const nmt_bleu_opts *opts);

/* An accumulator of corpus statistics. */
typedef struct nmt_bleu nmt_bleu;

int nmt_bleu_create(nmt_bleu **out, const nmt_bleu_opts *opts);
void nmt_bleu_free(nmt_bleu *b);
/* Forgets the sentences added so far (the options stay). */
void nmt_bleu_reset(nmt_bleu *b);
const nmt_bleu_opts *nmt_bleu_options(const nmt_bleu *b);

/* The statistics of one sentence against its references (n_refs >= 1,
 * NUL-terminated UTF-8), without adding them to the corpus. Returns NMT_OK,
 * NMT_ERR_ARG or NMT_ERR_NOMEM. */
int nmt_bleu_sentence_stats(nmt_bleu *b, nmt_bleu_stats *out, const char *hyp,
                            const char *const *refs, size_t n_refs);
/* Adds one sentence to the corpus; `out` (may be NULL) receives its own
 * statistics. */
int nmt_bleu_add(nmt_bleu *b, nmt_bleu_stats *out, const char *hyp,
                 const char *const *refs, size_t n_refs);
/* Adds statistics computed elsewhere (counts as one sentence of n_refs). */
void nmt_bleu_add_stats(nmt_bleu *b, const nmt_bleu_stats *stats, size_t n_refs);
/* The corpus score of everything added so far. */
void nmt_bleu_result(const nmt_bleu *b, nmt_bleu_score *out);
const nmt_bleu_stats *nmt_bleu_totals(const nmt_bleu *b);
size_t nmt_bleu_sentences(const nmt_bleu *b);
/* The number of references per sentence, or -1 when it varied ("var"). */
long nmt_bleu_nrefs(const nmt_bleu *b);

/* sacreBLEU's signature, e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|
 * version:2.6.0"; `short_form` gives "#:1|c:mixed|e:no|tok:13a|s:exp|v:2.6.0".
 * nrefs < 0 prints "var". Returns the length it needs (as snprintf). */
int nmt_bleu_signature(char *buf, size_t cap, const nmt_bleu_opts *opts, long nrefs,
                       int short_form);
/* sacreBLEU's verbose part: "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944
 * hyp_len = 17 ref_len = 18)". Returns the length it needs (as snprintf). */
int nmt_bleu_verbose(char *buf, size_t cap, const nmt_bleu_score *s);

/* The preprocessing of one sentence: optional lowercasing, trailing
 * whitespace removed, tokenization. Returns a malloc'ed string with tokens
 * separated by single spaces (13a) or the stripped text (none); NULL when out
 * of memory. */
char *nmt_bleu_preprocess(const char *text, const nmt_bleu_opts *opts);
/* The mteval-v13a tokenizer alone (sacreBLEU's Tokenizer13a): malloc'ed. */
char *nmt_bleu_tokenize_13a(const char *text);
/* Python's str.lower() of UTF-8 text: malloc'ed. */
char *nmt_bleu_lowercase(const char *text);
/* The number of whitespace-separated tokens (Unicode whitespace). */
size_t nmt_bleu_count_words(const char *text);

/* Sentence-length buckets for BLEU by length: 1-10, 11-20, .., 41-50, 51+
 * tokens. Empty sentences (0 tokens) fall in the first bucket. */
#define NMT_BLEU_N_BUCKETS 6
int nmt_bleu_bucket(size_t n_tokens);
const char *nmt_bleu_bucket_label(int bucket);

#endif
