/* Checkpoints: the training settings (settings.c) and the loop's state as
 * metadata, the optimizer's moments as extra tensors, and reading the state
 * back for an exact resume; and best.safetensors. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/blas.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "train/ckpt_meta.h"
#include "train/trainer.h"

/* ---- saving ---------------------------------------------------------------- */

enum { MAX_META = 128, META_BUF = 16384 };

/* A streamed corpus's position (stream_blocks.c): the block that holds the next
 * batch, by the lines before it, its number and the number of its first
 * batch in the epoch, and the shuffles' generator at its start. At an
 * epoch's start (batch 0), the epoch's first block, whatever block the
 * trainer last read. */
static void put_stream(nmt_ckpt_writer *w, const nmt_trainer *t)
{
    size_t line = t->block_line, index = t->block_index, first = t->block_first;
    nmt_rng r = t->block_rng;
    if (t->st.batch == 0) {
        line = index = first = 0;
        nmt_stream_blocks_epoch_rng(t, &r);
    }
    nmt_ckpt_put(w, "state.stream_line", "%zu", line);
    nmt_ckpt_put(w, "state.stream_block", "%zu", index);
    nmt_ckpt_put(w, "state.stream_first_batch", "%zu", first);
    nmt_ckpt_put(w, "state.stream_rng", "%016" PRIx64 "%016" PRIx64 "%016" PRIx64 "%016" PRIx64,
                 r.s[0], r.s[1], r.s[2], r.s[3]);
}

static void put_state(nmt_ckpt_writer *w, const nmt_trainer *t)
{
    const nmt_train_status *st = &t->st;
    nmt_ckpt_put(w, "state.step", "%" PRId64, st->step);
    nmt_ckpt_put(w, "state.epoch", "%d", st->epoch);
    nmt_ckpt_put(w, "state.batch", "%zu", st->batch);
    nmt_ckpt_put(w, "state.rng", "%016" PRIx64 "%016" PRIx64 "%016" PRIx64 "%016" PRIx64,
        t->rng.s[0], t->rng.s[1], t->rng.s[2], t->rng.s[3]);
    nmt_ckpt_put(w, "state.lr", "%.17g", st->lr);
    nmt_ckpt_put(w, "state.optim_t", "%" PRId64, t->opt.t);
    nmt_ckpt_put(w, "state.best_bleu", "%.17g", st->best_bleu);
    nmt_ckpt_put(w, "state.best_ppl", "%.17g", st->best_ppl);
    nmt_ckpt_put(w, "state.best_step", "%" PRId64, st->best_step);
    nmt_ckpt_put(w, "state.since_best", "%d", st->bad_validations);
    nmt_ckpt_put(w, "state.early_stopped", "%d", st->early_stopped);
    nmt_ckpt_put(w, "state.since_decay", "%d", t->since_decay);
    nmt_ckpt_put(w, "state.lowest_ppl", "%.17g", t->lowest_ppl);
    nmt_ckpt_put(w, "state.highest_bleu", "%.17g", t->highest_bleu);
    nmt_ckpt_put(w, "state.best_average_of", "%d", st->best_average_of);
    nmt_ckpt_put(w, "state.averaged_step", "%" PRId64, t->averaged_step);
    nmt_ckpt_put(w, "state.last_valid_step", "%" PRId64, t->last_valid_step);
    nmt_ckpt_put(w, "state.elapsed_s", "%.17g", st->elapsed_s);
    /* what it ran on, like the clock a fact of the machine, not of the run */
    char blas[256];
    nmt_blas_describe(blas, sizeof blas);
    nmt_ckpt_put(w, "state.blas", "%s", blas);
    /* what the next log row averages, so that a resumed log matches */
    nmt_ckpt_put(w, "state.report_nll", "%.17g", t->acc_nll);
    nmt_ckpt_put(w, "state.report_tokens", "%.17g", t->acc_tok);
    nmt_ckpt_put(w, "state.report_norm", "%.17g", t->acc_norm);
    nmt_ckpt_put(w, "state.report_steps", "%" PRId64, t->acc_steps);
    if (t->stream)
        put_stream(w, t);
}

int nmt_trainer_save_checkpoint(nmt_trainer *t)
{
    if (t->rank != 0) { /* rank 0 writes the run's files */
        t->last_saved_step = t->st.step;
        return NMT_OK;
    }
    nmt_meta meta[MAX_META];
    char *buf = malloc(META_BUF);
    /* the moments: one tensor per model tensor and moment, named NAME.TENSOR */
    size_t n_moments = (size_t)t->opt.n_moments * (size_t)t->m->n_tensors;
    enum { NAME_MAX_LEN = 32 + NMT_MAX_TENSOR_NAME };
    char *names = malloc(n_moments * NAME_MAX_LEN + 1);
    nmt_named_tensor *extra = malloc((n_moments + 1) * sizeof *extra);
    char *path = nmt_path_join(t->dir, "checkpoint.safetensors");
    int n_extra = 0, rc = NMT_OK;
    if (!buf || !names || !extra || !path) {
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory writing a checkpoint");
        goto done;
    }
    nmt_ckpt_writer w = {.meta = meta, .max = MAX_META, .buf = buf, .cap = META_BUF};
    nmt_train_settings_put(&w, &t->s);
    put_state(&w, t);
    if (w.overflow) {
        rc = nmt_set_error(NMT_ERR_NOMEM, "checkpoint metadata too large");
        goto done;
    }
    for (int i = 0; i < t->opt.n_moments; i++)
        for (int k = 0; k < t->m->n_tensors; k++) {
            const nmt_tensor_info *ti = &t->m->tensors[k];
            char *name = names + (size_t)n_extra * NAME_MAX_LEN;
            snprintf(name, NAME_MAX_LEN, "%s.%s", nmt_optim_moment_name(t->opt.kind, i), ti->name);
            extra[n_extra] = (nmt_named_tensor){.name = name, .ndim = ti->ndim,
                                                .data = t->opt.moment[i] + ti->offset};
            memcpy(extra[n_extra].shape, ti->shape, sizeof extra[n_extra].shape);
            n_extra++;
        }
    rc = nmt_model_save(t->m, path, extra, n_extra, meta, w.n);
    if (rc == NMT_OK) {
        t->last_saved_step = t->st.step;
        if (t->s.keep_snapshots > 0) /* those kept for the checkpoint before are free now */
            nmt_snapshots_prune(t);
    } else {
        char why[512];
        snprintf(why, sizeof why, "%s", nmt_error_message());
        if (t->last_saved_step >= 0)
            nmt_set_error(rc, "%s; the run stops here, the checkpoint of step %lld is kept "
                          "(nmt train --resume %s continues from it)", why,
                          (long long)t->last_saved_step, t->dir);
        else
            nmt_set_error(rc, "%s; the run stops here", why);
    }
done:
    free(buf);
    free(names);
    free(extra);
    free(path);
    return rc;
}

int nmt_trainer_save_best(nmt_trainer *t)
{
    if (t->rank != 0)
        return NMT_OK;
    nmt_meta meta[MAX_META];
    char buf[1024];
    nmt_ckpt_writer w = {.meta = meta, .max = MAX_META, .buf = buf, .cap = sizeof buf};
    nmt_ckpt_put(&w, "best.step", "%" PRId64, t->st.step);
    nmt_ckpt_put(&w, "best.epoch", "%d", t->st.epoch);
    nmt_ckpt_put(&w, "best.valid_bleu", "%.2f", t->st.valid_bleu);
    nmt_ckpt_put(&w, "best.valid_ppl", "%.3f", t->st.valid_ppl);
    if (t->st.best_average_of > 0)
        nmt_ckpt_put(&w, "best.average_of", "%d", t->st.best_average_of);
    char *path = nmt_path_join(t->dir, "best.safetensors");
    if (!path)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int rc = nmt_model_save(t->m, path, NULL, 0, meta, w.n);
    free(path);
    return rc;
}

/* ---- restoring ------------------------------------------------------------- */

static int parse_rng(const char *v, nmt_rng *r)
{
    if (!v || strlen(v) != 64)
        return -1;
    for (int i = 0; i < 4; i++) {
        char part[17];
        memcpy(part, v + 16 * i, 16);
        part[16] = 0;
        char *end;
        errno = 0;
        r->s[i] = (uint64_t)strtoull(part, &end, 16);
        if (*end || errno)
            return -1;
    }
    return 0;
}

int nmt_trainer_restore(nmt_trainer *t, const nmt_file *f)
{
    nmt_ckpt_reader r = {.f = f};
    nmt_train_status *st = &t->st;
    st->step = nmt_ckpt_get_i64(&r, "state.step", 0, INT64_MAX);
    st->epoch = nmt_ckpt_get_int(&r, "state.epoch", 1, 1 << 30);
    st->batch = (size_t)nmt_ckpt_get_i64(&r, "state.batch", 0, INT64_MAX);
    const char *rng = nmt_ckpt_get(&r, "state.rng");
    if (rng && parse_rng(rng, &t->rng))
        nmt_ckpt_bad(&r, "state.rng", rng);
    st->lr = nmt_ckpt_get_double(&r, "state.lr", 0);
    int64_t optim_t = nmt_ckpt_get_i64(&r, "state.optim_t", 0, INT64_MAX);
    st->best_bleu = nmt_ckpt_get_double(&r, "state.best_bleu", 0);
    st->best_ppl = nmt_ckpt_get_double(&r, "state.best_ppl", 1);
    st->best_step = nmt_ckpt_get_i64(&r, "state.best_step", -1, INT64_MAX);
    st->bad_validations = nmt_ckpt_get_int(&r, "state.since_best", 0, 1 << 30);
    /* absent from checkpoints written before it was kept: early stopping
     * ended those runs exactly when the count had reached the setting (no
     * checkpoint was written in between, and the setting could not change) */
    if (nmt_ckpt_has(&r, "state.early_stopped")) {
        st->early_stopped = nmt_ckpt_get_int(&r, "state.early_stopped", 0, 1);
    } else {
        int early_stop = nmt_ckpt_get_int(&r, "train.early_stop", 0, 1 << 30);
        st->early_stopped = early_stop > 0 && st->bad_validations >= early_stop;
    }
    t->since_decay = nmt_ckpt_get_int(&r, "state.since_decay", 0, 1 << 30);
    /* absent from checkpoints written before it was kept: the best's ppl */
    t->lowest_ppl = nmt_file_meta(f, "state.lowest_ppl")
                        ? nmt_ckpt_get_double(&r, "state.lowest_ppl", 1)
                        : nmt_ckpt_get_double(&r, "state.best_ppl", 1);
    /* absent before averaging: the best model was the run's own, of the
     * highest BLEU, and no average had been made */
    t->highest_bleu = nmt_ckpt_has(&r, "state.highest_bleu") ? nmt_ckpt_get_double(&r, "state.highest_bleu", 0)
                                                    : st->best_bleu;
    if (nmt_ckpt_has(&r, "state.best_average_of"))
        st->best_average_of = nmt_ckpt_get_int(&r, "state.best_average_of", 0, 1 << 20);
    if (nmt_ckpt_has(&r, "state.averaged_step"))
        t->averaged_step = nmt_ckpt_get_i64(&r, "state.averaged_step", -1, INT64_MAX);
    t->last_valid_step = nmt_ckpt_get_i64(&r, "state.last_valid_step", -1, INT64_MAX);
    t->elapsed_base = nmt_ckpt_get_double(&r, "state.elapsed_s", 0);
    t->acc_nll = nmt_ckpt_get_double(&r, "state.report_nll", 0);
    t->acc_tok = nmt_ckpt_get_double(&r, "state.report_tokens", 0);
    t->acc_norm = nmt_ckpt_get_double(&r, "state.report_norm", 0);
    t->acc_steps = nmt_ckpt_get_i64(&r, "state.report_steps", 0, INT64_MAX);
    if (t->stream) {
        t->block_line = (size_t)nmt_ckpt_get_i64(&r, "state.stream_line", 0, INT64_MAX);
        t->block_index = (size_t)nmt_ckpt_get_i64(&r, "state.stream_block", 0, INT64_MAX);
        t->block_first = (size_t)nmt_ckpt_get_i64(&r, "state.stream_first_batch", 0,
                                                  (int64_t)st->batch);
        const char *srng = nmt_ckpt_get(&r, "state.stream_rng");
        if (srng && parse_rng(srng, &t->block_rng))
            nmt_ckpt_bad(&r, "state.stream_rng", srng);
        t->block_restored = 1;
    }
    if (r.rc)
        return r.rc;
    t->opt.t = optim_t;
    t->opt.lr = st->lr;
    st->elapsed_s = t->elapsed_base;
    for (int i = 0; i < t->opt.n_moments; i++)
        for (int k = 0; k < t->m->n_tensors; k++) {
            const nmt_tensor_info *ti = &t->m->tensors[k];
            char name[128];
            snprintf(name, sizeof name, "%s.%s", nmt_optim_moment_name(t->opt.kind, i),
                     ti->name);
            int ndim, shape[NMT_MAX_NDIM];
            const float *data = nmt_file_tensor(f, name, &ndim, shape);
            size_t size = 1;
            for (int d = 0; data && d < ndim; d++)
                size *= (size_t)shape[d];
            if (!data)
                return nmt_set_error(NMT_ERR_FORMAT, "checkpoint has no tensor '%s' (the "
                                     "%s optimizer's state)", name,
                                     nmt_optim_name(t->opt.kind));
            if (ndim != ti->ndim || size != ti->size)
                return nmt_set_error(NMT_ERR_FORMAT, "checkpoint tensor '%s' has the wrong "
                                     "shape", name);
            memcpy(t->opt.moment[i] + ti->offset, data, ti->size * sizeof(float));
        }
    t->restored = 1;
    t->last_saved_step = st->step;
    return NMT_OK;
}
