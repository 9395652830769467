/* bench-flops: the floating-point work of nmt train's steps, for
 * scripts/bench/bench. It reads the corpus and plans epoch 1 exactly as nmt train
 * does (same options, same seed: the same batches), then counts, for the
 * batches of steps FROM+1 .. TO, the FLOPs of every product of the forward
 * and backward passes from the shapes:
 *
 *   forward, a batch of B pairs padded to Ts source and Tt target positions
 *   (G gates, D directions, DH = D*H):
 *     encoder    D * (2 Ts B E GH + 2 Ts B H GH)       W_ih x, W_hh h per direction
 *     init       2 B DH H                              W_init z
 *     attention  2 Ts B DH K [keys] + 2 Tt B H K [query]   U_a h_j, W_a s
 *                + Tt B Ts (2 K + 2 DH)                the scores and sum_j alpha_j h_j
 *   where K is the width of the kind's query and keys: A for bahdanau and
 *   scaled-dot (both projected), H for general (keys projected, the query
 *   is s) and dot (neither: keys h_j, query s); a score is v . tanh(q + k)
 *   or q . k, 2 K either way (the tanh is no product).
 *     decoder    2 Tt B (E + DH) GH + 2 Tt B H GH      W_ih [y ; c], W_hh s
 *     output     2 Tt B (H + DH + E) O + 2 Tt B O Vt   W_t [s ; c ; y], W_out t
 *   backward: every product above becomes two of the same size (the gradient
 *   of its input and of its weights), so a step is 3 x forward.
 *
 * Non-products (nonlinearities, softmax, Adam) are not counted. "padded"
 * counts the shapes the batch is computed at; "useful" counts each pair at its
 * own lengths (what a padding-free implementation would need). Output: one
 * JSON object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/batch.h"
#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/vocab.h"

typedef struct dims {
    double E, H, A, O, G, D, Vt;
    int attention;              /* 0 none, else the width K of query and keys is A */
    int keys_proj, query_proj;  /* U_a h_j, W_a s are products */
} dims;

/* Forward FLOPs of one pair of n source and m target positions, or of a
 * batch of B such rows padded to (n, m) (the formula is linear in B). */
static double forward_flops(const dims *d, double B, double n, double m)
{
    double GH = d->G * d->H, DH = d->D * d->H;
    double f = d->D * (2 * n * B * d->E * GH + 2 * n * B * d->H * GH);
    f += 2 * B * DH * d->H;
    if (d->attention)
        f += d->keys_proj * 2 * n * B * DH * d->A + d->query_proj * 2 * m * B * d->H * d->A +
             m * B * n * (2 * d->A + 2 * DH);
    f += 2 * m * B * (d->E + DH) * GH + 2 * m * B * d->H * GH;
    f += 2 * m * B * (d->H + DH + d->E) * d->O + 2 * m * B * d->O * d->Vt;
    return f;
}

static int arg_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end || v < 0 || v > 1 << 30)
        return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *src = NULL, *tgt = NULL, *cell = "lstm";
    int lowercase = 0, min_count = 1, max_len = 50, batch = 64, seed = 1, from = 0, to = -1;
    int emb = 256, hidden = 256, att = 256, out = 256, bidi = 1, shuffle = 1;
    const char *attention = "bahdanau";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(o, "--lowercase") == 0) lowercase = 1;
        else if (strcmp(o, "--bidirectional") == 0) bidi = 1;
        else if (strcmp(o, "--unidirectional") == 0) bidi = 0;
        else if (strcmp(o, "--no-shuffle") == 0) shuffle = 0;
        else if (!v) bad = 1;
        else if (strcmp(o, "--src") == 0) src = v, i++;
        else if (strcmp(o, "--tgt") == 0) tgt = v, i++;
        else if (strcmp(o, "--cell") == 0) cell = v, i++;
        else if (strcmp(o, "--attention") == 0) attention = v, i++;
        else if (strcmp(o, "--min-count") == 0) bad = arg_int(v, &min_count), i++;
        else if (strcmp(o, "--max-len") == 0) bad = arg_int(v, &max_len), i++;
        else if (strcmp(o, "--batch-size") == 0) bad = arg_int(v, &batch), i++;
        else if (strcmp(o, "--seed") == 0) bad = arg_int(v, &seed), i++;
        else if (strcmp(o, "--emb") == 0) bad = arg_int(v, &emb), i++;
        else if (strcmp(o, "--hidden") == 0) bad = arg_int(v, &hidden), i++;
        else if (strcmp(o, "--att-dim") == 0) bad = arg_int(v, &att), i++;
        else if (strcmp(o, "--out-dim") == 0) bad = arg_int(v, &out), i++;
        else if (strcmp(o, "--from") == 0) bad = arg_int(v, &from), i++;
        else if (strcmp(o, "--to") == 0) bad = arg_int(v, &to), i++;
        else bad = 1;
        if (bad) {
            fprintf(stderr, "bench-flops: bad option or value: %s %s\n", o, v ? v : "");
            return 2;
        }
    }
    if (!src || !tgt || batch < 1) {
        fprintf(stderr, "Usage: bench-flops --src F --tgt F [nmt train's model and data "
                        "options] [--from STEP] [--to STEP]\n");
        return 2;
    }
    int additive = !strcmp(attention, "bahdanau"), scaled = !strcmp(attention, "scaled-dot");
    int general = !strcmp(attention, "general"), dot = !strcmp(attention, "dot");
    if (!additive && !scaled && !general && !dot && strcmp(attention, "none")) {
        fprintf(stderr, "bench-flops: unknown attention %s\n", attention);
        return 2;
    }
    nmt_corpus_opts co = {.lowercase = lowercase, .max_len = max_len, .skip_empty = 1,
                          .min_count = min_count};
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    if (nmt_corpus_read(&c, src, tgt, &co, &sv, &tv)) {
        fprintf(stderr, "bench-flops: %s\n", nmt_error_message());
        return 1;
    }
    nmt_batch_plan plan;
    if (nmt_batch_plan_make(&plan, &c, batch, shuffle, (uint64_t)seed, 1)) {
        fprintf(stderr, "bench-flops: %s\n", nmt_error_message());
        return 1;
    }
    dims d = {.E = emb, .H = hidden, .A = additive || scaled ? att : hidden, .O = out,
              .D = bidi ? 2 : 1,
              .G = strcmp(cell, "lstm") == 0 ? 4 : strcmp(cell, "gru") == 0 ? 3 : 1,
              .Vt = nmt_vocab_size(tv), .attention = strcmp(attention, "none") != 0,
              .keys_proj = !dot, .query_proj = additive || scaled};
    size_t n_batches = plan.n_batches;
    size_t lo = (size_t)from < n_batches ? (size_t)from : n_batches;
    size_t hi = to < 0 || (size_t)to > n_batches ? n_batches : (size_t)to;
    double padded = 0, useful = 0, epoch_padded = 0, epoch_useful = 0;
    double tgt_tokens = 0, src_tokens = 0, epoch_tgt_tokens = 0;
    for (size_t k = 0; k < n_batches; k++) {
        double Ts = 0, Tt = 0, bu = 0, bt = 0, bs = 0;
        size_t B = plan.start[k + 1] - plan.start[k];
        for (size_t i = plan.start[k]; i < plan.start[k + 1]; i++) {
            size_t p = plan.index[i];
            /* lengths as the batch holds them: tokens + </s>, <s> + tokens */
            double n = (double)(c.src_off[p + 1] - c.src_off[p]) + 1;
            double m = (double)(c.tgt_off[p + 1] - c.tgt_off[p]) + 1;
            Ts = n > Ts ? n : Ts, Tt = m > Tt ? m : Tt;
            bu += 3 * forward_flops(&d, 1, n, m);
            bs += n, bt += m;
        }
        double bp = 3 * forward_flops(&d, (double)B, Ts, Tt);
        epoch_padded += bp, epoch_useful += bu, epoch_tgt_tokens += bt;
        if (k >= lo && k < hi)
            padded += bp, useful += bu, tgt_tokens += bt, src_tokens += bs;
    }
    /* what the corpus holds per pair: int32 ids of both sides, two offsets
     * and a line number (size_t each) */
    size_t corpus_bytes = (c.src_off[c.n] + c.tgt_off[c.n]) * sizeof(int32_t) +
                          (3 * c.n + 2) * sizeof(size_t);
    printf("{\"steps\": %zu, \"padded_flops\": %.6g, \"useful_flops\": %.6g, "
           "\"tgt_tokens\": %.0f, \"src_tokens\": %.0f, \"n_batches\": %zu, \"pairs\": %zu, "
           "\"epoch_padded_flops\": %.6g, \"epoch_useful_flops\": %.6g, "
           "\"epoch_tgt_tokens\": %.0f, \"corpus_bytes\": %zu, \"src_vocab\": %d, "
           "\"tgt_vocab\": %d}\n",
           hi > lo ? hi - lo : 0, padded, useful, tgt_tokens, src_tokens, n_batches, c.n,
           epoch_padded, epoch_useful, epoch_tgt_tokens, corpus_bytes, nmt_vocab_size(sv),
           nmt_vocab_size(tv));
    nmt_batch_plan_free(&plan);
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    return 0;
}
