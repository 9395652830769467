/* The model's settings, its one table of tensors, and its initialisation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/layers.h"
#include "base/pool.h"
#include "nmt/error.h"
#include "nmt/model.h"

const char *nmt_cell_name(nmt_cell c)
{
    switch (c) {
    case NMT_CELL_RNN: return "rnn";
    case NMT_CELL_GRU: return "gru";
    case NMT_CELL_LSTM: return "lstm";
    }
    return "?";
}

const char *nmt_attention_name(nmt_attention a)
{
    switch (a) {
    case NMT_ATT_NONE: return "none";
    case NMT_ATT_BAHDANAU: return "bahdanau";
    case NMT_ATT_DOT: return "dot";
    case NMT_ATT_GENERAL: return "general";
    case NMT_ATT_SCALED_DOT: return "scaled-dot";
    }
    return "?";
}

int nmt_attention_uses_att_dim(nmt_attention a)
{
    return a == NMT_ATT_BAHDANAU || a == NMT_ATT_SCALED_DOT;
}

int nmt_attention_check(nmt_attention a, int bidirectional, int hidden)
{
    if (a == NMT_ATT_DOT && bidirectional)
        return nmt_set_error(NMT_ERR_ARG,
                             "attention dot scores s . h_j, so it needs annotations h_j of the "
                             "decoder state's size H = %d, and a bidirectional encoder's have "
                             "2H = %d (use a unidirectional encoder, or general or scaled-dot, "
                             "which project h_j)", hidden, 2 * hidden);
    return NMT_OK;
}

int nmt_cell_parse(const char *s, nmt_cell *out)
{
    static const nmt_cell all[] = {NMT_CELL_RNN, NMT_CELL_GRU, NMT_CELL_LSTM};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, nmt_cell_name(all[i])) == 0) {
            *out = all[i];
            return NMT_OK;
        }
    return nmt_set_error(NMT_ERR_ARG, "unknown cell '%s' (rnn, gru or lstm)", s ? s : "");
}

int nmt_attention_parse(const char *s, nmt_attention *out)
{
    static const nmt_attention all[] = {NMT_ATT_BAHDANAU, NMT_ATT_DOT, NMT_ATT_GENERAL,
                                        NMT_ATT_SCALED_DOT, NMT_ATT_NONE};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s && strcmp(s, nmt_attention_name(all[i])) == 0) {
            *out = all[i];
            return NMT_OK;
        }
    return nmt_set_error(NMT_ERR_ARG,
                         "unknown attention '%s' (bahdanau, dot, general, scaled-dot or none)",
                         s ? s : "");
}

static void add_tensor(nmt_tensor_info *t, int *n, size_t *total, const char *name, int rows,
                       int cols)
{
    nmt_tensor_info *x = &t[(*n)++];
    x->name = name;
    x->ndim = cols > 0 ? 2 : 1;
    x->shape[0] = rows;
    x->shape[1] = cols > 0 ? cols : 0;
    x->offset = *total;
    x->size = (size_t)rows * (size_t)(cols > 0 ? cols : 1);
    *total += x->size;
}

int nmt_tensor_table(const nmt_config *cfg, nmt_tensor_info *t, size_t *total)
{
    int G = cell_gates(cfg->cell), E = cfg->emb, H = cfg->hidden, A = cfg->att_dim;
    int O = cfg->out_dim, D = cfg->bidirectional ? 2 : 1;
    int n = 0;
    *total = 0;
    /* File order, as docs/DESIGN.md lists them. */
    add_tensor(t, &n, total, "src_emb", cfg->src_vocab, E);
    add_tensor(t, &n, total, "tgt_emb", cfg->tgt_vocab, E);
    add_tensor(t, &n, total, "enc.fwd.W_ih", G * H, E);
    add_tensor(t, &n, total, "enc.fwd.W_hh", G * H, H);
    add_tensor(t, &n, total, "enc.fwd.b", G * H, 0);
    if (cfg->bidirectional) {
        add_tensor(t, &n, total, "enc.bwd.W_ih", G * H, E);
        add_tensor(t, &n, total, "enc.bwd.W_hh", G * H, H);
        add_tensor(t, &n, total, "enc.bwd.b", G * H, 0);
    }
    add_tensor(t, &n, total, "dec.init.W", H, D * H);
    add_tensor(t, &n, total, "dec.init.b", H, 0);
    switch (cfg->attention) {
    case NMT_ATT_BAHDANAU:
        add_tensor(t, &n, total, "att.W", A, H);
        add_tensor(t, &n, total, "att.U", A, D * H);
        add_tensor(t, &n, total, "att.b", A, 0);
        add_tensor(t, &n, total, "att.v", A, 0);
        break;
    case NMT_ATT_GENERAL: /* keys U_a h_j of the decoder state's size H */
        add_tensor(t, &n, total, "att.U", H, D * H);
        break;
    case NMT_ATT_SCALED_DOT:
        add_tensor(t, &n, total, "att.W", A, H);
        add_tensor(t, &n, total, "att.U", A, D * H);
        break;
    case NMT_ATT_DOT: /* s . h_j: nothing to learn */
    case NMT_ATT_NONE:
        break;
    }
    add_tensor(t, &n, total, "dec.W_ih", G * H, E + D * H);
    add_tensor(t, &n, total, "dec.W_hh", G * H, H);
    add_tensor(t, &n, total, "dec.b", G * H, 0);
    add_tensor(t, &n, total, "out.W_t", O, H + D * H + E);
    add_tensor(t, &n, total, "out.b_t", O, 0);
    if (!cfg->tied) /* tied: the output matrix is tgt_emb */
        add_tensor(t, &n, total, "out.W", cfg->tgt_vocab, O);
    add_tensor(t, &n, total, "out.b", cfg->tgt_vocab, 0);
    return n;
}

static int check_config(const nmt_config *c)
{
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
    if (c->tied && c->out_dim != c->emb)
        return nmt_set_error(NMT_ERR_ARG, "tied embeddings need out_dim (%d) equal to emb (%d): "
                             "the output matrix is the target embedding table",
                             c->out_dim, c->emb);
    if (c->src_vocab < NMT_N_SPECIAL || c->tgt_vocab < NMT_N_SPECIAL || c->src_vocab > (1 << 24) ||
        c->tgt_vocab > (1 << 24))
        return nmt_set_error(NMT_ERR_ARG, "vocabulary sizes must be between %d and %d",
                             NMT_N_SPECIAL, 1 << 24);
    return NMT_OK;
}

int nmt_model_create(nmt_model **out, const nmt_config *cfg, nmt_vocab *src_vocab,
                     nmt_vocab *tgt_vocab)
{
    *out = NULL;
    nmt_config c = *cfg;
    if (src_vocab)
        c.src_vocab = nmt_vocab_size(src_vocab);
    if (tgt_vocab)
        c.tgt_vocab = nmt_vocab_size(tgt_vocab);
    if (!nmt_attention_uses_att_dim(c.attention))
        c.att_dim = c.att_dim > 0 ? c.att_dim : 0;
    c.tied = c.tied != 0;
    int rc = check_config(&c);
    if (rc)
        return rc;
    nmt_model *m = calloc(1, sizeof *m);
    if (!m)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for the model");
    m->cfg = c;
    m->n_tensors = nmt_tensor_table(&c, m->tensors, &m->n_params);
    m->params = calloc(m->n_params, sizeof *m->params);
    if (!m->params) {
        size_t n = m->n_params;
        free(m);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %zu parameters", n);
    }
    m->src_vocab = src_vocab;
    m->tgt_vocab = tgt_vocab;
    *out = m;
    return NMT_OK;
}

int nmt_model_alloc_grads(nmt_model *m)
{
    if (m->grads)
        return NMT_OK;
    m->grads = calloc(m->n_params, sizeof *m->grads);
    if (!m->grads)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for %zu gradients", m->n_params);
    return NMT_OK;
}

void nmt_model_zero_grad(nmt_model *m)
{
    if (m->grads)
        memset(m->grads, 0, m->n_params * sizeof *m->grads);
}

void nmt_model_free(nmt_model *m)
{
    if (!m)
        return;
    if (m->src_vocab)
        nmt_vocab_free(m->src_vocab);
    if (m->tgt_vocab)
        nmt_vocab_free(m->tgt_vocab);
    nmt_subwords_free(m->subwords);
    free(m->params);
    free(m->grads);
    free(m);
}

const nmt_tensor_info *nmt_model_tensor(const nmt_model *m, const char *name)
{
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    return NULL;
}

/* ---- initialisation ---- */

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
    return m->cfg.cell == NMT_CELL_LSTM &&
           (strcmp(name, "enc.fwd.b") == 0 || strcmp(name, "enc.bwd.b") == 0 ||
            strcmp(name, "dec.b") == 0);
}

/* The paper's tensor: biases and att.v 0 (the LSTM forget gate's bias 1),
 * recurrent matrices orthogonal, att.W and att.U N(0, 0.001^2), the rest
 * N(0, 0.01^2). */
static void init_paper_tensor(const nmt_model *m, const nmt_tensor_info *t, real *p, nmt_rng *rng)
{
    int G = cell_gates(m->cfg.cell), H = m->cfg.hidden;
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

void nmt_model_init(nmt_model *m, uint64_t seed)
{
    init_params(m, seed, INIT_BAHDANAU, 0);
}

void nmt_model_init_orthogonal(nmt_model *m, uint64_t seed, double scale)
{
    init_params(m, seed, INIT_ORTHOGONAL, scale);
}

void nmt_model_init_uniform(nmt_model *m, uint64_t seed, double scale)
{
    init_params(m, seed, INIT_UNIFORM, scale);
}
