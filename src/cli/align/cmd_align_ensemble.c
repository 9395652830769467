/* nmt align --ensemble: the joint translation of the chosen sources (see
 * cmd_align_ensemble.h). Each source is decoded alone, as nmt align decodes a
 * single model's translation, so that both see the same search. */
#include "align/cmd_align_ensemble.h"

#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "nmt/decode.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "nmt/vocab.h"

void align_ensemble_free(ensemble_targets *t)
{
    for (size_t k = 0; t->ids && k < t->n; k++)
        free(t->ids[k]);
    free(t->ids);
    free(t->len);
    memset(t, 0, sizeof *t);
}

/* The source ids of a line (with </s>) into *ids, their count into *n. */
static int source_ids(const nmt_model *m, const char *line, nmt_tokens *tok, int32_t **ids,
                      int *n)
{
    int rc = nmt_units_split(m, line, strlen(line), tok);
    if (rc)
        return rc;
    if (tok->n > 100000)
        return nmt_set_error(NMT_ERR_ARG, "a line of %zu tokens is too long to align", tok->n);
    int32_t *p = realloc(*ids, (tok->n + 1) * sizeof *p);
    if (!p)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    *ids = p;
    for (size_t j = 0; j < tok->n; j++)
        p[j] = nmt_vocab_id(m->src_vocab, tok->tok[j], tok->len[j]);
    p[tok->n] = NMT_EOS;
    *n = (int)tok->n + 1;
    return NMT_OK;
}

/* Translates the chosen sources with the loaded models into out. */
static int translate_all(const align_args *a, const inputs *in, const nmt_model *const *models,
                         ensemble_targets *out)
{
    nmt_tokens tok = {0};
    int32_t *src = NULL;
    nmt_decoder *dec = NULL;
    int n_src = 0, max_T = 1, rc = NMT_OK;
    /* the longest chosen source sets the decoder's size */
    for (size_t k = 0; k < in->n && !rc; k++) {
        rc = source_ids(models[0], in->src.line[in->sel[k]], &tok, &src, &n_src);
        max_T = n_src > max_T ? n_src : max_T;
    }
    nmt_decode_opts opts;
    nmt_decode_opts_standard(&opts);
    opts.beam = a->beam;
    if (!rc)
        rc = nmt_decoder_create_ensemble(&dec, models, a->n_models, 1, max_T, &opts);
    out->ids = calloc(in->n ? in->n : 1, sizeof *out->ids);
    out->len = calloc(in->n ? in->n : 1, sizeof *out->len);
    if (!rc && (!out->ids || !out->len))
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    out->n = in->n;
    for (size_t k = 0; k < in->n && !rc; k++) {
        rc = source_ids(models[0], in->src.line[in->sel[k]], &tok, &src, &n_src);
        if (!rc)
            rc = nmt_decode(dec, src, &n_src, 1, n_src);
        const nmt_hypothesis *h = rc ? NULL : nmt_decoder_result(dec, 0, 0);
        if (h && !(out->ids[k] = malloc((size_t)(h->len ? h->len : 1) * sizeof **out->ids)))
            rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        if (h && !rc) {
            memcpy(out->ids[k], h->ids, (size_t)h->len * sizeof *h->ids);
            out->len[k] = h->len;
        }
    }
    nmt_decoder_free(dec);
    nmt_tokens_free(&tok);
    free(src);
    return rc;
}

int align_ensemble_translate(const align_args *a, const inputs *in, ensemble_targets *out)
{
    nmt_model *models[MAX_MODELS] = {0};
    int rc = NMT_OK, said = 0;
    for (int k = 0; k < a->n_models && !rc; k++) {
        rc = nmt_model_load(&models[k], a->model[k], NULL);
        if (!rc && nmt_model_attention_maps(models[k]) == 0) {
            cli_error("%s: this model has no attention (attention=none): it has no "
                      "alignments", a->model[k]);
            rc = NMT_ERR_ARG;
            said = 1;
        }
    }
    if (!rc)
        rc = nmt_ensemble_check((const nmt_model *const *)models, a->model, a->n_models);
    if (!rc)
        rc = translate_all(a, in, (const nmt_model *const *)models, out);
    if (rc && !said)
        cli_error("%s%s", rc == NMT_ERR_NUMERIC ? "the ensemble: " : "",
                  nmt_error_message());
    for (int k = 0; k < a->n_models; k++)
        nmt_model_free(models[k]);
    if (rc)
        align_ensemble_free(out);
    return rc ? -1 : 0;
}
