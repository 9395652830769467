/* Guided alignment in a run's set-up (train/guided.h). The head is found
 * through the model's attention maps (nmt_model_attention_map_at), so that
 * the set-up never asks which architecture a model is: a model whose maps
 * have no layers and heads is refused with the model's own reason. */
#include "train/guided.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

int nmt_guided_check(const nmt_train_run *r)
{
    const nmt_train_settings *s = &r->s;
    if (!s->guided_links)
        return NMT_OK;
    if (s->shuffle_buffer > 0)
        return nmt_set_error(NMT_ERR_ARG, "--guided-links needs the training corpus read "
                             "whole: a streamed corpus (--shuffle-buffer) does not keep the "
                             "words of its pairs");
    if (!strcmp(s->src_path, "-") || !strcmp(s->tgt_path, "-"))
        return nmt_set_error(NMT_ERR_ARG, "--guided-links reads the training corpus twice "
                             "(the links are checked against each line): give --src and "
                             "--tgt as files, not -");
    return NMT_OK;
}

/* The decoder layers of m's maps (0: none with layers and heads). */
static int map_layers(const nmt_model *m)
{
    int L = 0;
    while (L < (1 << 16) && nmt_model_attention_map_at(m, L, 0) >= 0)
        L++;
    nmt_clear_error();
    return L;
}

/* The layer a run guides unless told (docs/training.md, "Guided
 * alignment"): the one below the middle, (L - 1) / 2 of L layers: layer 1
 * of the default 4, which from scratch aligned the toy corpus's validation
 * pairs at 0.072 against the middle layer's 0.098, with a lower perplexity
 * and a higher BLEU (docs/experiments/guided-alignment.md); other depths
 * are unmeasured. */
static int default_layer(int layers)
{
    return (layers - 1) / 2;
}

/* A reason of the library's after the option and value it is about
 * (copied first: it is rewritten from itself). */
static int refuse_with(int rc, const char *option, int value)
{
    char why[1024];
    snprintf(why, sizeof why, "%s", nmt_error_message());
    return nmt_set_error(rc, "%s %d: %s", option, value, why);
}

/* A fresh run's head: the model's maps must have it; it becomes the
 * model's cfg.align (and the settings' model's). */
static int choose_head(nmt_train_run *r, const nmt_train_request *q)
{
    nmt_train_settings *s = &r->s;
    nmt_model *m = r->model;
    int layers = map_layers(m);
    if (layers == 0) {
        char kind[64];
        nmt_config_describe(&m->cfg, kind, sizeof kind);
        return nmt_set_error(NMT_ERR_ARG, "--guided-links trains one head of one decoder "
                             "layer's cross-attention (a Transformer's), and the model (%s) "
                             "has %s", kind, nmt_model_attention_maps(m)
                                                 ? "one attention map, without layers and heads"
                                                 : "no attention");
    }
    if (!q->given.guided_layer)
        s->guided_layer = default_layer(layers);
    int rc = nmt_model_attention_map_at(m, s->guided_layer, 0);
    if (rc < 0)
        return refuse_with(rc, "--guided-layer", s->guided_layer);
    if ((rc = nmt_model_attention_map_at(m, s->guided_layer, s->guided_head)) < 0)
        return refuse_with(rc, "--guided-head", s->guided_head);
    m->cfg.align = (nmt_trained_head){.trained = 1, .layer = s->guided_layer,
                                      .head = s->guided_head, .shift = s->guided_shift};
    if ((rc = nmt_config_check(&m->cfg)))
        return rc;
    s->model.align = m->cfg.align;
    return NMT_OK;
}

int nmt_guided_setup(nmt_train_run *r, const nmt_train_request *q)
{
    nmt_train_settings *s = &r->s;
    if (!s->guided_links)
        return NMT_OK;
    int rc = r->resumed ? NMT_OK : choose_head(r, q);
    if (rc)
        return rc;
    if (!(r->links = calloc(1, sizeof *r->links)))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    if ((rc = nmt_links_read(r->links, s->guided_links, s->src_path, s->tgt_path))) {
        free(r->links);
        r->links = NULL;
        return rc;
    }
    if (!r->resumed) {
        s->guided_digest = r->links->hash;
        return NMT_OK;
    }
    if (r->links->hash != s->guided_digest)
        return nmt_set_error(NMT_ERR_ARG, "%s: not the links the run began with (their digest "
                             "is %016" PRIx64 ", the checkpoint's %016" PRIx64 "); a resumed "
                             "run continues toward its own links (for others, start a new run "
                             "with --init-from)", s->guided_links, r->links->hash,
                             s->guided_digest);
    return NMT_OK;
}
