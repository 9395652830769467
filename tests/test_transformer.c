/* The Transformer as a model (src/model/transformer): its tensor table and
 * metadata round trip, the gradient check of the whole encoder-decoder in
 * double (every element of every tensor against central differences, for
 * several heads and layers, tied and untied, label smoothing, each dropout
 * site alone and all together, extra padding, a joint vocabulary tied and
 * untied), that a joint vocabulary's one table gets both sides' gradients,
 * and, in float, that decoding with the key/value cache computes what the
 * training forward computes.
 *
 * Built twice (tests/meson.build): transformer (float, with the library)
 * and transformer-double (the model's sources in double), which adds the
 * finite differences. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/transformer/transformer_pass.h"
#include "model/transformer/transformer_layers.h"
#include "model_fixture.h"
#include "nmt/error.h"
#include "nmt/threads.h"
#include "nmt/model.h"
#include "test_common.h"
#include "tf_fixture.h"

enum { VS = 10, VT = 9 };

static nmt_config tf_config(int d, int h, int ff, int Le, int Ld, int tied)
{
    nmt_config c;
    memset(&c, 0, sizeof c);
    c.arch = NMT_ARCH_TRANSFORMER;
    c.transformer = (nmt_transformer_config){.d_model = d, .heads = h, .ff = ff,
                                             .enc_layers = Le, .dec_layers = Ld};
    c.src_vocab = VS, c.tgt_vocab = VT, c.tied = tied;
    return c;
}

/* The variants on top of a configuration. */
static nmt_config tf_variant(nmt_config c, int scale_norm, int fixnorm)
{
    c.transformer.norm = scale_norm ? NMT_TF_NORM_SCALE : NMT_TF_NORM_LAYER;
    c.transformer.fixnorm = fixnorm;
    return c;
}

/* c with a joint vocabulary: one list of VS tokens on both sides. */
static nmt_config joint(nmt_config c)
{
    c.joint_vocab = 1;
    c.src_vocab = c.tgt_vocab = VS;
    return c;
}

/* Weights large enough that every path carries signal; layer norm gains
 * around 1 so that no layer is silenced, ScaleNorm's scalar gains around
 * sqrt(d) (the norm of a layer norm's output). */
static void randomize(nmt_model *m, uint64_t seed)
{
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    for (int i = 0; i < m->n_tensors; i++) {
        const nmt_tensor_info *t = &m->tensors[i];
        const char *dot = strrchr(t->name, '.');
        int gain = dot && !strcmp(dot, ".g");
        double g0 = t->size == 1 ? sqrt((double)m->cfg.transformer.d_model) : 1;
        for (size_t k = 0; k < t->size; k++) {
            double u = 2.0 * ((double)nmt_rng_uniform(&r) - 0.5);
            m->params[t->offset + k] = (nmt_real)(gain ? g0 * (1 + 0.5 * u) : 0.8 * u);
        }
    }
}

/* The table follows the design: names, shapes and file order of a 2+1
 * layer model, tied and untied. */
START_TEST(tensor_table_follows_design)
{
    nmt_config c = tf_config(8, 2, 6, 2, 1, 0);
    nmt_tensor_info t[128];
    size_t total;
    int n = nmt_tensor_table(&c, t, 128, &total);
    /* embeddings 2, encoder layers 16 each, enc.ln 2, decoder layers 26
     * each, dec.ln 2, out.W and out.b */
    ck_assert_int_eq(n, 2 + 2 * 16 + 2 + 26 + 2 + 2);
    ck_assert_str_eq(t[0].name, "src_emb");
    ck_assert_str_eq(t[2].name, "enc.0.ln1.g");
    ck_assert_str_eq(t[4].name, "enc.0.self.W_q");
    ck_assert_int_eq(t[4].shape[0], 8);
    ck_assert_int_eq(t[4].shape[1], 8);
    ck_assert_str_eq(t[8].name, "enc.0.self.b_q");
    ck_assert_str_eq(t[14].name, "enc.0.ff.W_1");
    ck_assert_int_eq(t[14].shape[0], 6);
    ck_assert_int_eq(t[14].shape[1], 8);
    ck_assert_str_eq(t[16].name, "enc.0.ff.W_2");
    ck_assert_int_eq(t[16].shape[0], 8);
    ck_assert_int_eq(t[16].shape[1], 6);
    ck_assert_str_eq(t[18].name, "enc.1.ln1.g");
    ck_assert_str_eq(t[34].name, "enc.ln.g");
    ck_assert_str_eq(t[36 + 12].name, "dec.0.cross.W_q");
    ck_assert_str_eq(t[36 + 20].name, "dec.0.ln3.g");
    ck_assert_str_eq(t[n - 2].name, "out.W");
    ck_assert_int_eq(t[n - 2].shape[0], VT);
    ck_assert_str_eq(t[n - 1].name, "out.b");
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_uint_eq(t[i].offset, at);
        at += t[i].size;
    }
    ck_assert_uint_eq(total, at);
    c.tied = 1;
    ck_assert_int_eq(nmt_tensor_table(&c, t, 128, &total), n - 1);
    ck_assert_str_eq(t[n - 2].name, "out.b");
    /* ScaleNorm: every norm one gain of shape [1] and no bias, in the
     * same places; FixNorm changes no tensor */
    nmt_tensor_info s[128];
    size_t s_total;
    nmt_config sc = tf_variant(c, 1, 1);
    int ns = nmt_tensor_table(&sc, s, 128, &s_total);
    ck_assert_int_eq(ns, n - 1 - (2 * 2 + 3 + 2));
    ck_assert_str_eq(s[2].name, "enc.0.ln1.g");
    ck_assert_int_eq(s[2].ndim, 1);
    ck_assert_int_eq(s[2].shape[0], 1);
    ck_assert_str_eq(s[3].name, "enc.0.self.W_q");
    int gains = 0;
    for (int i = 0; i < ns; i++) {
        const char *dot = strrchr(s[i].name, '.');
        if (!dot)
            continue; /* the embeddings */
        ck_assert_msg(!(strstr(s[i].name, "ln") && !strcmp(dot, ".b")), "%s", s[i].name);
        gains += !strcmp(dot, ".g") && s[i].size == 1;
    }
    ck_assert_int_eq(gains, 2 * 2 + 3 + 2);
    ck_assert_uint_eq(s_total, total - (2 * 2 + 3 + 2) * (2 * 8 - 1));
    /* heads that do not divide d_model are refused with the reason */
    c.transformer.heads = 3;
    ck_assert_int_eq(nmt_config_check(&c), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "do not divide"));
}
END_TEST

/* A joint vocabulary has one table: no src_emb, tgt_emb [V, d] first, the
 * rest as the plain model's (tied and untied); the encoder's pointers are
 * tgt_emb's, for the parameters and the gradients. Vocabularies of two
 * sizes, or two lists, are refused naming why; the RNN refuses it. */
START_TEST(joint_vocabulary_has_one_table)
{
    nmt_tensor_info plain[128], t[128];
    size_t plain_total, total;
    for (int tied = 0; tied < 2; tied++) {
        nmt_config c = tf_config(8, 2, 6, 2, 1, tied), j = joint(c);
        c.tgt_vocab = VS; /* the plain model of the same sizes */
        int n = nmt_tensor_table(&c, plain, 128, &plain_total);
        ck_assert_int_eq(nmt_tensor_table(&j, t, 128, &total), n - 1);
        ck_assert_str_eq(t[0].name, "tgt_emb");
        ck_assert_int_eq(t[0].shape[0], VS);
        ck_assert_int_eq(t[0].shape[1], 8);
        ck_assert_uint_eq(t[0].offset, 0);
        for (int i = 0; i < n - 1; i++) {
            ck_assert_str_ne(t[i].name, "src_emb");
            ck_assert_str_eq(t[i].name, plain[i + 1].name);
            ck_assert_int_eq(t[i].shape[0], plain[i + 1].shape[0]);
            ck_assert_int_eq(t[i].shape[1], plain[i + 1].shape[1]);
        }
        ck_assert_uint_eq(total, plain_total - (size_t)VS * 8);
        nmt_model *m;
        ck_assert_int_eq(nmt_model_create(&m, &j, NULL, NULL), NMT_OK);
        ck_assert_int_eq(nmt_model_alloc_grads(m), NMT_OK);
        ck_assert_ptr_null(nmt_model_tensor(m, "src_emb"));
        const tf_weights *w = tf_params(m), *g = tf_grads(m);
        ck_assert(w->src_emb == w->tgt_emb && w->tgt_emb == m->params);
        ck_assert(g->src_emb == g->tgt_emb && g->tgt_emb == m->grads);
        ck_assert(tied ? w->out_W == w->tgt_emb : w->out_W != w->tgt_emb);
        nmt_model_free(m);
        /* a joint vocabulary of two sizes */
        j.tgt_vocab = VT;
        ck_assert_int_eq(nmt_config_check(&j), NMT_ERR_ARG);
        ck_assert_ptr_nonnull(strstr(nmt_error_message(), "joint vocabulary"));
    }
    /* two lists of one size */
    const char *a[] = {"<pad>", "<unk>", "<s>", "</s>", "x", "y"};
    const char *b[] = {"<pad>", "<unk>", "<s>", "</s>", "x", "z"};
    nmt_vocab *va, *vb;
    ck_assert_int_eq(nmt_vocab_from_tokens(&va, a, 6), NMT_OK);
    ck_assert_int_eq(nmt_vocab_from_tokens(&vb, b, 6), NMT_OK);
    nmt_config c = joint(tf_config(8, 2, 6, 1, 1, 1));
    nmt_model *m = NULL;
    ck_assert_int_eq(nmt_model_create(&m, &c, va, vb), NMT_ERR_ARG);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "id 5 is 'y'"));
    nmt_vocab_free(va);
    nmt_vocab_free(vb);
    /* the RNN has no such variant */
    nmt_config r = fixture_config(0, 4, 4, 4, 4, VS, VS);
    r.joint_vocab = 1;
    ck_assert_int_eq(nmt_config_check(&r), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "Transformer's"));
}
END_TEST

/* The gradient of a joint model's one table is the sum of what the plain
 * model of the same weights (src_emb a copy of tgt_emb) gives its two
 * tables: each side's lookup adds its share (and, tied, the projection
 * its own), none overwrites another. Every other tensor's gradient and the
 * loss are the plain model's. Tied and untied. */
START_TEST(joint_gradient_is_both_sides)
{
    nmt_config c = tf_config(8, 2, 6, 1, 2, _i);
    c.tgt_vocab = VS;
    nmt_config jc = joint(c);
    nmt_model *p, *j;
    ck_assert_int_eq(nmt_model_create(&p, &c, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_model_create(&j, &jc, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_model_alloc_grads(p), NMT_OK);
    ck_assert_int_eq(nmt_model_alloc_grads(j), NMT_OK);
    randomize(j, 31);
    for (int i = 0; i < j->n_tensors; i++) {
        const nmt_tensor_info *tj = &j->tensors[i], *tp = nmt_model_tensor(p, tj->name);
        memcpy(p->params + tp->offset, j->params + tj->offset, tj->size * sizeof *p->params);
    }
    const nmt_tensor_info *ps = nmt_model_tensor(p, "src_emb");
    const nmt_tensor_info *pt = nmt_model_tensor(p, "tgt_emb");
    memcpy(p->params + ps->offset, p->params + pt->offset, ps->size * sizeof *p->params);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 1);
    nmt_model *both[2] = {p, j};
    nmt_real loss[2];
    for (int k = 0; k < 2; k++) {
        nmt_workspace *ws;
        ck_assert_int_eq(nmt_workspace_create(&ws, both[k], b.B, b.src_T, b.tgt_T), NMT_OK);
        nmt_model_zero_grad(both[k]);
        ck_assert_int_eq(nmt_forward_backward(&loss[k], both[k], ws, &b, NULL, NULL), NMT_OK);
        nmt_workspace_free(ws);
    }
    ck_assert(fabs((double)loss[0] - (double)loss[1]) <= TF_ROUNDING * fabs((double)loss[0]));
    const nmt_tensor_info *jt = nmt_model_tensor(j, "tgt_emb");
    size_t n = jt->size;
    nmt_real *sum = malloc(n * sizeof *sum);
    double enc = 0;
    for (size_t i = 0; i < n; i++) {
        sum[i] = p->grads[ps->offset + i] + p->grads[pt->offset + i];
        enc = fmax(enc, fabs((double)p->grads[ps->offset + i]));
    }
    ck_assert_msg(enc > 1e-6, "the encoder's lookup has no gradient to add");
    double err = tf_rel_diff(j->grads + jt->offset, sum, n);
    ck_assert_msg(err <= TF_ROUNDING, "tgt_emb's gradient is not the sum of both sides' (%g)",
                  err);
    for (int i = 1; i < j->n_tensors; i++) {
        const nmt_tensor_info *tj = &j->tensors[i], *tp = nmt_model_tensor(p, tj->name);
        double e = tf_rel_diff(j->grads + tj->offset, p->grads + tp->offset, tj->size);
        ck_assert_msg(e <= TF_ROUNDING, "%s: %g", tj->name, e);
    }
    free(sum);
    fixture_batch_free(&b);
    nmt_model_free(p);
    nmt_model_free(j);
}
END_TEST

/* The Transformer's dropout masks: the same bits at 1 and 3 threads, a
 * kept share within 4 standard deviations of 1 - p, p = 0 keeping all,
 * and the run's generator advanced by one draw per mask (what resume needs
 * to be exact). */
START_TEST(dropout_masks_are_seeded_and_fair)
{
    enum { N = 200003 };
    unsigned char *a = malloc(N), *b = malloc(N);
    const float rates[] = {0, 0.1f, 0.3f, 0.5f};
    for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
        nmt_rng r1, r2, r3;
        nmt_rng_seed(&r1, 5);
        nmt_rng_seed(&r2, 5);
        nmt_set_threads(1);
        nmt_tf_dropout_mask(a, &r1, rates[k], N);
        nmt_set_threads(3);
        nmt_tf_dropout_mask(b, &r2, rates[k], N);
        nmt_set_threads(1);
        ck_assert_int_eq(memcmp(a, b, N), 0);
        nmt_rng_seed(&r3, 5);
        nmt_rng_next(&r3);
        ck_assert(memcmp(&r1, &r3, sizeof r1) == 0);
        size_t kept = 0;
        for (size_t i = 0; i < N; i++)
            kept += a[i];
        double p = rates[k], want = (1 - p) * N, sd = sqrt(N * p * (1 - p));
        ck_assert_msg(fabs((double)kept - want) <= 4 * sd + 1e-9, "rate %g: kept %zu of %d", p,
                      kept, N);
        double keep = (double)nmt_tf_dropout_keep(rates[k]);
        ck_assert(fabs(keep * (1 - (double)nmt_tf_dropout_threshold(rates[k]) / 65536) - 1) <
                  1e-6);
    }
    free(a);
    free(b);
}
END_TEST

/* The guided term by hand: with the guided layer's cross-attention
 * queries at 0 (W_q and b_q zero) every score is 0 and each row of weights
 * is uniform over the n real source positions, so a gold row of any
 * distribution over them costs log n; the objective is the plain one plus
 * weight / N times the sum of those, N the batch's target tokens. The
 * other heads and layers are untouched, and a head of another layer is
 * not uniform. */
START_TEST(guided_loss_by_hand)
{
    nmt_config cfg = tf_config(8, 2, 6, 1, 2, 1);
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_OK);
    randomize(m, 41);
    const nmt_tensor_info *wq = nmt_model_tensor(m, "dec.1.cross.W_q");
    const nmt_tensor_info *bq = nmt_model_tensor(m, "dec.1.cross.b_q");
    memset(m->params + wq->offset, 0, wq->size * sizeof *m->params);
    memset(m->params + bq->offset, 0, bq->size * sizeof *m->params);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 1);
    float *gold = calloc((size_t)b.B * b.tgt_T * b.src_T, sizeof *gold);
    /* pair 0: rows 0 and 2 (one source piece; two); pair 1: row 1; pair
     * 2: rows 1, 2, 3 (the last, </s>'s step) */
    const int rows[][3] = {{0, 0, -1}, {0, 2, 1}, {1, 1, -1}, {2, 1, -1}, {2, 2, 2}, {2, 3, 0}};
    double want = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int k = rows[r][0], i = rows[r][1], j = rows[r][2];
        float *row = gold + ((size_t)k * b.tgt_T + i) * b.src_T;
        if (j < 0) {
            row[0] = 1;
        } else { /* half on j and half on the next real position */
            row[j] = 0.5f;
            row[(j + 1) % (b.src_len[k] - 1 > 0 ? b.src_len[k] - 1 : 1)] += 0.5f;
        }
        want += log((double)b.src_len[k]);
    }
    b.guide = gold;
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, b.B, b.src_T, b.tgt_T), NMT_OK);
    const float weight = 0.25f;
    for (int head = 0; head < 2; head++) {
        nmt_regularizer reg = {.guided = 1, .guided_layer = 1, .guided_head = head,
                               .guided_weight = weight};
        nmt_real loss;
        ck_assert_int_eq(nmt_forward(&loss, m, ws, &b, NULL, NULL), NMT_OK);
        double plain = nmt_workspace_objective(ws), sum, n;
        nmt_workspace_guided(ws, &sum, &n);
        ck_assert(sum == 0 && n == 0);
        ck_assert_int_eq(nmt_forward(&loss, m, ws, &b, &reg, NULL), NMT_OK);
        nmt_workspace_guided(ws, &sum, &n);
        ck_assert_msg(fabs(sum - want) < 1e-5 * want, "head %d: guided sum %.9g, by hand %.9g",
                      head, sum, want);
        ck_assert(n == 6);
        double guided = nmt_workspace_objective(ws);
        ck_assert_msg(fabs(guided - plain - (double)weight * want / (double)b.n_tgt_tokens) <
                          1e-6, "head %d: objective %.9g, plain %.9g", head, guided, plain);
    }
    /* layer 0's head is no uniform head: its term is not log n */
    nmt_regularizer reg0 = {.guided = 1, .guided_layer = 0, .guided_head = 1,
                            .guided_weight = weight};
    ck_assert_int_eq(nmt_forward(NULL, m, ws, &b, &reg0, NULL), NMT_OK);
    double sum0, n0;
    nmt_workspace_guided(ws, &sum0, &n0);
    ck_assert_msg(fabs(sum0 - want) > 1e-3, "layer 0's term %.9g is log n's", sum0);
    /* a layer or head the model has not, or a negative weight, is refused */
    nmt_regularizer bad[3] = {{.guided = 1, .guided_layer = 2},
                              {.guided = 1, .guided_head = 2},
                              {.guided = 1, .guided_weight = -1}};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(nmt_forward(NULL, m, ws, &b, &bad[k], NULL), NMT_ERR_ARG);
        ck_assert_ptr_nonnull(strstr(nmt_error_message(), "guided alignment"));
    }
    nmt_workspace_free(ws);
    free(gold);
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

#ifdef NMT_REAL_DOUBLE

typedef struct variant {
    const char *name;
    int d, h, ff, Le, Ld, tied, extra_pad;
    nmt_regularizer reg;
    int scale_norm, fixnorm;
    int joint; /* a joint vocabulary: one table, tgt_emb, for both sides */
} variant;

static double loss_at(nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                      const nmt_regularizer *reg)
{
    nmt_rng r;
    nmt_rng_seed(&r, 99); /* the same dropout masks every time */
    ck_assert_msg(nmt_forward(NULL, m, ws, b, reg, &r) == NMT_OK, "%s", nmt_error_message());
    return nmt_workspace_objective(ws);
}

/* b_k moves every score of a query alike, which the softmax ignores: its
 * gradient is 0 (to rounding), and the check only asks that it is. */
static int is_key_bias(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".b_k");
}

/* Hand-made gold rows for the fixture's batch, as guided alignment's data
 * would make them from subword-like word links (many-to-many): target piece
 * q (of tgt_len - 1) is supervised at decoder row q + shift, toward a
 * uniform distribution over one, two or three of the pair's source pieces
 * (never its </s>), some pieces shared by several rows; every third piece
 * has no link (its row stays 0). gold [B, tgt_T, src_T], zeroed. */
static void make_gold(float *gold, const nmt_batch *b, int shift)
{
    for (int k = 0; k < b->B; k++) {
        int n = b->src_len[k] - 1, m = b->tgt_len[k] - 1;
        for (int q = 0; q < m; q++) {
            if (q % 3 == 2 || n == 0)
                continue;
            float *row = gold + ((size_t)k * b->tgt_T + q + shift) * b->src_T;
            int width = 1 + (q + k) % 3, first = (q * 2 + k) % n, count = 0;
            for (int w = 0; w < width && w < n; w++)
                count += row[(first + w) % n] == 0, row[(first + w) % n] = 1;
            for (int j = 0; j < n; j++)
                row[j] /= (float)count;
        }
    }
}

/* The check of one variant; with shift 0 or 1 (-1: none) the batch has the
 * gold rows of make_gold and v->reg guides a head toward them. */
static double check_with(const variant *v, int shift)
{
    nmt_config cfg = tf_variant(tf_config(v->d, v->h, v->ff, v->Le, v->Ld, v->tied),
                                v->scale_norm, v->fixnorm);
    if (v->joint)
        cfg = joint(cfg);
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_model_alloc_grads(m), NMT_OK);
    ck_assert(!v->joint || !nmt_model_tensor(m, "src_emb"));
    randomize(m, 77 + (uint64_t)v->h);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, v->extra_pad);
    float *gold = NULL;
    if (shift >= 0) {
        gold = calloc((size_t)b.B * b.tgt_T * b.src_T, sizeof *gold);
        make_gold(gold, &b, shift);
        b.guide = gold;
    }
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, b.B, b.src_T, b.tgt_T), NMT_OK);
    nmt_model_zero_grad(m);
    double loss = loss_at(m, ws, &b, &v->reg);
    ck_assert(isfinite(loss) && loss > 0);
    if (shift >= 0) {
        /* the term is there and is what the objective holds beyond the
         * translation loss */
        double sum, rows;
        nmt_workspace_guided(ws, &sum, &rows);
        ck_assert_msg(rows > 2 && sum > 0, "%s: %g rows, sum %g", v->name, rows, sum);
        nmt_regularizer plain = v->reg;
        plain.guided = 0;
        double without = loss_at(m, ws, &b, &plain);
        ck_assert_msg(fabs(loss - without - (double)v->reg.guided_weight * sum / (double)b.n_tgt_tokens)
                      < 1e-12, "%s: the objective is not the loss and the guided term", v->name);
        loss_at(m, ws, &b, &v->reg);
    }
    ck_assert_int_eq(nmt_backward(m, ws, &b), NMT_OK);
    /* central differences: the error is eps^2 times the third derivative, so
     * smaller than the RNN check's 1e-4 for these deeper models */
    const double eps = 1e-5;
    double worst = 0;
    for (int ti = 0; ti < m->n_tensors; ti++) {
        const nmt_tensor_info *t = &m->tensors[ti];
        double max_grad = 0, max_diff = 0;
        for (size_t i = 0; i < t->size; i++)
            max_grad = fmax(max_grad, fabs(m->grads[t->offset + i]));
        for (size_t i = 0; i < t->size; i++) {
            double *p = &m->params[t->offset + i];
            double keep = *p;
            *p = keep + eps;
            double up = loss_at(m, ws, &b, &v->reg);
            *p = keep - eps;
            double down = loss_at(m, ws, &b, &v->reg);
            *p = keep;
            max_diff = fmax(max_diff, fabs((up - down) / (2 * eps) - m->grads[t->offset + i]));
        }
        if (is_key_bias(t->name)) {
            ck_assert_msg(max_grad < 1e-9 && max_diff < 1e-8, "%s: %s gradient %g (numeric off "
                          "by %g), expected 0", v->name, t->name, max_grad, max_diff);
            continue;
        }
        ck_assert_msg(max_grad > 1e-6, "%s: %s has no gradient", v->name, t->name);
        double rel = max_diff / max_grad;
        ck_assert_msg(rel < 1e-6, "%s: %s relative error %g", v->name, t->name, rel);
        worst = fmax(worst, rel);
    }
    /* <pad>, which only padding reads, gets nothing on the source side (a
     * joint table's: on either side, unless the tied projection reads it) */
    const nmt_tensor_info *se = nmt_model_tensor(m, v->joint ? "tgt_emb" : "src_emb");
    for (int e = 0; e < v->d && !(v->joint && v->tied); e++)
        ck_assert(m->grads[se->offset + (size_t)NMT_PAD * v->d + e] == 0);
    printf("transformer gradcheck %-34s worst relative error %.2e\n", v->name, worst);
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    free(gold);
    nmt_model_free(m);
    return worst;
}

static double check(const variant *v)
{
    return check_with(v, -1);
}

static const variant variants[] = {
    {"d 8 h 2 ff 6 1+1 untied", 8, 2, 6, 1, 1, 0, 0, {.label_smoothing = 0}, 0, 0, 0},
    {"d 8 h 1 ff 5 2+2 tied", 8, 1, 5, 2, 2, 1, 0, {.label_smoothing = 0}, 0, 0, 0},
    {"d 8 h 4 ff 6 1+2 untied, padding", 8, 4, 6, 1, 2, 0, 2, {.label_smoothing = 0}, 0, 0, 0},
    {"d 6 h 3 ff 4 2+1 tied, smoothing", 6, 3, 4, 2, 1, 1, 1, {.label_smoothing = 0.1f}, 0, 0, 0},
    {"dropout emb 0.3", 8, 2, 6, 1, 1, 0, 0, {.dropout_emb = 0.3f}, 0, 0, 0},
    {"dropout residual 0.3", 8, 2, 6, 1, 1, 0, 0, {.dropout_residual = 0.3f}, 0, 0, 0},
    {"dropout attention 0.3", 8, 2, 6, 1, 1, 0, 0, {.dropout_att = 0.3f}, 0, 0, 0},
    {"dropout ff 0.3", 8, 2, 6, 1, 1, 0, 0, {.dropout_ff = 0.3f}, 0, 0, 0},
    {"all dropouts, smoothing, tied 2+2", 8, 2, 6, 2, 2, 1, 1,
     {.dropout_emb = 0.2f, .dropout_residual = 0.2f, .dropout_att = 0.2f, .dropout_ff = 0.2f,
      .label_smoothing = 0.1f}, 0, 0, 0},
    /* the variants (docs/DESIGN.md, "The Transformer"): ScaleNorm, FixNorm
     * and both, tied and untied, padding, smoothing, each dropout site */
    {"scale norm 1+1 untied", 8, 2, 6, 1, 1, 0, 0, {.label_smoothing = 0}, 1, 0, 0},
    {"scale norm 2+2 tied, padding", 8, 4, 6, 2, 2, 1, 2, {.label_smoothing = 0}, 1, 0, 0},
    {"fixnorm 2+1 tied", 8, 2, 6, 2, 1, 1, 0, {.label_smoothing = 0}, 0, 1, 0},
    {"fixnorm 1+2 untied, padding, smoothing", 6, 3, 4, 1, 2, 0, 1, {.label_smoothing = 0.1f},
     0, 1, 0},
    {"both tied, smoothing", 8, 2, 6, 1, 2, 1, 0, {.label_smoothing = 0.1f}, 1, 1, 0},
    {"both untied, padding", 8, 1, 5, 2, 1, 0, 2, {.label_smoothing = 0}, 1, 1, 0},
    {"both, dropout emb 0.3", 8, 2, 6, 1, 1, 1, 0, {.dropout_emb = 0.3f}, 1, 1, 0},
    {"both, dropout residual 0.3", 8, 2, 6, 1, 1, 0, 0, {.dropout_residual = 0.3f}, 1, 1, 0},
    {"both, dropout attention 0.3", 8, 2, 6, 1, 1, 1, 0, {.dropout_att = 0.3f}, 1, 1, 0},
    {"both, dropout ff 0.3", 8, 2, 6, 1, 1, 0, 0, {.dropout_ff = 0.3f}, 1, 1, 0},
    {"both, all dropouts, smoothing, tied 2+2", 8, 2, 6, 2, 2, 1, 1,
     {.dropout_emb = 0.2f, .dropout_residual = 0.2f, .dropout_att = 0.2f, .dropout_ff = 0.2f,
      .label_smoothing = 0.1f}, 1, 1, 0},
    /* a joint vocabulary: one table, tgt_emb, for both sides; with the
     * other variants too */
    {"joint vocabulary, untied, padding", 8, 2, 6, 1, 2, 0, 1, {.label_smoothing = 0}, 0, 0, 1},
    {"joint vocabulary, tied 2+1, smoothing", 8, 4, 6, 2, 1, 1, 0, {.label_smoothing = 0.1f}, 0,
     0, 1},
    {"joint, tied, all dropouts", 6, 3, 4, 1, 1, 1, 1,
     {.dropout_emb = 0.2f, .dropout_residual = 0.2f, .dropout_att = 0.2f, .dropout_ff = 0.2f},
     0, 0, 1},
    {"joint, fixnorm untied, padding", 8, 2, 6, 1, 1, 0, 2, {.label_smoothing = 0}, 0, 1, 1},
    {"joint, scale norm and fixnorm, tied", 8, 2, 6, 2, 1, 1, 0, {.label_smoothing = 0.1f}, 1,
     1, 1},
};

START_TEST(gradients_are_derivatives)
{
    check(&variants[_i]);
}
END_TEST

/* Guided alignment (docs/DESIGN.md, "Guided alignment"): a head of a
 * layer's cross-attention trained toward gold rows beside the translation
 * loss; every layer, several heads, padding, the rows shifted (the step
 * that reads each piece) and not, with the other regularizers. */
typedef struct guided_variant {
    variant v;
    int shift;
} guided_variant;

#define GUIDED(layer, head, weight) \
    .guided = 1, .guided_layer = (layer), .guided_head = (head), .guided_weight = (weight)

static const guided_variant guided_variants[] = {
    {{"guided 1+1 h2, head 1", 8, 2, 6, 1, 1, 0, 0, {GUIDED(0, 1, 0.7f)}, 0, 0, 0}, 0},
    {{"guided 1+2 h4 layer 1 head 2, padding, shifted", 8, 4, 6, 1, 2, 0, 2,
      {GUIDED(1, 2, 1.5f)}, 0, 0, 0}, 1},
    {{"guided 1+2 h4 layer 0 head 3, padding", 8, 4, 6, 1, 2, 1, 1, {GUIDED(0, 3, 1.5f)}, 0, 0,
      0}, 0},
    {{"guided 2+3 h2 layer 2, shifted, smoothing", 6, 2, 4, 2, 3, 1, 0,
      {.label_smoothing = 0.1f, GUIDED(2, 0, 0.05f)}, 0, 0, 0}, 1},
    {{"guided, scale norm and fixnorm, shifted", 8, 2, 6, 1, 2, 1, 1, {GUIDED(1, 1, 1)}, 1, 1, 0},
     1},
    {{"guided, all dropouts, shifted", 8, 2, 6, 2, 2, 1, 1,
      {.dropout_emb = 0.2f, .dropout_residual = 0.2f, .dropout_att = 0.2f,
       .dropout_ff = 0.2f, .label_smoothing = 0.1f, GUIDED(1, 0, 1)}, 0, 0, 0}, 1},
    {{"guided, joint vocabulary, padding", 8, 2, 6, 1, 1, 1, 2, {GUIDED(0, 0, 2)}, 0, 0, 1}, 0},
};

START_TEST(guided_gradients_are_derivatives)
{
    check_with(&guided_variants[_i].v, guided_variants[_i].shift);
}
END_TEST

#else /* float: decoding against the training forward */

/* Teacher-forced decoding with the cache gives the training forward's
 * log-probabilities, row by row, position by position, to float rounding;
 * after a reordering of the rows (a beam's), each row goes on from the
 * row it was copied from. Loops 0-15: tied (bit 0), ScaleNorm (bit 1),
 * FixNorm (bit 2), a joint vocabulary (bit 3). */
START_TEST(decoding_matches_the_forward)
{
    nmt_config cfg = tf_variant(tf_config(16, 4, 24, 2, 2, _i & 1), _i & 2, (_i & 4) != 0);
    if (_i & 8)
        cfg = joint(cfg);
    const int V = cfg.tgt_vocab;
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_OK);
    randomize(m, 5);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 0);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, b.B, b.src_T, b.tgt_T), NMT_OK);
    ck_assert_int_eq(nmt_forward(NULL, m, ws, &b, NULL, NULL), NMT_OK);
    const double *nll = nmt_workspace_sentence_nll(ws);
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, b.B, b.src_T, 6, b.tgt_T), NMT_OK);
    ck_assert_int_eq(nmt_infer_encode(m, st, b.src, b.src_len, b.B, b.src_T), NMT_OK);
    /* rows: 3 sentences; at step 2 row 1 is dropped and row 2 doubled */
    float *logp = malloc((size_t)6 * V * sizeof *logp);
    double sum[3] = {0};
    int32_t prev[6];
    int rows = b.B, sent[6] = {0, 1, 2};
    for (int i = 0; i < b.tgt_T; i++) {
        if (i == 2) {
            static const int from[4] = {0, 2, 2, 1};
            ck_assert_int_eq(nmt_infer_select(st, from, 4), NMT_OK);
            int s[4] = {sent[0], sent[2], sent[2], sent[1]};
            memcpy(sent, s, sizeof s);
            rows = 4;
        }
        for (int r = 0; r < rows; r++)
            prev[r] = b.tgt_in[(size_t)i * b.B + sent[r]];
        ck_assert_int_eq(nmt_infer_step(m, st, prev, logp, NULL), NMT_OK);
        for (int r = 0; r < rows; r++) {
            int s = sent[r];
            if (i >= b.tgt_len[s] || (i >= 2 && r == 2))
                continue; /* padding; and the doubled row counts once */
            sum[s] -= (double)logp[(size_t)r * V + b.tgt_out[(size_t)i * b.B + s]];
        }
    }
    for (int s = 0; s < 3; s++)
        ck_assert_msg(fabs(sum[s] - nll[s]) < 1e-4 * fabs(nll[s]),
                      "variant %d sentence %d: decoding %.7f, forward %.7f", _i, s, sum[s],
                      nll[s]);
    /* past the steps it was made for, a step is refused */
    ck_assert_int_eq(nmt_infer_step(m, st, prev, logp, NULL), NMT_ERR_ARG);
    free(logp);
    nmt_infer_free(st);
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST


/* The attention maps of teacher-forced decoding: [steps][rows][T] of map
 * `map`, from an inference state made for sources up to max_Ts positions. */
static float *decode_maps(const nmt_model *m, const nmt_batch *b, int max_Ts, int map)
{
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, b->B, max_Ts, b->B, b->tgt_T), NMT_OK);
    ck_assert_int_eq(nmt_infer_encode(m, st, b->src, b->src_len, b->B, b->src_T), NMT_OK);
    ck_assert_int_eq(nmt_infer_set_attention_map(st, map), NMT_OK);
    size_t per_step = (size_t)b->B * b->src_T;
    float *att = malloc((size_t)b->tgt_T * per_step * sizeof *att);
    float *logp = malloc((size_t)b->B * VT * sizeof *logp);
    int32_t prev[8];
    for (int i = 0; i < b->tgt_T; i++) {
        for (int r = 0; r < b->B; r++)
            prev[r] = b->tgt_in[(size_t)i * b->B + r];
        ck_assert_int_eq(nmt_infer_step(m, st, prev, logp, att + i * per_step), NMT_OK);
    }
    free(logp);
    nmt_infer_free(st);
    return att;
}

/* Every map (each decoder layer's heads and their mean) is a distribution
 * over the source's real positions, the mean is the mean of the heads, and
 * a map does not depend on how long the state's sources may be (the
 * layers' weights lie max_Ts apart: the later layers' maps were read from
 * the wrong place when a batch's sources were shorter than that). */
START_TEST(attention_maps_are_each_layers_heads)
{
    const int h = 2, L = 3;
    nmt_config cfg = tf_config(8, h, 12, 1, L, 0);
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_OK);
    randomize(m, 9);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 0);
    ck_assert_int_eq(nmt_model_attention_maps(m), L * (h + 1));
    size_t n = (size_t)b.tgt_T * b.B * b.src_T;
    for (int l = 0; l < L; l++) {
        float *head[2], *mean;
        for (int k = 0; k <= h; k++) {
            int map = nmt_model_attention_map_at(m, l, k == h ? NMT_MAP_MEAN : k);
            ck_assert_int_eq(map, l * (h + 1) + k);
            float *tight = decode_maps(m, &b, b.src_T, map);
            float *loose = decode_maps(m, &b, b.src_T + 5, map);
            for (size_t i = 0; i < n; i++)
                ck_assert_msg(tight[i] == loose[i], "layer %d map %d: %g against %g", l, k,
                              (double)tight[i], (double)loose[i]);
            for (size_t row = 0; row < n / b.src_T; row++) {
                int r = (int)(row % b.B);
                double sum = 0;
                for (int j = 0; j < b.src_T; j++)
                    sum += (double)tight[row * b.src_T + j];
                for (int j = b.src_len[r]; j < b.src_T; j++)
                    ck_assert(tight[row * b.src_T + j] == 0);
                ck_assert_msg(fabs(sum - 1) < 1e-5, "layer %d map %d: a row sums to %g", l, k,
                              sum);
            }
            free(loose);
            if (k < h)
                head[k] = tight;
            else
                mean = tight;
        }
        for (size_t i = 0; i < n; i++)
            ck_assert(fabsf((head[0][i] + head[1][i]) / 2 - mean[i]) < 1e-6f);
        free(head[0]);
        free(head[1]);
        free(mean);
    }
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

#endif

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("transformer");
    TCase *tc = tcase_create("transformer");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, tensor_table_follows_design);
    tcase_add_test(tc, dropout_masks_are_seeded_and_fair);
    tcase_add_test(tc, joint_vocabulary_has_one_table);
    tcase_add_loop_test(tc, joint_gradient_is_both_sides, 0, 2);
    tcase_add_test(tc, guided_loss_by_hand);
#ifdef NMT_REAL_DOUBLE
    tcase_add_loop_test(tc, gradients_are_derivatives, 0,
                        (int)(sizeof variants / sizeof variants[0]));
    tcase_add_loop_test(tc, guided_gradients_are_derivatives, 0,
                        (int)(sizeof guided_variants / sizeof guided_variants[0]));
#else
    tcase_add_loop_test(tc, decoding_matches_the_forward, 0, 16);
    tcase_add_test(tc, attention_maps_are_each_layers_heads);
#endif
    suite_add_tcase(s, tc);
    return s;
}
