/* --batch-log: every step's batch as JSON Lines of token ids, after a
 * first line naming the weights the steps start from, so that another
 * program (scripts/torch_baseline.py) can follow the same run. An observer:
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

/* {"step":N,"lr":X,"src":[[ids]],"tgt":[[ids]]}: the step's learning rate
 * (the one its optimizer update uses, after any decay) and pairs as token
 * ids, without </s> and <s> (docs/DESIGN.md's batches add them). */
int nmt_batch_log_step(nmt_trainer *t)
{
    FILE *f = t->batch_log;
    const nmt_corpus *c = t->train;
    const nmt_batch *b = &t->batch;
    fprintf(f, "{\"step\":%lld,\"lr\":%.17g", (long long)t->st.step + 1, t->opt.lr);
    for (int side = 0; side < 2; side++) {
        const int32_t *ids = side ? c->tgt : c->src;
        const size_t *off = side ? c->tgt_off : c->src_off;
        fputs(side ? ",\"tgt\":[" : ",\"src\":[", f);
        for (int k = 0; k < b->B; k++) {
            size_t p = b->pair[k];
            fputs(k ? ",[" : "[", f);
            for (size_t i = off[p]; i < off[p + 1]; i++)
                fprintf(f, i > off[p] ? ",%d" : "%d", (int)ids[i]);
            fputc(']', f);
        }
        fputc(']', f);
    }
    fputs("}\n", f);
    if (ferror(f))
        return nmt_set_error(NMT_ERR_IO, "%s: write failed", t->s.batch_log_path);
    return NMT_OK;
}
