/* Model files: the model's tensors and settings in a safetensors container
 * (safetensors.c), with the metadata of docs/DESIGN.md. Loading checks every
 * setting, shape and number against the file before it creates the model,
 * so a hostile file can make us allocate no more than its own size. */
#include "nmt/modelfile.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "model/arch.h"
#include "nmt/error.h"

#define NMT_FORMAT "nmt-1"
/* The tensor that holds a subword model's serialized SentencePiece model. */
#define SUBWORDS_TENSOR "subwords"
/* A sane bound on the vocabularies a file may claim. */
#define MAX_VOCAB (1 << 24)

struct nmt_file {
    st_file st;
};

/* The design's metadata keys of every model; each architecture adds its
 * own (nmt_arch_ops.meta_keys). Extras may reuse none of them. */
static const char *const design_keys[] = {
    "format", "arch", "tied", "joint_vocab", "lowercase", "src_vocab", "tgt_vocab", "crc32",
    "align_layer", "align_head", "align_shift", NULL,
};

static int in_list(const char *const *list, const char *key)
{
    for (int k = 0; list[k]; k++)
        if (!strcmp(list[k], key))
            return 1;
    return 0;
}

static int is_design_key(const char *key)
{
    if (in_list(design_keys, key))
        return 1;
    for (int a = 0; nmt_arch_all[a]; a++)
        if (in_list(nmt_arch_all[a]->meta_keys, key))
            return 1;
    return 0;
}

/* ---- saving --------------------------------------------------------------- */

/* The tokens in id order joined by "\n" (malloc'ed). A token holding a
 * newline could not be told apart on reading, so it is refused. */
static int join_vocab(char **out, const nmt_vocab *v, const char *path, const char *key)
{
    int n = nmt_vocab_size(v);
    size_t len = 1;
    for (int id = 0; id < n; id++) {
        const char *tok = nmt_vocab_token(v, id);
        if (!tok || strchr(tok, '\n'))
            return nmt_set_error(NMT_ERR_ARG, "%s: %s token %d is missing or holds a newline", path,
                                 key, id);
        len += strlen(tok) + 1;
    }
    char *s = malloc(len), *o = s;
    if (!s)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    for (int id = 0; id < n; id++) {
        size_t l = strlen(nmt_vocab_token(v, id));
        if (id)
            *o++ = '\n';
        memcpy(o, nmt_vocab_token(v, id), l);
        o += l;
    }
    *o = '\0';
    *out = s;
    return NMT_OK;
}

int nmt_model_save(const nmt_model *m, const char *path, const nmt_named_tensor *extra,
                   int n_extra, const nmt_meta *meta, int n_meta)
{
    if (n_extra < 0 || n_meta < 0 || (n_extra && !extra) || (n_meta && !meta))
        return nmt_set_error(NMT_ERR_ARG, "%s: bad extra tensors or metadata", path);
    for (int k = 0; k < n_meta; k++)
        if (meta[k].key && is_design_key(meta[k].key))
            return nmt_set_error(NMT_ERR_ARG, "%s: metadata key '%s' is reserved for the model", path,
                                 meta[k].key);
    for (int k = 0; k < n_extra; k++)
        if (extra[k].name && (nmt_model_tensor(m, extra[k].name) ||
                              !strcmp(extra[k].name, SUBWORDS_TENSOR)))
            return nmt_set_error(NMT_ERR_ARG, "%s: extra tensor '%s' has a model tensor's name", path,
                                 extra[k].name);
    size_t n_subwords = 0;
    const unsigned char *subwords = m->subwords ? nmt_subwords_bytes(m->subwords, &n_subwords) : NULL;
    if (n_subwords > INT_MAX)
        return nmt_set_error(NMT_ERR_ARG, "%s: the subword model is too large to store", path);

    /* the design's keys: format; arch unless the architecture is the one
     * of files without it (the RNN's, so that its file is what it was
     * before there were other architectures); the architecture's own; `tied` only when true
     * (absent means false), so that an untied model's file is what it was
     * before tying existed (and `joint_vocab` likewise); the subword
     * model's bytes go last, after every float */
    enum { MAX_ARCH_KEYS = 16 };
    int named = !m->ops->implicit;
    int n_design = 1 + named + MAX_ARCH_KEYS + 3 + (m->cfg.tied != 0) +
                   (m->cfg.joint_vocab != 0) + 3 * (m->cfg.align.trained != 0);
    int n_t = m->n_tensors + n_extra + (subwords != NULL), n_m = n_design + n_meta;
    nmt_named_tensor *t = malloc((size_t)n_t * sizeof *t);
    nmt_meta *kv = malloc((size_t)n_m * sizeof *kv);
    char *src = NULL, *tgt = NULL;
    /* files hold F32; a build whose parameters are doubles converts */
    int convert = sizeof *m->params != sizeof(float);
    float *narrow = convert ? malloc(m->n_params * sizeof *narrow) : NULL;
    int rc = t && kv && (narrow || !convert) ? NMT_OK
                                             : nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    const float *params = (const float *)(const void *)m->params;
    if (!rc && convert) {
        for (size_t k = 0; k < m->n_params; k++)
            narrow[k] = (float)m->params[k];
        params = narrow;
    }
    if (!rc)
        rc = join_vocab(&src, m->src_vocab, path, "src_vocab");
    if (!rc)
        rc = join_vocab(&tgt, m->tgt_vocab, path, "tgt_vocab");
    char arch_buf[MAX_ARCH_KEYS * 16], align_buf[32];
    int n_kv = 0;
    if (!rc) {
        kv[n_kv++] = (nmt_meta){"format", NMT_FORMAT};
        if (named)
            kv[n_kv++] = (nmt_meta){"arch", nmt_arch_name(m->cfg.arch)};
        int n_arch = m->ops->meta_write(&m->cfg, kv + n_kv, MAX_ARCH_KEYS, arch_buf,
                                        sizeof arch_buf);
        rc = n_arch < 0 ? n_arch : NMT_OK;
        n_kv += n_arch < 0 ? 0 : n_arch;
    }
    if (!rc) {
        for (int k = 0; k < m->n_tensors; k++) {
            const nmt_tensor_info *ti = &m->tensors[k];
            t[k] = (nmt_named_tensor){.name = ti->name, .ndim = ti->ndim,
                                      .data = params + ti->offset};
            memcpy(t[k].shape, ti->shape, sizeof t[k].shape);
        }
        for (int k = 0; k < n_extra; k++)
            t[m->n_tensors + k] = extra[k];
        if (subwords)
            t[n_t - 1] = (nmt_named_tensor){.name = SUBWORDS_TENSOR, .ndim = 1,
                                            .shape = {(int)n_subwords}, .bytes = subwords};
        kv[n_kv++] = (nmt_meta){"lowercase", m->cfg.lowercase ? "true" : "false"};
        kv[n_kv++] = (nmt_meta){"src_vocab", src};
        kv[n_kv++] = (nmt_meta){"tgt_vocab", tgt};
        if (m->cfg.tied)
            kv[n_kv++] = (nmt_meta){"tied", "true"};
        if (m->cfg.joint_vocab)
            kv[n_kv++] = (nmt_meta){"joint_vocab", "true"};
        /* the head trained to align, only in a guided model's file */
        if (m->cfg.align.trained) {
            snprintf(align_buf, 16, "%d", m->cfg.align.layer);
            snprintf(align_buf + 16, 16, "%d", m->cfg.align.head);
            kv[n_kv++] = (nmt_meta){"align_layer", align_buf};
            kv[n_kv++] = (nmt_meta){"align_head", align_buf + 16};
            kv[n_kv++] = (nmt_meta){"align_shift", m->cfg.align.shift ? "true" : "false"};
        }
        for (int k = 0; k < n_meta; k++)
            kv[n_kv++] = meta[k];
        rc = nmt_st_write(path, t, n_t, kv, n_kv, "crc32");
    }
    free(narrow);
    free(src);
    free(tgt);
    free(t);
    free(kv);
    return rc;
}

/* ---- loading -------------------------------------------------------------- */

static const char *file_meta(const void *ctx, const char *key)
{
    return nmt_st_meta(&((const nmt_file *)ctx)->st, key);
}

/* The file's metadata as the architectures read it (model/arch.h). */
static meta_source source_of(const nmt_file *f, const char *path)
{
    return (meta_source){.path = path, .get = file_meta, .ctx = f};
}

/* The head trained to align (guided alignment): align_layer, align_head and
 * align_shift together, or none of them (a model trained without links).
 * Whether the model has that layer and head is nmt_config_check's. */
static int read_trained_head(const nmt_file *f, const meta_source *src, nmt_config *cfg)
{
    static const char *const keys[3] = {"align_layer", "align_head", "align_shift"};
    int have = 0;
    for (int k = 0; k < 3; k++)
        have += nmt_st_meta(&f->st, keys[k]) != NULL;
    memset(&cfg->align, 0, sizeof cfg->align);
    if (have == 0)
        return NMT_OK;
    if (have < 3)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: align_layer, align_head and align_shift go "
                             "together (the head trained to align), but the file has %d of "
                             "them", src->path, have);
    int rc = nmt_meta_size(src, "align_layer", 0, 1 << 16, &cfg->align.layer);
    if (!rc)
        rc = nmt_meta_size(src, "align_head", 0, 1 << 16, &cfg->align.head);
    if (!rc)
        rc = nmt_meta_bool(src, "align_shift", &cfg->align.shift);
    cfg->align.trained = rc == NMT_OK;
    return rc;
}

static const char *need_meta(const nmt_file *f, const char *key, const char *path)
{
    meta_source src = source_of(f, path);
    return nmt_meta_need(&src, key);
}

static int check_format(const nmt_file *f, const char *path)
{
    const char *fmt = nmt_st_meta(&f->st, "format");
    if (!fmt)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: not an nmt model (no \"format\" in the metadata)", path);
    if (strcmp(fmt, NMT_FORMAT))
        return nmt_set_error(NMT_ERR_FORMAT, "%s: format '%s' is not supported (expected '%s')",
                             path, fmt, NMT_FORMAT);
    return NMT_OK;
}

/* crc32 is 8 hex digits (see modelfile.h). Checked before any weight is
 * used: a flipped bit in the data would otherwise load silently. */
static int check_crc(const nmt_file *f, const char *path)
{
    const char *s = need_meta(f, "crc32", path);
    if (!s)
        return NMT_ERR_FORMAT;
    uint32_t want = 0;
    int ok = strlen(s) == 8;
    for (int k = 0; ok && k < 8; k++) {
        char c = s[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        ok = d >= 0;
        want = want * 16 + (uint32_t)d;
    }
    if (!ok)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: crc32 '%s' is not 8 hexadecimal digits", path, s);
    if (want != f->st.data_crc)
        return nmt_set_error(NMT_ERR_FORMAT,
                             "%s: crc32 mismatch: the header says %08lx, the data has %08lx "
                             "(the file is corrupt)", path, (unsigned long)want,
                             (unsigned long)f->st.data_crc);
    return NMT_OK;
}

/* Splits a vocabulary value on "\n" into a token list pointing into *copy. */
static int split_vocab(const nmt_file *f, const char *key, char **copy, const char ***tokens, int *n,
                       const char *path)
{
    const char *v = need_meta(f, key, path);
    if (!v)
        return NMT_ERR_FORMAT;
    size_t count = 1;
    for (const char *p = v; *p; p++)
        count += *p == '\n';
    if (count > MAX_VOCAB)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: %s has %zu tokens (at most %d)", path, key, count,
                             MAX_VOCAB);
    *copy = strdup(v);
    *tokens = malloc(count * sizeof **tokens);
    if (!*copy || !*tokens)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    char *p = *copy;
    for (size_t k = 0; k < count; k++) {
        (*tokens)[k] = p;
        char *nl = strchr(p, '\n');
        if (nl) {
            *nl = '\0';
            p = nl + 1;
        }
    }
    static const char *const specials[NMT_N_SPECIAL] = {"<pad>", "<unk>", "<s>", "</s>"};
    for (int k = 0; k < NMT_N_SPECIAL; k++)
        if ((size_t)k >= count || strcmp((*tokens)[k], specials[k]))
            return nmt_set_error(NMT_ERR_FORMAT,
                                 "%s: %s must begin with <pad>, <unk>, <s>, </s> (token %d is '%s')",
                                 path, key, k, (size_t)k < count ? (*tokens)[k] : "");
    *n = (int)count;
    return NMT_OK;
}

/* The architecture (arch; absent: the architecture of files without it,
 * the RNN), then the settings every model has, then the architecture's own.
 * A key of another architecture is refused: the file contradicts itself. */
static int parse_config(const nmt_file *f, nmt_config *cfg, const char *path)
{
    memset(cfg, 0, sizeof *cfg);
    meta_source src = source_of(f, path);
    const char *arch = nmt_st_meta(&f->st, "arch");
    if (arch && nmt_arch_parse(arch, &cfg->arch))
        return nmt_set_error(NMT_ERR_FORMAT, "%s: unknown arch '%s' (expected rnn or transformer)",
                             path, arch);
    const nmt_arch_ops *ops = arch ? nmt_arch_ops_of(cfg->arch) : nmt_arch_implicit();
    if (!ops)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: arch %s is not in this build of nmt", path,
                             arch ? arch : "(none given)");
    cfg->arch = ops->arch;
    for (int a = 0; nmt_arch_all[a]; a++)
        for (int k = 0; nmt_arch_all[a]->meta_keys[k]; k++) {
            const char *key = nmt_arch_all[a]->meta_keys[k];
            if (nmt_arch_all[a] != ops && !in_list(ops->meta_keys, key) && nmt_st_meta(&f->st, key))
                return nmt_set_error(NMT_ERR_FORMAT, "%s: '%s' is a setting of the %s, but the "
                                     "file's arch is %s%s", path, key, nmt_arch_all[a]->name,
                                     ops->name, arch ? "" : " (the arch of a file with no 'arch' "
                                     "key)");
        }
    int rc = nmt_meta_bool(&src, "lowercase", &cfg->lowercase);
    if (rc)
        return rc;
    /* absent means untied (files from before tying existed) */
    if (nmt_st_meta(&f->st, "tied") && (rc = nmt_meta_bool(&src, "tied", &cfg->tied)))
        return rc;
    /* absent means two vocabularies (every file before it, and the RNN's) */
    if (nmt_st_meta(&f->st, "joint_vocab") &&
        (rc = nmt_meta_bool(&src, "joint_vocab", &cfg->joint_vocab)))
        return rc;
    if ((rc = read_trained_head(f, &src, cfg)))
        return rc;
    return ops->meta_read(cfg, &src);
}

static void shape_text(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int k = 0; k < ndim && o < cap; k++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", k ? ", " : "", (long long)shape[k]);
    if (o < cap)
        snprintf(buf + o, cap - o, "]");
}

static int in_table(const nmt_tensor_info *t, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(t[k].name, name))
            return 1;
    return 0;
}

/* Whether some architecture's model could hold a tensor of this name. */
static int claimed(const char *name)
{
    for (int a = 0; nmt_arch_all[a]; a++)
        if (nmt_arch_all[a]->claims(name))
            return 1;
    return 0;
}

/* Every tensor the settings need, with exactly the shape they imply; no
 * model tensor the settings do not need. */
static int check_tensors(const nmt_file *f, const nmt_config *cfg, const char *path)
{
    const nmt_arch_ops *ops = nmt_arch_ops_of(cfg->arch);
    size_t total;
    int n = nmt_tensor_table(cfg, NULL, 0, &total);
    if (n < 0) { /* the reason is copied first: the message is rewritten from itself */
        char why[512];
        snprintf(why, sizeof why, "%s", nmt_error_message());
        return nmt_set_error(NMT_ERR_FORMAT, "%s: the settings do not fit together: %s", path,
                             why);
    }
    nmt_tensor_info *table = malloc((size_t)n * sizeof *table);
    if (!table)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    nmt_tensor_table(cfg, table, n, &total);
    char settings[512];
    int rc = NMT_OK;
    /* the output matrix, said in the words of tying */
    if (cfg->tied && nmt_st_find(&f->st, "out.W"))
        rc = nmt_set_error(NMT_ERR_FORMAT, "%s: tied is true (the output matrix is tgt_emb) "
                           "but the file has an 'out.W'", path);
    else if (!cfg->tied && !nmt_st_find(&f->st, "out.W"))
        rc = nmt_set_error(NMT_ERR_FORMAT, "%s: tensor 'out.W' is missing and tied is not "
                           "true (a model with tied embeddings says so in its metadata)", path);
    /* the source's table, said in the words of the joint vocabulary */
    else if (cfg->joint_vocab && nmt_st_find(&f->st, "src_emb"))
        rc = nmt_set_error(NMT_ERR_FORMAT, "%s: joint_vocab is true (tgt_emb embeds both "
                           "sides) but the file has a 'src_emb'", path);
    for (int k = 0; k < n && !rc; k++) {
        const st_tensor *t = nmt_st_find(&f->st, table[k].name);
        int64_t want[NMT_MAX_NDIM];
        for (int d = 0; d < NMT_MAX_NDIM; d++)
            want[d] = table[k].shape[d];
        char ws[96], hs[ST_MAX_NDIM * 22 + 4];
        shape_text(ws, sizeof ws, table[k].ndim, want);
        if (!t) {
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' %s is missing", path,
                               table[k].name, ws);
            break;
        }
        int same = t->ndim == table[k].ndim;
        for (int d = 0; same && d < t->ndim; d++)
            same = t->shape[d] == want[d];
        if (!same) {
            shape_text(hs, sizeof hs, t->ndim, t->shape);
            ops->settings_text(cfg, 0, settings, sizeof settings);
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' has shape %s but the settings (%s) "
                               "need %s", path, table[k].name, hs, settings, ws);
        }
    }
    for (int k = 0; k < f->st.n_tensors && !rc; k++) {
        const char *name = f->st.tensors[k].name;
        if (!in_table(table, n, name) && claimed(name)) {
            ops->settings_text(cfg, 1, settings, sizeof settings);
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' is in the file but the settings "
                               "(%s) have no use for it", path, name, settings);
        }
    }
    free(table);
    return rc;
}

/* Every tensor holds floats but "subwords", which holds bytes. */
static int check_dtypes(const nmt_file *f, const char *path)
{
    for (int k = 0; k < f->st.n_tensors; k++) {
        const st_tensor *t = &f->st.tensors[k];
        if (!strcmp(t->name, SUBWORDS_TENSOR)) {
            if (t->dtype != ST_U8 || t->ndim != 1)
                return nmt_set_error(NMT_ERR_FORMAT,
                                     "%s: tensor '%s' must be U8 bytes of one dimension (the "
                                     "serialized SentencePiece model)", path, t->name);
        } else if (t->dtype != ST_F32) {
            return nmt_set_error(NMT_ERR_FORMAT,
                                 "%s: tensor '%s' has dtype U8: only '%s' holds bytes, every "
                                 "other tensor is F32", path, t->name, SUBWORDS_TENSOR);
        }
    }
    return NMT_OK;
}

/* Every number of every F32 tensor held is finite: a NaN or an Inf in a
 * weight makes every output it reaches NaN (a translation of one word over
 * and over, with exit 0), and one in an optimizer moment poisons the
 * training it resumes. Infinities and NaNs are the values whose exponent
 * bits are all ones. The tensors not held (a checkpoint's moments when only
 * the model is wanted) are never used, so not looked at. */
static int check_finite(const nmt_file *f, const char *path)
{
    for (int k = 0; k < f->st.n_tensors; k++) {
        const st_tensor *t = &f->st.tensors[k];
        if (!t->held || t->dtype != ST_F32)
            continue;
        const unsigned char *p = f->st.data + t->begin;
        size_t n = (t->end - t->begin) / 4;
        for (size_t i = 0; i < n; i++) {
            uint32_t bits;
            memcpy(&bits, p + 4 * i, 4);
            if ((bits & 0x7f800000u) != 0x7f800000u)
                continue;
            const char *what = bits & 0x007fffffu ? "NaN" : bits >> 31 ? "-Inf" : "+Inf";
            char where[64] = "";
            if (t->ndim == 2 && t->shape[1] > 0)
                snprintf(where, sizeof where, " (row %zu, column %zu)", i / (size_t)t->shape[1],
                         i % (size_t)t->shape[1]);
            return nmt_set_error(NMT_ERR_NUMERIC,
                                 "%s: tensor '%s' holds %s at index %zu%s: every number in a "
                                 "model file must be finite", path, t->name, what, i, where);
        }
    }
    return NMT_OK;
}

/* The subword model of the "subwords" tensor (NULL when there is none),
 * whose pieces must be both vocabularies, in id order. */
static int load_subwords(nmt_subwords **out, const nmt_file *f, const char *const *src_tok,
                         const char *const *tgt_tok, const nmt_config *cfg, const char *path)
{
    *out = NULL;
    const st_tensor *t = nmt_st_find(&f->st, SUBWORDS_TENSOR);
    if (!t)
        return NMT_OK;
    char name[4200];
    snprintf(name, sizeof name, "%s: tensor '%s'", path, SUBWORDS_TENSOR);
    nmt_subwords *sw;
    int rc = nmt_subwords_load(&sw, f->st.data + t->begin, t->end - t->begin, name);
    if (rc)
        return rc;
    int n = nmt_subwords_size(sw);
    for (int side = 0; side < 2 && !rc; side++) {
        const char *key = side ? "tgt_vocab" : "src_vocab";
        const char *const *tok = side ? tgt_tok : src_tok;
        int size = side ? cfg->tgt_vocab : cfg->src_vocab;
        if (size != n) {
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s: %s has %d tokens but the subword model has %d "
                               "pieces (they must be the same)", path, key, size, n);
            break;
        }
        for (int id = 0; id < n && !rc; id++)
            if (strcmp(tok[id], nmt_subwords_piece(sw, id)))
                rc = nmt_set_error(NMT_ERR_FORMAT, "%s: %s token %d is '%s' but the subword "
                                   "model's piece %d is '%s' (they must be the same)", path, key,
                                   id, tok[id], id, nmt_subwords_piece(sw, id));
    }
    if (rc) {
        nmt_subwords_free(sw);
        return rc;
    }
    *out = sw;
    return NMT_OK;
}

/* A joint vocabulary is one list, written under both keys: they must be
 * equal, or one id would name two tokens. */
static int check_joint(const nmt_config *cfg, const char *const *src_tok,
                       const char *const *tgt_tok, const char *path)
{
    if (!cfg->joint_vocab)
        return NMT_OK;
    if (cfg->src_vocab != cfg->tgt_vocab)
        return nmt_set_error(NMT_ERR_FORMAT, "%s: joint_vocab is true but src_vocab has %d "
                             "tokens and tgt_vocab %d (a joint vocabulary is one list, written "
                             "under both keys)", path, cfg->src_vocab, cfg->tgt_vocab);
    for (int id = 0; id < cfg->src_vocab; id++)
        if (strcmp(src_tok[id], tgt_tok[id]))
            return nmt_set_error(NMT_ERR_FORMAT, "%s: joint_vocab is true but src_vocab and "
                                 "tgt_vocab differ at id %d ('%s' and '%s'; a joint vocabulary "
                                 "is one list, written under both keys)", path, id, src_tok[id],
                                 tgt_tok[id]);
    return NMT_OK;
}

/* Puts "PATH: what: " before the message another module has just set (a
 * copy first: the message buffer is the one being written). */
static int prefix_error(int rc, const char *path, const char *what)
{
    char inner[512];
    snprintf(inner, sizeof inner, "%s", nmt_error_message());
    return nmt_set_error(rc, "%s: %s: %s", path, what, inner);
}

static int make_vocab(nmt_vocab **v, const char *const *tokens, int n, const char *key, const char *path)
{
    int rc = nmt_vocab_from_tokens(v, tokens, (size_t)n);
    return rc ? prefix_error(rc, path, key) : NMT_OK;
}

/* When the held bytes begin with exactly the model's parameters in its own
 * order (as nmt writes them, and as nmt_st_read_some keeps a checkpoint's model
 * tensors; a subword model's bytes may follow), the model takes the buffer
 * over instead of a copy of it, so that a process that translates holds its
 * parameters once. The model's own buffer, never written, is freed. */
static int adopt_data(nmt_model *m, st_file *st)
{
    if (sizeof *m->params != sizeof(float) || st->held_size < m->n_params * sizeof(float))
        return 0;
    for (int k = 0; k < m->n_tensors; k++) {
        const nmt_tensor_info *ti = &m->tensors[k];
        const st_tensor *t = nmt_st_find(st, ti->name);
        if (!t || t->begin != ti->offset * sizeof(float) ||
            t->end - t->begin != ti->size * sizeof(float))
            return 0;
    }
    nmt_model_adopt_params(m, (nmt_real *)(void *)st->data);
    st->data = NULL;
    return 1;
}

/* Everything after the container has been read and checked. With may_adopt
 * (the file is not kept after), the model may take over the file's data. */
static int load_model(nmt_model **out, nmt_file *f, const char *path, int may_adopt)
{
    nmt_config cfg;
    char *src_copy = NULL, *tgt_copy = NULL;
    const char **src_tok = NULL, **tgt_tok = NULL;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_subwords *sw = NULL;
    nmt_model *m = NULL;
    int rc;
    if ((rc = check_format(f, path)) || (rc = check_crc(f, path)) ||
        (rc = check_dtypes(f, path)) || (rc = parse_config(f, &cfg, path)))
        return rc;
    if (!(rc = split_vocab(f, "src_vocab", &src_copy, &src_tok, &cfg.src_vocab, path)) &&
        !(rc = split_vocab(f, "tgt_vocab", &tgt_copy, &tgt_tok, &cfg.tgt_vocab, path)) &&
        !(rc = check_joint(&cfg, src_tok, tgt_tok, path)) &&
        !(rc = check_tensors(f, &cfg, path)) &&
        !(rc = check_finite(f, path)) &&
        !(rc = load_subwords(&sw, f, src_tok, tgt_tok, &cfg, path)) &&
        !(rc = make_vocab(&sv, src_tok, cfg.src_vocab, "src_vocab", path)) &&
        !(rc = make_vocab(&tv, tgt_tok, cfg.tgt_vocab, "tgt_vocab", path))) {
        rc = nmt_model_create(&m, &cfg, sv, tv);
        if (rc) {
            rc = prefix_error(rc, path, "cannot create the model");
        } else {
            sv = tv = NULL; /* the model owns them now */
            m->subwords = sw;
            sw = NULL;
        }
    }
    if (!rc && !(may_adopt && adopt_data(m, &f->st))) {
        for (int k = 0; k < m->n_tensors; k++) {
            const nmt_tensor_info *ti = &m->tensors[k];
            const st_tensor *t = nmt_st_find(&f->st, ti->name);
            /* check_tensors matched every shape; this guards the copy */
            if (!t || t->end - t->begin != ti->size * sizeof(float)) {
                rc = nmt_set_error(NMT_ERR_FORMAT, "%s: tensor '%s' does not match the model", path,
                                   ti->name);
                break;
            }
            const unsigned char *src = f->st.data + t->begin;
            if (sizeof *m->params == sizeof(float)) {
                memcpy(m->params + ti->offset, src, ti->size * sizeof(float));
            } else {
                for (size_t j = 0; j < ti->size; j++) {
                    float x;
                    memcpy(&x, src + 4 * j, 4);
                    m->params[ti->offset + j] = x;
                }
            }
        }
    }
    if (rc) {
        nmt_model_free(m);
        m = NULL;
    }
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    nmt_subwords_free(sw);
    free(src_copy);
    free(tgt_copy);
    free(src_tok);
    free(tgt_tok);
    *out = m;
    return rc;
}

static int finish_load(nmt_model **out, nmt_file *f, int rc, const char *path, nmt_file **file_out)
{
    if (!rc)
        rc = load_model(out, f, path, !file_out);
    if (rc || !file_out) {
        nmt_file_free(f);
        f = NULL;
    }
    if (file_out)
        *file_out = f;
    return rc;
}

/* Whether a tensor name is one a model can have: the tensors a loaded model
 * is made from, or that check_tensors looks for, and its subword model. */
static int is_model_tensor(const char *name, void *ctx)
{
    (void)ctx;
    return claimed(name) || !strcmp(name, SUBWORDS_TENSOR);
}

int nmt_model_load(nmt_model **out, const char *path, nmt_file **file_out)
{
    *out = NULL;
    if (file_out)
        *file_out = NULL;
    nmt_file *f = calloc(1, sizeof *f);
    if (!f)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    /* Without file_out nothing but the model reads the file: the rest of a
     * checkpoint (the optimizer's moments) is checked but not held. */
    int rc = nmt_st_read_some(&f->st, path, file_out ? NULL : is_model_tensor, NULL);
    return finish_load(out, f, rc, path, file_out);
}

int nmt_model_load_memory(nmt_model **out, const void *buf, size_t size, const char *name,
                          nmt_file **file_out)
{
    *out = NULL;
    if (file_out)
        *file_out = NULL;
    nmt_file *f = calloc(1, sizeof *f);
    if (!f)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", name);
    return finish_load(out, f, nmt_st_parse(&f->st, buf, size, name), name, file_out);
}

/* ---- the file's contents -------------------------------------------------- */

int nmt_file_is_model_key(const char *key)
{
    return is_design_key(key);
}

const char *nmt_file_meta(const nmt_file *f, const char *key)
{
    return f ? nmt_st_meta(&f->st, key) : NULL;
}

const float *nmt_file_tensor(const nmt_file *f, const char *name, int *ndim,
                             int shape[NMT_MAX_NDIM])
{
    const st_tensor *t = f ? nmt_st_find(&f->st, name) : NULL;
    if (!t || t->ndim > NMT_MAX_NDIM || t->dtype != ST_F32)
        return NULL;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] > INT_MAX)
            return NULL;
    if (ndim)
        *ndim = t->ndim;
    if (shape)
        for (int d = 0; d < NMT_MAX_NDIM; d++)
            shape[d] = d < t->ndim ? (int)t->shape[d] : 0;
    /* begin is a multiple of 4 (the tensors tile the data from 0 and each
     * holds whole floats) and data comes from malloc, so this is aligned */
    return (const float *)(const void *)(f->st.data + t->begin);
}

const unsigned char *nmt_file_bytes(const nmt_file *f, const char *name, size_t *n)
{
    const st_tensor *t = f ? nmt_st_find(&f->st, name) : NULL;
    if (!t || t->dtype != ST_U8)
        return NULL;
    *n = t->end - t->begin;
    return f->st.data + t->begin;
}

int nmt_file_n_tensors(const nmt_file *f)
{
    return f->st.n_tensors;
}

const char *nmt_file_tensor_name(const nmt_file *f, int i)
{
    return i >= 0 && i < f->st.n_tensors ? f->st.tensors[i].name : NULL;
}

int nmt_file_n_meta(const nmt_file *f)
{
    return f->st.n_meta;
}

const char *nmt_file_meta_key(const nmt_file *f, int i)
{
    return i >= 0 && i < f->st.n_meta ? f->st.meta[i].key : NULL;
}

unsigned long long nmt_file_size(const nmt_file *f)
{
    return (unsigned long long)f->st.file_size;
}

void nmt_file_free(nmt_file *f)
{
    if (!f)
        return;
    nmt_st_free(&f->st);
    free(f);
}
