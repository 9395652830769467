/* The counting pass of a streamed corpus (nmt/stream.h): the vocabularies
 * of a corpus too large to hold, from one pass that keeps the counts of
 * the token types and nothing of the lines. The pairs counted are those
 * the stream keeps (max_len, skip_empty), as nmt_corpus_read counts only
 * the pairs it keeps, so that both build the same vocabularies. */
#include "nmt/stream.h"

#include <string.h>

#include "data/pair_reader.h"
#include "nmt/error.h"

static int count_line(nmt_vocab_counter *c, const nmt_tokens *t)
{
    for (size_t i = 0; i < t->n; i++) {
        int32_t id = nmt_vocab_counter_add(c, t->tok[i], t->len[i]);
        if (id < 0)
            return id;
    }
    return NMT_OK;
}

int nmt_stream_count(const char *src_path, const char *tgt_path, const nmt_corpus_opts *opts,
                     nmt_vocab **sv, nmt_vocab **tv, nmt_stream_counts *counts)
{
    memset(counts, 0, sizeof *counts);
    if (sv)
        *sv = NULL;
    if (tv)
        *tv = NULL;
    nmt_corpus_opts o = {0};
    if (opts)
        o = *opts;
    if (o.max_len < 0 || o.min_count < 0 || o.max_vocab < 0)
        return nmt_set_error(NMT_ERR_ARG, "corpus options must not be negative");
    nmt_pair_reader in;
    /* each side's types (the units' choice counts them), and both sides'
     * tokens together for a joint vocabulary */
    nmt_vocab_counter *c[3] = {NULL, NULL, NULL};
    int joint = o.joint_vocab && !o.subwords;
    int rc = nmt_pair_reader_open(&in, src_path, tgt_path, o.subwords, o.lowercase);
    if (rc)
        return rc;
    for (int k = 0; !rc && !o.subwords && k < 2 + joint; k++)
        rc = nmt_vocab_counter_new(&c[k]);
    while (!rc && (rc = nmt_pair_reader_next(&in, 1)) == 1) {
        rc = NMT_OK;
        size_t ns = nmt_pair_reader_len(&in, 0), nt = nmt_pair_reader_len(&in, 1);
        if (o.skip_empty && (!ns || !nt)) {
            counts->skipped_empty++;
            continue;
        }
        if (o.max_len > 0 && (ns > (size_t)o.max_len || nt > (size_t)o.max_len)) {
            counts->skipped_long++;
            continue;
        }
        counts->pairs++;
        for (int k = 0; !rc && k < 2 && c[k]; k++)
            rc = count_line(c[k], &in.side[k].tokens);
        for (int k = 0; !rc && k < 2 && c[2]; k++)
            rc = count_line(c[2], &in.side[k].tokens);
    }
    counts->lines = in.lines;
    nmt_pair_reader_close(&in);
    for (int k = 0; k < 2; k++)
        counts->types[k] = c[k] ? nmt_vocab_counter_types(c[k]) : 0;
    nmt_vocab *joint_v = NULL;
    if (!rc && c[2] && (sv || tv))
        rc = nmt_vocab_counter_build(c[2], o.min_count, o.max_vocab, &joint_v, NULL);
    if (!rc && c[0] && sv)
        rc = joint ? nmt_vocab_copy(sv, joint_v)
                   : nmt_vocab_counter_build(c[0], o.min_count, o.max_vocab, sv, NULL);
    if (!rc && c[1] && tv)
        rc = joint ? nmt_vocab_copy(tv, joint_v)
                   : nmt_vocab_counter_build(c[1], o.min_count, o.max_vocab, tv, NULL);
    if (rc && sv) {
        nmt_vocab_free(*sv);
        *sv = NULL;
    }
    nmt_vocab_free(joint_v);
    for (int k = 0; k < 3; k++)
        nmt_vocab_counter_free(c[k]);
    return rc;
}
