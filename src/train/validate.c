/* Validation (perplexity and greedy BLEU) and the tools it uses: nmt_validate,
 * and the trainer's validations with its own workspace and decoder. */
#include <math.h>
#include <stdlib.h>

#include "nmt/error.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "train/trainer.h"

void nmt_corpus_max_lengths(const nmt_corpus *c, int *src_T, int *tgt_T)
{
    for (size_t i = 0; i < c->n; i++) {
        int s = (int)(c->src_off[i + 1] - c->src_off[i]) + 1;
        int t = (int)(c->tgt_off[i + 1] - c->tgt_off[i]) + 1;
        if (s > *src_T)
            *src_T = s;
        if (t > *tgt_T)
            *tgt_T = t;
    }
}

int nmt_validate_with(const nmt_model *m, const valid_tools *vt, const nmt_valid_set *v,
                      int batch_size, int batch_tokens, double *ppl_out, double *bleu_out)
{
    const nmt_corpus *c = v->corpus;
    if (c->n != v->n_refs)
        return nmt_set_error(NMT_ERR_ARG, "validation: %zu pairs but %zu reference lines",
                             c->n, v->n_refs);
    /* batched as training is (by target tokens when it is): a batch of
     * batch_size of the longest sentences would touch far more of the
     * workspace than any training step, and the process would keep it */
    nmt_batch_plan plan;
    int rc = nmt_batch_plan_make_tokens(&plan, c, batch_size, batch_tokens, 0, 0, 1);
    if (rc)
        return rc;
    char **hyps = calloc(c->n ? c->n : 1, sizeof *hyps);
    if (!hyps) {
        nmt_batch_plan_free(&plan);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory for validation");
    }
    double nll = 0, tokens = 0;
    for (size_t k = 0; k < plan.n_batches && rc == NMT_OK; k++) {
        const size_t *pairs = plan.index + plan.start[k];
        int n = (int)(plan.start[k + 1] - plan.start[k]);
        if ((rc = nmt_batch_fill(vt->batch, c, pairs, n)))
            break;
        const nmt_batch *b = vt->batch;
        if ((rc = nmt_forward(NULL, m, vt->ws, b, NULL, NULL)))
            break;
        const double *sent = nmt_workspace_sentence_nll(vt->ws);
        for (int i = 0; i < b->B; i++)
            nll += sent[i];
        tokens += (double)b->n_tgt_tokens;
        if ((rc = nmt_decode(vt->decoder, b->src, b->src_len, b->B, b->src_T)))
            break;
        for (int i = 0; i < b->B && rc == NMT_OK; i++) {
            /* raw text, as the references are: words detokenized, pieces decoded */
            const nmt_hypothesis *h = nmt_decoder_result(vt->decoder, i, 0);
            char *text = nmt_units_join_ids(m, h->ids, (size_t)h->len);
            if (!text)
                rc = NMT_ERR_NOMEM;
            hyps[b->pair[i]] = text;
        }
    }
    if (rc == NMT_OK) {
        nmt_bleu_reset(vt->bleu);
        for (size_t i = 0; i < c->n && rc == NMT_OK; i++) {
            const char *ref = v->refs[i];
            rc = nmt_bleu_add(vt->bleu, NULL, hyps[i] ? hyps[i] : "", &ref, 1);
        }
    }
    if (rc == NMT_OK) {
        nmt_bleu_score score;
        nmt_bleu_result(vt->bleu, &score);
        *bleu_out = score.score;
        *ppl_out = tokens > 0 ? exp(nll / tokens) : (double)NAN;
    }
    nmt_free_lines(hyps, c->n);
    nmt_batch_plan_free(&plan);
    return rc;
}

int nmt_valid_decoder(nmt_decoder **d, const nmt_model *m, int B, int src_T)
{
    nmt_decode_opts o;
    nmt_decode_opts_default(&o);
    return nmt_decoder_create(d, m, B, src_T, &o);
}

/* A model trained on lowercased text can only produce lowercase, so its
 * validation BLEU is case-insensitive (sacreBLEU --lc), as nmt compare does;
 * otherwise every capital in the references would count as a miss. */
int nmt_valid_bleu(nmt_bleu **b, const nmt_model *m)
{
    nmt_bleu_opts o;
    nmt_bleu_opts_init(&o);
    o.lowercase = m->cfg.lowercase;
    return nmt_bleu_create(b, &o);
}

int nmt_validate(const nmt_model *m, const nmt_valid_set *v, int batch_size, double *ppl,
                 double *bleu)
{
    int src_T = 1, tgt_T = 1;
    nmt_corpus_max_lengths(v->corpus, &src_T, &tgt_T);
    nmt_batch batch = {0};
    valid_tools vt = {.batch = &batch};
    int rc = nmt_batch_alloc(&batch, batch_size, src_T, tgt_T);
    if (!rc)
        rc = nmt_workspace_create(&vt.ws, m, batch_size, src_T, tgt_T);
    if (!rc)
        rc = nmt_valid_decoder(&vt.decoder, m, batch_size, src_T);
    if (!rc)
        rc = nmt_valid_bleu(&vt.bleu, m);
    if (!rc)
        rc = nmt_validate_with(m, &vt, v, batch_size, 0, ppl, bleu);
    nmt_bleu_free(vt.bleu);
    nmt_decoder_free(vt.decoder);
    nmt_workspace_free(vt.ws);
    nmt_batch_free(&batch);
    return rc;
}
