/* The end of a validated run: the beam's length normalisation chosen on the
 * validation set and written into best.safetensors ("decode.alpha"), which
 * the decoders use unless told another (NMT_ALPHA_OF_MODEL). The two
 * directions of Multi30k want different ones (on validation De->En's
 * models 0.4 and 1.0, En->De's 1.6 and 2.2; docs/experiments/transformer-
 * search.md), so no one default serves. */
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/progress.h"
#include "train/trainer.h"

/* The walk: from NMT_DEFAULT_ALPHA by steps of a fifth, within 0..3, in
 * tenths so that every alpha is the decimal it prints as. */
#define STEP 2
#define LOWEST 0
#define HIGHEST 30

/* The validation BLEU of m's beam search at alpha. */
static int beam_bleu(nmt_trainer *t, const nmt_model *m, float alpha, double *bleu)
{
    nmt_decode_opts o;
    nmt_decode_opts_standard(&o);
    o.alpha = alpha;
    nmt_decoder *d;
    int rc = nmt_decoder_create(&d, m, t->s.batch_size, t->src_T, &o);
    if (rc)
        return rc;
    valid_tools vt = {.batch = &t->batch, .decoder = d, .bleu = t->bleu};
    rc = nmt_valid_translate_bleu(m, &vt, &t->valid, t->s.batch_size, bleu);
    nmt_decoder_free(d);
    return rc;
}

/* best.safetensors written again with the alpha, and every metadata key it
 * had (best.step ...) kept */
static int save_with_alpha(nmt_model *best, const nmt_file *f, const char *path)
{
    int n = nmt_file_n_meta(f), k_out = 0;
    nmt_meta *meta = malloc((size_t)(n ? n : 1) * sizeof *meta);
    if (!meta)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        const char *key = nmt_file_meta_key(f, k);
        if (!nmt_file_is_model_key(key))
            meta[k_out++] = (nmt_meta){key, nmt_file_meta(f, key)};
    }
    int rc = nmt_model_save(best, path, NULL, 0, meta, k_out);
    free(meta);
    return rc;
}

int nmt_trainer_tune_alpha(nmt_trainer *t, const nmt_train_callbacks *cb)
{
    nmt_train_status *st = &t->st;
    /* a BLEU below 1 is noise (as for beats_best), and an untrained
     * model's beam runs every hypothesis to the length limit */
    if (!t->s.tune_alpha || !t->valid.corpus || t->rank != 0 || st->best_step < 0 ||
        !(st->best_bleu >= 1))
        return NMT_OK;
    double t0 = nmt_now();
    char *path = nmt_path_join(t->dir, "best.safetensors");
    if (!path)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    nmt_model *best = NULL;
    nmt_file *f = NULL;
    int rc = nmt_model_load(&best, path, &f);
    /* 1.2, then both neighbours; then on in the direction of the better
     * one while each step scores strictly higher (of equal scores the
     * alpha nearer 1.2, and 1.0 before 1.4) */
    int from = (int)(NMT_DEFAULT_ALPHA * 10 + 0.5f), at = from, tried = 0, dir = 0;
    double top = -1, at_default = -1, bleu;
    if (!rc && !(rc = beam_bleu(t, best, (float)from / 10, &top))) {
        at_default = top;
        tried = 1;
    }
    for (int d = -1; d <= 1 && !rc; d += 2) {
        if (from + d * STEP < LOWEST || from + d * STEP > HIGHEST)
            continue;
        if ((rc = beam_bleu(t, best, (float)(from + d * STEP) / 10, &bleu)))
            break;
        tried++;
        if (bleu > top) {
            top = bleu;
            at = from + d * STEP;
            dir = d;
        }
    }
    while (!rc && dir && at + dir * STEP >= LOWEST && at + dir * STEP <= HIGHEST) {
        if ((rc = beam_bleu(t, best, (float)(at + dir * STEP) / 10, &bleu)))
            break;
        tried++;
        if (!(bleu > top))
            break;
        top = bleu;
        at += dir * STEP;
    }
    float chosen = (float)at / 10;
    if (!rc) {
        best->decode_alpha = chosen;
        rc = save_with_alpha(best, f, path);
    }
    if (!rc) {
        st->alpha = chosen;
        st->alpha_bleu = top;
        st->alpha_default_bleu = at_default;
        st->alpha_tried = tried;
        st->alpha_seconds = nmt_now() - t0;
        if (cb && cb->on_event)
            cb->on_event(cb->user, NMT_TRAIN_ALPHA, st);
    }
    nmt_file_free(f);
    nmt_model_free(best);
    free(path);
    return rc;
}
