/* The RNN encoder-decoder as an architecture behind model/arch.h: its
 * settings and their names, its tensors, its metadata in model files, its
 * initial weights and its one attention map. The passes are rnn_pass.c's
 * (training) and rnn_infer.c's (decoding). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/rnn/rnn_pass.h"
#include "nmt/error.h"

/* Appends a tensor of shape [rows, cols] (cols 0: a vector [rows]) to t,
 * if t has room (t NULL: only counts). */
static void add_tensor(nmt_tensor_info *t, int max, int *n, size_t *total, const char *name,
                       int rows, int cols)
{
    size_t size = (size_t)rows * (size_t)(cols > 0 ? cols : 1);
    if (t && *n < max) {
        nmt_tensor_info *x = &t[*n];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", name);
        x->ndim = cols > 0 ? 2 : 1;
        x->shape[0] = rows;
        x->shape[1] = cols > 0 ? cols : 0;
        x->offset = *total;
        x->size = size;
    }
    (*n)++;
    *total += size;
}

/* File order, as docs/DESIGN.md lists them. */
static int rnn_tensor_table(const nmt_config *cfg, nmt_tensor_info *t, int max, size_t *total)
{
    const nmt_rnn_config *r = &cfg->rnn;
    int G = cell_gates(r->cell), E = r->emb, H = r->hidden, A = r->att_dim;
    int O = r->out_dim, D = r->bidirectional ? 2 : 1;
    int n = 0;
    *total = 0;
    add_tensor(t, max, &n, total, "src_emb", cfg->src_vocab, E);
    add_tensor(t, max, &n, total, "tgt_emb", cfg->tgt_vocab, E);
    add_tensor(t, max, &n, total, "enc.fwd.W_ih", G * H, E);
    add_tensor(t, max, &n, total, "enc.fwd.W_hh", G * H, H);
    add_tensor(t, max, &n, total, "enc.fwd.b", G * H, 0);
    if (r->bidirectional) {
        add_tensor(t, max, &n, total, "enc.bwd.W_ih", G * H, E);
        add_tensor(t, max, &n, total, "enc.bwd.W_hh", G * H, H);
        add_tensor(t, max, &n, total, "enc.bwd.b", G * H, 0);
    }
    add_tensor(t, max, &n, total, "dec.init.W", H, D * H);
    add_tensor(t, max, &n, total, "dec.init.b", H, 0);
    switch (r->attention) {
    case NMT_ATT_BAHDANAU:
        add_tensor(t, max, &n, total, "att.W", A, H);
        add_tensor(t, max, &n, total, "att.U", A, D * H);
        add_tensor(t, max, &n, total, "att.b", A, 0);
        add_tensor(t, max, &n, total, "att.v", A, 0);
        break;
    case NMT_ATT_GENERAL: /* keys U_a h_j of the decoder state's size H */
        add_tensor(t, max, &n, total, "att.U", H, D * H);
        break;
    case NMT_ATT_SCALED_DOT:
        add_tensor(t, max, &n, total, "att.W", A, H);
        add_tensor(t, max, &n, total, "att.U", A, D * H);
        break;
    case NMT_ATT_DOT: /* s . h_j: nothing to learn */
    case NMT_ATT_NONE:
        break;
    }
    add_tensor(t, max, &n, total, "dec.W_ih", G * H, E + D * H);
    add_tensor(t, max, &n, total, "dec.W_hh", G * H, H);
    add_tensor(t, max, &n, total, "dec.b", G * H, 0);
    add_tensor(t, max, &n, total, "out.W_t", O, H + D * H + E);
    add_tensor(t, max, &n, total, "out.b_t", O, 0);
    if (!cfg->tied) /* tied: the output matrix is tgt_emb */
        add_tensor(t, max, &n, total, "out.W", cfg->tgt_vocab, O);
    add_tensor(t, max, &n, total, "out.b", cfg->tgt_vocab, 0);
    return n;
}


static int rnn_check(const nmt_config *cfg)
{
    const nmt_rnn_config *c = &cfg->rnn;
    if (c->cell != NMT_CELL_RNN && c->cell != NMT_CELL_GRU && c->cell != NMT_CELL_LSTM)
        return nmt_set_error(NMT_ERR_ARG, "unknown cell %d", (int)c->cell);
    if (c->attention < NMT_ATT_NONE || c->attention > NMT_ATT_SCALED_DOT)
        return nmt_set_error(NMT_ERR_ARG, "unknown attention %d", (int)c->attention);
    /* Sizes are bounded so that every product of them fits an int. */
    const int lim = 1 << 16;
    if (c->emb < 1 || c->emb > lim || c->hidden < 1 || c->hidden > lim || c->out_dim < 1 ||
        c->out_dim > lim ||
        (nmt_attention_uses_att_dim(c->attention) && (c->att_dim < 1 || c->att_dim > lim)))
        return nmt_set_error(NMT_ERR_ARG, "model sizes must be between 1 and %d", lim);
    int rc = nmt_attention_check(c->attention, c->bidirectional, c->hidden);
    if (rc)
        return rc;
    if (cfg->tied && c->out_dim != c->emb)
        return nmt_set_error(NMT_ERR_ARG, "tied embeddings need out_dim (%d) equal to emb (%d): "
                             "the output matrix is the target embedding table",
                             c->out_dim, c->emb);
    /* the encoder's input (E) and the decoder's have the one size, but the
     * shared table is a Transformer's variant, which no RNN file has */
    if (cfg->joint_vocab)
        return nmt_set_error(NMT_ERR_ARG, "a joint vocabulary (one embedding table for both "
                             "sides) is a Transformer's: the RNN has a source and a target "
                             "embedding table (--arch transformer for --joint-vocab)");
    return NMT_OK;
}

/* att_dim means nothing to the kinds that do not use it: never below 0 */
static void rnn_normalize(nmt_config *cfg)
{
    if (!nmt_attention_uses_att_dim(cfg->rnn.attention))
        cfg->rnn.att_dim = cfg->rnn.att_dim > 0 ? cfg->rnn.att_dim : 0;
}

/* Whether a tensor of this name belongs to some RNN: the tensors of a model
 * with every option on (their names do not depend on the cell or sizes). */
static int rnn_claims(const char *name)
{
    nmt_config full = {.arch = NMT_ARCH_RNN,
                       .rnn = {.cell = NMT_CELL_LSTM, .attention = NMT_ATT_BAHDANAU,
                               .bidirectional = 1, .emb = 1, .hidden = 1, .att_dim = 1,
                               .out_dim = 1},
                       .src_vocab = 1, .tgt_vocab = 1};
    nmt_tensor_info all[32];
    size_t total;
    int n = rnn_tensor_table(&full, all, 32, &total);
    for (int k = 0; k < n; k++)
        if (!strcmp(all[k].name, name))
            return 1;
    return 0;
}

static int rnn_describe(const nmt_config *c, char *buf, size_t size)
{
    return snprintf(buf, size, "%s/%s", nmt_cell_name(c->rnn.cell),
                    nmt_attention_name(c->rnn.attention));
}

static void rnn_settings_text(const nmt_config *cfg, int brief, char *buf, size_t size)
{
    const nmt_rnn_config *c = &cfg->rnn;
    const char *dir = c->bidirectional ? "bidirectional" : "unidirectional";
    if (brief)
        snprintf(buf, size, "attention %s, %s", nmt_attention_name(c->attention), dir);
    else
        snprintf(buf, size, "cell %s, attention %s, %s, emb %d, hidden %d, att_dim %d, out_dim %d, "
                 "vocabularies %d and %d", nmt_cell_name(c->cell),
                 nmt_attention_name(c->attention), dir, c->emb, c->hidden, c->att_dim,
                 c->out_dim, cfg->src_vocab, cfg->tgt_vocab);
}

static int rnn_setting(const nmt_config *cfg, int i, const char **name, char *value,
                       size_t size)
{
    const nmt_rnn_config *c = &cfg->rnn;
    /* att_dim only where it sizes something */
    if (i >= 5 && !nmt_attention_uses_att_dim(c->attention))
        i++;
    switch (i) {
    case 0: *name = "cell"; snprintf(value, size, "%s", nmt_cell_name(c->cell)); return 1;
    case 1:
        *name = "attention";
        snprintf(value, size, "%s", nmt_attention_name(c->attention));
        return 1;
    case 2:
        *name = "encoder";
        snprintf(value, size, "%s", c->bidirectional ? "bidirectional" : "unidirectional");
        return 1;
    case 3: *name = "emb"; snprintf(value, size, "%d", c->emb); return 1;
    case 4: *name = "hidden"; snprintf(value, size, "%d", c->hidden); return 1;
    case 5: *name = "att_dim"; snprintf(value, size, "%d", c->att_dim); return 1;
    case 6: *name = "out_dim"; snprintf(value, size, "%d", c->out_dim); return 1;
    }
    return 0;
}

static int rnn_output_width(const nmt_config *c)
{
    return c->rnn.out_dim;
}

/* ---- model files ---- */

static const char *const rnn_meta_keys[] = {
    "cell", "attention", "bidirectional", "emb", "hidden", "att_dim", "out_dim", NULL,
};

static int rnn_meta_write(const nmt_config *cfg, nmt_meta *kv, int max, char *buf, size_t size)
{
    const nmt_rnn_config *c = &cfg->rnn;
    if (max < 7 || size < 4 * 16)
        return nmt_set_error(NMT_ERR_NOMEM, "no room for the model's settings");
    char *num[4] = {buf, buf + 16, buf + 32, buf + 48};
    snprintf(num[0], 16, "%d", c->emb);
    snprintf(num[1], 16, "%d", c->hidden);
    snprintf(num[2], 16, "%d", c->att_dim);
    snprintf(num[3], 16, "%d", c->out_dim);
    const nmt_meta design[7] = {
        {"cell", nmt_cell_name(c->cell)},
        {"attention", nmt_attention_name(c->attention)},
        {"bidirectional", c->bidirectional ? "true" : "false"},
        {"emb", num[0]},
        {"hidden", num[1]},
        {"att_dim", num[2]},
        {"out_dim", num[3]},
    };
    memcpy(kv, design, sizeof design);
    return 7;
}

/* Checkpoints have listed the RNN's settings among the training settings
 * since before the model interface: train.cell ... train.out_dim, written
 * as they always were (bidirectional as 0 or 1). */
static int rnn_train_meta(const nmt_config *cfg, nmt_meta *kv, int max, char *buf, size_t size)
{
    const nmt_rnn_config *c = &cfg->rnn;
    if (max < 7 || size < 5 * 16)
        return nmt_set_error(NMT_ERR_NOMEM, "no room for the model's settings");
    snprintf(buf, 16, "%d", c->bidirectional);
    snprintf(buf + 16, 16, "%d", c->emb);
    snprintf(buf + 32, 16, "%d", c->hidden);
    snprintf(buf + 48, 16, "%d", c->att_dim);
    snprintf(buf + 64, 16, "%d", c->out_dim);
    const nmt_meta keys[7] = {
        {"train.cell", nmt_cell_name(c->cell)},
        {"train.attention", nmt_attention_name(c->attention)},
        {"train.bidirectional", buf},
        {"train.emb", buf + 16},
        {"train.hidden", buf + 32},
        {"train.att_dim", buf + 48},
        {"train.out_dim", buf + 64},
    };
    memcpy(kv, keys, sizeof keys);
    return 7;
}

/* Sane bounds on the sizes a file may claim. */
#define MAX_SIZE 65536

/* The RNN's keys; lowercase and tied are read already (io/modelfile.c). */
static int rnn_meta_read(nmt_config *cfg, const meta_source *src)
{
    nmt_rnn_config *c = &cfg->rnn;
    const char *path = src->path;
    const char *cell = nmt_meta_need(src, "cell");
    if (!cell)
        return NMT_ERR_FORMAT;
    if (nmt_cell_parse(cell, &c->cell))
        return nmt_set_error(NMT_ERR_FORMAT, "%s: unknown cell '%s' (expected rnn, gru or lstm)",
                             path, cell);
    const char *att = nmt_meta_need(src, "attention");
    if (!att)
        return NMT_ERR_FORMAT;
    if (nmt_attention_parse(att, &c->attention))
        return nmt_set_error(NMT_ERR_FORMAT, "%s: unknown attention '%s' (expected bahdanau, dot, "
                             "general, scaled-dot or none)", path, att);
    int rc;
    if ((rc = nmt_meta_bool(src, "bidirectional", &c->bidirectional)) ||
        (rc = nmt_meta_size(src, "emb", 1, MAX_SIZE, &c->emb)) ||
        (rc = nmt_meta_size(src, "hidden", 1, MAX_SIZE, &c->hidden)) ||
        (rc = nmt_meta_size(src, "att_dim", nmt_attention_uses_att_dim(c->attention), MAX_SIZE,
                            &c->att_dim)) ||
        (rc = nmt_meta_size(src, "out_dim", 1, MAX_SIZE, &c->out_dim)))
        return rc;
    if (nmt_attention_check(c->attention, c->bidirectional, c->hidden)) {
        char why[512]; /* the message is rewritten from itself */
        snprintf(why, sizeof why, "%s", nmt_error_message());
        return nmt_set_error(NMT_ERR_FORMAT, "%s: attention dot and bidirectional true do not go "
                             "together: %s", path, why);
    }
    if (cfg->tied && c->out_dim != c->emb)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: tied is true but out_dim (%d) is not emb (%d): tied output "
                             "embeddings are the target embedding table", path, c->out_dim,
                             c->emb);
    return NMT_OK;
}

/* ---- the model's named pointers ---- */

static int rnn_bind(nmt_model *m)
{
    rnn_model *r = m->arch;
    if (!r && !(r = m->arch = calloc(1, sizeof *r)))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the model");
    nmt_weights_resolve(&r->w, m, m->params);
    if (m->grads)
        nmt_weights_resolve(&r->g, m, m->grads);
    return NMT_OK;
}

static void rnn_unbind(nmt_model *m)
{
    free(m->arch);
    m->arch = NULL;
}

/* ---- initial weights ---- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Each H x H block of a [G*H, H] recurrent matrix becomes orthogonal: the
 * Q of a Gram-Schmidt QR of a normal matrix, in double so the rows come out
 * orthonormal to float precision. Classical Gram-Schmidt done twice per row
 * (as accurate as the modified kind) lets BLAS do the projections. */
static void orthogonal_blocks(real *W, int G, int H, nmt_rng *rng)
{
    double *q = malloc((size_t)H * H * sizeof *q), *d = malloc((size_t)H * sizeof *d);
    if (!q || !d) { /* too big for the scratch: fall back to N(0, 1/H) */
        free(q);
        free(d);
        for (size_t i = 0; i < (size_t)G * H * H; i++)
            W[i] = (real)(nmt_rng_normal(rng) / sqrt((double)H));
        return;
    }
    for (int g = 0; g < G; g++) {
        for (size_t i = 0; i < (size_t)H * H; i++)
            q[i] = nmt_rng_normal(rng);
        for (int r = 0; r < H; r++) {
            double *x = q + (size_t)r * H;
            for (int pass = 0; pass < 2 && r > 0; pass++) {
                /* d = Q_<r x, then x -= Q_<r^T d */
                cblas_dgemv(CblasRowMajor, CblasNoTrans, r, H, 1.0, q, H, x, 1, 0.0, d, 1);
                cblas_dgemv(CblasRowMajor, CblasTrans, r, H, -1.0, q, H, d, 1, 1.0, x, 1);
            }
            double nrm = 0;
            for (int k = 0; k < H; k++)
                nrm += x[k] * x[k];
            nrm = sqrt(nrm);
            for (int k = 0; k < H; k++)
                x[k] = nrm > 0 ? x[k] / nrm : (k == r);
        }
        real *blk = W + (size_t)g * H * H;
        for (size_t i = 0; i < (size_t)H * H; i++)
            blk[i] = (real)q[i];
    }
    free(q);
    free(d);
}

/* The three schemes of nmt_model_init*: each draws the tensors in file order
 * and each tensor's elements in order, so the same seed always gives the
 * same model. */
typedef enum { INIT_BAHDANAU, INIT_ORTHOGONAL, INIT_UNIFORM } init_scheme;

static int is_forget_bias_holder(const nmt_model *m, const char *name)
{
    return m->cfg.rnn.cell == NMT_CELL_LSTM &&
           (strcmp(name, "enc.fwd.b") == 0 || strcmp(name, "enc.bwd.b") == 0 ||
            strcmp(name, "dec.b") == 0);
}

/* The paper's tensor: biases and att.v 0 (the LSTM forget gate's bias 1),
 * recurrent matrices orthogonal, att.W and att.U N(0, 0.001^2), the rest
 * N(0, 0.01^2). */
static void init_paper_tensor(const nmt_model *m, const nmt_tensor_info *t, real *p, nmt_rng *rng)
{
    int G = cell_gates(m->cfg.rnn.cell), H = m->cfg.rnn.hidden;
    if (t->ndim == 1 || strcmp(t->name, "att.v") == 0) {
        memset(p, 0, t->size * sizeof *p);
        if (is_forget_bias_holder(m, t->name))
            for (int k = H; k < 2 * H; k++) /* forget gate: chunk 1 of i f g o */
                p[k] = 1;
    } else if (ends_with(t->name, "W_hh")) {
        orthogonal_blocks(p, G, H, rng);
    } else {
        double sd = (strcmp(t->name, "att.W") == 0 || strcmp(t->name, "att.U") == 0) ? 0.001
                                                                                      : 0.01;
        for (size_t k = 0; k < t->size; k++)
            p[k] = (real)(sd * nmt_rng_normal(rng));
    }
}

static void init_params(nmt_model *m, uint64_t seed, init_scheme scheme, double scale)
{
    nmt_rng rng;
    nmt_rng_seed(&rng, seed);
    for (int i = 0; i < m->n_tensors; i++) {
        const nmt_tensor_info *t = &m->tensors[i];
        real *p = m->params + t->offset;
        int uniform = scheme == INIT_UNIFORM;
        if (scheme != INIT_UNIFORM) {
            init_paper_tensor(m, t, p, &rng);
            /* orthogonal: the paper's recurrent matrices and biases, every
             * other matrix and att.v redrawn uniformly (the paper's exact
             * draws stay the same for the paper's scheme) */
            uniform = scheme == INIT_ORTHOGONAL &&
                      ((t->ndim == 2 && !ends_with(t->name, "W_hh")) ||
                       strcmp(t->name, "att.v") == 0);
        }
        if (uniform)
            for (size_t k = 0; k < t->size; k++)
                p[k] = (real)(scale * (2.0 * (double)nmt_rng_uniform(&rng) - 1.0));
    }
}

static int rnn_init(nmt_model *m, nmt_init_scheme scheme, double scale, uint64_t seed)
{
    switch (scheme) {
    case NMT_INIT_UNIFORM: init_params(m, seed, INIT_UNIFORM, scale); return NMT_OK;
    case NMT_INIT_ORTHOGONAL: init_params(m, seed, INIT_ORTHOGONAL, scale); return NMT_OK;
    case NMT_INIT_BAHDANAU: init_params(m, seed, INIT_BAHDANAU, 0); return NMT_OK;
    case NMT_INIT_XAVIER: break;
    }
    return nmt_set_error(NMT_ERR_ARG, "init %s is not one of the RNN's (uniform, orthogonal or "
                         "bahdanau)", nmt_init_name(scheme));
}

/* ---- attention maps: one, when the model has attention ---- */

static int rnn_n_maps(const nmt_config *c)
{
    return c->rnn.attention != NMT_ATT_NONE;
}

static int rnn_map_name(const nmt_config *c, int map, char *buf, size_t size)
{
    (void)c, (void)map;
    return snprintf(buf, size, "attention");
}

static int rnn_default_map(const nmt_config *c)
{
    (void)c;
    return 0;
}

/* ---- what a run takes when nothing else is asked ---- */

/* The recipe measured on Multi30k (docs/experiments/recipe.md): an LSTM
 * with Bahdanau's attention over a bidirectional encoder, every size 256. */
static void rnn_defaults(nmt_config *c)
{
    c->rnn = (nmt_rnn_config){.cell = NMT_CELL_LSTM, .attention = NMT_ATT_BAHDANAU,
                              .bidirectional = 1, .emb = 256, .hidden = 256, .att_dim = 256,
                              .out_dim = 256};
}

static const char *const rnn_dropout_sites[] = {"emb", "enc", "out", NULL};

static const nmt_arch_recipe rnn_recipe = {
    .dropout_sites = rnn_dropout_sites,
    .dropout = 0.3f, /* at all three sites, measured on Multi30k */
    .adam_lr = 0,    /* Adam's usual 1e-3 */
    .warmup = 0,     /* a constant lr, lowered on plateaus */
    /* every parameter uniform in +-0.1: the paper's small normal weights
     * saturate the deep output under adam, and the orthogonal scheme's
     * forget bias of 1 keeps the attention from aligning
     * (docs/experiments/initial-weights.md) */
    .init = NMT_INIT_UNIFORM,
    .inits = 1u << NMT_INIT_UNIFORM | 1u << NMT_INIT_ORTHOGONAL | 1u << NMT_INIT_BAHDANAU,
    .sizes = "--emb/--hidden/--att-dim/--out-dim",
};

const nmt_arch_ops nmt_rnn_ops = {
    .arch = NMT_ARCH_RNN,
    .name = "rnn",
    .implicit = 1,
    .defaults = rnn_defaults,
    .recipe = &rnn_recipe,
    .check = rnn_check,
    .normalize = rnn_normalize,
    .tensor_table = rnn_tensor_table,
    .claims = rnn_claims,
    .describe = rnn_describe,
    .settings_text = rnn_settings_text,
    .setting = rnn_setting,
    .output_width = rnn_output_width,
    .meta_keys = rnn_meta_keys,
    .meta_write = rnn_meta_write,
    .meta_read = rnn_meta_read,
    .train_meta = rnn_train_meta,
    .bind = rnn_bind,
    .unbind = rnn_unbind,
    .init = rnn_init,
    .workspace_create = nmt_rnn_workspace_create,
    .workspace_bytes = nmt_rnn_workspace_bytes,
    .workspace_free = nmt_rnn_workspace_destroy,
    .forward = nmt_rnn_forward,
    .backward = nmt_rnn_backward,
    .infer_create = nmt_rnn_infer_create,
    .infer_free = nmt_rnn_infer_free,
    .infer_encode = nmt_rnn_infer_encode,
    .infer_select = nmt_rnn_infer_select,
    .infer_step = nmt_rnn_infer_step,
    .n_maps = rnn_n_maps,
    .map_name = rnn_map_name,
    .default_map = rnn_default_map,
};
