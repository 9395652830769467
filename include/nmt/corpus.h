/* A parallel corpus held as token ids only (never the raw text). */
#ifndef NMT_CORPUS_H
#define NMT_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/subwords.h"
#include "nmt/vocab.h"

typedef struct nmt_corpus_opts {
    int lowercase;
    int max_len;     /* skip pairs with more tokens than this on a side; 0: no limit */
    int skip_empty;  /* skip pairs with an empty side (training); else keep them */
    int min_count;   /* when building vocabularies: keep tokens seen this often */
    int max_vocab;   /* when building vocabularies: at most this many ids in all; 0: no limit */
    int joint_vocab; /* when building vocabularies: one of both sides' tokens, each
                      * counted on both sides together (min_count and max_vocab
                      * apply to it), returned in both places (two copies) */
    /* Subwords: with a SentencePiece model each line (lowercased first when
     * asked) becomes its piece ids, which are the vocabulary's ids: no
     * vocabulary is used or built (min_count and max_vocab do not apply) and
     * max_len counts pieces. */
    const nmt_subwords *subwords;
    float subword_alpha;  /* > 0: sample each line's pieces (subword
                           * regularisation, unigram models) ... */
    uint32_t sample_seed; /* ... from a generator seeded with this, so that
                           * the same seed reads the same ids */
    int words;            /* 1: keep the word each token or piece was cut from
                           * (src_word, tgt_word: guided alignment) */
} nmt_corpus_opts;

typedef struct nmt_corpus {
    size_t n;                  /* pairs kept */
    int32_t *src, *tgt;        /* ids of all kept pairs, concatenated, no </s> */
    size_t *src_off, *tgt_off; /* [n + 1]: pair i is src[src_off[i] .. src_off[i+1]) */
    int32_t *src_word, *tgt_word; /* with opts' words (else NULL), beside src and tgt:
                               * each unit's word in its line, from 0 (words as the
                               * line's whitespace separates them: nmt_count_words;
                               * -1 for a piece of no word) */
    size_t *line;              /* [n]: 1-based line number of pair i in the files */
    size_t n_lines;            /* lines read */
    size_t skipped_long;       /* pairs skipped by max_len */
    size_t skipped_empty;      /* pairs skipped for an empty side */
} nmt_corpus;

/* Reads a line-aligned pair of files. If *src_vocab and *tgt_vocab are NULL
 * the vocabularies are counted on this corpus (min_count, max_vocab) and
 * returned in them; otherwise the given ones are used (unknown words ->
 * <unk>). With opts->subwords the lines become piece ids and src_vocab and
 * tgt_vocab are not used (they may be NULL). Refuses, naming file and line:
 * missing files, directories, an empty corpus, differing line counts, bad
 * gzip, invalid UTF-8, NUL bytes. */
int nmt_corpus_read(nmt_corpus *c, const char *src_path, const char *tgt_path,
                    const nmt_corpus_opts *opts, nmt_vocab **src_vocab,
                    nmt_vocab **tgt_vocab);
void nmt_corpus_free(nmt_corpus *c);

/* The <unk> ids among the kept pairs' tokens and the tokens in all, source
 * side [0] and target side [1]: a high share says that the text does not
 * fit the vocabularies (another language, another corpus's words). */
void nmt_corpus_count_unk(const nmt_corpus *c, size_t unk[2], size_t total[2]);

/* What tells one data file from another without keeping it: its size in
 * bytes and an FNV-1a hash of its first NMT_DATA_PRINT_LINES lines as read
 * (gzip decompressed, each line and a "\n"). A checkpoint keeps its corpora's
 * prints, so that a resume may take the data from where it moved to and
 * refuse other data. */
#define NMT_DATA_PRINT_LINES 1000
typedef struct nmt_data_print {
    int known;      /* 0: no print (a checkpoint from before prints) */
    uint64_t bytes;
    uint64_t hash;
} nmt_data_print;

/* The print of the file at path; NMT_ERR_IO (and the reader's errors)
 * naming the file when it cannot be read. */
int nmt_data_print_of(const char *path, nmt_data_print *out);

/* Learns one joint subword model of n_pieces pieces from every line of both
 * files (source lines, then target lines), lowercased first when asked:
 * nmt_subwords_learn, with the files' errors named by file and line. */
int nmt_corpus_learn_subwords(nmt_subwords **out, const char *src_path, const char *tgt_path,
                              int n_pieces, int lowercase);

/* nmt_corpus_learn_subwords from a sample of at most max_pairs pairs of a
 * corpus too large to hold: a reservoir sample (one pass over the files,
 * holding the sample's lines only) drawn with a fixed seed, so that the
 * same corpus gives the same pieces; a corpus of at most max_pairs pairs
 * is taken whole, in order (the very lines nmt_corpus_learn_subwords
 * reads). */
int nmt_corpus_learn_subwords_sample(nmt_subwords **out, const char *src_path,
                                     const char *tgt_path, int n_pieces, int lowercase,
                                     size_t max_pairs);

#endif
