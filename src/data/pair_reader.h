/* Internal: the two files of a parallel corpus read line by line in step,
 * each line tokenized (or made into subword pieces): what the corpus read
 * into memory (corpus.c), the streamed corpus (stream.c) and its counting
 * pass (stream_count.c) share, so that all three split and refuse lines
 * alike. One line of each side is held at a time. */
#ifndef NMT_PAIR_READER_H
#define NMT_PAIR_READER_H

#include <stddef.h>

#include "nmt/subwords.h"
#include "nmt/text.h"

typedef struct nmt_pair_side {
    const char *path;
    nmt_reader *reader;
    nmt_tokens tokens;   /* words: the line's tokens */
    nmt_ids pieces;      /* subwords: the line's piece ids */
    char *lower;         /* the line lowercased, for the pieces */
    size_t lower_cap;
    /* with the reader's words: the word of each token or piece
     * (nmt_token_words, nmt_span_words), and what finding them uses */
    nmt_ids word;
    nmt_ids begin;       /* the pieces' spans */
    nmt_tokens scratch;  /* a word's own tokens */
} nmt_pair_side;

typedef struct nmt_pair_reader {
    nmt_pair_side side[2];   /* source, target */
    const nmt_subwords *subwords; /* NULL: words */
    float alpha;         /* subwords: > 0 samples the pieces (set after open) */
    int words;           /* 1: each side's `word` too (set after open) */
    int lowercase;
    size_t lines;        /* pairs of lines read so far */
} nmt_pair_reader;

/* Opens both files (NMT_OK, or the reader's error naming the file). */
int nmt_pair_reader_open(nmt_pair_reader *r, const char *src_path, const char *tgt_path,
                     const nmt_subwords *subwords, int lowercase);
/* Reads the next pair of lines and splits each (tokens or pieces): 1, 0 at
 * the end of both files, or < 0 (a file that ends before the other is
 * NMT_ERR_FORMAT, naming both). With `split` 0 the lines are only read. */
int nmt_pair_reader_next(nmt_pair_reader *r, int split);
/* The current line's length in tokens or pieces on side k. */
size_t nmt_pair_reader_len(const nmt_pair_reader *r, int k);
void nmt_pair_reader_close(nmt_pair_reader *r);

/* The line lowercased (nmt_lowercase) into *buf, grown as needed to *cap;
 * *line and *len are pointed at it. NMT_ERR_NOMEM (no message set) when it
 * cannot grow. */
int nmt_lowercase_into(char **buf, size_t *cap, const char **line, size_t *len);

#endif
