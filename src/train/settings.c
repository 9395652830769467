/* The training settings: their defaults, the names of the best-model
 * metric, and their metadata in checkpoints (train.*), written and read
 * back so that a resumed run continues with exactly the settings it began
 * with. */
#include <inttypes.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/train.h"
#include "train/ckpt_meta.h"

void nmt_train_settings_default(nmt_train_settings *s)
{
    memset(s, 0, sizeof *s);
    /* the recipe measured on Multi30k (docs/experiments/recipe.md): tied
     * output embeddings, label smoothing 0.1, dropout 0.3 at all three sites */
    s->model = (nmt_config){
        .arch = NMT_ARCH_RNN,
        .rnn = {.cell = NMT_CELL_LSTM, .attention = NMT_ATT_BAHDANAU, .bidirectional = 1,
                .emb = 256, .hidden = 256, .att_dim = 256, .out_dim = 256},
        /* the Transformer's sizes: the smallest that reach the toy corpus's
         * test BLEU 95 in 6 minutes on 2 cores (docs/training.md) */
        .transformer = {.d_model = 128, .heads = 4, .ff = 512, .enc_layers = 3,
                        .dec_layers = 3},
        .tied = 1,
        .lowercase = 0,
    };
    s->batch_size = 64;
    s->accumulate = 1;
    s->max_len = 50;
    s->min_count = 1;
    s->max_vocab = 0;
    s->shuffle = 1;
    s->optimizer = NMT_OPTIM_ADAM;
    s->lr = nmt_optim_default_lr(NMT_OPTIM_ADAM);
    s->clip = 5.0;
    s->label_smoothing = 0.1f;
    nmt_train_settings_set_dropout(s, nmt_train_default_dropout(NMT_ARCH_RNN));
    s->epochs = 10;
    s->max_steps = -1;
    s->seed = 1;
    s->threads = 1;
    s->valid_every = 0;
    s->lr_decay = 0.5;
    s->patience = 2;
    s->early_stop = 0;
    s->warmup = 0;
    s->save_every = 1000;
    s->report_every = 0;
    s->report_seconds = 10.0;
    s->best_metric = NMT_BEST_BLEU;
}

float nmt_train_default_dropout(nmt_arch a)
{
    return a == NMT_ARCH_TRANSFORMER ? 0.1f : 0.3f;
}

float nmt_train_default_word_dropout(nmt_arch a)
{
    (void)a;
    return 0;
}

double nmt_train_default_lr(nmt_arch a, nmt_optim_kind k)
{
    return a == NMT_ARCH_TRANSFORMER && k == NMT_OPTIM_ADAM ? 3e-3 : nmt_optim_default_lr(k);
}

int64_t nmt_train_default_warmup(nmt_arch a)
{
    return a == NMT_ARCH_TRANSFORMER ? 300 : 0;
}

int nmt_arch_has_dropout(nmt_arch a, const char *site)
{
    static const char *const rnn[] = {"emb", "enc", "out", NULL};
    static const char *const transformer[] = {"emb", "residual", "att", "ff", NULL};
    const char *const *sites = a == NMT_ARCH_TRANSFORMER ? transformer : rnn;
    for (int k = 0; sites[k]; k++)
        if (!strcmp(sites[k], site))
            return 1;
    return 0;
}

void nmt_train_settings_set_dropout(nmt_train_settings *s, float rate)
{
    nmt_arch a = s->model.arch;
    s->dropout_emb = nmt_arch_has_dropout(a, "emb") ? rate : 0;
    s->dropout_enc = nmt_arch_has_dropout(a, "enc") ? rate : 0;
    s->dropout_out = nmt_arch_has_dropout(a, "out") ? rate : 0;
    s->dropout_residual = nmt_arch_has_dropout(a, "residual") ? rate : 0;
    s->dropout_att = nmt_arch_has_dropout(a, "att") ? rate : 0;
    s->dropout_ff = nmt_arch_has_dropout(a, "ff") ? rate : 0;
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

/* The keys of the corpora's files beyond their paths (nmt_train_settings'
 * data_from_run and data_print), in the order src, tgt, valid_src,
 * valid_tgt. */
static const char *const data_keys[4][3] = {
    {"train.src_from_run", "train.src_bytes", "train.src_hash"},
    {"train.tgt_from_run", "train.tgt_bytes", "train.tgt_hash"},
    {"train.valid_src_from_run", "train.valid_src_bytes", "train.valid_src_hash"},
    {"train.valid_tgt_from_run", "train.valid_tgt_bytes", "train.valid_tgt_hash"},
};

/* The architecture's own keys (train.cell ... for the RNN), as
 * nmt_config_train_meta gives them. */
static void put_model(nmt_ckpt_writer *w, const nmt_config *c)
{
    nmt_meta kv[16];
    char buf[256];
    int n = nmt_config_train_meta(c, kv, 16, buf, sizeof buf);
    if (n < 0) {
        w->overflow = 1;
        return;
    }
    for (int k = 0; k < n; k++)
        nmt_ckpt_put(w, kv[k].key, "%s", kv[k].value);
}

void nmt_train_settings_put(nmt_ckpt_writer *w, const nmt_train_settings *s)
{
    nmt_ckpt_put(w, "train.src", "%s", s->src_path ? s->src_path : "");
    nmt_ckpt_put(w, "train.tgt", "%s", s->tgt_path ? s->tgt_path : "");
    nmt_ckpt_put(w, "train.valid_src", "%s", s->valid_src_path ? s->valid_src_path : "");
    nmt_ckpt_put(w, "train.valid_tgt", "%s", s->valid_tgt_path ? s->valid_tgt_path : "");
    for (int k = 0; k < 4; k++) {
        if (s->data_from_run[k])
            nmt_ckpt_put(w, data_keys[k][0], "%s", s->data_from_run[k]);
        if (s->data_print[k].known) {
            nmt_ckpt_put(w, data_keys[k][1], "%" PRIu64, s->data_print[k].bytes);
            nmt_ckpt_put(w, data_keys[k][2], "%016" PRIx64, s->data_print[k].hash);
        }
    }
    put_model(w, &s->model);
    nmt_ckpt_put(w, "train.tied_embeddings", "%d", s->model.tied);
    nmt_ckpt_put(w, "train.batch_size", "%d", s->batch_size);
    nmt_ckpt_put(w, "train.max_len", "%d", s->max_len);
    nmt_ckpt_put(w, "train.min_count", "%d", s->min_count);
    nmt_ckpt_put(w, "train.max_vocab", "%d", s->max_vocab);
    nmt_ckpt_put(w, "train.lowercase", "%d", s->model.lowercase);
    nmt_ckpt_put(w, "train.shuffle", "%d", s->shuffle);
    nmt_ckpt_put(w, "train.subword_alpha", "%.9g", (double)s->subword_alpha);
    nmt_ckpt_put(w, "train.optimizer", "%s", nmt_optim_name(s->optimizer));
    nmt_ckpt_put(w, "train.lr", "%.17g", s->lr);
    nmt_ckpt_put(w, "train.clip", "%.17g", s->clip);
    nmt_ckpt_put(w, "train.dropout_emb", "%.9g", (double)s->dropout_emb);
    nmt_ckpt_put(w, "train.dropout_enc", "%.9g", (double)s->dropout_enc);
    nmt_ckpt_put(w, "train.dropout_out", "%.9g", (double)s->dropout_out);
    if (s->model.arch == NMT_ARCH_TRANSFORMER) {
        nmt_ckpt_put(w, "train.dropout_residual", "%.9g", (double)s->dropout_residual);
        nmt_ckpt_put(w, "train.dropout_att", "%.9g", (double)s->dropout_att);
        nmt_ckpt_put(w, "train.dropout_ff", "%.9g", (double)s->dropout_ff);
    }
    nmt_ckpt_put(w, "train.label_smoothing", "%.9g", (double)s->label_smoothing);
    nmt_ckpt_put(w, "train.epochs", "%d", s->epochs);
    nmt_ckpt_put(w, "train.max_steps", "%" PRId64, s->max_steps);
    nmt_ckpt_put(w, "train.seed", "%" PRIu64, s->seed);
    nmt_ckpt_put(w, "train.threads", "%d", s->threads);
    nmt_ckpt_put(w, "train.valid_every", "%" PRId64, s->valid_every);
    nmt_ckpt_put(w, "train.lr_decay", "%.17g", s->lr_decay);
    nmt_ckpt_put(w, "train.patience", "%d", s->patience);
    nmt_ckpt_put(w, "train.early_stop", "%d", s->early_stop);
    nmt_ckpt_put(w, "train.save_every", "%" PRId64, s->save_every);
    nmt_ckpt_put(w, "train.report_every", "%" PRId64, s->report_every);
    nmt_ckpt_put(w, "train.report_seconds", "%.17g", s->report_seconds);
    nmt_ckpt_put(w, "train.max_time", "%.17g", s->max_time);
    nmt_ckpt_put(w, "train.best_metric", "%s", nmt_best_metric_name(s->best_metric));
    nmt_ckpt_put(w, "train.keep_snapshots", "%d", s->keep_snapshots);
    nmt_ckpt_put(w, "train.average_snapshots", "%d", s->average_snapshots);
    if (s->warmup > 0)
        nmt_ckpt_put(w, "train.warmup", "%" PRId64, s->warmup);
    if (s->linear_decay)
        nmt_ckpt_put(w, "train.lr_schedule", "%s", "linear");
    if (s->decay_from > 0)
        nmt_ckpt_put(w, "train.decay_from", "%.17g", s->decay_from);
    /* written only when used, so that a run without them writes the very
     * checkpoint it did before they existed */
    if (s->batch_tokens > 0)
        nmt_ckpt_put(w, "train.batch_tokens", "%d", s->batch_tokens);
    if (s->accumulate > 1)
        nmt_ckpt_put(w, "train.accumulate", "%d", s->accumulate);
    if (s->shuffle_buffer > 0)
        nmt_ckpt_put(w, "train.shuffle_buffer", "%" PRId64, s->shuffle_buffer);
    if (s->word_dropout_src > 0)
        nmt_ckpt_put(w, "train.word_dropout_src", "%.9g", (double)s->word_dropout_src);
    if (s->word_dropout_tgt > 0)
        nmt_ckpt_put(w, "train.word_dropout_tgt", "%.9g", (double)s->word_dropout_tgt);
}

int nmt_train_settings_to_meta(const nmt_train_settings *s, nmt_meta *meta, int max,
                               char *buf, size_t bufsize)
{
    nmt_ckpt_writer w = {.meta = meta, .max = max, .buf = buf, .cap = bufsize};
    nmt_train_settings_put(&w, s);
    if (w.overflow)
        return nmt_set_error(NMT_ERR_NOMEM, "training settings do not fit the metadata buffer");
    return w.n;
}

/* ---- metadata reading ---------------------------------------------------- */

/* The dropout rates. Checkpoints from before tying, the three dropouts and
 * label smoothing were apart have one dropout on embeddings and deep
 * output, no more; the Transformer's have its own sites, and 0 at the
 * RNN's. */
static void get_dropout(nmt_ckpt_reader *r, nmt_train_settings *s, int before)
{
    if (before) {
        s->dropout_emb = s->dropout_out = (float)nmt_ckpt_get_double_in(r, "train.dropout", 0, 1);
        s->dropout_enc = s->label_smoothing = 0;
        return;
    }
    s->dropout_emb = (float)nmt_ckpt_get_double_in(r, "train.dropout_emb", 0, 1);
    s->dropout_enc = (float)nmt_ckpt_get_double_in(r, "train.dropout_enc", 0, 1);
    s->dropout_out = (float)nmt_ckpt_get_double_in(r, "train.dropout_out", 0, 1);
    s->label_smoothing = (float)nmt_ckpt_get_double_in(r, "train.label_smoothing", 0, 1);
    if (s->model.arch != NMT_ARCH_TRANSFORMER)
        return;
    s->dropout_residual = (float)nmt_ckpt_get_double_in(r, "train.dropout_residual", 0, 1);
    s->dropout_att = (float)nmt_ckpt_get_double_in(r, "train.dropout_att", 0, 1);
    s->dropout_ff = (float)nmt_ckpt_get_double_in(r, "train.dropout_ff", 0, 1);
    if (s->dropout_enc != 0)
        nmt_ckpt_bad(r, "train.dropout_enc", nmt_ckpt_get(r, "train.dropout_enc"));
    if (s->dropout_out != 0)
        nmt_ckpt_bad(r, "train.dropout_out", nmt_ckpt_get(r, "train.dropout_out"));
}

int nmt_train_settings_from_file(nmt_train_settings *s, const nmt_file *f,
                                 const nmt_config *model)
{
    nmt_ckpt_reader r = {.f = f};
    nmt_train_settings_default(s);
    s->model = *model;
    s->src_path = nmt_ckpt_get_path(&r, "train.src");
    s->tgt_path = nmt_ckpt_get_path(&r, "train.tgt");
    s->valid_src_path = nmt_ckpt_get_path(&r, "train.valid_src");
    s->valid_tgt_path = nmt_ckpt_get_path(&r, "train.valid_tgt");
    /* absent from checkpoints written before they were kept */
    for (int k = 0; k < 4; k++) {
        if (nmt_ckpt_has(&r, data_keys[k][0]))
            s->data_from_run[k] = nmt_ckpt_get_path(&r, data_keys[k][0]);
        if (nmt_ckpt_has(&r, data_keys[k][1]) && nmt_ckpt_has(&r, data_keys[k][2])) {
            s->data_print[k].bytes = nmt_ckpt_get_u64(&r, data_keys[k][1]);
            s->data_print[k].hash = nmt_ckpt_get_hex64(&r, data_keys[k][2]);
            s->data_print[k].known = 1;
        }
    }
    s->batch_size = nmt_ckpt_get_int(&r, "train.batch_size", 1, 1000000);
    s->max_len = nmt_ckpt_get_int(&r, "train.max_len", 0, 1 << 24);
    s->min_count = nmt_ckpt_get_int(&r, "train.min_count", 1, 1 << 30);
    s->max_vocab = nmt_ckpt_get_int(&r, "train.max_vocab", 0, 1 << 30);
    s->shuffle = nmt_ckpt_get_int(&r, "train.shuffle", 0, 1);
    /* absent from checkpoints written before subwords: no sampling */
    if (nmt_ckpt_has(&r, "train.subword_alpha"))
        s->subword_alpha = (float)nmt_ckpt_get_double_in(&r, "train.subword_alpha", 0, 1e6);
    const char *v = nmt_ckpt_get(&r, "train.optimizer");
    if (v && nmt_optim_parse(v, &s->optimizer))
        nmt_ckpt_bad(&r, "train.optimizer", v);
    s->lr = nmt_ckpt_get_double_in(&r, "train.lr", 1e-300, 1e300);
    s->clip = nmt_ckpt_get_double_in(&r, "train.clip", 0, 1e300);
    get_dropout(&r, s, !nmt_ckpt_has(&r, "train.dropout_emb"));
    s->epochs = nmt_ckpt_get_int(&r, "train.epochs", 0, 1 << 30);
    s->max_steps = nmt_ckpt_get_i64(&r, "train.max_steps", -1, INT64_MAX);
    s->seed = nmt_ckpt_get_u64(&r, "train.seed");
    s->threads = nmt_ckpt_get_int(&r, "train.threads", 1, 4096);
    s->valid_every = nmt_ckpt_get_i64(&r, "train.valid_every", 0, INT64_MAX);
    s->lr_decay = nmt_ckpt_get_double(&r, "train.lr_decay", 0);
    s->patience = nmt_ckpt_get_int(&r, "train.patience", 0, 1 << 30);
    s->early_stop = nmt_ckpt_get_int(&r, "train.early_stop", 0, 1 << 30);
    s->save_every = nmt_ckpt_get_i64(&r, "train.save_every", 0, INT64_MAX);
    s->report_every = nmt_ckpt_get_i64(&r, "train.report_every", 0, INT64_MAX);
    s->report_seconds = nmt_ckpt_get_double(&r, "train.report_seconds", 0);
    if (nmt_ckpt_has(&r, "train.max_time"))
        s->max_time = nmt_ckpt_get_double_in(&r, "train.max_time", 0, 1e12);
    if (nmt_ckpt_has(&r, "train.best_metric") &&
        nmt_best_metric_parse(nmt_ckpt_get(&r, "train.best_metric"), &s->best_metric))
        nmt_ckpt_bad(&r, "train.best_metric", nmt_ckpt_get(&r, "train.best_metric"));
    if (nmt_ckpt_has(&r, "train.keep_snapshots"))
        s->keep_snapshots = nmt_ckpt_get_int(&r, "train.keep_snapshots", 0, 1 << 20);
    if (nmt_ckpt_has(&r, "train.average_snapshots"))
        s->average_snapshots = nmt_ckpt_get_int(&r, "train.average_snapshots", 0, 1);
    /* absent from checkpoints written before the schedule, and from those of
     * runs without it */
    if (nmt_ckpt_has(&r, "train.warmup")) {
        s->warmup = nmt_ckpt_get_i64(&r, "train.warmup", 0, INT64_MAX);
        if (s->warmup > 0 && s->patience > 0)
            nmt_ckpt_bad(&r, "train.patience", nmt_ckpt_get(&r, "train.patience"));
    }
    /* absent: the warm-up's decay or plateaus (and every run before it) */
    if (nmt_ckpt_has(&r, "train.lr_schedule")) {
        const char *sched = nmt_ckpt_get(&r, "train.lr_schedule");
        if (strcmp(sched, "linear") || s->patience > 0)
            nmt_ckpt_bad(&r, "train.lr_schedule", sched);
        s->linear_decay = 1;
    }
    /* absent: a linear decay from the warm-up's end, or none */
    if (nmt_ckpt_has(&r, "train.decay_from")) {
        s->decay_from = nmt_ckpt_get_double_in(&r, "train.decay_from", 0, 1);
        if (!s->linear_decay)
            nmt_ckpt_bad(&r, "train.decay_from", nmt_ckpt_get(&r, "train.decay_from"));
    }
    /* absent: a run without them (or from before them) */
    if (nmt_ckpt_has(&r, "train.batch_tokens"))
        s->batch_tokens = nmt_ckpt_get_int(&r, "train.batch_tokens", 1, 1 << 30);
    if (nmt_ckpt_has(&r, "train.accumulate"))
        s->accumulate = nmt_ckpt_get_int(&r, "train.accumulate", 1, 1 << 20);
    if (nmt_ckpt_has(&r, "train.shuffle_buffer"))
        s->shuffle_buffer = nmt_ckpt_get_i64(&r, "train.shuffle_buffer", 1, INT64_MAX);
    /* absent: no word dropout on that side */
    if (nmt_ckpt_has(&r, "train.word_dropout_src"))
        s->word_dropout_src = (float)nmt_ckpt_get_double_in(&r, "train.word_dropout_src", 0, 1);
    if (nmt_ckpt_has(&r, "train.word_dropout_tgt"))
        s->word_dropout_tgt = (float)nmt_ckpt_get_double_in(&r, "train.word_dropout_tgt", 0, 1);
    if (r.rc == NMT_OK && (!s->src_path || !s->tgt_path))
        r.rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint names no training corpus");
    return r.rc;
}
