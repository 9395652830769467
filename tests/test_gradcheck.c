/* Finite-difference check of every gradient of nmt_backward, for all 27
 * configurations (rnn/gru/lstm x bahdanau/general/scaled-dot/none x bi/uni,
 * and dot uni: model_fixture.h), on a padded batch
 * of sentences of different lengths; untied and tied, with label smoothing,
 * and with each dropout site alone and all together (the masks drawn from
 * one seed, so that every forward of the check drops the same units).
 *
 * This file and the model's sources are compiled with -DNMT_REAL_DOUBLE
 * (see tests/meson.build): the same code as the library, in double, so that
 * central differences are accurate to ~1e-9 and a tolerance of 1e-6 catches
 * any real mistake (a swapped gate, a missed term, a padding leak). Every
 * element of every tensor is checked: the model is tiny. */
#include <math.h>
#include <stdio.h>

#include "model_fixture.h"
#include "nmt/error.h"
#include "nmt/model.h"
#include "test_common.h"

#ifndef NMT_REAL_DOUBLE
#error "test_gradcheck.c must be compiled with -DNMT_REAL_DOUBLE"
#endif

enum { E = 3, H = 4, A = 3, O = 5, VS = 10, VT = 9 };

/* Weights large enough that every path carries signal (the paper's init is
 * so small that attention is almost uniform and tanh almost linear). */
static void randomize(nmt_model *m, uint64_t seed)
{
    nmt_rng r;
    nmt_rng_seed(&r, seed);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = 2.0 * ((double)nmt_rng_uniform(&r) - 0.5);
}

/* What a check varies beyond the configuration. */
typedef struct variant {
    const char *name;     /* for the printed line; NULL: print nothing */
    nmt_regularizer reg;
    int tied;
    int extra_pad;        /* padding steps beyond the longest sentence */
    int edge;             /* 0 the fixture's sentences, 1 the shortest, 2 long ones */
} variant;

/* The objective: the loss whose gradient backward takes (with label
 * smoothing, the smoothed one). */
static double loss_at(nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                      const nmt_regularizer *reg)
{
    nmt_rng r;
    nmt_rng_seed(&r, 99); /* the same dropout masks every time */
    ck_assert_msg(nmt_forward(NULL, m, ws, b, reg, &r) == NMT_OK, "%s", nmt_error_message());
    return nmt_workspace_objective(ws);
}

/* Returns the worst relative error over the tensors: max |numeric - analytic|
 * over max |analytic|, per tensor. */
/* The smallest sentences: a source that is only </s>, an empty target. */
static const int ex_s1[] = {7, 4, 9}, ex_t1[] = {6, 5};
static const int *const ex_src[] = {ex_s1, ex_s1}, *const ex_tgt[] = {ex_t1, ex_t1};
static const int ex_src_n[] = {0, 3}, ex_tgt_n[] = {0, 2};

/* Sentences longer than the backward's window of gate gradients (8 steps),
 * so that several windows carry real gradient; ids avoid 9 (source) and 8
 * (target) like the fixture's. */
static const int lg_s0[] = {4, 5, 6, 7, 8, 4, 5, 6, 7, 8, 4, 6, 8, 5, 7, 4, 6, 8, 5};
static const int lg_s1[] = {8, 7, 6, 5, 4, 8, 7, 6, 5, 4, 6};
static const int lg_t0[] = {4, 5, 6, 7, 4, 5, 6, 7, 4, 6, 5, 7, 4, 6, 5, 7, 4};
static const int lg_t1[] = {7, 6, 5, 4, 7, 6, 5, 4, 5};
static const int *const lg_src[] = {lg_s0, lg_s1}, *const lg_tgt[] = {lg_t0, lg_t1};
static const int lg_src_n[] = {19, 11}, lg_tgt_n[] = {17, 9};

static double check_config(int k, const variant *v)
{
    /* tied: the deep output has the embeddings' size */
    nmt_config cfg = fixture_config(k, E, H, A, v->tied ? E : O, VS, VT);
    cfg.tied = v->tied;
    const nmt_regularizer *reg = &v->reg;
    int extra_pad = v->extra_pad, edge = v->edge;
    nmt_model *m;
    ck_assert_int_eq(nmt_model_create(&m, &cfg, NULL, NULL), 0);
    ck_assert_int_eq(nmt_model_alloc_grads(m), 0);
    randomize(m, 1000 + (uint64_t)k);
    nmt_batch b;
    if (edge == 2)
        fixture_batch(&b, 2, lg_src, lg_src_n, lg_tgt, lg_tgt_n, extra_pad);
    else if (edge)
        fixture_batch(&b, 2, ex_src, ex_src_n, ex_tgt, ex_tgt_n, extra_pad);
    else
        fixture_batch(&b, 3, fx_src, fx_src_n, fx_tgt, fx_tgt_n, extra_pad);
    nmt_workspace *ws;
    ck_assert_int_eq(nmt_workspace_create(&ws, m, b.B, b.src_T, b.tgt_T), 0);

    nmt_model_zero_grad(m);
    double loss = loss_at(m, ws, &b, reg);
    ck_assert(isfinite(loss) && loss > 0);
    ck_assert_int_eq(nmt_backward(m, ws, &b), NMT_OK);

    const double eps = 1e-4;
    double worst = 0;
    for (int ti = 0; ti < m->n_tensors; ti++) {
        const nmt_tensor_info *t = &m->tensors[ti];
        double max_grad = 0, max_diff = 0;
        for (size_t i = 0; i < t->size; i++) {
            double g = m->grads[t->offset + i];
            max_grad = fmax(max_grad, fabs(g));
        }
        for (size_t i = 0; i < t->size; i++) {
            double *p = &m->params[t->offset + i];
            double keep = *p;
            *p = keep + eps;
            double up = loss_at(m, ws, &b, reg);
            *p = keep - eps;
            double down = loss_at(m, ws, &b, reg);
            *p = keep;
            double num = (up - down) / (2 * eps);
            max_diff = fmax(max_diff, fabs(num - m->grads[t->offset + i]));
        }
        /* Every tensor takes part in the loss (att.v and biases included). */
        ck_assert_msg(max_grad > 1e-6, "config %d: %s has no gradient", k, t->name);
        double rel = max_diff / max_grad;
        ck_assert_msg(rel < 1e-6, "config %d (%s %s %s) %s: %s relative error %g", k,
                      nmt_cell_name(cfg.rnn.cell), nmt_attention_name(cfg.rnn.attention),
                      cfg.rnn.bidirectional ? "bi" : "uni", v->name ? v->name : "", t->name, rel);
        worst = fmax(worst, rel);
    }

    /* Embedding rows that no real position used get exactly nothing:
     * <pad> on both sides, the unused ids (but a tied target table is also
     * the output matrix, every row of which the softmax reads). */
    const nmt_tensor_info *se = nmt_model_tensor(m, "src_emb");
    const nmt_tensor_info *te = nmt_model_tensor(m, "tgt_emb");
    int unused_src[] = {NMT_PAD, NMT_UNK, NMT_BOS, edge == 1 ? 5 : 9};
    int unused_tgt[] = {NMT_PAD, NMT_UNK, NMT_EOS, edge == 1 ? 4 : 8};
    for (int u = 0; u < 4; u++)
        for (int e = 0; e < E; e++) {
            ck_assert(m->grads[se->offset + (size_t)unused_src[u] * E + e] == 0);
            ck_assert(v->tied || m->grads[te->offset + (size_t)unused_tgt[u] * E + e] == 0);
        }

    if (v->name)
        printf("gradcheck %-26s %-4s %-10s %-3s worst relative error %.2e\n", v->name,
               nmt_cell_name(cfg.rnn.cell), nmt_attention_name(cfg.rnn.attention),
               cfg.rnn.bidirectional ? "bi" : "uni", worst);
    nmt_workspace_free(ws);
    fixture_batch_free(&b);
    nmt_model_free(m);
    return worst;
}

START_TEST(all_configurations)
{
    const variant v = {.name = "untied"};
    check_config(_i, &v);
}
END_TEST

/* Steps that are padding for every sentence must not matter either. */
START_TEST(extra_padding)
{
    const variant v = {.extra_pad = 2};
    check_config(_i, &v);
}
END_TEST

/* With dropout the gradient is that of the loss under the drawn masks. */
START_TEST(with_dropout)
{
    const variant v = {.name = "dropout emb+enc+out 0.3", .reg = {0.3f, 0.3f, 0.3f, 0}};
    check_config(_i, &v);
}
END_TEST

/* Each dropout site alone: loops 0-26 the embeddings, 27-53 the
 * annotations, 54-80 the deep output. */
START_TEST(each_dropout_site)
{
    int site = _i / FIXTURE_CONFIGS;
    static const char *const names[] = {"dropout emb 0.3", "dropout enc 0.3", "dropout out 0.3"};
    variant v = {.name = names[site]};
    float *rate[] = {&v.reg.dropout_emb, &v.reg.dropout_enc, &v.reg.dropout_out};
    *rate[site] = 0.3f;
    check_config(_i % FIXTURE_CONFIGS, &v);
}
END_TEST

START_TEST(label_smoothing)
{
    const variant v = {.name = "label smoothing 0.1", .reg = {.label_smoothing = 0.1f}};
    check_config(_i, &v);
}
END_TEST

START_TEST(tied_embeddings)
{
    const variant v = {.name = "tied", .tied = 1};
    check_config(_i, &v);
}
END_TEST

/* Everything at once, over several windows of steps and padding. */
START_TEST(tied_smoothed_dropped_long)
{
    const variant v = {.name = "tied+ls 0.1+dropout 0.2 long", .tied = 1,
                       .reg = {0.2f, 0.2f, 0.2f, 0.1f}, .extra_pad = 1, .edge = 2};
    check_config(_i, &v);
}
END_TEST

/* One-token sentences next to longer ones, with padding. */
START_TEST(shortest_sentences)
{
    const variant v = {.extra_pad = 1, .edge = 1};
    check_config(_i, &v);
}
END_TEST

/* Sentences of 9 to 19 tokens: gradients made window by window. */
START_TEST(long_sentences)
{
    const variant v = {.extra_pad = 1, .edge = 2};
    check_config(_i, &v);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("gradcheck");
    TCase *tc = tcase_create("gradcheck");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, all_configurations, 0, FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, extra_padding, 0, FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, with_dropout, 0, FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, each_dropout_site, 0, 3 * FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, label_smoothing, 0, FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, tied_embeddings, 0, FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, tied_smoothed_dropped_long, 0, FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, shortest_sentences, 0, FIXTURE_CONFIGS);
    tcase_add_loop_test(tc, long_sentences, 0, FIXTURE_CONFIGS);
    suite_add_tcase(s, tc);
    return s;
}
