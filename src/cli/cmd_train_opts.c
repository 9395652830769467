/* nmt train's options: the table, strict parsing of each value, and the
 * combinations refused before anything is read (cmd_train_opts.h; the help
 * is cmd_train_help.c's). */
#include "cmd_train_opts.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_opts.h"
#include "cli_outfile.h"
#include "nmt/error.h"
#include "nmt/vocab.h"

enum {
    O_SRC = 256, O_TGT, O_VALID_SRC, O_VALID_TGT, O_OUT, O_RESUME, O_INIT_FROM, O_LOWERCASE,
    O_MAX_LEN, O_MIN_COUNT, O_MAX_VOCAB, O_NO_SHUFFLE, O_CELL, O_ATTENTION, O_BIDI, O_UNIDI,
    O_EMB, O_HIDDEN, O_ATT_DIM, O_OUT_DIM, O_OPTIMIZER, O_LR, O_CLIP, O_DROPOUT,
    O_DROPOUT_EMB, O_DROPOUT_ENC, O_DROPOUT_OUT, O_LABEL_SMOOTHING, O_TIED, O_UNTIED,
    O_BATCH_SIZE, O_EPOCHS, O_MAX_STEPS, O_LR_DECAY, O_PATIENCE, O_EARLY_STOP, O_SEED,
    O_THREADS, O_VALID_EVERY, O_SAVE_EVERY, O_REPORT_EVERY, O_BATCH_LOG, O_ARCHIVE, O_INIT_SCALE, O_INIT,
    O_MAX_TIME, O_BEST_METRIC, O_KEEP_SNAPSHOTS, O_AVERAGE_SNAPSHOTS,
    O_SUBWORDS, O_SPM, O_SUBWORD_ALPHA, O_ARCH, O_D_MODEL, O_HEADS, O_FF, O_LAYERS,
    O_ENC_LAYERS, O_DEC_LAYERS, O_DROPOUT_RESIDUAL, O_DROPOUT_ATT, O_DROPOUT_FF, O_WARMUP,
    O_BATCH_TOKENS, O_ACCUMULATE, O_SHUFFLE_BUFFER, O_LR_SCHEDULE, O_DECAY_FROM, O_WARMUP_SHARE,
    O_NORM, O_FIXNORM, O_NO_FIXNORM, O_JOINT_VOCAB, O_WORD_DROPOUT, O_WORD_DROPOUT_SRC,
    O_WORD_DROPOUT_TGT, O_GUIDED_LINKS, O_GUIDED_WEIGHT, O_GUIDED_LAYER, O_GUIDED_HEAD,
    O_GUIDED_STEP, O_END
};

static const struct option long_options[] = {
    {"src", required_argument, 0, O_SRC},
    {"tgt", required_argument, 0, O_TGT},
    {"valid-src", required_argument, 0, O_VALID_SRC},
    {"valid-tgt", required_argument, 0, O_VALID_TGT},
    {"out", required_argument, 0, O_OUT},
    {"resume", required_argument, 0, O_RESUME},
    {"init-from", required_argument, 0, O_INIT_FROM},
    {"lowercase", no_argument, 0, O_LOWERCASE},
    {"max-len", required_argument, 0, O_MAX_LEN},
    {"min-count", required_argument, 0, O_MIN_COUNT},
    {"max-vocab", required_argument, 0, O_MAX_VOCAB},
    {"no-shuffle", no_argument, 0, O_NO_SHUFFLE},
    {"cell", required_argument, 0, O_CELL},
    {"attention", required_argument, 0, O_ATTENTION},
    {"bidirectional", no_argument, 0, O_BIDI},
    {"unidirectional", no_argument, 0, O_UNIDI},
    {"emb", required_argument, 0, O_EMB},
    {"hidden", required_argument, 0, O_HIDDEN},
    {"att-dim", required_argument, 0, O_ATT_DIM},
    {"out-dim", required_argument, 0, O_OUT_DIM},
    {"optimizer", required_argument, 0, O_OPTIMIZER},
    {"lr", required_argument, 0, O_LR},
    {"clip", required_argument, 0, O_CLIP},
    {"dropout", required_argument, 0, O_DROPOUT},
    {"dropout-emb", required_argument, 0, O_DROPOUT_EMB},
    {"dropout-enc", required_argument, 0, O_DROPOUT_ENC},
    {"dropout-out", required_argument, 0, O_DROPOUT_OUT},
    {"label-smoothing", required_argument, 0, O_LABEL_SMOOTHING},
    {"tied-embeddings", no_argument, 0, O_TIED},
    {"untied-embeddings", no_argument, 0, O_UNTIED},
    {"batch-size", required_argument, 0, O_BATCH_SIZE},
    {"batch-tokens", required_argument, 0, O_BATCH_TOKENS},
    {"accumulate", required_argument, 0, O_ACCUMULATE},
    {"shuffle-buffer", required_argument, 0, O_SHUFFLE_BUFFER},
    {"epochs", required_argument, 0, O_EPOCHS},
    {"max-steps", required_argument, 0, O_MAX_STEPS},
    {"lr-decay", required_argument, 0, O_LR_DECAY},
    {"patience", required_argument, 0, O_PATIENCE},
    {"early-stop", required_argument, 0, O_EARLY_STOP},
    {"seed", required_argument, 0, O_SEED},
    {"init-scale", required_argument, 0, O_INIT_SCALE},
    {"init", required_argument, 0, O_INIT},
    {"threads", required_argument, 0, O_THREADS},
    {"valid-every", required_argument, 0, O_VALID_EVERY},
    {"save-every", required_argument, 0, O_SAVE_EVERY},
    {"report-every", required_argument, 0, O_REPORT_EVERY},
    {"batch-log", required_argument, 0, O_BATCH_LOG},
    {"archive-snapshots", required_argument, 0, O_ARCHIVE},
    {"max-time", required_argument, 0, O_MAX_TIME},
    {"best-metric", required_argument, 0, O_BEST_METRIC},
    {"keep-snapshots", required_argument, 0, O_KEEP_SNAPSHOTS},
    {"average-snapshots", no_argument, 0, O_AVERAGE_SNAPSHOTS},
    {"subwords", required_argument, 0, O_SUBWORDS},
    {"spm", required_argument, 0, O_SPM},
    {"subword-alpha", required_argument, 0, O_SUBWORD_ALPHA},
    {"arch", required_argument, 0, O_ARCH},
    {"d-model", required_argument, 0, O_D_MODEL},
    {"heads", required_argument, 0, O_HEADS},
    {"ff", required_argument, 0, O_FF},
    {"layers", required_argument, 0, O_LAYERS},
    {"enc-layers", required_argument, 0, O_ENC_LAYERS},
    {"dec-layers", required_argument, 0, O_DEC_LAYERS},
    {"norm", required_argument, 0, O_NORM},
    {"fixnorm", no_argument, 0, O_FIXNORM},
    {"no-fixnorm", no_argument, 0, O_NO_FIXNORM},
    {"dropout-residual", required_argument, 0, O_DROPOUT_RESIDUAL},
    {"dropout-att", required_argument, 0, O_DROPOUT_ATT},
    {"dropout-ff", required_argument, 0, O_DROPOUT_FF},
    {"warmup", required_argument, 0, O_WARMUP},
    {"lr-schedule", required_argument, 0, O_LR_SCHEDULE},
    {"decay-from", required_argument, 0, O_DECAY_FROM},
    {"warmup-share", required_argument, 0, O_WARMUP_SHARE},
    {"joint-vocab", no_argument, 0, O_JOINT_VOCAB},
    {"word-dropout", required_argument, 0, O_WORD_DROPOUT},
    {"word-dropout-src", required_argument, 0, O_WORD_DROPOUT_SRC},
    {"word-dropout-tgt", required_argument, 0, O_WORD_DROPOUT_TGT},
    {"guided-links", required_argument, 0, O_GUIDED_LINKS},
    {"guided-weight", required_argument, 0, O_GUIDED_WEIGHT},
    {"guided-layer", required_argument, 0, O_GUIDED_LAYER},
    {"guided-head", required_argument, 0, O_GUIDED_HEAD},
    {"guided-step", required_argument, 0, O_GUIDED_STEP},
    {"quiet", no_argument, 0, 'q'},
    {"verbose", no_argument, 0, 'v'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static const char *option_name(int code)
{
    for (const struct option *o = long_options; o->name; o++)
        if (o->val == code)
            return o->name;
    return "?";
}

typedef struct train_args {
    nmt_train_request q; /* the settings and what else the library's set-up takes */
    int given[O_END];    /* options given on the command line */
    int layers;          /* --layers: both sides' */
    int schedule;        /* --lr-schedule: NMT_SCHEDULE_*, 0 not given */
} train_args;

/* Whether the run's schedule is, or may be (--init-from's architecture is
 * the file's), the linear decay: asked for by name, or the architecture's
 * own when no other schedule is asked for by name or by its parts (a
 * warm-up alone is rsqrt's; a decay or patience, the plateaus'). */
static int may_be_linear(const train_args *a)
{
    if (a->schedule)
        return a->schedule == NMT_SCHEDULE_LINEAR;
    if (a->given[O_WARMUP] || a->given[O_LR_DECAY] ||
        (a->given[O_PATIENCE] && a->q.s.patience > 0))
        return 0;
    const nmt_arch_recipe *rec = nmt_arch_recipe_of(a->q.s.model.arch);
    return a->q.init_from || (rec && rec->linear_decay);
}

#define INT_MAX_OPT 2147483647L

/* A rate in [0, 1): dropout, label smoothing. */
static int opt_rate(const char *name, const char *v, float *out)
{
    if (opt_float(name, v, 0, 1, out))
        return -1;
    if (*out >= 1.0f) {
        cli_error("%s: must be below 1", name);
        return -1;
    }
    return 0;
}

/* Parses one option's value into a; -1 on a bad value (already reported). */
static int parse_value(train_args *a, int c, const char *v)
{
    nmt_train_request *q = &a->q;
    nmt_train_settings *s = &q->s;
    nmt_rnn_config *rnn = &s->model.rnn;
    nmt_transformer_config *tf = &s->model.transformer;
    char name[40];
    snprintf(name, sizeof name, "--%s", option_name(c));
    long l;
    switch (c) {
    case O_SRC: s->src_path = v; return 0;
    case O_TGT: s->tgt_path = v; return 0;
    case O_VALID_SRC: s->valid_src_path = v; return 0;
    case O_VALID_TGT: s->valid_tgt_path = v; return 0;
    case O_OUT: q->out_dir = v; return 0;
    case O_BATCH_LOG: s->batch_log_path = v; return 0;
    case O_ARCHIVE: s->archive_dir = v; return 0;
    case O_RESUME: q->resume_dir = v; return 0;
    case O_INIT_FROM: q->init_from = v; return 0;
    case O_SPM: q->spm = v; return 0;
    /* SentencePiece needs more pieces than the 4 specials and its alphabet;
     * 0 asks for words */
    case O_SUBWORDS:
        if (opt_int(name, v, 0, 1 << 20, &q->subwords))
            return -1;
        if (q->subwords > 0 && q->subwords <= NMT_N_SPECIAL) {
            cli_error("%s: %d pieces are too few (more than %d, or 0 for words)", name,
                      q->subwords, NMT_N_SPECIAL);
            return -1;
        }
        return 0;
    case O_SUBWORD_ALPHA:
        if (opt_float(name, v, 0, 1000, &s->subword_alpha))
            return -1;
        return 0;
    case O_LOWERCASE: s->model.lowercase = 1; return 0;
    case O_NO_SHUFFLE: s->shuffle = 0; return 0;
    case O_BIDI: rnn->bidirectional = 1; return 0;
    case O_UNIDI: rnn->bidirectional = 0; return 0;
    /* the passes take at most 1 << 16 positions (tokens + </s>) */
    case O_MAX_LEN: return opt_int(name, v, 1, (1 << 16) - 1, &s->max_len);
    case O_MIN_COUNT: return opt_int(name, v, 1, INT_MAX_OPT, &s->min_count);
    case O_MAX_VOCAB: return opt_int(name, v, 0, 100000000, &s->max_vocab);
    case O_EMB: return opt_int(name, v, 1, 65536, &rnn->emb);
    case O_HIDDEN: return opt_int(name, v, 1, 65536, &rnn->hidden);
    case O_ATT_DIM: return opt_int(name, v, 1, 65536, &rnn->att_dim);
    case O_OUT_DIM: return opt_int(name, v, 1, 65536, &rnn->out_dim);
    case O_D_MODEL: return opt_int(name, v, 1, 65536, &tf->d_model);
    case O_HEADS: return opt_int(name, v, 1, 65536, &tf->heads);
    case O_FF: return opt_int(name, v, 1, 65536, &tf->ff);
    case O_LAYERS: return opt_int(name, v, 1, 1024, &a->layers);
    case O_ENC_LAYERS: return opt_int(name, v, 1, 1024, &tf->enc_layers);
    case O_DEC_LAYERS: return opt_int(name, v, 1, 1024, &tf->dec_layers);
    case O_BATCH_SIZE: return opt_int(name, v, 1, 1000000, &s->batch_size);
    case O_BATCH_TOKENS: return opt_int(name, v, 1, 1 << 30, &s->batch_tokens);
    case O_ACCUMULATE: return opt_int(name, v, 1, 1 << 20, &s->accumulate);
    case O_SHUFFLE_BUFFER: {
        long n;
        if (opt_long(name, v, 0, 1L << 40, &n))
            return -1;
        s->shuffle_buffer = n;
        return 0;
    }
    case O_EPOCHS: return opt_int(name, v, 1, 1000000, &s->epochs);
    case O_PATIENCE: return opt_int(name, v, 0, INT_MAX_OPT, &s->patience);
    case O_EARLY_STOP: return opt_int(name, v, 0, INT_MAX_OPT, &s->early_stop);
    case O_THREADS: return opt_int(name, v, 1, 256, &s->threads);
    case O_KEEP_SNAPSHOTS: return opt_int(name, v, 0, 1000, &s->keep_snapshots);
    case O_AVERAGE_SNAPSHOTS: s->average_snapshots = 1; return 0;
    /* 100000 hours: past any run, and exact in a double */
    case O_MAX_TIME: return opt_duration(name, v, 3.6e8, &s->max_time);
    case O_BEST_METRIC: {
        static const char *const metrics[] = {"bleu", "ppl", NULL};
        int i = opt_choice(name, v, metrics);
        if (i < 0)
            return -1;
        return nmt_best_metric_parse(v, &s->best_metric) ? -1 : 0;
    }
    case O_MAX_STEPS:
    case O_VALID_EVERY:
    case O_SAVE_EVERY:
    case O_REPORT_EVERY:
        if (opt_long(name, v, 0, 0x7fffffffffffffffL, &l))
            return -1;
        if (c == O_MAX_STEPS)
            s->max_steps = l;
        else if (c == O_VALID_EVERY)
            s->valid_every = l;
        else if (c == O_SAVE_EVERY)
            s->save_every = l;
        else
            s->report_every = l;
        return 0;
    case O_SEED: return opt_u64(name, v, &s->seed);
    case O_INIT: {
        static const char *const inits[] = {"uniform", "orthogonal", "bahdanau", "xavier", NULL};
        int i = opt_choice(name, v, inits);
        if (i < 0)
            return -1;
        return nmt_init_parse(v, &q->init) ? -1 : 0;
    }
    case O_INIT_SCALE:
        if (opt_double(name, v, 0, 10, &q->init_scale))
            return -1;
        if (q->init_scale <= 0) {
            cli_error("%s: must be greater than 0", name);
            return -1;
        }
        return 0;
    case O_LR:
        if (opt_double(name, v, 0, 1e12, &s->lr))
            return -1;
        if (s->lr <= 0) {
            cli_error("%s: must be greater than 0", name);
            return -1;
        }
        return 0;
    case O_CLIP: return opt_double(name, v, 0, 1e12, &s->clip);
    case O_LR_DECAY:
        if (opt_double(name, v, 0, 1, &s->lr_decay))
            return -1;
        if (s->lr_decay <= 0) {
            cli_error("%s: must be greater than 0 (1 turns decay off)", name);
            return -1;
        }
        return 0;
    case O_WARMUP:
        if (opt_long(name, v, 0, 0x7fffffffffffffffL, &l))
            return -1;
        s->warmup = l;
        return 0;
    case O_LR_SCHEDULE:
        if (!strcmp(v, "plateau"))
            a->schedule = NMT_SCHEDULE_PLATEAU;
        else if (!strcmp(v, "rsqrt"))
            a->schedule = NMT_SCHEDULE_RSQRT;
        else if (!strcmp(v, "linear"))
            a->schedule = NMT_SCHEDULE_LINEAR;
        else {
            cli_error("%s: '%s' is none of plateau, rsqrt, linear", name, v);
            return -1;
        }
        return 0;
    case O_DECAY_FROM:
        if (opt_double(name, v, 0, 1, &s->decay_from))
            return -1;
        if (s->decay_from >= 1) {
            cli_error("%s: must be below 1 (the line down needs some of the run)", name);
            return -1;
        }
        return 0;
    case O_WARMUP_SHARE:
        if (opt_double(name, v, 0, 1, &s->warmup_share))
            return -1;
        if (s->warmup_share >= 1) {
            cli_error("%s: must be below 1 (a warm-up that may take the whole run leaves "
                      "nothing of the line)", name);
            return -1;
        }
        return 0;
    case O_DROPOUT: return opt_rate(name, v, &q->dropout);
    case O_DROPOUT_EMB: return opt_rate(name, v, &s->dropout_emb);
    case O_DROPOUT_ENC: return opt_rate(name, v, &s->dropout_enc);
    case O_DROPOUT_OUT: return opt_rate(name, v, &s->dropout_out);
    case O_DROPOUT_RESIDUAL: return opt_rate(name, v, &s->dropout_residual);
    case O_DROPOUT_ATT: return opt_rate(name, v, &s->dropout_att);
    case O_DROPOUT_FF: return opt_rate(name, v, &s->dropout_ff);
    case O_LABEL_SMOOTHING: return opt_rate(name, v, &s->label_smoothing);
    case O_FIXNORM: tf->fixnorm = 1; return 0;
    case O_NO_FIXNORM: tf->fixnorm = 0; return 0;
    case O_NORM: {
        static const char *const norms[] = {"layer", "scale", NULL};
        int i = opt_choice(name, v, norms);
        if (i < 0)
            return -1;
        tf->norm = i ? NMT_TF_NORM_SCALE : NMT_TF_NORM_LAYER;
        return 0;
    }
    case O_WORD_DROPOUT: return opt_rate(name, v, &q->word_dropout);
    case O_WORD_DROPOUT_SRC: return opt_rate(name, v, &s->word_dropout_src);
    case O_WORD_DROPOUT_TGT: return opt_rate(name, v, &s->word_dropout_tgt);
    case O_JOINT_VOCAB: s->model.joint_vocab = 1; return 0;
    case O_GUIDED_LINKS: s->guided_links = v; return 0;
    case O_GUIDED_WEIGHT: return opt_float(name, v, 0, 1e6, &s->guided_weight);
    case O_GUIDED_LAYER: return opt_int(name, v, 0, 1023, &s->guided_layer);
    case O_GUIDED_HEAD: return opt_int(name, v, 0, 65535, &s->guided_head);
    case O_GUIDED_STEP: {
        static const char *const steps[] = {"predict", "read", NULL};
        int i = opt_choice(name, v, steps);
        if (i < 0)
            return -1;
        s->guided_shift = i;
        return 0;
    }
    case O_TIED: s->model.tied = 1; return 0;
    case O_UNTIED: s->model.tied = 0; return 0;
    case O_ARCH: {
        static const char *const archs[] = {"rnn", "transformer", NULL};
        int i = opt_choice(name, v, archs);
        if (i < 0)
            return -1;
        return nmt_arch_parse(v, &s->model.arch) ? -1 : 0;
    }
    case O_CELL: {
        static const char *const cells[] = {"rnn", "gru", "lstm", NULL};
        int i = opt_choice(name, v, cells);
        if (i < 0)
            return -1;
        return nmt_cell_parse(v, &rnn->cell) ? -1 : 0;
    }
    case O_ATTENTION: {
        static const char *const atts[] = {"bahdanau", "dot", "general", "scaled-dot", "none",
                                           NULL};
        int i = opt_choice(name, v, atts);
        if (i < 0)
            return -1;
        return nmt_attention_parse(v, &rnn->attention) ? -1 : 0;
    }
    case O_OPTIMIZER: {
        static const char *const opts[] = {"sgd", "adam", "adadelta", NULL};
        int i = opt_choice(name, v, opts);
        if (i < 0)
            return -1;
        s->optimizer = (nmt_optim_kind)i;
        return 0;
    }
    }
    return -1;
}

/* Which options belong to which architecture, by its name (nmt_arch_name;
 * each list ends in 0): an option of some architecture's list but not of
 * the model's is refused. An option in no list is every architecture's. */
static const int rnn_options[] = {O_CELL, O_ATTENTION, O_BIDI, O_UNIDI, O_EMB, O_HIDDEN,
                                  O_ATT_DIM, O_OUT_DIM, O_DROPOUT_ENC, O_DROPOUT_OUT, 0};
static const int transformer_options[] = {O_D_MODEL, O_HEADS, O_FF, O_LAYERS, O_ENC_LAYERS,
                                          O_DEC_LAYERS, O_DROPOUT_RESIDUAL, O_DROPOUT_ATT,
                                          O_DROPOUT_FF, O_NORM, O_FIXNORM, O_NO_FIXNORM,
                                          O_JOINT_VOCAB, O_GUIDED_LINKS, O_GUIDED_WEIGHT,
                                          O_GUIDED_LAYER, O_GUIDED_HEAD, O_GUIDED_STEP, 0};
static const struct {
    const char *arch;
    const int *options;
} arch_options[] = {{"rnn", rnn_options}, {"transformer", transformer_options}};
#define COUNT(a) (sizeof a / sizeof a[0])

/* The architecture an option belongs to when that is not `arch` (NULL: it
 * is arch's, or every architecture's). */
static const char *other_arch_of(int code, const char *arch)
{
    const char *other = NULL;
    for (size_t i = 0; i < COUNT(arch_options); i++)
        for (const int *o = arch_options[i].options; *o; o++) {
            if (*o == code && !strcmp(arch_options[i].arch, arch))
                return NULL;
            if (*o == code)
                other = arch_options[i].arch;
        }
    return other;
}

/* A fresh model's options that do not fit its architecture: another
 * architecture's, settings its architecture refuses (nmt_config_check:
 * heads that do not divide the width, dot attention over a bidirectional
 * encoder, tied embeddings of another size, ...), an init scheme it has
 * not (nmt_arch_has_init). */
static int check_architecture(const train_args *a)
{
    const nmt_config *m = &a->q.s.model;
    const char *arch = nmt_arch_name(m->arch), *other;
    for (int c = O_SRC; c < O_END; c++)
        if (a->given[c] && (other = other_arch_of(c, arch))) {
            cli_error("--%s is an option of --arch %s, not of --arch %s%s", option_name(c),
                      other, arch, a->given[O_ARCH] ? "" : " (the default)");
            return -1;
        }
    /* an architecture this build lacks is the set-up's to refuse (a limit
     * of the build, not a usage error) */
    nmt_config sized = *m; /* the vocabularies are not known yet */
    sized.src_vocab = sized.tgt_vocab = NMT_N_SPECIAL;
    if (nmt_arch_available(m->arch) && nmt_config_check(&sized)) {
        cli_error("%s", nmt_error_message());
        return -1;
    }
    nmt_init_scheme init = a->given[O_INIT] ? a->q.init : nmt_init_default(m->arch);
    if (nmt_arch_available(m->arch) && !nmt_arch_has_init(m->arch, init)) {
        const char *names[NMT_INIT_XAVIER + 1];
        int n = 0;
        for (int k = 0; k <= NMT_INIT_XAVIER; k++)
            if (nmt_arch_has_init(m->arch, (nmt_init_scheme)k))
                names[n++] = nmt_init_name((nmt_init_scheme)k);
        char own[96] = ""; /* "uniform, orthogonal or bahdanau" */
        for (int k = 0; k < n; k++)
            snprintf(own + strlen(own), sizeof own - strlen(own), "%s%s",
                     k == 0 ? "" : k == n - 1 ? " or " : ", ", names[k]);
        cli_error("--init %s is not a scheme of --arch %s (%s)", nmt_init_name(init), arch, own);
        return -1;
    }
    if (a->given[O_INIT_SCALE] && init == NMT_INIT_XAVIER) {
        char whose[64] = ""; /* "the default of --arch transformer, " */
        if (!a->given[O_INIT])
            snprintf(whose, sizeof whose, "the default of --arch %s, ", arch);
        cli_error("--init-scale goes with --init uniform or orthogonal, not --init xavier "
                  "(%swhose scales follow each matrix's shape)", whose);
        return -1;
    }
    return 0;
}

/* Options that make no sense with --resume (the checkpoint fixes them) or
 * with --init-from (the model fixes them). */
static int check_combinations(const train_args *a)
{
    static const int arch[] = {O_ARCH, O_CELL, O_ATTENTION, O_BIDI, O_UNIDI, O_EMB, O_HIDDEN,
                               O_ATT_DIM, O_OUT_DIM, O_D_MODEL, O_HEADS, O_FF, O_LAYERS,
                               O_ENC_LAYERS, O_DEC_LAYERS, O_NORM, O_FIXNORM, O_NO_FIXNORM, O_TIED,
                               O_UNTIED, O_LOWERCASE,
                               O_MIN_COUNT, O_MAX_VOCAB, O_SUBWORDS, O_SPM, O_JOINT_VOCAB};
    const nmt_train_request *q = &a->q;
    const nmt_train_settings *s = &q->s;
    if (q->resume_dir) {
        /* the corpora may be given where they moved to: they are checked
         * to be the same data (train/run_data.c) */
        for (int c = O_SRC; c < O_END; c++)
            if (a->given[c] && c != O_RESUME && c != O_MAX_STEPS && c != O_EPOCHS &&
                c != O_MAX_TIME && c != O_EARLY_STOP && c != O_THREADS && c != O_BATCH_LOG &&
                c != O_ARCHIVE && c != O_SRC && c != O_TGT && c != O_VALID_SRC &&
                c != O_VALID_TGT && c != O_GUIDED_LINKS) {
                cli_error("--%s cannot be changed on --resume: the run continues with the "
                          "settings of its checkpoint (only --max-steps, --epochs, "
                          "--max-time, --early-stop and --threads may be given, and --src, "
                          "--tgt, --valid-src, --valid-tgt, --guided-links for data that "
                          "moved)", option_name(c));
                return -1;
            }
        return 0;
    }
    if (s->archive_dir && !s->valid_src_path) {
        cli_error("--archive-snapshots needs a validation set (--valid-src, --valid-tgt): "
                  "its models are those of validations");
        return -1;
    }
    if (s->keep_snapshots > 0 && !s->valid_src_path) {
        cli_error("--keep-snapshots needs a validation set (--valid-src, --valid-tgt): "
                  "snapshots are the models of validations");
        return -1;
    }
    if (s->average_snapshots && s->keep_snapshots < 2) {
        cli_error("--average-snapshots needs --keep-snapshots K with K of at least 2 (the "
                  "snapshots it averages)");
        return -1;
    }
    for (int c = O_INIT_SCALE; c <= O_INIT; c++)
        if (q->init_from && a->given[c]) {
            cli_error("--%s cannot be used with --init-from: the weights come from the "
                      "model file", option_name(c));
            return -1;
        }
    if (q->init == NMT_INIT_BAHDANAU && a->given[O_INIT_SCALE]) {
        cli_error("--init-scale goes with --init uniform or orthogonal, not --init bahdanau "
                  "(whose scales are the paper's)");
        return -1;
    }
    if (q->init_from)
        for (size_t i = 0; i < COUNT(arch); i++)
            if (a->given[arch[i]]) {
                cli_error("--%s cannot be used with --init-from: the model file fixes the "
                          "architecture, the vocabularies (words or pieces) and lowercasing",
                          option_name(arch[i]));
                return -1;
            }
    /* with --init-from the set-up checks the dropouts against the file's
     * architecture */
    if (!q->init_from && check_architecture(a))
        return -1;
    if (a->given[O_TIED] && a->given[O_UNTIED]) {
        cli_error("--tied-embeddings and --untied-embeddings: give one");
        return -1;
    }
    if (q->subwords && q->spm) {
        cli_error("--subwords and --spm: give one (learn a SentencePiece model, or use one)");
        return -1;
    }
    if ((q->subwords || q->spm) && (a->given[O_MIN_COUNT] || a->given[O_MAX_VOCAB])) {
        cli_error("--%s does not apply to subwords: the vocabularies are the SentencePiece "
                  "model's pieces (choose their number with --subwords N)",
                  a->given[O_MIN_COUNT] ? "min-count" : "max-vocab");
        return -1;
    }
    int decays_itself = a->schedule == NMT_SCHEDULE_LINEAR || a->schedule == NMT_SCHEDULE_RSQRT;
    if (decays_itself && (a->given[O_LR_DECAY] || (a->given[O_PATIENCE] && s->patience > 0))) {
        cli_error("--%s does not go with --lr-schedule %s: it lowers the lr itself "
                  "(docs/training.md)", a->given[O_LR_DECAY] ? "lr-decay" : "patience",
                  a->schedule == NMT_SCHEDULE_LINEAR ? "linear" : "rsqrt");
        return -1;
    }
    if (a->schedule == NMT_SCHEDULE_PLATEAU && a->given[O_WARMUP] && s->warmup > 0) {
        cli_error("--warmup does not go with --lr-schedule plateau: its lr is constant "
                  "until a plateau lowers it (--lr-schedule rsqrt or linear warm up)");
        return -1;
    }
    /* without a step or time limit the epochs (10 unless given) end the
     * run; a streamed corpus's epoch is not counted until it ends */
    if (a->schedule == NMT_SCHEDULE_LINEAR && !a->given[O_MAX_STEPS] && !a->given[O_MAX_TIME] &&
        !a->q.resume_dir && s->shuffle_buffer > 0) {
        cli_error("--lr-schedule linear decays to 0 at the run's end: a streamed corpus "
                  "(--shuffle-buffer) needs --max-steps or --max-time to place it");
        return -1;
    }
    static const int line_options[] = {O_DECAY_FROM, O_WARMUP_SHARE};
    for (size_t i = 0; i < sizeof line_options / sizeof *line_options; i++) {
        int c = line_options[i];
        if (a->given[c] && !may_be_linear(a)) {
            cli_error("--%s needs --lr-schedule linear (the Transformer's default): it is "
                      "where that line %s", option_name(c),
                      c == O_DECAY_FROM ? "down starts" : "'s warm-up ends at the latest");
            return -1;
        }
    }
    if (s->warmup > 0 && (a->given[O_LR_DECAY] || (a->given[O_PATIENCE] && s->patience > 0))) {
        cli_error("--%s does not go with --warmup: the warmup's schedule lowers the lr itself, "
                  "as --lr * sqrt(warmup / step) (docs/training.md)",
                  a->given[O_LR_DECAY] ? "lr-decay" : "patience");
        return -1;
    }
    static const int guided_options[] = {O_GUIDED_WEIGHT, O_GUIDED_LAYER, O_GUIDED_HEAD,
                                         O_GUIDED_STEP};
    for (size_t i = 0; i < COUNT(guided_options); i++)
        if (a->given[guided_options[i]] && !s->guided_links) {
            cli_error("--%s needs --guided-links FILE: it sets how the links train an "
                      "attention head", option_name(guided_options[i]));
            return -1;
        }
    if (!s->src_path || !s->tgt_path) {
        cli_error("--src and --tgt are required (or --resume DIR)");
        return -1;
    }
    if (!q->out_dir) {
        cli_error("--out DIR is required (or --resume DIR)");
        return -1;
    }
    if (!s->valid_src_path != !s->valid_tgt_path) {
        cli_error("--valid-src and --valid-tgt go together");
        return -1;
    }
    return 0;
}

/* Refuses a --batch-log that is one of the files the run reads (the
 * corpora, --spm, --init-from, the run folder of --resume): it is written
 * from the start, and would overwrite it. 0, or 2 after naming both. */
static int check_batch_log(const nmt_train_request *q)
{
    const nmt_train_settings *s = &q->s;
    const cli_file log = {"--batch-log", s->batch_log_path};
    const cli_file in[] = {{"--src", s->src_path},         {"--tgt", s->tgt_path},
                           {"--valid-src", s->valid_src_path}, {"--valid-tgt", s->valid_tgt_path},
                           {"--spm", q->spm},              {"--init-from", q->init_from},
                           {"--guided-links", s->guided_links}};
    int rc = cli_check_outputs(&log, 1, in, COUNT(in));
    return rc || !q->resume_dir ? rc : cli_check_run_outputs(&log, &q->resume_dir, 1, 0);
}

/* What the set-up is told was given, of the options it decides by. */
static nmt_train_given given_of(const train_args *a)
{
    const int *g = a->given;
    return (nmt_train_given){
        .src = g[O_SRC], .tgt = g[O_TGT], .valid_src = g[O_VALID_SRC],
        .valid_tgt = g[O_VALID_TGT], .max_len = g[O_MAX_LEN], .min_count = g[O_MIN_COUNT],
        .max_vocab = g[O_MAX_VOCAB], .subwords = g[O_SUBWORDS], .init = g[O_INIT],
        .dropout = g[O_DROPOUT], .max_steps = g[O_MAX_STEPS], .epochs = g[O_EPOCHS],
        .max_time = g[O_MAX_TIME], .early_stop = g[O_EARLY_STOP], .threads = g[O_THREADS],
        .lr = g[O_LR], .patience = g[O_PATIENCE], .lr_decay = g[O_LR_DECAY], .warmup = g[O_WARMUP],
        .batch_size = g[O_BATCH_SIZE], .batch_tokens = g[O_BATCH_TOKENS],
        .dropout_emb = g[O_DROPOUT_EMB], .dropout_enc = g[O_DROPOUT_ENC],
        .dropout_out = g[O_DROPOUT_OUT], .dropout_residual = g[O_DROPOUT_RESIDUAL],
        .dropout_att = g[O_DROPOUT_ATT], .dropout_ff = g[O_DROPOUT_FF],
        .word_dropout = g[O_WORD_DROPOUT], .word_dropout_src = g[O_WORD_DROPOUT_SRC],
        .word_dropout_tgt = g[O_WORD_DROPOUT_TGT],
        .warmup_share = g[O_WARMUP_SHARE], .schedule = a->schedule, .keep_snapshots = g[O_KEEP_SNAPSHOTS],
        .average_snapshots = g[O_AVERAGE_SNAPSHOTS], .subword_alpha = g[O_SUBWORD_ALPHA],
        .guided_links = g[O_GUIDED_LINKS], .guided_layer = g[O_GUIDED_LAYER],
        .guided_shift = g[O_GUIDED_STEP],
    };
}

int train_parse_args(nmt_train_request *out, int argc, char **argv, int *exit_code)
{
    train_args args, *a = &args;
    memset(a, 0, sizeof *a);
    nmt_train_request_default(&a->q);
    nmt_train_settings *s = &a->q.s;
    s->threads = cli_default_threads();
    optind = 1;
    opterr = 1;
    int c;
    while ((c = getopt_long(argc, argv, "qvh", long_options, NULL)) != -1) {
        if (c == 'h') {
            train_help();
            *exit_code = 0;
            return -1;
        }
        if (c == 'q') {
            cli_verbosity = 0;
            continue;
        }
        if (c == 'v') {
            cli_verbosity = 2;
            continue;
        }
        if (c < O_SRC || c >= O_END) {
            *exit_code = cli_usage_error();
            return -1;
        }
        a->given[c] = 1;
        if (parse_value(a, c, optarg)) {
            *exit_code = 2;
            return -1;
        }
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s'", argv[optind]);
        *exit_code = cli_usage_error();
        return -1;
    }
    /* tied embeddings (the default) need --out-dim = --emb: the deep output
     * follows --emb unless given, and a different --out-dim unties them
     * unless --tied-embeddings asks for both (refused below) */
    nmt_rnn_config *rnn = &s->model.rnn;
    if (!a->given[O_OUT_DIM])
        rnn->out_dim = rnn->emb;
    else if (rnn->out_dim != rnn->emb && !a->given[O_TIED])
        s->model.tied = 0;
    /* --layers sets both sides but one given its own */
    nmt_transformer_config *tf = &s->model.transformer;
    if (a->given[O_LAYERS] && !a->given[O_ENC_LAYERS])
        tf->enc_layers = a->layers;
    if (a->given[O_LAYERS] && !a->given[O_DEC_LAYERS])
        tf->dec_layers = a->layers;
    a->q.given = given_of(a);
    if (check_combinations(a) || check_batch_log(&a->q)) {
        *exit_code = 2;
        return -1;
    }
    *out = a->q;
    return 0;
}
