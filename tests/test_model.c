/* The model in float, as the library ships it: tensor table, initialisation,
 * padding invariance, dropout, and inference against the training pass. */
#include <math.h>
#include <string.h>

#include "model/layers.h"
#include "model/rnn/rnn_pass.h"
#include "model_fixture.h"
#include "nmt/error.h"
#include "nmt/model.h"
#include "base/pool.h"
#include "test_common.h"

enum { E = 6, H = 5, A = 4, O = 7, VS = 10, VT = 9 };

/* Configuration k of the fixture's 12, untied (deep output O) or tied
 * (deep output E, the output matrix tgt_emb). */
/* nmt_forward that must succeed: its loss. */
static nmt_real fwd(const nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                    const nmt_regularizer *reg, nmt_rng *rng)
{
    nmt_real loss;
    ck_assert_msg(nmt_forward(&loss, m, ws, b, reg, rng) == NMT_OK, "%s", nmt_error_message());
    return loss;
}

static nmt_model *make_model(int k, int tied, uint64_t seed)
{
    nmt_config cfg = fixture_config(k, E, H, A, tied ? E : O, VS, VT);
    cfg.tied = tied;
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), 0);
    ck_assert_int_eq(nmt_model_alloc_grads(m), 0);
    /* Weights well away from the paper's tiny init so every path matters. */
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = nmt_rng_uniform(&r) - 0.5f;
    return m;
}

static nmt_model *make(int k, uint64_t seed)
{
    return make_model(k, 0, seed);
}

START_TEST(names_parse_both_ways)
{
    nmt_cell c;
    nmt_attention a;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(nmt_cell_parse(nmt_cell_name((nmt_cell)i), &c), NMT_OK);
        ck_assert_int_eq((int)c, i);
    }
    ck_assert_str_eq(nmt_cell_name(NMT_CELL_LSTM), "lstm");
    ck_assert_int_eq(nmt_attention_parse("bahdanau", &a), NMT_OK);
    ck_assert_int_eq((int)a, NMT_ATT_BAHDANAU);
    ck_assert_int_eq(nmt_attention_parse("none", &a), NMT_OK);
    ck_assert_int_eq((int)a, NMT_ATT_NONE);
    /* the whole family, both ways */
    static const char *const kinds[] = {"none", "bahdanau", "dot", "general", "scaled-dot"};
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(nmt_attention_name((nmt_attention)i), kinds[i]);
        ck_assert_int_eq(nmt_attention_parse(kinds[i], &a), NMT_OK);
        ck_assert_int_eq((int)a, i);
        ck_assert_int_eq(nmt_attention_uses_att_dim(a), i == 1 || i == 4);
    }
    ck_assert_int_eq(nmt_attention_parse("scaled_dot", &a), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "bahdanau, dot, general, scaled-dot or none"));
    ck_assert_int_eq(nmt_cell_parse("LSTM", &c), NMT_ERR_ARG);
    ck_assert_int_eq(nmt_attention_parse("luong", &a), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "luong"));
}
END_TEST

START_TEST(tensor_table_follows_design)
{
    /* lstm, bahdanau, bidirectional: docs/DESIGN.md's full list in file order. */
    nmt_config cfg = fixture_config(8, 3, 4, 5, 6, 11, 12);
    nmt_tensor_info t[64];
    size_t total;
    int n = nmt_tensor_table(&cfg, t, 64, &total);
    static const char *names[] = {"src_emb", "tgt_emb", "enc.fwd.W_ih", "enc.fwd.W_hh",
        "enc.fwd.b", "enc.bwd.W_ih", "enc.bwd.W_hh", "enc.bwd.b", "dec.init.W", "dec.init.b",
        "att.W", "att.U", "att.b", "att.v", "dec.W_ih", "dec.W_hh", "dec.b", "out.W_t",
        "out.b_t", "out.W", "out.b"};
    static const int shapes[][2] = {{11, 3}, {12, 3}, {16, 3}, {16, 4}, {16, 0}, {16, 3},
        {16, 4}, {16, 0}, {4, 8}, {4, 0}, {5, 4}, {5, 8}, {5, 0}, {5, 0}, {16, 3 + 8},
        {16, 4}, {16, 0}, {6, 4 + 8 + 3}, {6, 0}, {12, 6}, {12, 0}};
    ck_assert_int_eq(n, 21);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(t[i].name, names[i]);
        ck_assert_int_eq(t[i].shape[0], shapes[i][0]);
        ck_assert_int_eq(t[i].ndim, shapes[i][1] ? 2 : 1);
        if (shapes[i][1])
            ck_assert_int_eq(t[i].shape[1], shapes[i][1]);
        ck_assert_uint_eq(t[i].offset, at);
        ck_assert_uint_eq(t[i].size, (size_t)shapes[i][0] * (shapes[i][1] ? shapes[i][1] : 1));
        at += t[i].size;
    }
    ck_assert_uint_eq(total, at);

    /* tied: no out.W, the rest as before */
    cfg.tied = 1;
    cfg.rnn.out_dim = cfg.rnn.emb;
    size_t tied_total;
    ck_assert_int_eq(nmt_tensor_table(&cfg, t, 64, &tied_total), 20);
    for (int i = 0; i < 20; i++)
        ck_assert_str_ne(t[i].name, "out.W");
    ck_assert_str_eq(t[19].name, "out.b");
    /* out.W [12, 6] gone, out.W_t [6 -> 3, 15] and out.b_t [6 -> 3] smaller */
    ck_assert_uint_eq(tied_total, total - 12 * 6 - (6 - 3) * (4 + 8 + 3 + 1));

    /* The other scorers: only the attention tensors change (E 3, H 4, A 5,
     * bidirectional: D*H 8). general: att.U [H, D*H]; scaled-dot: att.W
     * [A, H] and att.U [A, D*H]; dot (unidirectional): none. */
    static const struct {
        int k;
        int n_att;
        const char *names[2];
        int shapes[2][2];
    } family[] = {
        {12, 1, {"att.U"}, {{4, 8}}},
        {14, 2, {"att.W", "att.U"}, {{5, 4}, {5, 8}}},
        {16, 0, {NULL}, {{0}}},
    };
    for (int f = 0; f < 3; f++) {
        cfg = fixture_config(family[f].k, 3, 4, 5, 6, 11, 12);
        n = nmt_tensor_table(&cfg, t, 64, &total);
        int seen = 0;
        for (int i = 0; i < n; i++) {
            if (strncmp(t[i].name, "att.", 4) != 0)
                continue;
            ck_assert_int_lt(seen, family[f].n_att);
            ck_assert_str_eq(t[i].name, family[f].names[seen]);
            ck_assert_int_eq(t[i].ndim, 2);
            ck_assert_int_eq(t[i].shape[0], family[f].shapes[seen][0]);
            ck_assert_int_eq(t[i].shape[1], family[f].shapes[seen][1]);
            ck_assert_str_eq(t[i - seen - 1].name, "dec.init.b"); /* where bahdanau's are */
            seen++;
        }
        ck_assert_int_eq(seen, family[f].n_att);
        ck_assert_int_eq(n, 17 + family[f].n_att - (family[f].k == 16 ? 3 : 0));
    }

    /* gru, none, unidirectional: no enc.bwd, no att; D = 1, G = 3. */
    cfg = fixture_config(7, 3, 4, 5, 6, 11, 12);
    n = nmt_tensor_table(&cfg, t, 64, &total);
    ck_assert_int_eq(n, 14);
    for (int i = 0; i < n; i++) {
        ck_assert(strncmp(t[i].name, "enc.bwd", 7) != 0 && strncmp(t[i].name, "att.", 4) != 0);
        if (strcmp(t[i].name, "dec.W_ih") == 0) {
            ck_assert_int_eq(t[i].shape[0], 12);
            ck_assert_int_eq(t[i].shape[1], 3 + 4);
        }
    }
}
END_TEST

START_TEST(create_rejects_bad_settings)
{
    nmt_config cfg = fixture_config(0, 3, 0, 5, 6, 11, 12);
    nmt_model *m = (nmt_model *)1;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_ERR_ARG);
    ck_assert_ptr_null(m);
    cfg = fixture_config(0, 3, 4, 5, 6, 2, 12);
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_ERR_ARG);
    /* tied needs out_dim = emb */
    cfg = fixture_config(0, 3, 4, 5, 6, 11, 12);
    cfg.tied = 1;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "out_dim (6) equal to emb (3)"));
    cfg.rnn.out_dim = 3;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_OK);
    ck_assert_ptr_null(nmt_model_tensor(m, "out.W"));
    nmt_model_free(m);
    /* dot over a bidirectional encoder: s . h_j needs D*H = H */
    cfg = fixture_config(16, 3, 4, 5, 6, 11, 12); /* rnn dot uni */
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_OK);
    nmt_config none_uni = fixture_config(3, 3, 4, 5, 6, 11, 12); /* rnn none uni */
    nmt_tensor_info t[64];
    size_t none_total;
    nmt_tensor_table(&none_uni, t, 64, &none_total);
    ck_assert_uint_eq(m->n_params, none_total); /* dot learns nothing of its own */
    nmt_model_free(m);
    cfg.rnn.bidirectional = 1;
    m = (nmt_model *)1;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_ERR_ARG);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "attention dot scores s . h_j"));
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "H = 4"));
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "2H = 8"));
    /* att_dim sizes bahdanau and scaled-dot only */
    cfg = fixture_config(12, 3, 4, 0, 6, 11, 12); /* rnn general bi, att_dim 0 */
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_OK);
    nmt_model_free(m);
    cfg = fixture_config(14, 3, 4, 0, 6, 11, 12); /* rnn scaled-dot bi, att_dim 0 */
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), NMT_ERR_ARG);
}
END_TEST

static double sd_of(const float *x, size_t n, double *mean)
{
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)x[i], q += (double)x[i] * (double)x[i];
    *mean = s / n;
    return sqrt(q / n - *mean * *mean);
}

START_TEST(init_is_reproducible_with_the_papers_statistics)
{
    int k = _i; /* lstm bahdanau bi, gru bahdanau uni, rnn none bi */
    int cfgs[] = {8, 5, 2};
    nmt_config cfg = fixture_config(cfgs[k], 40, 24, 30, 20, 400, 300);
    nmt_model *m, *m2;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), 0);
    ck_assert_int_eq(nmt_model_create(&m2, &cfg, NULL, NULL), 0);
    nmt_model_init(m, NMT_INIT_BAHDANAU, 0, 5);
    nmt_model_init(m2, NMT_INIT_BAHDANAU, 0, 5);
    ck_assert_int_eq(memcmp(m->params, m2->params, m->n_params * sizeof(float)), 0);
    nmt_model_init(m2, NMT_INIT_BAHDANAU, 0, 6);
    ck_assert_int_ne(memcmp(m->params, m2->params, m->n_params * sizeof(float)), 0);

    int Hd = cfg.rnn.hidden, G = cfg.rnn.cell == NMT_CELL_LSTM ? 4 : cfg.rnn.cell == NMT_CELL_GRU ? 3 : 1;
    for (int i = 0; i < m->n_tensors; i++) {
        const nmt_tensor_info *t = &m->tensors[i];
        const float *p = m->params + t->offset;
        size_t len = strlen(t->name);
        if (len > 4 && strcmp(t->name + len - 4, "W_hh") == 0) {
            /* each H x H gate block orthogonal: B B^T = I */
            for (int g = 0; g < G; g++) {
                const float *blk = p + (size_t)g * Hd * Hd;
                for (int a = 0; a < Hd; a++)
                    for (int b = 0; b < Hd; b++) {
                        double d = 0;
                        for (int c = 0; c < Hd; c++)
                            d += (double)blk[a * Hd + c] * (double)blk[b * Hd + c];
                        ck_assert_double_lt(fabs(d - (a == b)), 1e-5);
                    }
            }
        } else if (t->ndim == 1 || strcmp(t->name, "att.v") == 0) {
            int forget = cfg.rnn.cell == NMT_CELL_LSTM &&
                         (strcmp(t->name, "enc.fwd.b") == 0 || strcmp(t->name, "enc.bwd.b") == 0 ||
                          strcmp(t->name, "dec.b") == 0);
            for (size_t e = 0; e < t->size; e++)
                ck_assert_msg(p[e] == ((forget && e >= (size_t)Hd && e < 2 * (size_t)Hd) ? 1.0f : 0.0f),
                              "%s[%zu] = %g", t->name, e, (double)p[e]);
        } else {
            double mean, sd = sd_of(p, t->size, &mean);
            double want = strcmp(t->name, "att.W") == 0 || strcmp(t->name, "att.U") == 0 ? 0.001 : 0.01;
            double tol = 4 / sqrt((double)t->size); /* relative error of a sample sd */
            ck_assert_msg(fabs(sd / want - 1) < tol, "%s sd %g, want %g", t->name, sd, want);
            ck_assert_msg(fabs(mean) < want * tol * 2, "%s mean %g", t->name, mean);
        }
    }
    nmt_model_free(m);
    nmt_model_free(m2);
}
END_TEST

/* Every element of t uniform in [-x, x]: bounded, sd x / sqrt 3, mean 0. */
static void assert_uniform(const nmt_tensor_info *t, const float *p, double x)
{
    float lo = 1, hi = -1;
    for (size_t e = 0; e < t->size; e++)
        lo = fminf(lo, p[e]), hi = fmaxf(hi, p[e]);
    ck_assert_msg((double)lo >= -x && (double)hi <= x, "%s in [%g, %g]", t->name, (double)lo,
                  (double)hi);
    double mean, sd = sd_of(p, t->size, &mean), want = x / sqrt(3.0);
    double tol = 4 / sqrt((double)t->size);
    ck_assert_msg(fabs(sd / want - 1) < tol, "%s sd %g, want %g", t->name, sd, want);
    ck_assert_msg(fabs(mean) < want * tol * 2, "%s mean %g", t->name, mean);
}

/* --init uniform (the default): every tensor, recurrent matrices, biases and
 * att.v included, uniform in [-x, x]; no forget bias. */
START_TEST(uniform_init_draws_every_tensor_within_its_scale)
{
    nmt_config cfg = fixture_config(8, 40, 24, 30, 20, 400, 300); /* lstm bahdanau bi */
    nmt_model *m, *m2;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), 0);
    ck_assert_int_eq(nmt_model_create(&m2, &cfg, NULL, NULL), 0);
    const double x = 0.1;
    nmt_model_init(m, NMT_INIT_UNIFORM, x, 5);
    for (int i = 0; i < m->n_tensors; i++)
        assert_uniform(&m->tensors[i], m->params + m->tensors[i].offset, x);
    nmt_model_init(m2, NMT_INIT_UNIFORM, x, 5); /* the same seed, the same model */
    ck_assert(memcmp(m->params, m2->params, m->n_params * sizeof *m->params) == 0);
    nmt_model_init(m2, NMT_INIT_UNIFORM, x, 6);
    ck_assert(memcmp(m->params, m2->params, m->n_params * sizeof *m->params) != 0);
    nmt_model_free(m);
    nmt_model_free(m2);
}
END_TEST

/* --init orthogonal: matrices and att.v uniform in [-x, x] (sd x / sqrt 3),
 * the recurrent ones orthogonal as in the paper's init, biases as there. */
START_TEST(orthogonal_init_draws_within_its_scale)
{
    nmt_config cfg = fixture_config(8, 40, 24, 30, 20, 400, 300); /* lstm bahdanau bi */
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), 0);
    const double x = 0.1;
    nmt_model_init(m, NMT_INIT_ORTHOGONAL, x, 5);
    int Hd = cfg.rnn.hidden;
    for (int i = 0; i < m->n_tensors; i++) {
        const nmt_tensor_info *t = &m->tensors[i];
        const float *p = m->params + t->offset;
        size_t len = strlen(t->name);
        if (len > 4 && strcmp(t->name + len - 4, "W_hh") == 0) {
            for (int g = 0; g < 4; g++) { /* each gate block still orthogonal */
                const float *blk = p + (size_t)g * Hd * Hd;
                for (int a = 0; a < Hd; a++)
                    for (int b = 0; b < Hd; b++) {
                        double d = 0;
                        for (int c = 0; c < Hd; c++)
                            d += (double)blk[a * Hd + c] * (double)blk[b * Hd + c];
                        ck_assert_double_lt(fabs(d - (a == b)), 1e-5);
                    }
            }
        } else if (t->ndim == 1 && strcmp(t->name, "att.v") != 0) {
            int forget = strcmp(t->name, "enc.fwd.b") == 0 || strcmp(t->name, "enc.bwd.b") == 0 ||
                         strcmp(t->name, "dec.b") == 0;
            for (size_t e = 0; e < t->size; e++)
                ck_assert(p[e] == ((forget && e >= (size_t)Hd && e < 2 * (size_t)Hd) ? 1.0f : 0.0f));
        } else {
            assert_uniform(t, p, x);
        }
    }
    nmt_model_free(m);
}
END_TEST

/* Max |a - b| over max |b|. */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - (double)b[i]));
        mx = fmax(mx, fabs((double)b[i]));
    }
    return d / (mx > 0 ? mx : 1);
}

START_TEST(padding_changes_no_loss_and_no_gradient)
{
    /* 2 padding steps, then 18: the padded batch then spans three windows of
     * the backward's gate gradients (8 steps), the sentences alone one */
    int k = _i % FIXTURE_CONFIGS, extra = _i < FIXTURE_CONFIGS ? 2 : 18;
    nmt_model *m = make(k, 77 + k);
    nmt_batch all;
    fixture_batch(&all, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, extra);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 3, all.src_T, all.tgt_T), 0);
    nmt_model_zero_grad(m);
    float loss = fwd(m, ws, &all, NULL, NULL);
    ck_assert_int_eq(nmt_backward(m, ws, &all), NMT_OK);
    double nll[3];
    memcpy(nll, nmt_workspace_sentence_nll(ws), sizeof nll);
    ck_assert_double_eq_tol(loss, (nll[0] + nll[1] + nll[2]) / all.n_tgt_tokens, 1e-5);
    float *batch_grad = malloc(m->n_params * sizeof(float));
    float *sum_grad = calloc(m->n_params, sizeof(float));
    memcpy(batch_grad, m->grads, m->n_params * sizeof(float));

    /* Each sentence alone, unpadded: same NLL; its gradient (of its own mean)
     * weighted by its share of the batch's tokens sums to the batch's. */
    for (int b = 0; b < 3; b++) {
        nmt_batch one;
        fixture_batch(&one, 1, &fx_src[b], &fx_src_n[b], &fx_tgt[b], &fx_tgt_n[b], 0);
        nmt_model_zero_grad(m);
        float l1 = fwd(m, ws, &one, NULL, NULL);
        ck_assert_int_eq(nmt_backward(m, ws, &one), NMT_OK);
        double n1 = nmt_workspace_sentence_nll(ws)[0];
        ck_assert_double_eq_tol(n1, nll[b], 1e-5 * fabs(nll[b]));
        ck_assert_double_eq_tol(l1, n1 / one.tgt_len[0], 1e-5);
        double w = (double)one.tgt_len[0] / all.n_tgt_tokens;
        for (size_t i = 0; i < m->n_params; i++)
            sum_grad[i] += (float)(w * (double)m->grads[i]);
        fixture_batch_free(&one);
    }
    for (int t = 0; t < m->n_tensors; t++) {
        const nmt_tensor_info *ti = &m->tensors[t];
        double r = rel_diff(sum_grad + ti->offset, batch_grad + ti->offset, ti->size);
        ck_assert_msg(r < 1e-4, "config %d: %s differs by %g", k, ti->name, r);
    }
    free(batch_grad);
    free(sum_grad);
    nmt_workspace_free(ws);
    fixture_batch_free(&all);
    nmt_model_free(m);
}
END_TEST

/* The regularizers the fused/unfused and thread checks run under: none;
 * tied with label smoothing; every dropout with label smoothing. */
static nmt_regularizer variant_reg(int variant)
{
    nmt_regularizer r = {0};
    if (variant >= 1)
        r.label_smoothing = 0.1f;
    if (variant == 2)
        r.dropout_emb = 0.2f, r.dropout_enc = 0.3f, r.dropout_out = 0.25f;
    return r;
}

/* nmt_forward_backward makes the vocabulary projection's gradient in the
 * forward; nmt_backward after a plain nmt_forward recomputes it: both must
 * give the same bits, on a used and on a fresh workspace, on a batch long
 * enough to span several chunks of the projection. A second nmt_backward
 * without a new forward changes nothing (the first overwrote its inputs).
 * Per configuration k (model_fixture.h), loop k: untied, no regularizer;
 * one configurations' count on: tied with label smoothing; one more: every
 * dropout (the same masks each time) and label smoothing. */
START_TEST(output_gradient_same_fused_or_not)
{
    int k = _i % FIXTURE_CONFIGS, variant = _i / FIXTURE_CONFIGS;
    nmt_regularizer reg = variant_reg(variant);
    nmt_model *m = make_model(k, variant == 1, 5 + k);
    nmt_batch bt;
    fixture_batch(&bt, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 200);
    ck_assert_int_gt(bt.tgt_T * bt.B, 2 * 129); /* three or more chunks of 129 rows */
    nmt_workspace *ws, *ws2;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 3, bt.src_T, bt.tgt_T), 0);
    ck_assert_int_eq(nmt_workspace_create(&ws2, m, 3, bt.src_T, bt.tgt_T), 0);
    float *first = malloc(m->n_params * sizeof(float));
    nmt_rng r;
    nmt_rng_seed(&r, 21);
    nmt_model_zero_grad(m);
    float l1 = fwd(m, ws, &bt, &reg, &r);
    double obj1 = nmt_workspace_objective(ws);
    ck_assert_int_eq(nmt_backward(m, ws, &bt), NMT_OK); /* recomputes the projection */
    memcpy(first, m->grads, m->n_params * sizeof(float));
    /* a second backward of one forward is refused and adds nothing */
    ck_assert_int_eq(nmt_backward(m, ws, &bt), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "fresh forward"));
    ck_assert(memcmp(first, m->grads, m->n_params * sizeof(float)) == 0);
    for (int again = 0; again < 2; again++) {
        /* the fused call on the used workspace, then on a fresh one */
        nmt_workspace *w = again ? ws2 : ws;
        nmt_rng_seed(&r, 21);
        nmt_model_zero_grad(m);
        nmt_real l2;
        ck_assert_int_eq(nmt_forward_backward(&l2, m, w, &bt, &reg, &r), NMT_OK);
        ck_assert(l1 == l2);
        /* the objective of the two ways agrees to rounding (label
         * smoothing's mean log p is summed from other terms) */
        ck_assert_double_eq_tol(nmt_workspace_objective(w), obj1, 1e-6 * obj1);
        for (int t = 0; t < m->n_tensors; t++) {
            const nmt_tensor_info *ti = &m->tensors[t];
            ck_assert_msg(memcmp(first + ti->offset, m->grads + ti->offset,
                                 ti->size * sizeof(float)) == 0,
                          "config %d variant %d, %s: %s differs", k, variant,
                          again ? "fresh" : "fused", ti->name);
        }
    }
    /* and the gradient is not trivially zero */
    const nmt_tensor_info *out = nmt_model_tensor(m, "out.b");
    double norm = 0;
    for (size_t i = 0; i < out->size; i++)
        norm += (double)first[out->offset + i] * (double)first[out->offset + i];
    ck_assert(norm > 0);
    free(first);
    nmt_workspace_free(ws);
    nmt_workspace_free(ws2);
    fixture_batch_free(&bt);
    nmt_model_free(m);
}
END_TEST

START_TEST(dropout_is_seeded_and_off_at_zero)
{
    nmt_model *m = make(8, 3);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 0);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 3, b.src_T, b.tgt_T), 0);
    nmt_rng r;
    float plain = fwd(m, ws, &b, NULL, NULL);
    ck_assert(fwd(m, ws, &b, NULL, NULL) == plain);
    const nmt_regularizer all = {.dropout_emb = 0.5f, .dropout_enc = 0.5f, .dropout_out = 0.5f};
    nmt_rng_seed(&r, 1);
    float d1 = fwd(m, ws, &b, &all, &r);
    nmt_rng_seed(&r, 1);
    float d2 = fwd(m, ws, &b, &all, &r);
    float d3 = fwd(m, ws, &b, &all, &r); /* the stream moved on */
    ck_assert(d1 == d2);
    ck_assert(d1 != plain && d3 != d1);
    /* each site alone changes the loss; without an rng nothing is dropped */
    for (int site = 0; site < 3; site++) {
        nmt_regularizer one = {.dropout_emb = site == 0 ? 0.5f : 0,
                               .dropout_enc = site == 1 ? 0.5f : 0,
                               .dropout_out = site == 2 ? 0.5f : 0};
        nmt_rng_seed(&r, 1);
        ck_assert_msg(fwd(m, ws, &b, &one, &r) != plain, "site %d", site);
        ck_assert(fwd(m, ws, &b, &one, NULL) == plain);
    }
    /* a rate of 1 or more, or a negative one, is refused */
    const nmt_regularizer bad = {.dropout_enc = 1.0f};
    nmt_real refused_loss = 0;
    ck_assert_int_eq(nmt_forward(&refused_loss, m, ws, &b, &bad, &r), NMT_ERR_ARG);
    ck_assert(isnan(refused_loss));
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "dropout rate"));
    const nmt_regularizer bad_ls = {.label_smoothing = -0.1f};
    ck_assert_int_eq(nmt_forward(NULL, m, ws, &b, &bad_ls, &r), NMT_ERR_ARG);
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

/* The masks are drawn from the rng one uniform per unit, site by site, and a
 * site at rate 0 draws nothing: so a run with one rate set to 0 draws what it
 * drew before that site existed (and --resume continues the same stream). */
START_TEST(dropout_draws_one_uniform_per_unit_of_each_site)
{
    int k = _i; /* lstm bahdanau bi, gru none uni */
    nmt_model *m = make(k ? 7 : 8, 3);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 1);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 3, b.src_T, b.tgt_T), 0);
    size_t Ts = (size_t)b.src_T, Tt = (size_t)b.tgt_T, DH = (k ? 1 : 2) * (size_t)H;
    size_t units[3] = {(Ts + Tt) * 3 * E, Ts * 3 * DH, Tt * 3 * (size_t)O};
    for (int mask = 0; mask < 8; mask++) {
        nmt_regularizer reg = {.dropout_emb = mask & 1 ? 0.3f : 0,
                               .dropout_enc = mask & 2 ? 0.3f : 0,
                               .dropout_out = mask & 4 ? 0.3f : 0};
        nmt_rng r, want;
        nmt_rng_seed(&r, 40 + (uint64_t)mask);
        nmt_rng_seed(&want, 40 + (uint64_t)mask);
        ck_assert(isfinite(fwd(m, ws, &b, &reg, &r)));
        for (int site = 0; site < 3; site++)
            for (size_t u = 0; (mask >> site & 1) && u < units[site]; u++)
                nmt_rng_uniform(&want);
        ck_assert_msg(memcmp(&r, &want, sizeof r) == 0, "config %d sites %d", k, mask);
    }
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

/* Label smoothing changes the objective (what backward takes the gradient
 * of), not the reported loss: the forward returns the plain mean -log p[y]
 * bit for bit, and the objective is (1 - e) * that + e * the mean over
 * tokens and the whole vocabulary of -log p, here from the inference pass's
 * log-probabilities. Tied and untied. */
START_TEST(label_smoothing_changes_the_objective_only)
{
    int k = _i % FIXTURE_CONFIGS, tied = _i >= FIXTURE_CONFIGS;
    nmt_model *m = make_model(k, tied, 900 + _i);
    /* p far from uniform, so that the mean of -log p over the vocabulary is
     * far from that of the targets (with weights of +-0.5 alone they can
     * come within 1e-3 of each other, and the objective of the plain loss) */
    const nmt_tensor_info *ob = nmt_model_tensor(m, "out.b");
    for (int v = 0; v < VT; v++)
        m->params[ob->offset + v] = 2.0f * (float)(v % 3);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 1);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 3, b.src_T, b.tgt_T), 0);
    const float e = 0.2f;
    const nmt_regularizer ls = {.label_smoothing = e};
    float plain = fwd(m, ws, &b, NULL, NULL);
    ck_assert((float)nmt_workspace_objective(ws) == plain);
    float smoothed = fwd(m, ws, &b, &ls, NULL);
    double objective = nmt_workspace_objective(ws);
    ck_assert(smoothed == plain);

    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 3, b.src_T, 3, 256), 0);
    ck_assert_int_eq(nmt_infer_encode(m, st, b.src, b.src_len, 3, b.src_T), 0);
    float lp[3 * VT];
    double nll = 0, uniform = 0;
    for (int i = 0; i < b.tgt_T; i++) {
        nmt_infer_step(m, st, b.tgt_in + i * 3, lp, NULL);
        for (int s = 0; s < 3; s++) {
            if (i >= b.tgt_len[s])
                continue;
            nll -= (double)lp[s * VT + b.tgt_out[i * 3 + s]];
            for (int v = 0; v < VT; v++)
                uniform -= (double)lp[s * VT + v] / VT;
        }
    }
    double want = ((1 - (double)e) * nll + (double)e * uniform) / (double)b.n_tgt_tokens;
    ck_assert_msg(fabs(objective - want) <= 1e-5 * want, "config %d tied %d: objective %.9g, "
                  "want %.9g", k, tied, objective, want);
    ck_assert(fabs(objective - (double)plain) > 1e-3); /* not trivially the plain loss */
    nmt_infer_free(st);
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

START_TEST(forward_refuses_an_oversized_batch)
{
    nmt_model *m = make(0, 3);
    nmt_batch b;
    fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 0);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 2, b.src_T, b.tgt_T), 0);
    ck_assert_int_eq(nmt_forward(NULL, m, ws, &b, NULL, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "exceeds"));
    nmt_workspace_free(ws);
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 3, b.src_T, b.tgt_T), 0);
    b.src[0] = VS; /* an id past the vocabulary */
    ck_assert_int_eq(nmt_forward(NULL, m, ws, &b, NULL, NULL), NMT_ERR_ARG);
    /* and a backward after a refused forward adds nothing */
    nmt_model_alloc_grads(m);
    nmt_model_zero_grad(m);
    ck_assert_int_eq(nmt_backward(m, ws, &b), NMT_ERR_ARG);
    for (size_t i = 0; i < m->n_params; i++)
        ck_assert(m->grads[i] == 0);
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

/* Teacher-forced decoding through the inference API gives the training
 * forward's per-sentence NLL; duplicated (beam) rows give the same numbers
 * as their originals; attention weights are a distribution over the real
 * source positions. */
/* Sentences longer than the encoder's and decoder's windows of 8 steps. */
static const int lg_s0[] = {4, 5, 6, 7, 8, 4, 5, 6, 7, 8, 4, 6, 8, 5, 7, 4, 6, 8, 5};
static const int lg_s1[] = {8, 7, 6, 5, 4, 8, 7, 6, 5, 4, 6};
static const int lg_s2[] = {5, 9, 4};
static const int lg_t0[] = {4, 5, 6, 7, 4, 5, 6, 7, 4, 6, 5, 7, 4, 6, 5, 7, 4};
static const int lg_t1[] = {7, 6, 5, 4, 7, 6, 5, 4, 5};
static const int lg_t2[] = {6, 6, 4, 5, 7, 8, 8, 4, 6, 5};
static const int *const lg_src[] = {lg_s0, lg_s1, lg_s2}, *const lg_tgt[] = {lg_t0, lg_t1, lg_t2};
static const int lg_src_n[] = {19, 11, 3}, lg_tgt_n[] = {17, 9, 10};

/* Per configuration (model_fixture.h): the fixture's short sentences, then
 * long ones, then short ones with tied embeddings. */
START_TEST(inference_matches_training)
{
    int k = _i % FIXTURE_CONFIGS, variant = _i / FIXTURE_CONFIGS;
    nmt_model *m = make_model(k, variant == 2, 500 + k);
    nmt_batch b;
    if (variant != 1)
        fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, 1);
    else
        fixture_batch(&b, 3, lg_src, lg_src_n, lg_tgt, lg_tgt_n, 0);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, 3, b.src_T, b.tgt_T), 0);
    fwd(m, ws, &b, NULL, NULL);
    const double *nll = nmt_workspace_sentence_nll(ws);

    enum { K = 2 };
    nmt_infer *st;
    ck_assert_int_eq(nmt_infer_create(&st, m, 3, b.src_T, 3 * K, 256), 0);
    ck_assert_int_eq(nmt_infer_encode(m, st, b.src, b.src_len, 3, b.src_T), 0);
    ck_assert_int_eq(nmt_infer_rows(st), 3);
    /* rows 2b and 2b+1 both on source b, in a shuffled order */
    int from[3 * K] = {0, 0, 1, 1, 2, 2};
    ck_assert_int_eq(nmt_infer_select(st, from, 3 * K), 0);
    int from2[3 * K] = {1, 0, 3, 2, 5, 4};
    ck_assert_int_eq(nmt_infer_select(st, from2, 3 * K), 0);
    const int *rs = nmt_infer_row_src(st);
    for (int r = 0; r < 3 * K; r++)
        ck_assert_int_eq(rs[r], r / K);

    float *lp = malloc((size_t)3 * K * VT * sizeof *lp);
    float *att = malloc((size_t)3 * K * b.src_T * sizeof *att);
    double sum[3] = {0, 0, 0};
    for (int i = 0; i < b.tgt_T; i++) {
        int32_t prev[3 * K];
        for (int r = 0; r < 3 * K; r++)
            prev[r] = b.tgt_in[i * 3 + r / K];
        nmt_infer_step(m, st, prev, lp, att);
        for (int r = 0; r < 3 * K; r++) {
            int s = r / K;
            ck_assert_int_eq(memcmp(lp + (size_t)r * VT, lp + (size_t)s * K * VT,
                                    VT * sizeof *lp), 0);
            double p = 0;
            for (int v = 0; v < VT; v++)
                p += exp(lp[(size_t)r * VT + v]);
            ck_assert_double_eq_tol(p, 1, 1e-5);
            if (m->cfg.rnn.attention != NMT_ATT_NONE) {
                double a = 0;
                for (int j = 0; j < b.src_T; j++) {
                    float x = att[(size_t)r * b.src_T + j];
                    if (j >= b.src_len[s])
                        ck_assert(x == 0);
                    a += (double)x;
                }
                ck_assert_double_eq_tol(a, 1, 1e-5);
            }
        }
        for (int s = 0; s < 3; s++)
            if (i < b.tgt_len[s])
                sum[s] -= (double)lp[(size_t)s * K * VT + b.tgt_out[i * 3 + s]];
    }
    for (int s = 0; s < 3; s++)
        ck_assert_msg(fabs(sum[s] - nll[s]) <= 1e-5 * fabs(nll[s]),
                      "config %d sentence %d: inference %.9g, training %.9g", k, s, sum[s],
                      nll[s]);
    ck_assert_int_eq(nmt_infer_select(st, (int[]){6}, 1), NMT_ERR_ARG);
    free(lp);
    free(att);
    nmt_infer_free(st);
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    nmt_model_free(m);
}
END_TEST

/* Training's backward recomputes the context vectors from alpha instead of
 * keeping them: nmt_attention_context must give the forward's ctx bit for bit,
 * for rows that are several steps of a batch, whatever the threads, and for
 * every scorer (loops 0-3: bahdanau, dot, general, scaled-dot); rows are
 * independent, so the threads change no bit of the forward either. */
START_TEST(context_recomputed_bit_for_bit)
{
    enum { T = 7, B = 3, STEPS = 4, R = STEPS * B, AD = 17, DH = 24 };
    static const nmt_attention kinds[] = {NMT_ATT_BAHDANAU, NMT_ATT_DOT, NMT_ATT_GENERAL,
                                          NMT_ATT_SCALED_DOT};
    nmt_attention kind = kinds[_i];
    int K = kind == NMT_ATT_DOT ? DH : AD; /* dot's keys are the annotations */
    static const int len[B] = {7, 3, 5};
    real enc[T * B * DH], uh[T * B * AD], v[AD], q[R * DH];
    real alpha[R * T], ctx[R * DH], again[R * DH], ctx1[R * DH], alpha1[R * T];
    nmt_rng r;
    nmt_rng_seed(&r, 17);
    for (int i = 0; i < T * B * DH; i++)
        enc[i] = nmt_rng_uniform(&r) - 0.5f;
    for (int i = 0; i < T * B * AD; i++)
        uh[i] = nmt_rng_uniform(&r) - 0.5f;
    for (int i = 0; i < R * DH; i++)
        q[i] = 2 * nmt_rng_uniform(&r) - 1;
    for (int i = 0; i < AD; i++)
        v[i] = 2 * nmt_rng_uniform(&r) - 1;
    const real *keys = kind == NMT_ATT_DOT ? enc : uh;
    const real *vv = kind == NMT_ATT_BAHDANAU ? v : NULL;
    attention_layer L = {.kind = kind, .B = B, .T = T, .K = K, .DH = DH, .keys = keys,
                         .enc = enc, .len = len, .v = vv};
    int threads = nmt_pool_threads();
    for (int th = 1; th <= 3; th++) {
        nmt_pool_set_threads(th);
        for (int k = 0; k < STEPS; k++)
            nmt_attention_forward(ctx + k * B * DH, alpha + k * B * T, &L, q + k * B * K, NULL, B);
        memset(again, 0xff, sizeof again);
        nmt_attention_context(again, &L, alpha, R);
        ck_assert_msg(memcmp(ctx, again, sizeof ctx) == 0, "%s, %d threads",
                      nmt_attention_name(kind), th);
        if (th == 1) {
            memcpy(ctx1, ctx, sizeof ctx);
            memcpy(alpha1, alpha, sizeof alpha);
        }
        ck_assert(memcmp(ctx, ctx1, sizeof ctx) == 0 && memcmp(alpha, alpha1, sizeof alpha) == 0);
        /* not trivially: rows differ, and padding has no weight */
        ck_assert(memcmp(ctx, ctx + DH, DH * sizeof(real)) != 0);
        ck_assert(alpha[1 * T + 3] == 0 && alpha[1 * T + 2] > 0);
    }
    nmt_pool_set_threads(threads);
}
END_TEST

/* The name -> field map of names.c (nmt_weight_fields) and the tensor table
 * stay one to one: every tensor of every configuration (each cell, kind,
 * direction, tied or not) has a field, every field is some configuration's
 * tensor, and the map covers each field of the weights struct once. A tensor
 * added to the table without a field would otherwise be read as NULL. */
START_TEST(weight_fields_match_the_tensor_table)
{
    ck_assert_uint_eq(sizeof(weights), (size_t)nmt_n_weight_fields * sizeof(real *));
    int used[64] = {0};
    ck_assert_int_le(nmt_n_weight_fields, 64);
    for (int i = 0; i < nmt_n_weight_fields; i++) {
        ck_assert_uint_eq(nmt_weight_fields[i].offset % sizeof(real *), 0);
        for (int k = 0; k < i; k++) {
            ck_assert_uint_ne(nmt_weight_fields[i].offset, nmt_weight_fields[k].offset);
            ck_assert_str_ne(nmt_weight_fields[i].name, nmt_weight_fields[k].name);
        }
    }
    for (int k = 0; k < FIXTURE_CONFIGS; k++) {
        for (int tied = 0; tied < 2; tied++) {
            nmt_model *m = make_model(k, tied, 1);
            for (int t = 0; t < m->n_tensors; t++) {
                int found = -1;
                for (int i = 0; i < nmt_n_weight_fields && found < 0; i++)
                    if (strcmp(m->tensors[t].name, nmt_weight_fields[i].name) == 0)
                        found = i;
                ck_assert_msg(found >= 0, "config %d: tensor %s has no field in weights", k,
                              m->tensors[t].name);
                used[found] = 1;
            }
            /* and every tensor resolves to its own slice */
            weights w;
            nmt_weights_resolve(&w, m, m->params);
            for (int t = 0; t < m->n_tensors; t++)
                for (int i = 0; i < nmt_n_weight_fields; i++)
                    if (strcmp(m->tensors[t].name, nmt_weight_fields[i].name) == 0)
                        ck_assert_ptr_eq(*(real **)((char *)&w + nmt_weight_fields[i].offset),
                                         m->params + m->tensors[t].offset);
            nmt_model_free(m);
        }
    }
    for (int i = 0; i < nmt_n_weight_fields; i++)
        ck_assert_msg(used[i], "field %s is no configuration's tensor", nmt_weight_fields[i].name);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, weight_fields_match_the_tensor_table);
    tcase_add_test(tc, names_parse_both_ways);
    tcase_add_test(tc, tensor_table_follows_design);
    tcase_add_test(tc, create_rejects_bad_settings);
    tcase_add_loop_test(tc, init_is_reproducible_with_the_papers_statistics, 0, 3);
    tcase_add_test(tc, uniform_init_draws_every_tensor_within_its_scale);
    tcase_add_test(tc, orthogonal_init_draws_within_its_scale);
    tcase_add_loop_test(tc, padding_changes_no_loss_and_no_gradient, 0, 2 * FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, output_gradient_same_fused_or_not, 0, 3 * FIXTURE_CONFIGS);
    tcase_add_test(tc, dropout_is_seeded_and_off_at_zero);
    tcase_add_loop_test(tc, dropout_draws_one_uniform_per_unit_of_each_site, 0, 2);
    tcase_add_loop_test(tc, label_smoothing_changes_the_objective_only, 0, 2 * FIXTURE_CONFIGS);
    tcase_add_test(tc, forward_refuses_an_oversized_batch);
    tcase_add_loop_test(tc, inference_matches_training, 0, 3 * FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, context_recomputed_bit_for_bit, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
