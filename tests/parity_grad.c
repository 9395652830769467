/* The C half of the parity suite: the loss and gradients of a model file on
 * one batch, written with the design's tensor names so that tests/parity.py
 * can hold them against PyTorch autograd (pytorch/torch_baseline.py grad).
 *
 *   parity_grad MODEL.safetensors BATCH.json GRADS.safetensors
 *               [--label-smoothing X] [--dropout-emb X] [--dropout-enc X]
 *               [--dropout-out X] [--seed N]
 *
 * With dropout the masks drawn (from an rng seeded with N) are written too,
 * as the factor each unit was multiplied by (0 or 1 / (1 - rate)), time-major
 * rows: "dropout.src_emb" [Ts*B, E], "dropout.enc" [Ts*B, D*H],
 * "dropout.tgt_emb" [Tt*B, E], "dropout.out" [Tt*B, O]; the torch script
 * applies the same ones. The metadata has "loss" (the plain mean -log p),
 * "objective" (what the gradients are of: with label smoothing the smoothed
 * loss) and "sentence_nll".
 *
 * BATCH.json is {"src": [[ids], ...], "tgt": [[ids], ...]}: token ids
 * without </s> or <s>; the batch is laid out here as docs/DESIGN.md says (source
 * x + </s>, decoder input <s> y, output y </s>, time-major, padding 0), on
 * purpose without the data module's batch code, so that only the model is
 * under test. Prints "loss L" and "sentence_nll a,b,..." on stdout. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/threads.h"
#include "model/rnn/rnn_pass.h" /* the workspace's dropout masks */
#include "valgrind_reexec.h"

/* A list of id lists, as read from the batch file. */
typedef struct {
    int n;
    int *len;      /* [n] */
    int32_t **ids; /* [n][len] */
} id_lists;

static void id_lists_free(id_lists *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->ids[i]);
    free(l->ids);
    free(l->len);
}

static const char *skip_space(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Parses `[[1, 2], [], [3]]` at *pp; advances *pp past it. 0 on success. */
static int parse_id_lists(const char **pp, id_lists *out)
{
    const char *p = skip_space(*pp);
    memset(out, 0, sizeof *out);
    if (*p++ != '[')
        return -1;
    int cap = 0;
    for (;;) {
        p = skip_space(p);
        if (*p == ']' && out->n == 0) {
            p++;
            break;
        }
        if (*p++ != '[')
            return -1;
        if (out->n == cap) {
            cap = cap ? 2 * cap : 8;
            out->len = realloc(out->len, cap * sizeof *out->len);
            out->ids = realloc(out->ids, cap * sizeof *out->ids);
            if (!out->len || !out->ids)
                return -1;
        }
        int n = 0, icap = 8;
        int32_t *ids = malloc(icap * sizeof *ids);
        if (!ids)
            return -1;
        out->ids[out->n] = ids;
        out->len[out->n] = 0;
        out->n++;
        p = skip_space(p);
        if (*p == ']') {
            p++;
        } else {
            for (;;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p || v < 0 || v > 1000000000L)
                    return -1;
                if (n == icap) {
                    icap *= 2;
                    ids = realloc(ids, icap * sizeof *ids);
                    if (!ids)
                        return -1;
                    out->ids[out->n - 1] = ids;
                }
                ids[n++] = (int32_t)v;
                p = skip_space(end);
                if (*p == ',') {
                    p = skip_space(p + 1);
                    continue;
                }
                if (*p++ != ']')
                    return -1;
                break;
            }
        }
        out->len[out->n - 1] = n;
        p = skip_space(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p++ != ']')
            return -1;
        break;
    }
    *pp = p;
    return 0;
}

/* Finds "key": in the JSON text and parses the id lists after it. */
static int read_key(const char *text, const char *key, id_lists *out)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(text, quoted);
    if (!p)
        return -1;
    p = skip_space(p + strlen(quoted));
    if (*p++ != ':')
        return -1;
    return parse_id_lists(&p, out);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* Lays the pairs out as docs/DESIGN.md's batch; arrays are calloc'ed (pad 0). */
static int make_batch(nmt_batch *b, const id_lists *src, const id_lists *tgt)
{
    memset(b, 0, sizeof *b);
    int B = src->n;
    b->B = b->cap_B = B;
    for (int i = 0; i < B; i++) {
        if (src->len[i] + 1 > b->src_T)
            b->src_T = src->len[i] + 1;
        if (tgt->len[i] + 1 > b->tgt_T)
            b->tgt_T = tgt->len[i] + 1;
    }
    b->cap_src_T = b->src_T;
    b->cap_tgt_T = b->tgt_T;
    b->src = calloc((size_t)b->src_T * B, sizeof *b->src);
    b->tgt_in = calloc((size_t)b->tgt_T * B, sizeof *b->tgt_in);
    b->tgt_out = calloc((size_t)b->tgt_T * B, sizeof *b->tgt_out);
    b->src_len = calloc(B, sizeof *b->src_len);
    b->tgt_len = calloc(B, sizeof *b->tgt_len);
    b->pair = calloc(B, sizeof *b->pair);
    if (!b->src || !b->tgt_in || !b->tgt_out || !b->src_len || !b->tgt_len || !b->pair)
        return -1;
    for (int i = 0; i < B; i++) {
        int n = src->len[i], m = tgt->len[i];
        for (int t = 0; t < n; t++)
            b->src[t * B + i] = src->ids[i][t];
        b->src[n * B + i] = NMT_EOS;
        b->tgt_in[0 * B + i] = NMT_BOS;
        for (int t = 0; t < m; t++) {
            b->tgt_in[(t + 1) * B + i] = tgt->ids[i][t];
            b->tgt_out[t * B + i] = tgt->ids[i][t];
        }
        b->tgt_out[m * B + i] = NMT_EOS;
        b->src_len[i] = n + 1;
        b->tgt_len[i] = m + 1;
        b->pair[i] = (size_t)i;
        b->n_tgt_tokens += (size_t)(m + 1);
    }
    return 0;
}

static void free_batch(nmt_batch *b)
{
    free(b->src);
    free(b->tgt_in);
    free(b->tgt_out);
    free(b->src_len);
    free(b->tgt_len);
    free(b->pair);
}

/* Every id must be a real token of its vocabulary (not pad, <s>, </s>). */
static int check_ids(const id_lists *l, int V, const char *side)
{
    for (int i = 0; i < l->n; i++)
        for (int t = 0; t < l->len[i]; t++) {
            int32_t x = l->ids[i][t];
            if (x <= 0 || x >= V || x == NMT_BOS || x == NMT_EOS) {
                fprintf(stderr, "parity_grad: %s id %d of pair %d is not a token id (V=%d)\n",
                        side, (int)x, i, V);
                return -1;
            }
        }
    return 0;
}

/* Parses the options after the three files into reg and seed; 0 on success. */
static int parse_options(int argc, char **argv, nmt_regularizer *reg, uint64_t *seed)
{
    for (int i = 4; i < argc; i += 2) {
        if (i + 1 >= argc)
            return -1;
        char *end;
        if (!strcmp(argv[i], "--seed")) {
            *seed = strtoull(argv[i + 1], &end, 10);
        } else {
            float x = strtof(argv[i + 1], &end);
            if (!strcmp(argv[i], "--label-smoothing"))
                reg->label_smoothing = x;
            else if (!strcmp(argv[i], "--dropout-emb"))
                reg->dropout_emb = x;
            else if (!strcmp(argv[i], "--dropout-enc"))
                reg->dropout_enc = x;
            else if (!strcmp(argv[i], "--dropout-out"))
                reg->dropout_out = x;
            else
                return -1;
        }
        if (*end || end == argv[i + 1])
            return -1;
    }
    return 0;
}

/* One site's mask as the factors it multiplied by, [rows, cols] floats. */
static float *mask_factors(const unsigned char *mask, float keep, size_t rows, size_t cols)
{
    float *f = malloc(rows * cols * sizeof *f);
    for (size_t i = 0; f && i < rows * cols; i++)
        f[i] = mask[i] ? keep : 0.0f;
    return f;
}

int main(int argc, char **argv)
{
    nmt_reexec_under_valgrind(argv); /* the valgrind test setup */
    nmt_regularizer reg = {0};
    uint64_t seed = 1;
    if (argc < 4 || parse_options(argc, argv, &reg, &seed)) {
        fprintf(stderr, "usage: parity_grad MODEL.safetensors BATCH.json GRADS.safetensors "
                "[--label-smoothing X] [--dropout-emb X] [--dropout-enc X] [--dropout-out X] "
                "[--seed N]\n");
        return 2;
    }
    nmt_model *m = NULL;
    if (nmt_model_load(&m, argv[1], NULL) != NMT_OK) {
        fprintf(stderr, "parity_grad: %s\n", nmt_error_message());
        return 1;
    }
    char *text = read_file(argv[2]);
    id_lists src, tgt;
    if (!text || read_key(text, "src", &src) != 0 || read_key(text, "tgt", &tgt) != 0 ||
        src.n != tgt.n || src.n == 0) {
        fprintf(stderr, "parity_grad: %s: not a batch file {\"src\": [[ids]], \"tgt\": [[ids]]}\n",
                argv[2]);
        return 1;
    }
    free(text);
    if (check_ids(&src, m->cfg.src_vocab, "source") || check_ids(&tgt, m->cfg.tgt_vocab, "target"))
        return 1;

    nmt_batch b;
    if (make_batch(&b, &src, &tgt) != 0) {
        fprintf(stderr, "parity_grad: out of memory\n");
        return 1;
    }
    nmt_set_threads(1);
    nmt_workspace *ws = NULL;
    if (nmt_model_alloc_grads(m) != NMT_OK ||
        nmt_workspace_create(&ws, m, b.B, b.src_T, b.tgt_T) != NMT_OK) {
        fprintf(stderr, "parity_grad: %s\n", nmt_error_message());
        return 1;
    }
    nmt_model_zero_grad(m);
    nmt_rng rng;
    nmt_rng_seed(&rng, seed);
    nmt_real loss_r;
    if (nmt_forward(&loss_r, m, ws, &b, &reg, &rng) != NMT_OK || nmt_backward(m, ws, &b) != NMT_OK) {
        fprintf(stderr, "parity_grad: %s\n", nmt_error_message());
        return 1;
    }
    double loss = (double)loss_r;
    double objective = nmt_workspace_objective(ws);

    /* The sentence sums as a comma list, for the metadata and stdout. */
    const double *nll = nmt_workspace_sentence_nll(ws);
    size_t cap = (size_t)b.B * 32 + 1;
    char *sent = malloc(cap), loss_s[32], objective_s[32];
    size_t used = 0;
    sent[0] = '\0';
    for (int i = 0; i < b.B; i++)
        used += (size_t)snprintf(sent + used, cap - used, "%s%.17g", i ? "," : "", nll[i]);
    snprintf(loss_s, sizeof loss_s, "%.9g", loss);
    snprintf(objective_s, sizeof objective_s, "%.9g", objective);

    /* the masks of the sites that dropped (the RNN's workspace) */
    const rnn_workspace *rw = (const rnn_workspace *)ws;
    size_t Ts = (size_t)b.src_T * b.B, Tt = (size_t)b.tgt_T * b.B, E = (size_t)rw->E;
    size_t DH = (size_t)rw->D * rw->H, O = (size_t)rw->O;
    nmt_named_tensor masks[4];
    int n_masks = 0;
    if (rw->drop_emb) {
        masks[n_masks++] = (nmt_named_tensor){.name = "dropout.src_emb", .ndim = 2,
                                              .shape = {(int)Ts, (int)E},
                                              .data = mask_factors(rw->src_mask, rw->keep_emb,
                                                                   Ts, E)};
        masks[n_masks++] = (nmt_named_tensor){.name = "dropout.tgt_emb", .ndim = 2,
                                              .shape = {(int)Tt, (int)E},
                                              .data = mask_factors(rw->tgt_mask, rw->keep_emb,
                                                                   Tt, E)};
    }
    if (rw->drop_enc)
        masks[n_masks++] = (nmt_named_tensor){.name = "dropout.enc", .ndim = 2,
                                              .shape = {(int)Ts, (int)DH},
                                              .data = mask_factors(rw->enc_mask, rw->keep_enc,
                                                                   Ts, DH)};
    if (rw->drop_out)
        masks[n_masks++] = (nmt_named_tensor){.name = "dropout.out", .ndim = 2,
                                              .shape = {(int)Tt, (int)O},
                                              .data = mask_factors(rw->t_mask, rw->keep_out, Tt,
                                                                   O)};
    for (int k = 0; k < n_masks; k++)
        if (!masks[k].data) {
            fprintf(stderr, "parity_grad: out of memory\n");
            return 1;
        }

    /* The gradients saved as a model whose parameters are the gradients:
     * same names, shapes and layout as the parameters. */
    nmt_model g = *m;
    g.params = m->grads;
    nmt_meta meta[] = {{"loss", loss_s}, {"objective", objective_s}, {"sentence_nll", sent}};
    if (nmt_model_save(&g, argv[3], masks, n_masks, meta, 3) != NMT_OK) {
        fprintf(stderr, "parity_grad: %s\n", nmt_error_message());
        return 1;
    }
    printf("loss %s\nobjective %s\nsentence_nll %s\n", loss_s, objective_s, sent);
    for (int k = 0; k < n_masks; k++)
        free((void *)masks[k].data);

    free(sent);
    nmt_workspace_free(ws);
    free_batch(&b);
    id_lists_free(&src);
    id_lists_free(&tgt);
    nmt_model_free(m);
    return 0;
}
