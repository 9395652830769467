/* Checkpoints: the training settings and the loop's state as metadata, the
 * optimizer's moments as extra tensors, and reading them back for an exact
 * resume. Numbers are written so that they read back to the same bits
 * (%.17g for doubles, %.9g for floats, the rng state in hex). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "train/trainer.h"

void nmt_train_settings_default(nmt_train_settings *s)
{
    memset(s, 0, sizeof *s);
    s->cell = NMT_CELL_LSTM;
    s->attention = NMT_ATT_BAHDANAU;
    s->bidirectional = 1;
    s->emb = s->hidden = s->att_dim = s->out_dim = 256;
    s->batch_size = 64;
    s->max_len = 50;
    s->min_count = 1;
    s->max_vocab = 0;
    s->lowercase = 0;
    s->shuffle = 1;
    s->optimizer = NMT_OPTIM_ADAM;
    s->lr = nmt_optim_default_lr(NMT_OPTIM_ADAM);
    s->clip = 5.0;
    /* the recipe measured on Multi30k (docs/experiments/recipe.md): tied
     * output embeddings, label smoothing 0.1, dropout 0.3 at all three sites */
    s->tied_embeddings = 1;
    s->label_smoothing = 0.1f;
    s->dropout_emb = s->dropout_enc = s->dropout_out = 0.3f;
    s->epochs = 10;
    s->max_steps = -1;
    s->seed = 1;
    s->threads = 1;
    s->valid_every = 0;
    s->lr_decay = 0.5;
    s->patience = 2;
    s->early_stop = 0;
    s->save_every = 1000;
    s->report_every = 0;
    s->report_seconds = 10.0;
    s->best_metric = NMT_BEST_BLEU;
}

const char *nmt_best_metric_name(nmt_best_metric m)
{
    return m == NMT_BEST_PPL ? "ppl" : "bleu";
}

int nmt_best_metric_parse(const char *s, nmt_best_metric *out)
{
    if (!strcmp(s, "bleu") || !strcmp(s, "ppl")) {
        *out = !strcmp(s, "ppl") ? NMT_BEST_PPL : NMT_BEST_BLEU;
        return NMT_OK;
    }
    return nmt_set_error(NMT_ERR_ARG, "unknown best metric '%s' (expected bleu or ppl)", s);
}

/* ---- metadata writing ---------------------------------------------------- */

typedef struct meta_writer {
    nmt_meta *meta;
    int n, max;
    char *buf;
    size_t used, cap;
    int overflow;
} meta_writer;

static void put(meta_writer *w, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void put(meta_writer *w, const char *key, const char *fmt, ...)
{
    if (w->n >= w->max || w->used >= w->cap) {
        w->overflow = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(w->buf + w->used, w->cap - w->used, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= w->cap - w->used) {
        w->overflow = 1;
        return;
    }
    w->meta[w->n].key = key;
    w->meta[w->n].value = w->buf + w->used;
    w->n++;
    w->used += (size_t)len + 1;
}

/* The keys of the corpora's files beyond their paths (nmt_train_settings'
 * data_from_run and data_print), in the order src, tgt, valid_src,
 * valid_tgt. */
static const char *const data_keys[4][3] = {
    {"train.src_from_run", "train.src_bytes", "train.src_hash"},
    {"train.tgt_from_run", "train.tgt_bytes", "train.tgt_hash"},
    {"train.valid_src_from_run", "train.valid_src_bytes", "train.valid_src_hash"},
    {"train.valid_tgt_from_run", "train.valid_tgt_bytes", "train.valid_tgt_hash"},
};

static void put_settings(meta_writer *w, const nmt_train_settings *s)
{
    put(w, "train.src", "%s", s->src_path ? s->src_path : "");
    put(w, "train.tgt", "%s", s->tgt_path ? s->tgt_path : "");
    put(w, "train.valid_src", "%s", s->valid_src_path ? s->valid_src_path : "");
    put(w, "train.valid_tgt", "%s", s->valid_tgt_path ? s->valid_tgt_path : "");
    for (int k = 0; k < 4; k++) {
        if (s->data_from_run[k])
            put(w, data_keys[k][0], "%s", s->data_from_run[k]);
        if (s->data_print[k].known) {
            put(w, data_keys[k][1], "%" PRIu64, s->data_print[k].bytes);
            put(w, data_keys[k][2], "%016" PRIx64, s->data_print[k].hash);
        }
    }
    put(w, "train.cell", "%s", nmt_cell_name(s->cell));
    put(w, "train.attention", "%s", nmt_attention_name(s->attention));
    put(w, "train.bidirectional", "%d", s->bidirectional);
    put(w, "train.emb", "%d", s->emb);
    put(w, "train.hidden", "%d", s->hidden);
    put(w, "train.att_dim", "%d", s->att_dim);
    put(w, "train.out_dim", "%d", s->out_dim);
    put(w, "train.tied_embeddings", "%d", s->tied_embeddings);
    put(w, "train.batch_size", "%d", s->batch_size);
    put(w, "train.max_len", "%d", s->max_len);
    put(w, "train.min_count", "%d", s->min_count);
    put(w, "train.max_vocab", "%d", s->max_vocab);
    put(w, "train.lowercase", "%d", s->lowercase);
    put(w, "train.shuffle", "%d", s->shuffle);
    put(w, "train.subword_alpha", "%.9g", (double)s->subword_alpha);
    put(w, "train.optimizer", "%s", nmt_optim_name(s->optimizer));
    put(w, "train.lr", "%.17g", s->lr);
    put(w, "train.clip", "%.17g", s->clip);
    put(w, "train.dropout_emb", "%.9g", (double)s->dropout_emb);
    put(w, "train.dropout_enc", "%.9g", (double)s->dropout_enc);
    put(w, "train.dropout_out", "%.9g", (double)s->dropout_out);
    put(w, "train.label_smoothing", "%.9g", (double)s->label_smoothing);
    put(w, "train.epochs", "%d", s->epochs);
    put(w, "train.max_steps", "%" PRId64, s->max_steps);
    put(w, "train.seed", "%" PRIu64, s->seed);
    put(w, "train.threads", "%d", s->threads);
    put(w, "train.valid_every", "%" PRId64, s->valid_every);
    put(w, "train.lr_decay", "%.17g", s->lr_decay);
    put(w, "train.patience", "%d", s->patience);
    put(w, "train.early_stop", "%d", s->early_stop);
    put(w, "train.save_every", "%" PRId64, s->save_every);
    put(w, "train.report_every", "%" PRId64, s->report_every);
    put(w, "train.report_seconds", "%.17g", s->report_seconds);
    put(w, "train.max_time", "%.17g", s->max_time);
    put(w, "train.best_metric", "%s", nmt_best_metric_name(s->best_metric));
    put(w, "train.keep_snapshots", "%d", s->keep_snapshots);
    put(w, "train.average_snapshots", "%d", s->average_snapshots);
}

int nmt_train_settings_to_meta(const nmt_train_settings *s, nmt_meta *meta, int max,
                               char *buf, size_t bufsize)
{
    meta_writer w = {.meta = meta, .max = max, .buf = buf, .cap = bufsize};
    put_settings(&w, s);
    if (w.overflow)
        return nmt_set_error(NMT_ERR_NOMEM, "training settings do not fit the metadata buffer");
    return w.n;
}

/* ---- metadata reading ---------------------------------------------------- */

typedef struct meta_reader {
    const nmt_file *f;
    const char *path; /* for messages */
    int rc;
} meta_reader;

static const char *get(meta_reader *r, const char *key)
{
    const char *v = nmt_file_meta(r->f, key);
    if (!v && r->rc == NMT_OK)
        r->rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint has no '%s': not a resumable "
                              "checkpoint of nmt train", key);
    return v;
}

static void bad(meta_reader *r, const char *key, const char *v)
{
    if (r->rc == NMT_OK)
        r->rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint: bad value '%s' for '%s'", v, key);
}

static int64_t get_i64(meta_reader *r, const char *key, int64_t min, int64_t max)
{
    const char *v = get(r, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < min || x > max) {
        bad(r, key, v);
        return 0;
    }
    return (int64_t)x;
}

static int get_int(meta_reader *r, const char *key, int min, int max)
{
    return (int)get_i64(r, key, min, max);
}

static double get_double(meta_reader *r, const char *key, int allow_inf)
{
    const char *v = get(r, key);
    if (!v)
        return 0;
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || isnan(x) || (!allow_inf && isinf(x))) {
        bad(r, key, v);
        return 0;
    }
    return x;
}

/* A double in [min, max) (metadata is not covered by the crc32: a value the
 * command line would refuse is refused here too). */
static double get_double_in(meta_reader *r, const char *key, double min, double max)
{
    double x = get_double(r, key, 0);
    if (r->rc == NMT_OK && !(x >= min && x < max))
        bad(r, key, get(r, key));
    return x;
}

static uint64_t get_u64(meta_reader *r, const char *key)
{
    const char *v = get(r, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || errno || *v == '-') {
        bad(r, key, v);
        return 0;
    }
    return (uint64_t)x;
}

static uint64_t get_hex64(meta_reader *r, const char *key)
{
    const char *v = get(r, key);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 16);
    size_t digits = strspn(v, "0123456789abcdefABCDEF");
    if (digits != 16 || v[digits] || *end || errno) {
        bad(r, key, v);
        return 0;
    }
    return (uint64_t)x;
}

/* Keys added after checkpoints were first written: absent means the
 * behaviour before them (has() says whether to read the key at all). */
static int has(const meta_reader *r, const char *key)
{
    return nmt_file_meta(r->f, key) != NULL;
}

static const char *get_path(meta_reader *r, const char *key)
{
    const char *v = get(r, key);
    return v && *v ? v : NULL;
}

int nmt_train_settings_from_file(nmt_train_settings *s, const nmt_file *f)
{
    meta_reader r = {.f = f};
    nmt_train_settings_default(s);
    s->src_path = get_path(&r, "train.src");
    s->tgt_path = get_path(&r, "train.tgt");
    s->valid_src_path = get_path(&r, "train.valid_src");
    s->valid_tgt_path = get_path(&r, "train.valid_tgt");
    /* absent from checkpoints written before they were kept */
    for (int k = 0; k < 4; k++) {
        if (has(&r, data_keys[k][0]))
            s->data_from_run[k] = get_path(&r, data_keys[k][0]);
        if (has(&r, data_keys[k][1]) && has(&r, data_keys[k][2])) {
            s->data_print[k].bytes = get_u64(&r, data_keys[k][1]);
            s->data_print[k].hash = get_hex64(&r, data_keys[k][2]);
            s->data_print[k].known = 1;
        }
    }
    const char *v = get(&r, "train.cell");
    if (v && nmt_cell_parse(v, &s->cell))
        bad(&r, "train.cell", v);
    v = get(&r, "train.attention");
    if (v && nmt_attention_parse(v, &s->attention))
        bad(&r, "train.attention", v);
    s->bidirectional = get_int(&r, "train.bidirectional", 0, 1);
    s->emb = get_int(&r, "train.emb", 1, 1 << 20);
    s->hidden = get_int(&r, "train.hidden", 1, 1 << 20);
    s->att_dim = get_int(&r, "train.att_dim", 1, 1 << 20);
    s->out_dim = get_int(&r, "train.out_dim", 1, 1 << 20);
    /* checkpoints from before tying, the three dropouts and label smoothing
     * were apart: one dropout on embeddings and deep output, no more */
    int before = !nmt_file_meta(f, "train.dropout_emb");
    s->tied_embeddings = before ? 0 : get_int(&r, "train.tied_embeddings", 0, 1);
    s->batch_size = get_int(&r, "train.batch_size", 1, 1000000);
    s->max_len = get_int(&r, "train.max_len", 0, 1 << 24);
    s->min_count = get_int(&r, "train.min_count", 1, 1 << 30);
    s->max_vocab = get_int(&r, "train.max_vocab", 0, 1 << 30);
    s->lowercase = get_int(&r, "train.lowercase", 0, 1);
    s->shuffle = get_int(&r, "train.shuffle", 0, 1);
    /* absent from checkpoints written before subwords: no sampling */
    if (nmt_file_meta(f, "train.subword_alpha"))
        s->subword_alpha = (float)get_double_in(&r, "train.subword_alpha", 0, 1e6);
    v = get(&r, "train.optimizer");
    if (v && nmt_optim_parse(v, &s->optimizer))
        bad(&r, "train.optimizer", v);
    s->lr = get_double_in(&r, "train.lr", 1e-300, 1e300);
    s->clip = get_double_in(&r, "train.clip", 0, 1e300);
    if (before) {
        s->dropout_emb = s->dropout_out = (float)get_double_in(&r, "train.dropout", 0, 1);
        s->dropout_enc = s->label_smoothing = 0;
    } else {
        s->dropout_emb = (float)get_double_in(&r, "train.dropout_emb", 0, 1);
        s->dropout_enc = (float)get_double_in(&r, "train.dropout_enc", 0, 1);
        s->dropout_out = (float)get_double_in(&r, "train.dropout_out", 0, 1);
        s->label_smoothing = (float)get_double_in(&r, "train.label_smoothing", 0, 1);
    }
    s->epochs = get_int(&r, "train.epochs", 0, 1 << 30);
    s->max_steps = get_i64(&r, "train.max_steps", -1, INT64_MAX);
    s->seed = get_u64(&r, "train.seed");
    s->threads = get_int(&r, "train.threads", 1, 4096);
    s->valid_every = get_i64(&r, "train.valid_every", 0, INT64_MAX);
    s->lr_decay = get_double(&r, "train.lr_decay", 0);
    s->patience = get_int(&r, "train.patience", 0, 1 << 30);
    s->early_stop = get_int(&r, "train.early_stop", 0, 1 << 30);
    s->save_every = get_i64(&r, "train.save_every", 0, INT64_MAX);
    s->report_every = get_i64(&r, "train.report_every", 0, INT64_MAX);
    s->report_seconds = get_double(&r, "train.report_seconds", 0);
    if (has(&r, "train.max_time"))
        s->max_time = get_double_in(&r, "train.max_time", 0, 1e12);
    if (has(&r, "train.best_metric") &&
        nmt_best_metric_parse(get(&r, "train.best_metric"), &s->best_metric))
        bad(&r, "train.best_metric", get(&r, "train.best_metric"));
    if (has(&r, "train.keep_snapshots"))
        s->keep_snapshots = get_int(&r, "train.keep_snapshots", 0, 1 << 20);
    if (has(&r, "train.average_snapshots"))
        s->average_snapshots = get_int(&r, "train.average_snapshots", 0, 1);
    if (r.rc == NMT_OK && (!s->src_path || !s->tgt_path))
        r.rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint names no training corpus");
    return r.rc;
}

/* ---- saving ---------------------------------------------------------------- */

enum { MAX_META = 96, META_BUF = 16384 };

static void put_state(meta_writer *w, const nmt_trainer *t)
{
    const nmt_train_status *st = &t->st;
    put(w, "state.step", "%" PRId64, st->step);
    put(w, "state.epoch", "%d", st->epoch);
    put(w, "state.batch", "%zu", st->batch);
    put(w, "state.rng", "%016" PRIx64 "%016" PRIx64 "%016" PRIx64 "%016" PRIx64,
        t->rng.s[0], t->rng.s[1], t->rng.s[2], t->rng.s[3]);
    put(w, "state.lr", "%.17g", st->lr);
    put(w, "state.optim_t", "%" PRId64, t->opt.t);
    put(w, "state.best_bleu", "%.17g", st->best_bleu);
    put(w, "state.best_ppl", "%.17g", st->best_ppl);
    put(w, "state.best_step", "%" PRId64, st->best_step);
    put(w, "state.since_best", "%d", st->bad_validations);
    put(w, "state.early_stopped", "%d", st->early_stopped);
    put(w, "state.since_decay", "%d", t->since_decay);
    put(w, "state.lowest_ppl", "%.17g", t->lowest_ppl);
    put(w, "state.highest_bleu", "%.17g", t->highest_bleu);
    put(w, "state.best_average_of", "%d", st->best_average_of);
    put(w, "state.averaged_step", "%" PRId64, t->averaged_step);
    put(w, "state.last_valid_step", "%" PRId64, t->last_valid_step);
    put(w, "state.elapsed_s", "%.17g", st->elapsed_s);
    /* what the next log row averages, so that a resumed log matches */
    put(w, "state.report_nll", "%.17g", t->acc_nll);
    put(w, "state.report_tokens", "%.17g", t->acc_tok);
    put(w, "state.report_norm", "%.17g", t->acc_norm);
    put(w, "state.report_steps", "%" PRId64, t->acc_steps);
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
    meta_writer w = {.meta = meta, .max = MAX_META, .buf = buf, .cap = META_BUF};
    put_settings(&w, &t->s);
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
    meta_writer w = {.meta = meta, .max = MAX_META, .buf = buf, .cap = sizeof buf};
    put(&w, "best.step", "%" PRId64, t->st.step);
    put(&w, "best.epoch", "%d", t->st.epoch);
    put(&w, "best.valid_bleu", "%.2f", t->st.valid_bleu);
    put(&w, "best.valid_ppl", "%.3f", t->st.valid_ppl);
    if (t->st.best_average_of > 0)
        put(&w, "best.average_of", "%d", t->st.best_average_of);
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
    meta_reader r = {.f = f};
    nmt_train_status *st = &t->st;
    st->step = get_i64(&r, "state.step", 0, INT64_MAX);
    st->epoch = get_int(&r, "state.epoch", 1, 1 << 30);
    st->batch = (size_t)get_i64(&r, "state.batch", 0, INT64_MAX);
    const char *rng = get(&r, "state.rng");
    if (rng && parse_rng(rng, &t->rng))
        bad(&r, "state.rng", rng);
    st->lr = get_double(&r, "state.lr", 0);
    int64_t optim_t = get_i64(&r, "state.optim_t", 0, INT64_MAX);
    st->best_bleu = get_double(&r, "state.best_bleu", 0);
    st->best_ppl = get_double(&r, "state.best_ppl", 1);
    st->best_step = get_i64(&r, "state.best_step", -1, INT64_MAX);
    st->bad_validations = get_int(&r, "state.since_best", 0, 1 << 30);
    /* absent from checkpoints written before it was kept: early stopping
     * ended those runs exactly when the count had reached the setting (no
     * checkpoint was written in between, and the setting could not change) */
    if (has(&r, "state.early_stopped")) {
        st->early_stopped = get_int(&r, "state.early_stopped", 0, 1);
    } else {
        int early_stop = get_int(&r, "train.early_stop", 0, 1 << 30);
        st->early_stopped = early_stop > 0 && st->bad_validations >= early_stop;
    }
    t->since_decay = get_int(&r, "state.since_decay", 0, 1 << 30);
    /* absent from checkpoints written before it was kept: the best's ppl */
    t->lowest_ppl = nmt_file_meta(f, "state.lowest_ppl")
                        ? get_double(&r, "state.lowest_ppl", 1)
                        : get_double(&r, "state.best_ppl", 1);
    /* absent before averaging: the best model was the run's own, of the
     * highest BLEU, and no average had been made */
    t->highest_bleu = has(&r, "state.highest_bleu") ? get_double(&r, "state.highest_bleu", 0)
                                                    : st->best_bleu;
    if (has(&r, "state.best_average_of"))
        st->best_average_of = get_int(&r, "state.best_average_of", 0, 1 << 20);
    if (has(&r, "state.averaged_step"))
        t->averaged_step = get_i64(&r, "state.averaged_step", -1, INT64_MAX);
    t->last_valid_step = get_i64(&r, "state.last_valid_step", -1, INT64_MAX);
    t->elapsed_base = get_double(&r, "state.elapsed_s", 0);
    t->acc_nll = get_double(&r, "state.report_nll", 0);
    t->acc_tok = get_double(&r, "state.report_tokens", 0);
    t->acc_norm = get_double(&r, "state.report_norm", 0);
    t->acc_steps = get_i64(&r, "state.report_steps", 0, INT64_MAX);
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
