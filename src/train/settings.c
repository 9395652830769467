/* The training settings: their defaults, the names of the best-model
 * metric, and their metadata in checkpoints (train.*), written and read
 * back so that a resumed run continues with exactly the settings it began
 * with. */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/train.h"
#include "train/ckpt_meta.h"

void nmt_train_settings_default(nmt_train_settings *s)
{
    memset(s, 0, sizeof *s);
    /* the first architecture of the build at its own default sizes (each
     * architecture's at its own), with tied output embeddings and label
     * smoothing 0.1, the recipe measured on Multi30k
     * (docs/experiments/recipe.md) */
    nmt_config_default(&s->model);
    s->model.tied = 1;
    s->model.lowercase = 0;
    s->batch_size = 64;
    s->accumulate = 1;
    s->max_len = 50;
    s->min_count = 1;
    s->max_vocab = 0;
    s->shuffle = 1;
    s->optimizer = NMT_OPTIM_ADAM;
    s->lr = nmt_train_default_lr(s->model.arch, s->optimizer);
    s->clip = 5.0;
    s->label_smoothing = 0.1f;
    nmt_train_settings_set_dropout(s, nmt_train_default_dropout(s->model.arch));
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
    s->guided_weight = NMT_GUIDED_WEIGHT;
    s->guided_shift = NMT_GUIDED_SHIFT;
}

/* The architecture's recipe (nmt/model.h) decides; an architecture not in
 * this build has none, and is refused when its model is made. */
float nmt_train_default_dropout(nmt_arch a)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    return r ? r->dropout : 0;
}

float nmt_train_rule_dropout(nmt_arch a, double max_time)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    if (!r)
        return 0;
    return r->long_seconds > 0 && max_time >= r->long_seconds ? r->long_dropout : r->dropout;
}

int nmt_train_rule_rsqrt(nmt_arch a, double max_time)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    return r && r->long_rsqrt && r->long_seconds > 0 && max_time >= r->long_seconds;
}

float nmt_train_rule_subword_alpha(nmt_arch a, double max_time)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    if (!r)
        return 0;
    return r->long_seconds > 0 && max_time >= r->long_seconds ? r->long_subword_alpha
                                                               : r->subword_alpha;
}

float nmt_train_default_word_dropout(nmt_arch a)
{
    (void)a;
    return 0;
}

double nmt_train_default_lr(nmt_arch a, nmt_optim_kind k)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    return r && r->adam_lr > 0 && k == NMT_OPTIM_ADAM ? r->adam_lr : nmt_optim_default_lr(k);
}

int64_t nmt_train_default_warmup(nmt_arch a)
{
    const nmt_arch_recipe *r = nmt_arch_recipe_of(a);
    return r ? r->warmup : 0;
}

/* Every dropout site an architecture may have (nmt_regularizer's), and
 * where the settings keep its rate. The first three, the RNN's, have been
 * written into every checkpoint since before there were other
 * architectures (0 where the model has not the site), and still are, so
 * that a checkpoint stays what it was; the others only where the model's
 * architecture has them. */
static const struct dropout_field {
    const char *site, *key; /* the site's name, its checkpoint key */
    size_t offset;          /* of its rate in nmt_train_settings */
    int always;
} dropout_fields[] = {
    {"emb", "train.dropout_emb", offsetof(nmt_train_settings, dropout_emb), 1},
    {"enc", "train.dropout_enc", offsetof(nmt_train_settings, dropout_enc), 1},
    {"out", "train.dropout_out", offsetof(nmt_train_settings, dropout_out), 1},
    {"residual", "train.dropout_residual", offsetof(nmt_train_settings, dropout_residual), 0},
    {"att", "train.dropout_att", offsetof(nmt_train_settings, dropout_att), 0},
    {"ff", "train.dropout_ff", offsetof(nmt_train_settings, dropout_ff), 0},
};
enum { N_DROPOUT_FIELDS = sizeof dropout_fields / sizeof dropout_fields[0] };

static float *dropout_rate(nmt_train_settings *s, const struct dropout_field *f)
{
    return (float *)(void *)((char *)s + f->offset);
}

float nmt_train_settings_dropout(const nmt_train_settings *s, const char *site)
{
    for (int k = 0; k < N_DROPOUT_FIELDS; k++)
        if (!strcmp(dropout_fields[k].site, site))
            return *dropout_rate((nmt_train_settings *)s, &dropout_fields[k]);
    return 0;
}

void nmt_train_settings_set_dropout(nmt_train_settings *s, float rate)
{
    for (int k = 0; k < N_DROPOUT_FIELDS; k++)
        *dropout_rate(s, &dropout_fields[k]) =
            nmt_arch_has_dropout(s->model.arch, dropout_fields[k].site) ? rate : 0;
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
static const char *const data_keys[NMT_RUN_FILES][3] = {
    {"train.src_from_run", "train.src_bytes", "train.src_hash"},
    {"train.tgt_from_run", "train.tgt_bytes", "train.tgt_hash"},
    {"train.valid_src_from_run", "train.valid_src_bytes", "train.valid_src_hash"},
    {"train.valid_tgt_from_run", "train.valid_tgt_bytes", "train.valid_tgt_hash"},
    {"train.guided_links_from_run", "train.guided_links_bytes", "train.guided_links_hash"},
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
    for (int k = 0; k < NMT_RUN_FILES; k++) {
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
    for (int k = 0; k < N_DROPOUT_FIELDS; k++) {
        const struct dropout_field *f = &dropout_fields[k];
        if (f->always || nmt_arch_has_dropout(s->model.arch, f->site))
            nmt_ckpt_put(w, f->key, "%.9g", (double)*dropout_rate((nmt_train_settings *)s, f));
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
    if (s->warmup_share > 0)
        nmt_ckpt_put(w, "train.warmup_share", "%.17g", s->warmup_share);
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
    if (s->guided_links) {
        nmt_ckpt_put(w, "train.guided_links", "%s", s->guided_links);
        nmt_ckpt_put(w, "train.guided_links_digest", "%016" PRIx64, s->guided_digest);
        nmt_ckpt_put(w, "train.guided_weight", "%.9g", (double)s->guided_weight);
        nmt_ckpt_put(w, "train.guided_layer", "%d", s->guided_layer);
        nmt_ckpt_put(w, "train.guided_head", "%d", s->guided_head);
        nmt_ckpt_put(w, "train.guided_shift", "%d", s->guided_shift);
    }
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
 * output, no more. Since, every checkpoint has the RNN's three sites
 * (dropout_fields), and the others of its architecture; a site the
 * architecture has not must be 0. */
static void get_dropout(nmt_ckpt_reader *r, nmt_train_settings *s, int before)
{
    /* every rate from the file or 0: the defaults s starts from are those
     * of the default architecture, which need not be the checkpoint's */
    for (int k = 0; k < N_DROPOUT_FIELDS; k++)
        *dropout_rate(s, &dropout_fields[k]) = 0;
    if (before) {
        s->dropout_emb = s->dropout_out = (float)nmt_ckpt_get_double_in(r, "train.dropout", 0, 1);
        s->dropout_enc = s->label_smoothing = 0;
        return;
    }
    const struct dropout_field *f = dropout_fields;
    int has[N_DROPOUT_FIELDS];
    for (int k = 0; k < N_DROPOUT_FIELDS; k++)
        has[k] = nmt_arch_has_dropout(s->model.arch, f[k].site);
    /* in the order they are written: the RNN's three, label smoothing,
     * then the architecture's others */
    for (int k = 0; k < N_DROPOUT_FIELDS; k++)
        if (f[k].always)
            *dropout_rate(s, &f[k]) = (float)nmt_ckpt_get_double_in(r, f[k].key, 0, 1);
    s->label_smoothing = (float)nmt_ckpt_get_double_in(r, "train.label_smoothing", 0, 1);
    for (int k = 0; k < N_DROPOUT_FIELDS; k++)
        if (!f[k].always && has[k])
            *dropout_rate(s, &f[k]) = (float)nmt_ckpt_get_double_in(r, f[k].key, 0, 1);
    for (int k = 0; k < N_DROPOUT_FIELDS; k++)
        if (!has[k] && *dropout_rate(s, &f[k]) != 0)
            nmt_ckpt_bad(r, f[k].key, nmt_ckpt_get(r, f[k].key));
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
    for (int k = 0; k < NMT_RUN_FILES; k++) {
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
    /* absent: a warm-up ended by its steps alone (every linear decay before
     * the share, so that their runs resume as they were) */
    if (nmt_ckpt_has(&r, "train.warmup_share")) {
        s->warmup_share = nmt_ckpt_get_double_in(&r, "train.warmup_share", 0, 1);
        if (!s->linear_decay)
            nmt_ckpt_bad(&r, "train.warmup_share", nmt_ckpt_get(&r, "train.warmup_share"));
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
    /* absent: a run without guided alignment; its head must be the
     * model's trained head */
    if (nmt_ckpt_has(&r, "train.guided_links")) {
        s->guided_links = nmt_ckpt_get_path(&r, "train.guided_links");
        s->guided_digest = nmt_ckpt_get_hex64(&r, "train.guided_links_digest");
        s->guided_weight = (float)nmt_ckpt_get_double_in(&r, "train.guided_weight", 0, 1e30);
        s->guided_layer = nmt_ckpt_get_int(&r, "train.guided_layer", 0, 1 << 16);
        s->guided_head = nmt_ckpt_get_int(&r, "train.guided_head", 0, 1 << 16);
        s->guided_shift = nmt_ckpt_get_int(&r, "train.guided_shift", 0, 1);
        const nmt_trained_head *a = &model->align;
        if (r.rc == NMT_OK && (!s->guided_links || !a->trained ||
                               a->layer != s->guided_layer || a->head != s->guided_head ||
                               a->shift != s->guided_shift))
            r.rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint: its guided alignment (layer %d, "
                                 "head %d) is not the head its model was trained to align",
                                 s->guided_layer, s->guided_head);
    }
    if (r.rc == NMT_OK && (!s->src_path || !s->tgt_path))
        r.rc = nmt_set_error(NMT_ERR_FORMAT, "checkpoint names no training corpus");
    return r.rc;
}
