/* Checkpoint averaging: the element-wise mean of the weights of several
 * model files of one model (the same architecture, vocabularies and every
 * other setting), as `nmt average` and `nmt train --average-snapshots` make
 * it. */
#ifndef NMT_AVERAGE_H
#define NMT_AVERAGE_H

#include "nmt/model.h"

/* Loads the n files one after another (models or checkpoints: only the
 * model's tensors are read and averaged, a checkpoint's optimizer moments
 * are checked by the CRC but not held) and returns in *out a model with the
 * first file's settings and vocabularies whose every weight is the mean of
 * the files' weights, summed in double and rounded to float once. At most
 * two files' models are held at a time, plus the sum in double.
 *
 * The files must describe one model: every metadata key that defines it
 * (those without a dot: cell, attention, sizes, vocabularies, lowercase,
 * tied, and any added later; not crc32, nor a checkpoint's own "train.*",
 * "state.*", "best.*", "snapshot.*") must have the same value in every file
 * (an absent key counts as "false", as docs/DESIGN.md's "tied" does), and every
 * tensor that is neither a model weight nor an optimizer moment of one
 * ("adam.m.NAME" ...) must have the same shape and bytes (the SentencePiece
 * model "subwords", say). Anything else is refused with NMT_ERR_ARG and a
 * message naming both files and what differs; a weight that is NaN or
 * infinite with NMT_ERR_NUMERIC naming the file and tensor; unreadable
 * files as nmt_model_load refuses them. n = 1 gives a copy of the model. */
int nmt_average_models(nmt_model **out, const char *const *paths, int n);

#endif
