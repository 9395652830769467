/* A parallel corpus held as token ids only (never the raw text). */
#ifndef NMT_CORPUS_H
#define NMT_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/vocab.h"

typedef struct nmt_corpus_opts {
    int lowercase;
    int max_len;     /* skip pairs with more tokens than this on a side; 0: no limit */
    int skip_empty;  /* skip pairs with an empty side (training); else keep them */
    int min_count;   /* when building vocabularies: keep tokens seen this often */
    int max_vocab;   /* when building vocabularies: at most this many ids in all; 0: no limit */
} nmt_corpus_opts;

typedef struct nmt_corpus {
    size_t n;                  /* pairs kept */
    int32_t *src, *tgt;        /* ids of all kept pairs, concatenated, no </s> */
    size_t *src_off, *tgt_off; /* [n + 1]: pair i is src[src_off[i] .. src_off[i+1]) */
    size_t *line;              /* [n]: 1-based line number of pair i in the files */
    size_t n_lines;            /* lines read */
    size_t skipped_long;       /* pairs skipped by max_len */
    size_t skipped_empty;      /* pairs skipped for an empty side */
} nmt_corpus;

/* Reads a line-aligned pair of files. If *src_vocab and *tgt_vocab are NULL
 * the vocabularies are counted on this corpus (min_count, max_vocab) and
 * returned in them; otherwise the given ones are used (unknown words ->
 * <unk>). Refuses, naming file and line: missing files, directories, an empty
 * corpus, differing line counts, bad gzip, invalid UTF-8, NUL bytes. */
int nmt_corpus_read(nmt_corpus *c, const char *src_path, const char *tgt_path,
                    const nmt_corpus_opts *opts, nmt_vocab **src_vocab,
                    nmt_vocab **tgt_vocab);
void nmt_corpus_free(nmt_corpus *c);

#endif
