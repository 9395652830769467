/* Word links for the pairs of a parallel corpus, and the gold rows they
 * make of a batch: what guided alignment trains one cross-attention head
 * toward (docs/DESIGN.md, "Guided alignment"; nmt train --guided-links).
 *
 * A links file has one line for every line of the corpus's two files, in
 * order: Pharaoh links "i-j" (source word i, target word j, from 0)
 * separated by blanks, "i?j" (a possible link) taken as "i-j", an empty
 * line for a pair without links. Words are the line's whitespace-separated
 * words (nmt_count_words), whatever units the model reads. */
#ifndef NMT_LINKS_H
#define NMT_LINKS_H

#include <stddef.h>
#include <stdint.h>

#include "nmt/batch.h"
#include "nmt/corpus.h"

typedef struct nmt_links {
    size_t n_lines;
    size_t *off;          /* [n_lines + 1]: line k's links (k from 0) are
                           * src[off[k] .. off[k+1]), in the order of their
                           * target word, then source word, each once */
    int32_t *src, *tgt;   /* each link's source word and target word */
    size_t possible;      /* links written i?j (kept as links) */
    size_t empty;         /* lines without a link */
    uint64_t bytes;       /* the file's size ... */
    uint64_t hash;        /* ... and the FNV-1a 64 of all of it as read
                           * (decompressed, each line and a "\n"), which a
                           * checkpoint keeps */
} nmt_links;

/* Reads the links file at path (plain or gzip, as a corpus) with the
 * corpus's files src_path and tgt_path, line by line. Refused, naming the
 * file and the line: a number of lines other than the corpus's, a token
 * that is not a link, a link outside its pair's words (naming the link and
 * the words each side has), and the reader's errors. */
int nmt_links_read(nmt_links *l, const char *path, const char *src_path, const char *tgt_path);
void nmt_links_free(nmt_links *l);

/* The gold rows of batch b (filled from corpus c, which keeps its units'
 * words: nmt_corpus_opts.words) into b->guide, [B, tgt_T, src_T] (made in
 * b->guide_buf, grown as needed): pair k's target piece q (from 0) is
 * supervised at decoder position q (shift 0: the step that predicts it) or
 * q + 1 (shift 1: the step that reads it), uniformly over the source
 * pieces of the source words linked to its word; every other position's
 * row is 0. Pairs are found in l by their line (c->line). Returns the rows
 * made (>= 0), or NMT_ERR_ARG (a corpus without its words, a line beyond
 * l) or NMT_ERR_NOMEM. */
long nmt_links_guide(nmt_batch *b, const nmt_corpus *c, const nmt_links *l, int shift);

#endif
