/* Internal: the one interface behind which each architecture sits.
 *
 * nmt/model.h's calls (the tensor table, initialisation, the training
 * pass, inference, attention maps, the defaults a run of it takes), the
 * model files (io/modelfile.c) and through them the trainer and the command
 * line reach an architecture only through its table of operations, so that
 * a new architecture is a folder of its own (src/model/NAME) with one table,
 * listed in arch.c, and its options in nmt train's option table. docs/DESIGN.md ("The model interface") lists the
 * operations with what each must do. */
#ifndef NMT_ARCH_H
#define NMT_ARCH_H

#include "nmt/model.h"
#include "nmt/tensors.h"

/* Where an architecture reads its settings from: a model file's metadata
 * (io/modelfile.c makes one over the file). */
typedef struct meta_source {
    const char *path;                                  /* for messages */
    const char *(*get)(const void *ctx, const char *key); /* NULL: absent */
    const void *ctx;
} meta_source;

/* The metadata helpers the architectures and the model files share
 * (model/meta.c). Each refusal is NMT_ERR_FORMAT with "PATH: ..." and the
 * key. */
const char *nmt_meta_need(const meta_source *src, const char *key);
int nmt_meta_bool(const meta_source *src, const char *key, int *out);
/* A size in [min, max], plain decimal digits. */
int nmt_meta_size(const meta_source *src, const char *key, int min, int max, int *out);

/* The forward state the output layer and the generic checks need, shared
 * by every architecture's workspace (its first member). */
typedef struct nmt_workspace nmt_workspace;

typedef struct nmt_arch_ops {
    nmt_arch arch;
    const char *name; /* "rnn": nmt_arch_name */
    /* 1: its model files carry no "arch" key, and a file without one is
     * its (the RNN's: every file from before there were architectures) */
    int implicit;

    /* ---- what a run of it takes when nothing else is asked ---- */
    /* its part of nmt_config at its default sizes (nmt_config_default) */
    void (*defaults)(nmt_config *c);
    /* its dropout sites, rates, lr, warm-up and initial weights
     * (nmt_arch_recipe_of: the training set-up reads them) */
    const nmt_arch_recipe *recipe;

    /* ---- settings and tensors ---- */
    /* NMT_OK, or NMT_ERR_ARG with the reason (the sizes of the arch's own
     * part of nmt_config; the vocabularies are checked by model.c) */
    int (*check)(const nmt_config *c);
    /* settings that do not matter set to one value (NULL: none), before
     * nmt_model_create checks them */
    void (*normalize)(nmt_config *c);
    /* as nmt_tensor_table, for valid settings; `table` may be NULL */
    int (*tensor_table)(const nmt_config *c, nmt_tensor_info *table, int max, size_t *total);
    /* whether a tensor of this name would belong to some model of this
     * architecture (a file holding one the settings do not use is refused) */
    int (*claims)(const char *tensor_name);
    /* nmt_config_describe; and the settings in full ("cell lstm, attention
     * bahdanau, ...") or briefly (what decides which tensors exist) for
     * messages about a file's tensors */
    int (*describe)(const nmt_config *c, char *buf, size_t size);
    void (*settings_text)(const nmt_config *c, int brief, char *buf, size_t size);
    /* nmt_config_setting */
    int (*setting)(const nmt_config *c, int i, const char **name, char *value, size_t size);
    /* the output layer's input width (nmt_config_output_width) */
    int (*output_width)(const nmt_config *c);

    /* ---- model files: the architecture's own metadata keys ---- */
    const char *const *meta_keys; /* NULL-terminated, in file order */
    /* the values of meta_keys for c, into kv (at most max entries; strings
     * in buf): returns how many */
    int (*meta_write)(const nmt_config *c, nmt_meta *kv, int max, char *buf, size_t size);
    /* the architecture's part of *c from a file's metadata */
    int (*meta_read)(nmt_config *c, const meta_source *src);
    /* the architecture's settings among a checkpoint's training settings
     * ("train.cell" = "lstm", ...), for the checkpoints of an architecture
     * that wrote them so to stay what they were (the others write none: a
     * checkpoint's model metadata already holds them). Returns how many. */
    int (*train_meta)(const nmt_config *c, nmt_meta *kv, int max, char *buf, size_t size);

    /* ---- the model's own state ---- */
    /* m->arch from m->params and m->grads (named pointers); called again
     * whenever either moves. NMT_ERR_NOMEM or NMT_OK. */
    int (*bind)(nmt_model *m);
    void (*unbind)(nmt_model *m);
    int (*init)(nmt_model *m, nmt_init_scheme scheme, double scale, uint64_t seed);

    /* ---- training pass ---- */
    /* The workspace: an arch struct whose first member is nmt_workspace.
     * bytes: the sizing pass alone. */
    int (*workspace_create)(nmt_workspace **out, const nmt_model *m, int max_B, int max_Ts,
                            int max_Tt);
    int (*workspace_bytes)(const nmt_config *c, int max_B, int max_Ts, int max_Tt,
                           double *bytes);
    void (*workspace_free)(nmt_workspace *ws);
    /* Everything up to the output layer: fills ws's output_in [Tt, B, Wo]
     * (the vectors the vocabulary projection reads) with the regularizer's
     * dropout drawn from rng. The batch is checked already. */
    int (*forward)(const nmt_model *m, nmt_workspace *ws, const nmt_batch *b,
                   const nmt_regularizer *reg, nmt_rng *rng);
    /* Everything from the output layer's input down: the gradient of
     * output_in is in ws's output_dx [Tt, B, Wo]; adds into m->grads. */
    void (*backward)(nmt_model *m, nmt_workspace *ws, const nmt_batch *b);

    /* ---- inference pass (model/infer.c wraps these) ---- */
    void *(*infer_create)(const nmt_model *m, int max_B, int max_Ts, int max_rows,
                          int max_steps);
    void (*infer_free)(void *st);
    int (*infer_encode)(const nmt_model *m, void *st, const int32_t *src, const int *src_len,
                        int B, int T);
    /* copies the rows' decoder state: row r takes old row from[r]'s */
    int (*infer_select)(void *st, const int *from, int R, int old_R);
    /* one step of R rows: the logits [R, Vt] (the arch's buffer), and the
     * attention weights of map `map` [R, T] when att is not NULL (of
     * every map, [n_maps, R, T], when map is NMT_MAP_EVERY) */
    const nmt_real *(*infer_step)(const nmt_model *m, void *st, const int32_t *prev,
                                  const int *row_src, int R, int map, float *att);

    /* ---- attention maps ---- */
    int (*n_maps)(const nmt_config *c);
    int (*map_name)(const nmt_config *c, int map, char *buf, size_t size);
    int (*default_map)(const nmt_config *c);
    /* nmt_model_attention_map_at, or NULL when the maps have no layers and
     * heads */
    int (*map_at)(const nmt_config *c, int layer, int head);
    /* map `map` of sentence s of the last forward in ws: [n_tgt, n_src]
     * into out (nmt_workspace_attention_map), or NULL when the workspace
     * keeps no maps */
    int (*workspace_map)(const nmt_workspace *ws, int map, int s, int n_tgt, int n_src,
                         float *out);
} nmt_arch_ops;

/* The architectures (each in its folder: model/rnn/rnn.c, ...) */
extern const nmt_arch_ops nmt_rnn_ops;
extern const nmt_arch_ops nmt_transformer_ops;

/* The architecture of a configuration (NULL for an unknown one). */
const nmt_arch_ops *nmt_arch_ops_of(nmt_arch a);
/* The architecture of a model file without an "arch" key (NULL: none). */
const nmt_arch_ops *nmt_arch_implicit(void);
/* The table of every architecture this build has, NULL-terminated. */
extern const nmt_arch_ops *const nmt_arch_all[];

#endif
