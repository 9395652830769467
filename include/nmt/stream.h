/* A parallel corpus streamed from its files (plain or gzip) in blocks of at
 * most a given number of kept pairs, for corpora larger than memory
 * (nmt train --shuffle-buffer N). Only one block is held at a time, as
 * token ids (never the raw text), together with the pair that follows it
 * (read ahead to learn whether the block is the files' last). A block is
 * an nmt_corpus of its own, so that the batch planner and batch filler
 * take it as they take a whole corpus; its `line` array gives each pair's
 * line number in the files.
 *
 * The position between blocks is a line count (nmt_stream_tell): a block
 * starts after that many lines, and nmt_stream_seek comes back to it by
 * reading the files again from the start and skipping lines (decompressed
 * but not tokenized). That is all a checkpoint needs to find its block
 * again. */
#ifndef NMT_STREAM_H
#define NMT_STREAM_H

#include <stddef.h>

#include "nmt/corpus.h"
#include "nmt/vocab.h"

typedef struct nmt_stream nmt_stream;

/* Opens the two line-aligned files with the units of opts: the vocabularies
 * sv and tv (unknown words -> <unk>; not owned, they must outlive the
 * stream), or opts->subwords (then sv and tv may be NULL). opts->lowercase,
 * max_len and skip_empty select the pairs as nmt_corpus_read does; subword
 * sampling (subword_alpha) is refused. block_pairs >= 1. The stream is
 * positioned at the first line. */
int nmt_stream_open(nmt_stream **out, const char *src_path, const char *tgt_path,
                    const nmt_corpus_opts *opts, const nmt_vocab *sv, const nmt_vocab *tv,
                    size_t block_pairs);

/* Reads the next block into *block (the stream's; valid until the next
 * call to nmt_stream_next or nmt_stream_seek): the next block_pairs kept
 * pairs, fewer in the files' last block. *last is 1 when no kept pair
 * follows the block. A block of no pairs (with *last 1) means that the
 * files hold no kept pair past the position. Errors (bad gzip, invalid
 * UTF-8, differing line counts) name file and line. */
int nmt_stream_next(nmt_stream *s, const nmt_corpus **block, int *last);

/* The lines of the files before the block nmt_stream_next reads next. */
size_t nmt_stream_tell(const nmt_stream *s);

/* Positions the stream so that the next block starts after `lines` lines:
 * the files are opened again and that many lines are read past (0: the
 * start of the files, as for a new epoch). NMT_ERR_FORMAT when the files
 * have fewer lines (the data changed under a checkpoint). */
int nmt_stream_seek(nmt_stream *s, size_t lines);

void nmt_stream_close(nmt_stream *s);

/* What a counting pass saw: the pairs kept, the lines read, the pairs
 * skipped by max_len and for an empty side, and the distinct tokens of
 * each side (source [0], target [1]). */
typedef struct nmt_stream_counts {
    size_t pairs, lines, skipped_long, skipped_empty;
    size_t types[2];
} nmt_stream_counts;

/* The vocabulary pass of a streamed corpus: counts the tokens of the pairs
 * that opts keeps (lowercase, max_len, skip_empty) in one pass over the
 * files, holding one line at a time and the counts, never the ids, and
 * builds each side's vocabulary as nmt_corpus_read would (opts->min_count,
 * max_vocab, joint_vocab): the same vocabularies. sv and tv may be NULL for the counts
 * alone. With opts->subwords nothing is counted but the pairs (and the
 * vocabularies are not built). An empty corpus is no error here: counts
 * say it. */
int nmt_stream_count(const char *src_path, const char *tgt_path, const nmt_corpus_opts *opts,
                     nmt_vocab **sv, nmt_vocab **tv, nmt_stream_counts *counts);

#endif
