/* Setting up a training run: everything `nmt train` decides between its
 * options and the first step, as a library call that a second front end
 * (a server, a test) makes the same way.
 *
 * nmt_train_setup takes the settings as given and says what else was
 * given; it starts a fresh run (its units chosen, its subword model learned
 * or read, its corpora read, its model made or taken --init-from a file) or
 * continues one (the checkpoint's settings with the few that may change,
 * its corpora found again and checked to be the same data), and returns
 * the model, corpora, validation set and trainer ready for
 * nmt_trainer_run. Every input is read and checked before anything is
 * written; the run's folder is made last. It never prints: a refusal is an
 * error code with the reason (nmt_error_message), and what a person may
 * want to know comes through the callbacks. */
#ifndef NMT_TRAIN_SETUP_H
#define NMT_TRAIN_SETUP_H

#include "nmt/corpus.h"
#include "nmt/model.h"
#include "nmt/modelfile.h"
#include "nmt/train.h"

/* --max-len when a model reads subwords and none was given. Pieces
 * outnumber words (Multi30k De-En: 1.2-1.5 pieces a word at 4000-16000
 * pieces), so 50 would drop sentences that 50 words keep: Multi30k's
 * longest training sentence is 70 pieces at 4000 and 55 at 8000 (README,
 * Subwords), and sampled pieces (--subword-alpha) are more. */
#define NMT_SUBWORD_MAX_LEN 100

/* The pairs a streamed corpus (--shuffle-buffer) learns its subwords from
 * at most (nmt_corpus_learn_subwords_sample): 2 M lines of both sides,
 * which SentencePiece holds with its statistics in a few hundred MB. */
#define NMT_SUBWORD_SAMPLE_PAIRS 1000000

/* Without --subwords, --spm, --min-count or --max-vocab a fresh run learns
 * NMT_AUTO_SUBWORDS pieces when a side of its corpus has more distinct
 * words than that (real language: Multi30k's German side has 19209 words,
 * cased), and keeps words when both fit (the toy corpus: 227) (README,
 * "The default recipe"). */
#define NMT_AUTO_SUBWORDS 8000

/* Snapshots kept and averaged by default when there is validation: on
 * Multi30k De->En the mean of the last 3 validations' RNN models beat the
 * best of them by 0.56 validation BLEU after 30 minutes
 * (docs/experiments/rnn-vs-transformer.md) */
#define NMT_DEFAULT_SNAPSHOTS 3

/* Which settings the caller was given, rather than left at their defaults
 * (nmt_train_settings_default): the set-up chooses the others (--max-len
 * for subwords, the units, the dropout and init of the model's
 * architecture, ...), and on --resume only those given replace the
 * checkpoint's. */
typedef struct nmt_train_given {
    int src, tgt, valid_src, valid_tgt; /* --resume: where data that moved is now */
    int max_len, min_count, max_vocab;
    int subwords;                        /* nmt_train_request's subwords */
    int init;                            /* nmt_train_request's init */
    int dropout;                         /* nmt_train_request's dropout */
    int max_steps, epochs, max_time, early_stop, threads;
    int lr;                              /* else the optimizer's usual one */
    int patience, lr_decay;
    int warmup; /* else a settings' warmup of 0 takes the architecture's default */
    int warmup_share; /* else a linear decay with a warm-up takes NMT_WARMUP_SHARE */
    /* neither given: the architecture's batches (by tokens for the
     * Transformer); --batch-size alone keeps batches of that many sentences */
    int batch_size, batch_tokens;
    /* neither given and a validation set: the last NMT_DEFAULT_SNAPSHOTS
     * validations' models are kept and averaged at the end */
    int keep_snapshots, average_snapshots;
    /* --lr-schedule: 0 not given (the architecture's: plateaus for the RNN,
     * the linear decay after a warm-up for the Transformer), else one of these */
    enum { NMT_SCHEDULE_GIVEN_NONE, NMT_SCHEDULE_PLATEAU, NMT_SCHEDULE_RSQRT,
           NMT_SCHEDULE_LINEAR } schedule;
    /* each dropout site's own rate (the settings' dropout_*) */
    int dropout_emb, dropout_enc, dropout_out, dropout_residual, dropout_att, dropout_ff;
    /* word dropout: both sides' rate (nmt_train_request's word_dropout), and
     * each side's own (the settings' word_dropout_src, word_dropout_tgt) */
    int word_dropout, word_dropout_src, word_dropout_tgt;
    int subword_alpha; /* else the architecture's sampling (nmt_train_rule_subword_alpha) */
    /* guided alignment: --resume, where the links moved to; a fresh run,
     * the layer (else NMT_GUIDED_LAYER's rule) and the step rule (else
     * NMT_GUIDED_SHIFT) */
    int guided_links, guided_layer, guided_shift;
} nmt_train_given;

/* What the set-up tells its caller as it goes (nothing it says is needed
 * to run: a front end may show it or not). */
typedef enum {
    /* something a person may want to know (a corpus found where it lies
     * from the run folder, ...): the text, one sentence without "\n" */
    NMT_SETUP_NOTE,
    /* the model and corpora are read and checked; nothing is written yet */
    NMT_SETUP_READ,
    /* the run's folder exists and the trainer is made next */
    NMT_SETUP_READY,
} nmt_setup_event;

struct nmt_train_run;
typedef struct nmt_setup_callbacks {
    void *user;
    void (*on_event)(void *user, nmt_setup_event ev, const struct nmt_train_run *run,
                     const char *note);
} nmt_setup_callbacks;

/* A request: the settings as given (nmt_train_settings_default with what
 * was asked set in them), and the rest of what was asked. */
typedef struct nmt_train_request {
    nmt_train_settings s;
    nmt_train_given given;
    /* one of: a fresh run into out_dir (made once every input is read; it
     * must not hold a run), or the run in resume_dir continued */
    const char *out_dir;
    const char *resume_dir;
    /* a fresh run's model: from this file's weights, architecture,
     * vocabularies (or subword model) and lowercasing, or made anew */
    const char *init_from;
    /* a fresh model's units: a SentencePiece model file, or subwords
     * pieces learned from the corpus (0: words; not given: chosen by the
     * corpus, NMT_AUTO_SUBWORDS) */
    const char *spm;
    int subwords;
    /* a fresh model's initial weights (not given: nmt_init_default of its
     * architecture) */
    nmt_init_scheme init;
    double init_scale;
    /* given: every dropout site of the model's architecture at this rate,
     * but those given one by one; a rate of 0 turns word dropout off too,
     * but for a side given its own (a rate above 0 is a dropout of units,
     * not of words: it sets no word dropout) */
    float dropout;
    /* given: word dropout on both sides at this rate, but a side given its
     * own */
    float word_dropout;
} nmt_train_request;

/* A request with nothing given: s the defaults, init_scale 0.1. */
void nmt_train_request_default(nmt_train_request *q);

/* A run ready to train. */
typedef struct nmt_train_run {
    nmt_train_settings s;   /* what the run uses (the checkpoint's on resume) */
    nmt_model *model;
    nmt_corpus train;       /* with s.shuffle_buffer > 0 only its counts (n,
                             * n_lines, skipped_*; 0 on resume): the trainer
                             * streams the corpus */
    nmt_corpus valid;       /* read by rank 0 only (it validates for all) */
    int have_valid;
    char **refs;            /* the validation target's raw lines, for BLEU */
    size_t n_refs;
    nmt_valid_set valid_set;
    nmt_trainer *trainer;   /* restored from the checkpoint on resume */
    const char *dir;        /* the run's folder */
    int resumed;
    double learn_s;         /* seconds spent learning the subwords (0: none learned) */
    int subwords;           /* pieces learned (0: none) */
    int dropout_rule;       /* the architecture's rule by --max-time chose the
                             * dropout: 1 its long runs' rate, -1 its
                             * default below the threshold (0: no rule, the
                             * dropout given, every site given its own, or
                             * resumed) */
    int sampling_rule;      /* 1: the architecture's default sampled the pieces
                             * (nmt_train_rule_subword_alpha) */
    int subwords_auto;      /* learned because the corpus has this many distinct
                             * words (0: asked for, or not learned) */
    int replanned;          /* resumed with other limits than the checkpoint's,
                             * under a linear decay: its line now ends at the
                             * new end (planned_* hold the old limits) */
    int64_t planned_max_steps;
    int planned_epochs;
    double planned_max_time;
    /* internal */
    int have_train;
    nmt_file *ckpt;                /* --resume: the checkpoint */
    char *data_path[NMT_RUN_FILES];     /* what s's corpus and links paths point at */
    char *data_from_run[NMT_RUN_FILES]; /* ... and s's data_from_run */
    nmt_links *links;              /* guided alignment's links (s.guided_links), or NULL */
    nmt_vocab *counted[2];         /* a streamed corpus's counted vocabularies,
                                    * until the model takes them */
} nmt_train_run;

/* Sets up the run that q asks for into *out (NULL on failure). Refusals
 * (NMT_ERR_ARG, NMT_ERR_FORMAT, NMT_ERR_IO, ...) say why; nothing is
 * written before every input has been read and checked. cb may be NULL. */
int nmt_train_setup(nmt_train_run **out, const nmt_train_request *q,
                    const nmt_setup_callbacks *cb);
void nmt_train_run_free(nmt_train_run *r);

/* The bytes a run of this configuration holds at its peak (the parameters
 * with their gradients and the optimizer's moments, and the workspace of a
 * batch of B sentences of T positions), and the refusal of one that would
 * not fit: more than the smaller of physical memory and 8 GiB. */
int nmt_train_memory_estimate(const nmt_config *cfg, nmt_optim_kind opt, int B, int T,
                              double *bytes);
int nmt_train_check_memory(const nmt_config *cfg, nmt_optim_kind opt, int B, int T);

#endif
