/* bench-transformer-layers: the speed of the Transformer's layers
 * (src/model/transformer) at a training batch's sizes, not a test. Prints
 * the GFLOP/s of multi-head attention (encoder self, causal decoder self,
 * cross) and of the feed-forward network, forward + backward, and next to
 * them nmt_gemm's on a square product and on the layers' own products alone,
 * measured in the same run (a shared machine's speed varies by the minute).
 *
 * FLOPs are those of the products the layers perform: the projections over
 * every row of the padded batch (forward 1, backward 2 products each) and,
 * per sentence and head, 6 products of Tq x n x dk (n = the sentence's keys).
 * Each figure is the median over --repeats runs, a run repeating the pass
 * for --min-time seconds; "% of square" is the median, over the runs, of
 * the pass's GFLOP/s over the square's timed just before it (the machine's
 * same moment).
 *
 *   bench-transformer-layers [--threads 2] [--batch 64] [--d 256] [--heads 4]
 *       [--ff 1024] [--min-len 15] [--max-len 30] [--repeats 5] [--min-time 0.3] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/pool.h"
#include "model/transformer/transformer_layers.h"
#include "nmt/rng.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static real *random_array(size_t n, nmt_rng *r, double scale)
{
    real *x = malloc((n ? n : 1) * sizeof *x);
    if (!x) {
        fprintf(stderr, "bench-transformer-layers: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        x[i] = (real)(scale * (2.0 * (double)nmt_rng_uniform(r) - 1.0));
    return x;
}

typedef void (*pass_fn)(void *ctx);

static int repeats = 5;
static double min_time = 0.3;

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Seconds of one call of fn, over calls lasting at least min_time. */
static double time_once(pass_fn fn, void *ctx)
{
    long calls = 0;
    double t0 = now(), dt;
    do {
        fn(ctx);
        calls++;
        dt = now() - t0;
    } while (dt < min_time);
    return dt / (double)calls;
}

/* The reference that every figure is divided by: set in main. */
static pass_fn square_fn;
static void *square_ctx;
static double square_flops;

/* The median seconds of one call of fn, and the median of its GFLOP/s
 * (for `flops` a call) over the square's, each repeat timing the square just
 * before fn so that both see the same moment of a shared machine. */
static double time_pass(pass_fn fn, void *ctx, double flops, double *of_square)
{
    double *t = calloc((size_t)repeats, sizeof *t), *ratio = calloc((size_t)repeats, sizeof *t);
    fn(ctx); /* warm-up */
    for (int r = 0; r < repeats; r++) {
        double sq = square_fn ? time_once(square_fn, square_ctx) : 0;
        t[r] = time_once(fn, ctx);
        ratio[r] = sq > 0 ? (flops / t[r]) / (square_flops / sq) : 0;
    }
    double m = median(t, repeats);
    if (of_square)
        *of_square = median(ratio, repeats);
    free(t), free(ratio);
    return m;
}

/* ---- the passes ---- */

typedef struct mha_bench {
    tf_mha_shape s;
    tf_mha_params p, dp;
    tf_mha_acts a;
    real *xq, *xkv, *dxq, *dxkv, *out, *dout, *scratch;
    int backward; /* 0: forward only */
} mha_bench;

static void mha_pass(void *arg)
{
    mha_bench *m = arg;
    nmt_tf_mha_forward(m->out, &m->a, m->xq, m->xkv, &m->p, NULL, 1, m->scratch, &m->s, 0);
    if (m->backward)
        nmt_tf_mha_backward(m->dxq, m->dxkv, &m->dp, m->dout, &m->a, m->xq, m->xkv, &m->p, NULL,
                            1, m->scratch, &m->s);
}

static void point(tf_mha_params *p, real *block, int d)
{
    size_t dd = (size_t)d * d;
    p->W_q = block, p->W_k = block + dd, p->W_v = block + 2 * dd, p->W_o = block + 3 * dd;
    p->b_q = block + 4 * dd, p->b_k = p->b_q + d, p->b_v = p->b_k + d, p->b_o = p->b_v + d;
}

static void mha_init(mha_bench *m, int B, int Tq, int Tk, int d, int h, const int *klen,
                     int self, int causal, nmt_rng *r)
{
    memset(m, 0, sizeof *m);
    m->s = (tf_mha_shape){B, Tq, Tk, d, h, klen, causal};
    size_t np = 4 * (size_t)d * d + 4 * (size_t)d, nq = (size_t)B * Tq * d, nk = (size_t)B * Tk * d;
    point(&m->p, random_array(np, r, 0.1), d);
    point(&m->dp, random_array(np, r, 0), d);
    m->xq = random_array(nq, r, 1), m->dxq = random_array(nq, r, 0);
    m->xkv = self ? m->xq : random_array(nk, r, 1);
    m->dxkv = self ? m->dxq : random_array(nk, r, 0);
    m->out = random_array(nq, r, 0), m->dout = random_array(nq, r, 1);
    m->a = (tf_mha_acts){random_array(nq, r, 0), random_array(nk, r, 0), random_array(nk, r, 0),
                         random_array((size_t)B * h * Tq * Tk, r, 0), random_array(nq, r, 0)};
    size_t f = nmt_tf_mha_forward_scratch(&m->s), b = nmt_tf_mha_backward_scratch(&m->s);
    m->scratch = random_array(f > b ? f : b, r, 0);
}

/* The FLOPs of mha_pass (forward only, or forward and backward). */
static double mha_flops(const mha_bench *m, int backward)
{
    const tf_mha_shape *s = &m->s;
    double d = s->d, Nq = (double)s->B * s->Tq, Nk = (double)s->B * s->Tk, keys = 0;
    for (int b = 0; b < s->B; b++)
        keys += s->klen[b];
    double proj = 2 * d * d * (2 * Nq + 2 * Nk), core = 2 * s->Tq * keys * d * 2;
    return backward ? 3 * proj + 3 * core : proj + core;
}

typedef struct ffn_bench {
    int N, d, F;
    real *u, *W1, *b1, *W2, *b2, *act, *out, *dout, *du, *dW1, *db1, *dW2, *db2, *scratch;
} ffn_bench;

static void ffn_pass(void *arg)
{
    ffn_bench *f = arg;
    nmt_tf_ffn_forward(f->out, f->act, f->u, f->W1, f->b1, f->W2, f->b2, NULL, 1, f->N, f->d,
                       f->F, 0);
    nmt_tf_ffn_backward(f->du, f->dW1, f->db1, f->dW2, f->db2, f->dout, f->act, f->u, f->W1,
                        f->W2, 1, f->scratch, f->N, f->d, f->F);
}

typedef struct gemm_bench {
    int M, N, K, ta, tb;
    real *A, *B, *C;
} gemm_bench;

static void gemm_pass(void *arg)
{
    gemm_bench *g = arg;
    nmt_gemm(g->ta, g->tb, g->M, g->N, g->K, 1, g->A, g->ta ? g->M : g->K, g->B,
             g->tb ? g->K : g->N, 0, g->C, g->N);
}

/* The products of an attention's projections (Nq query rows, Nk key rows),
 * forward and backward, timed one by one. */
static double projections_time(int Nq, int Nk, int d, nmt_rng *r, double *flops)
{
    int Nmax = Nq > Nk ? Nq : Nk;
    gemm_bench g = {0, 0, 0, 0, 0, random_array((size_t)Nmax * d, r, 1),
                    random_array((size_t)Nmax * d, r, 1), random_array((size_t)Nmax * d, r, 0)};
    /* forward x W^T, backward dY W and dY^T x; Q and O over Nq rows, K and V over Nk */
    const int rows[4] = {Nq, Nk, Nk, Nq};
    double t = 0;
    *flops = 0;
    for (int k = 0; k < 4; k++) {
        int n = rows[k];
        gemm_bench shapes[3] = {{n, d, d, 0, 1, g.A, g.B, g.C}, {n, d, d, 0, 0, g.A, g.B, g.C},
                                {d, d, n, 1, 0, g.A, g.B, g.C}};
        for (int s = 0; s < 3; s++) {
            t += time_pass(gemm_pass, &shapes[s], 0, NULL);
            *flops += 2.0 * n * d * d;
        }
    }
    free(g.A), free(g.B), free(g.C);
    return t;
}

static int arg_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    int threads = 2, B = 64, d = 256, h = 4, F = 1024, lo = 15, hi = 30;
    for (int i = 1; i < argc; i++) {
        struct { const char *name; int *v, lo, hi; } opts[] = {
            {"--threads", &threads, 1, 256}, {"--batch", &B, 1, 4096}, {"--d", &d, 1, 8192},
            {"--heads", &h, 1, 256}, {"--ff", &F, 1, 65536}, {"--min-len", &lo, 1, 1000},
            {"--max-len", &hi, 1, 1000}, {"--repeats", &repeats, 1, 1000}};
        int found = 0;
        for (size_t k = 0; k < sizeof opts / sizeof *opts && !found; k++)
            if (strcmp(argv[i], opts[k].name) == 0) {
                found = 1;
                if (i + 1 >= argc || arg_int(argv[++i], opts[k].lo, opts[k].hi, opts[k].v)) {
                    fprintf(stderr, "bench-transformer-layers: bad value for %s\n", opts[k].name);
                    return 2;
                }
            }
        if (!found && strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) {
            min_time = strtod(argv[++i], NULL);
            found = min_time > 0 && min_time <= 60;
        }
        if (!found) {
            fprintf(stderr, "usage: bench-transformer-layers [--threads N] [--batch B] [--d D] "
                            "[--heads H] [--ff F] [--min-len L] [--max-len L] [--repeats R] "
                            "[--min-time S]\n");
            return 2;
        }
    }
    if (d % h || lo > hi) {
        fprintf(stderr, "bench-transformer-layers: d must be a multiple of heads, min-len <= max-len\n");
        return 2;
    }
    if (nmt_pool_set_threads(threads))
        fprintf(stderr, "bench-transformer-layers: not every thread started\n");
    nmt_rng r;
    nmt_rng_seed(&r, 2024);
    int *src_len = malloc((size_t)B * sizeof *src_len), *tgt_len = malloc((size_t)B * sizeof *tgt_len);
    int Ts = 0, Tt = 0;
    double src_tokens = 0, tgt_tokens = 0;
    for (int b = 0; b < B; b++) {
        src_len[b] = lo + (int)nmt_rng_below(&r, (uint64_t)(hi - lo + 1));
        tgt_len[b] = lo + (int)nmt_rng_below(&r, (uint64_t)(hi - lo + 1));
        Ts = src_len[b] > Ts ? src_len[b] : Ts;
        Tt = tgt_len[b] > Tt ? tgt_len[b] : Tt;
        src_tokens += src_len[b], tgt_tokens += tgt_len[b];
    }
    printf("B %d, source lengths %d..%d (T %d, mean %.1f), target (T %d, mean %.1f), d %d, "
           "heads %d, ff %d, threads %d\n", B, lo, hi, Ts, src_tokens / B, Tt, tgt_tokens / B, d,
           h, F, threads);

    gemm_bench sq = {2048, 2048, 2048, 0, 0, random_array(2048 * 2048, &r, 1),
                     random_array(2048 * 2048, &r, 1), random_array(2048 * 2048, &r, 0)};
    square_flops = 2.0 * 2048 * 2048 * 2048;
    double peak = square_flops / time_pass(gemm_pass, &sq, 0, NULL) * 1e-9;
    printf("%-34s %8.1f GFLOP/s\n", "nmt_gemm 2048 x 2048 x 2048", peak);
    square_fn = gemm_pass, square_ctx = &sq;

    struct { const char *name; int Tq, Tk, self, causal; const int *klen; } uses[] = {
        {"encoder self-attention", Ts, Ts, 1, 0, src_len},
        {"decoder self-attention (causal)", Tt, Tt, 1, 1, tgt_len},
        {"cross-attention", Tt, Ts, 0, 0, src_len}};
    for (int u = 0; u < 3; u++) {
        mha_bench m;
        mha_init(&m, B, uses[u].Tq, uses[u].Tk, d, h, uses[u].klen, uses[u].self,
                 uses[u].causal, &r);
        double ratio_f, ratio_fb;
        double t_f = time_pass(mha_pass, &m, mha_flops(&m, 0), &ratio_f);
        m.backward = 1;
        double t_fb = time_pass(mha_pass, &m, mha_flops(&m, 1), &ratio_fb);
        printf("%-34s fwd %6.2f ms %5.1f GFLOP/s (%3.0f%% of square), fwd+bwd %6.2f ms %5.1f "
               "GFLOP/s (%3.0f%%)\n", uses[u].name, t_f * 1e3, mha_flops(&m, 0) / t_f * 1e-9,
               100 * ratio_f, t_fb * 1e3, mha_flops(&m, 1) / t_fb * 1e-9, 100 * ratio_fb);
        double pf, tp = projections_time(B * uses[u].Tq, B * uses[u].Tk, d, &r, &pf);
        printf("%-34s fwd+bwd %6.2f ms %5.1f GFLOP/s\n", "  its 12 projection products alone",
               tp * 1e3, pf / tp * 1e-9);
    }

    int N = B * Ts;
    ffn_bench f = {N, d, F, random_array((size_t)N * d, &r, 1), random_array((size_t)F * d, &r, 0.1),
                   random_array((size_t)F, &r, 0.1), random_array((size_t)F * d, &r, 0.1),
                   random_array((size_t)d, &r, 0.1), random_array((size_t)N * F, &r, 0),
                   random_array((size_t)N * d, &r, 0), random_array((size_t)N * d, &r, 1),
                   random_array((size_t)N * d, &r, 0), random_array((size_t)F * d, &r, 0),
                   random_array((size_t)F, &r, 0), random_array((size_t)F * d, &r, 0),
                   random_array((size_t)d, &r, 0), random_array(nmt_tf_ffn_scratch(N, F), &r, 0)};
    double ratio, t = time_pass(ffn_pass, &f, 12.0 * N * d * F, &ratio);
    printf("%-34s fwd+bwd %6.2f ms %5.1f GFLOP/s (%3.0f%% of square)\n", "feed-forward",
           t * 1e3, 12.0 * N * d * F / t * 1e-9, 100 * ratio);
    return 0;
}
