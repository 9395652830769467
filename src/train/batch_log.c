/* --batch-log: every step's batch as JSON Lines of token ids, after a
 * first line naming the weights the steps start from, so that another
 * program (pytorch/torch_baseline.py) can follow the same run. An observer:
 * nothing here changes the run. */
#include <stdio.h>
#include <string.h>

#include "nmt/error.h"
#include "io/safetensors.h"
#include "train/trainer.h"

/* The crc32 of the weights as a model file's data holds them: float32
 * little-endian, in the tensor table's order (the one parameter buffer). */
static uint32_t weights_crc32(const nmt_model *m)
{
    uint32_t crc = 0;
    unsigned char buf[4096];
    const nmt_real *x = m->params;
    for (size_t n = m->n_params; n;) {
        size_t k = n > sizeof buf / 4 ? sizeof buf / 4 : n;
        for (size_t i = 0; i < k; i++) {
            float v = (float)x[i];
            uint32_t u;
            memcpy(&u, &v, 4);
            for (int j = 0; j < 4; j++)
                buf[4 * i + (size_t)j] = (unsigned char)(u >> (8 * j));
        }
        crc = nmt_st_crc32(crc, buf, k * 4);
        x += k;
        n -= k;
    }
    return crc;
}

/* The batch log's first line, {"start_step":S,"n_params":N,
 * "weights_crc32":"8 hex digits"}: the weights the logged steps start
 * from, so that a program following the batches can check that it starts
 * from the same model (a model file of these weights has this crc32 over
 * its tensors in table order). */
int nmt_batch_log_start(nmt_trainer *t)
{
    fprintf(t->batch_log, "{\"start_step\":%lld,\"n_params\":%zu,\"weights_crc32\":\"%08lx\"}\n",
            (long long)t->st.step, t->m->n_params, (unsigned long)weights_crc32(t->m));
    if (ferror(t->batch_log) || fflush(t->batch_log))
        return nmt_set_error(NMT_ERR_IO, "%s: write failed", t->s.batch_log_path);
    return NMT_OK;
}

/* The rows [k][first, len) of a time-major [T, B] id matrix as a JSON list
 * of lists, after `name`. */
static void put_rows(FILE *f, const char *name, const int32_t *ids, const int *len, int B,
                     int first, int drop_last)
{
    fprintf(f, ",\"%s\":[", name);
    for (int k = 0; k < B; k++) {
        fputs(k ? ",[" : "[", f);
        for (int j = first; j < len[k] - drop_last; j++)
            fprintf(f, j > first ? ",%d" : "%d", (int)ids[(size_t)j * B + k]);
        fputc(']', f);
    }
    fputc(']', f);
}

/* Guided alignment's gold rows, ,"guide":[[[i,j,p],...],...]: for each pair
 * its rows' entries above 0, decoder position i and source position j from
 * 0 (the positions of docs/DESIGN.md's batches: i = 0 reads <s>), p the
 * weight as a float's 9 digits. */
static void put_guide(FILE *f, const nmt_batch *b)
{
    fputs(",\"guide\":[", f);
    for (int k = 0; k < b->B; k++) {
        fputs(k ? ",[" : "[", f);
        int n = 0;
        for (int i = 0; i < b->tgt_len[k]; i++)
            for (int j = 0; j < b->src_len[k]; j++) {
                float p = b->guide[((size_t)k * b->tgt_T + i) * b->src_T + j];
                if (p > 0)
                    fprintf(f, n++ ? ",[%d,%d,%.9g]" : "[%d,%d,%.9g]", i, j, (double)p);
            }
        fputc(']', f);
    }
    fputc(']', f);
}

/* {"step":N,"lr":X,"src":[[ids]],"tgt":[[ids]]}: the step's learning rate
 * (the one its optimizer update uses, after any decay) and pairs as token
 * ids, without </s> and <s> (docs/DESIGN.md's batches add them): the
 * source the encoder read (after word dropout) and the target, the labels
 * (never dropped). With word dropout on the target side also
 * "tgt_in":[[ids]], the decoder's input y1..ym as it read them (without
 * <s>); without it that is "tgt", and a run without word dropout writes
 * the log it did before there was any. */
int nmt_batch_log_step(nmt_trainer *t)
{
    FILE *f = t->batch_log;
    const nmt_corpus *c = t->train;
    const nmt_batch *b = &t->batch;
    fprintf(f, "{\"step\":%lld,\"lr\":%.17g", (long long)t->st.step + 1, t->opt.lr);
    put_rows(f, "src", b->src, b->src_len, b->B, 0, 1);
    fputs(",\"tgt\":[", f);
    for (int k = 0; k < b->B; k++) {
        size_t p = b->pair[k];
        fputs(k ? ",[" : "[", f);
        for (size_t i = c->tgt_off[p]; i < c->tgt_off[p + 1]; i++)
            fprintf(f, i > c->tgt_off[p] ? ",%d" : "%d", (int)c->tgt[i]);
        fputc(']', f);
    }
    fputc(']', f);
    if (t->s.word_dropout_tgt > 0)
        put_rows(f, "tgt_in", b->tgt_in, b->tgt_len, b->B, 1, 0);
    if (b->guide)
        put_guide(f, b);
    fputs("}\n", f);
    if (ferror(f))
        return nmt_set_error(NMT_ERR_IO, "%s: write failed", t->s.batch_log_path);
    return NMT_OK;
}
