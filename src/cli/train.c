/* nmt train: options, checks of every input before anything is written, the
 * run itself (the library's loop) and what the user sees of it. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "opts.h"
#include "train_data.h"
#include "unknown.h"
#include "nmt/corpus.h"
#include "nmt/dist.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/progress.h"
#include "nmt/train.h"
#include "nmt/units.h"

/* --max-len when a model reads subwords. Pieces outnumber words (Multi30k
 * De-En: 1.2-1.5 pieces a word at 4000-16000 pieces), so 50 would drop
 * sentences that 50 words keep: Multi30k's longest training sentence is 70
 * pieces at 4000 and 55 at 8000 (docs/experiments/subwords.md), and sampled
 * pieces (--subword-alpha) are more. */
#define SUBWORD_MAX_LEN 100

/* Without --subwords, --spm, --min-count or --max-vocab a fresh run learns
 * AUTO_SUBWORDS pieces when a side of its corpus has more distinct words
 * than that (real language: Multi30k's German side has 19209 words, cased),
 * and keeps words when both fit (the toy corpus: 227) (docs/training.md, "The
 * default recipe"). */
#define AUTO_SUBWORDS 8000

static void help(void)
{
    printf(
        "Usage: nmt train --src F --tgt F --out DIR [OPTIONS]\n"
        "       nmt train --resume DIR [--max-steps N] [--epochs N] [--max-time T]\n"
        "                              [--early-stop N] [--threads N] [--src F] [--tgt F]\n"
        "                              [--valid-src F] [--valid-tgt F]\n"
        "       nmt train --init-from FILE --src F --tgt F --out DIR [OPTIONS]\n\n"
        "Trains an encoder-decoder on a parallel corpus (plain or gzip files, one\n"
        "sentence per line). Writes DIR/checkpoint.safetensors (the latest state,\n"
        "resumable), DIR/best.safetensors (best on validation) and DIR/log.tsv.\n\n"
        "Data:\n"
        "  --src F, --tgt F       training corpus, source and target side\n"
        "  --valid-src F, --valid-tgt F\n"
        "                         validation corpus: perplexity and greedy BLEU at\n"
        "                         every epoch end, every --valid-every steps and at the end\n"
        "  --out DIR              output folder (created; must not hold a checkpoint)\n"
        "  --resume DIR           continue the run in DIR exactly where it stopped, from\n"
        "                         any folder: the checkpoint keeps its corpora's absolute\n"
        "                         paths and their paths from DIR (tried next, with a\n"
        "                         note). Data that moved: give --src, --tgt, --valid-src\n"
        "                         or --valid-tgt anew; each must be the same data (size\n"
        "                         and first lines), other data is refused\n"
        "  --init-from FILE       start from a model's weights, architecture and\n"
        "                         vocabularies, with new training settings\n"
        "  --lowercase            lowercase the text (default: keep case)\n"
        "  --max-len N            skip training pairs longer than N tokens (default 50;\n"
        "                         with subwords N pieces, default %d)\n"
        "  --min-count N          word vocabulary: words seen at least N times (default\n"
        "                         1); giving it (or --max-vocab) trains on words\n"
        "  --max-vocab N          word vocabulary: at most N entries per side (default\n"
        "                         0: all)\n"
        "  --no-shuffle           batches in corpus order (default: shuffled\n"
        "                         length-sorted pools)\n\n"
        "Subwords (the vocabularies are then the pieces, and the model file keeps the\n"
        "SentencePiece model, so every command takes and gives raw text; --min-count\n"
        "and --max-vocab do not apply):\n"
        "  --subwords N           learn one SentencePiece model of N pieces (a unigram\n"
        "                         model, identity normalization) from both sides of\n"
        "                         the training corpus, after --lowercase; the same\n"
        "                         corpus gives the same pieces. 0: words. Default: %d\n"
        "                         pieces when a side of the corpus has more distinct\n"
        "                         words than that (real language), else words (and\n"
        "                         when --min-count or --max-vocab is given)\n"
        "  --spm FILE             use a SentencePiece model made by spm_train, trained\n"
        "                         with --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3\n"
        "  --subword-alpha X      subword regularisation: every epoch samples each\n"
        "                         sentence's pieces anew, with probability p^X of its\n"
        "                         segmentation (unigram models; default 0: the best\n"
        "                         pieces, fixed). A smaller X samples more evenly, so\n"
        "                         more and shorter pieces: Multi30k at 8000 pieces,\n"
        "                         0.1 doubles the pieces a sentence, 0.5 adds 3%%\n\n"
        "Model (fresh runs):\n"
        "  --cell rnn|gru|lstm    recurrent cell (default lstm)\n"
        "  --attention bahdanau|dot|general|scaled-dot|none\n"
        "                         how step i scores source word j from the decoder\n"
        "                         state s and the annotation h_j (default bahdanau):\n"
        "                         bahdanau v . tanh(W s + U h_j + b) (additive);\n"
        "                         dot s . h_j (Luong; needs --unidirectional);\n"
        "                         general s . (U h_j) (Luong); scaled-dot\n"
        "                         (W s) . (U h_j) / sqrt(att-dim) (Vaswani et al.);\n"
        "                         none: no attention, one fixed context\n"
        "  --bidirectional        bidirectional encoder (default)\n"
        "  --unidirectional       forward encoder only\n"
        "  --emb N                embedding size (default 256)\n"
        "  --hidden N             hidden state size (default 256)\n"
        "  --att-dim N            attention size of bahdanau and scaled-dot (default\n"
        "                         256; dot and general score in the hidden size)\n"
        "  --out-dim N            deep output size (default: --emb)\n"
        "  --tied-embeddings      the output projection is the target embedding table\n"
        "                         (no separate output matrix); needs --out-dim = --emb.\n"
        "                         The default, unless --out-dim differs from --emb\n"
        "  --untied-embeddings    a separate output matrix out.W\n\n"
        "Optimisation:\n"
        "  --optimizer sgd|adam|adadelta\n"
        "                         (default adam; adadelta: rho 0.95, eps 1e-6)\n"
        "  --lr X                 learning rate (default 1e-3 for adam, 1 for sgd and\n"
        "                         adadelta, where it multiplies the update)\n"
        "  --clip X               clip the global gradient norm to X (default 5; 0 off)\n"
        "  --dropout X            sets the three dropout rates below at once (each\n"
        "                         one's own option overrides it)\n"
        "  --dropout-emb X        on the source and target embeddings (default 0.3)\n"
        "  --dropout-enc X        on the encoder's annotations h_j, as the attention, the\n"
        "                         context and the summary z read them; not inside the\n"
        "                         recurrence (default 0.3)\n"
        "  --dropout-out X        on the deep output t, before the vocabulary projection\n"
        "                         (default 0.3)\n"
        "  --label-smoothing X    train on (1-X)(-log p[y]) + X * mean over the target\n"
        "                         vocabulary of -log p (default 0.1); the loss in log.tsv,\n"
        "                         the perplexities and nmt score stay -log p[y]\n"
        "  --batch-size N         sentences per batch (default 64)\n"
        "  --epochs N             passes over the corpus (default 10; with --max-time\n"
        "                         and no --epochs, no limit: the time decides)\n"
        "  --max-steps N          stop after N steps in all (default: no limit; 0 writes\n"
        "                         the initial model; on --resume, not below the run's\n"
        "                         step)\n"
        "  --max-time T           stop, validate and save once T of wall-clock time has\n"
        "                         passed, counted across resumes: 90s, 30m, 2h, 1h30m\n"
        "                         (default 0: no limit); checked between steps\n"
        "  --best-metric bleu|ppl what best.safetensors, --lr-decay and --early-stop\n"
        "                         judge by (default bleu: higher validation BLEU, ties\n"
        "                         broken by perplexity, and an improvement is a better\n"
        "                         BLEU or a lower perplexity than ever; BLEU below 1\n"
        "                         is noise, so until it reaches 1 perplexity decides;\n"
        "                         ppl: lower perplexity, ties broken by BLEU)\n"
        "  --lr-decay X           multiply the lr by X after --patience validations\n"
        "                         without improvement (default 0.5)\n"
        "  --patience N           (default 2; 0: never decay)\n"
        "  --early-stop N         stop after N validations without improvement\n"
        "                         (default 0: off). A run it ended stays ended on\n"
        "                         --resume; --early-stop 0 or a larger N goes on\n"
        "  --seed N               random seed: init, shuffling, dropout (default 1)\n"
        "  --init uniform|orthogonal|bahdanau\n"
        "                         initial weights (fresh runs). uniform (default):\n"
        "                         every parameter, recurrent matrices and biases\n"
        "                         too, uniform in [-X, X], X = --init-scale (default\n"
        "                         0.1, OpenNMT-py's param_init). orthogonal: the same\n"
        "                         but recurrent matrices orthogonal, biases 0 and the\n"
        "                         LSTM forget bias 1 (the default before; on Multi30k\n"
        "                         its attention fails to align and it learns half as\n"
        "                         fast: docs/experiments/initial-weights.md). bahdanau:\n"
        "                         the paper's appendix (att.W, att.U ~ N(0, 0.001^2),\n"
        "                         att.v 0, the rest N(0, 0.01^2), recurrent matrices\n"
        "                         orthogonal); with adam its deep output saturates and\n"
        "                         it sits at the target unigram perplexity for\n"
        "                         thousands of steps\n"
        "  --init-scale X         the X of --init uniform and orthogonal (default 0.1)\n"
        "  --threads N            threads (default: every core this process may use,\n"
        "                         here %d); the same seed and --threads give the same\n"
        "                         weights, other thread counts may round differently\n"
        "  (under mpirun -np N: one run data-parallel over N processes; each step's\n"
        "  batch is shared out, the gradients summed in rank order; rank 0 validates,\n"
        "  writes and prints; --threads is each process's own; docs/training.md,\n"
        "  \"Several processes (MPI)\")\n\n"
        "Saving and reporting:\n"
        "  --valid-every N        also validate every N steps (default 0: epoch ends only)\n"
        "  --save-every N         checkpoint every N steps (default 1000; 0: only at\n"
        "                         epoch ends, the end, and on SIGINT/SIGTERM)\n"
        "  --report-every N       a log.tsv row every N steps (default 0: every 10 s)\n"
        "  --keep-snapshots K     keep the models of the last K validations as\n"
        "                         DIR/snapshot-STEP.safetensors (default 0: none;\n"
        "                         needs validation); nmt average can average them\n"
        "  --average-snapshots    at the end, average the kept snapshots into\n"
        "                         DIR/average.safetensors and validate it (a log.tsv\n"
        "                         row with average_of set); if it is better by\n"
        "                         --best-metric it becomes DIR/best.safetensors\n"
        "  --batch-log FILE       write every step's batch as JSON Lines of token ids\n"
        "                         and the step's lr, after a first line with the crc32\n"
        "                         of the weights they start from (to replay the run:\n"
        "                         scripts/torch_baseline.py train --batches FILE)\n"
        "  --archive-snapshots DIR\n"
        "                         also save the model of every validation as\n"
        "                         DIR/snapshot-STEP.safetensors, none deleted; the run\n"
        "                         never reads them, so its training, snapshots and\n"
        "                         average are those of a run without it (needs\n"
        "                         validation)\n"
        "  -q, --quiet            print nothing but errors\n"
        "  -v, --verbose          print more (settings, every report, every save)\n"
        "  -h, --help             this help\n\n"
        "On a terminal a live progress line is shown on stderr; otherwise plain\n"
        "lines. Ctrl-C (SIGINT) or SIGTERM saves the checkpoint and stops; resume\n"
        "with --resume DIR. A run that diverges (NaN or Inf) stops and keeps its\n"
        "last good checkpoint. Whatever ends a run (--epochs, --max-steps, --max-time,\n"
        "--early-stop or a signal), DIR/checkpoint.safetensors is its state at the end.\n",
        SUBWORD_MAX_LEN, AUTO_SUBWORDS, cli_default_threads());
}

enum {
    O_SRC = 256, O_TGT, O_VALID_SRC, O_VALID_TGT, O_OUT, O_RESUME, O_INIT_FROM, O_LOWERCASE,
    O_MAX_LEN, O_MIN_COUNT, O_MAX_VOCAB, O_NO_SHUFFLE, O_CELL, O_ATTENTION, O_BIDI, O_UNIDI,
    O_EMB, O_HIDDEN, O_ATT_DIM, O_OUT_DIM, O_OPTIMIZER, O_LR, O_CLIP, O_DROPOUT,
    O_DROPOUT_EMB, O_DROPOUT_ENC, O_DROPOUT_OUT, O_LABEL_SMOOTHING, O_TIED, O_UNTIED,
    O_BATCH_SIZE, O_EPOCHS, O_MAX_STEPS, O_LR_DECAY, O_PATIENCE, O_EARLY_STOP, O_SEED,
    O_THREADS, O_VALID_EVERY, O_SAVE_EVERY, O_REPORT_EVERY, O_BATCH_LOG, O_ARCHIVE, O_INIT_SCALE, O_INIT,
    O_MAX_TIME, O_BEST_METRIC, O_KEEP_SNAPSHOTS, O_AVERAGE_SNAPSHOTS,
    O_SUBWORDS, O_SPM, O_SUBWORD_ALPHA, O_END
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
    nmt_train_settings s;
    const char *out, *resume, *init_from;
    int subwords;      /* --subwords N: learn N pieces (0: words) */
    int subwords_auto; /* subwords chosen by the corpus (its words), not asked */
    const char *spm;   /* --spm FILE */
    int given[O_END];  /* options given on the command line */
    int lr_given;
    float dropout_all; /* --dropout: every site's rate but those given alone */
    int init_kind;     /* --init: 0 uniform, 1 orthogonal, 2 bahdanau */
    double init_scale; /* --init uniform: non-recurrent matrices in [-x, x] */
} train_args;

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
    nmt_train_settings *s = &a->s;
    char name[40];
    snprintf(name, sizeof name, "--%s", option_name(c));
    long l;
    switch (c) {
    case O_SRC: s->src_path = v; return 0;
    case O_TGT: s->tgt_path = v; return 0;
    case O_VALID_SRC: s->valid_src_path = v; return 0;
    case O_VALID_TGT: s->valid_tgt_path = v; return 0;
    case O_OUT: a->out = v; return 0;
    case O_BATCH_LOG: s->batch_log_path = v; return 0;
    case O_ARCHIVE: s->archive_dir = v; return 0;
    case O_RESUME: a->resume = v; return 0;
    case O_INIT_FROM: a->init_from = v; return 0;
    case O_SPM: a->spm = v; return 0;
    /* SentencePiece needs more pieces than the 4 specials and its alphabet;
     * 0 asks for words */
    case O_SUBWORDS:
        if (opt_int(name, v, 0, 1 << 20, &a->subwords))
            return -1;
        if (a->subwords > 0 && a->subwords <= NMT_N_SPECIAL) {
            cli_error("%s: %d pieces are too few (more than %d, or 0 for words)", name,
                      a->subwords, NMT_N_SPECIAL);
            return -1;
        }
        return 0;
    case O_SUBWORD_ALPHA:
        if (opt_float(name, v, 0, 1000, &s->subword_alpha))
            return -1;
        return 0;
    case O_LOWERCASE: s->lowercase = 1; return 0;
    case O_NO_SHUFFLE: s->shuffle = 0; return 0;
    case O_BIDI: s->bidirectional = 1; return 0;
    case O_UNIDI: s->bidirectional = 0; return 0;
    /* the passes take at most 1 << 16 positions (tokens + </s>) */
    case O_MAX_LEN: return opt_int(name, v, 1, (1 << 16) - 1, &s->max_len);
    case O_MIN_COUNT: return opt_int(name, v, 1, INT_MAX_OPT, &s->min_count);
    case O_MAX_VOCAB: return opt_int(name, v, 0, 100000000, &s->max_vocab);
    case O_EMB: return opt_int(name, v, 1, 65536, &s->emb);
    case O_HIDDEN: return opt_int(name, v, 1, 65536, &s->hidden);
    case O_ATT_DIM: return opt_int(name, v, 1, 65536, &s->att_dim);
    case O_OUT_DIM: return opt_int(name, v, 1, 65536, &s->out_dim);
    case O_BATCH_SIZE: return opt_int(name, v, 1, 1000000, &s->batch_size);
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
        static const char *const inits[] = {"uniform", "orthogonal", "bahdanau", NULL};
        int i = opt_choice(name, v, inits);
        if (i < 0)
            return -1;
        a->init_kind = i;
        return 0;
    }
    case O_INIT_SCALE:
        if (opt_double(name, v, 0, 10, &a->init_scale))
            return -1;
        if (a->init_scale <= 0) {
            cli_error("%s: must be greater than 0", name);
            return -1;
        }
        return 0;
    case O_LR:
        a->lr_given = 1;
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
    case O_DROPOUT: return opt_rate(name, v, &a->dropout_all);
    case O_DROPOUT_EMB: return opt_rate(name, v, &s->dropout_emb);
    case O_DROPOUT_ENC: return opt_rate(name, v, &s->dropout_enc);
    case O_DROPOUT_OUT: return opt_rate(name, v, &s->dropout_out);
    case O_LABEL_SMOOTHING: return opt_rate(name, v, &s->label_smoothing);
    case O_TIED: s->tied_embeddings = 1; return 0;
    case O_UNTIED: s->tied_embeddings = 0; return 0;
    case O_CELL: {
        static const char *const cells[] = {"rnn", "gru", "lstm", NULL};
        int i = opt_choice(name, v, cells);
        if (i < 0)
            return -1;
        return nmt_cell_parse(v, &s->cell) ? -1 : 0;
    }
    case O_ATTENTION: {
        static const char *const atts[] = {"bahdanau", "dot", "general", "scaled-dot", "none",
                                           NULL};
        int i = opt_choice(name, v, atts);
        if (i < 0)
            return -1;
        return nmt_attention_parse(v, &s->attention) ? -1 : 0;
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

/* Options that make no sense with --resume (the checkpoint fixes them) or
 * with --init-from (the model fixes them). */
static int check_combinations(const train_args *a)
{
    static const int arch[] = {O_CELL, O_ATTENTION, O_BIDI, O_UNIDI, O_EMB, O_HIDDEN,
                               O_ATT_DIM, O_OUT_DIM, O_TIED, O_UNTIED, O_LOWERCASE, O_MIN_COUNT,
                               O_MAX_VOCAB, O_SUBWORDS, O_SPM};
    if (a->resume) {
        /* the corpora may be given where they moved to: they are checked
         * to be the same data (cli/train_data.c) */
        for (int c = O_SRC; c < O_END; c++)
            if (a->given[c] && c != O_RESUME && c != O_MAX_STEPS && c != O_EPOCHS &&
                c != O_MAX_TIME && c != O_EARLY_STOP && c != O_THREADS && c != O_BATCH_LOG &&
                c != O_ARCHIVE && c != O_SRC && c != O_TGT && c != O_VALID_SRC &&
                c != O_VALID_TGT) {
                cli_error("--%s cannot be changed on --resume: the run continues with the "
                          "settings of its checkpoint (only --max-steps, --epochs, "
                          "--max-time, --early-stop and --threads may be given, and --src, "
                          "--tgt, --valid-src, --valid-tgt for data that moved)",
                          option_name(c));
                return -1;
            }
        return 0;
    }
    if (a->s.archive_dir && !a->s.valid_src_path) {
        cli_error("--archive-snapshots needs a validation set (--valid-src, --valid-tgt): "
                  "its models are those of validations");
        return -1;
    }
    if (a->s.keep_snapshots > 0 && !a->s.valid_src_path) {
        cli_error("--keep-snapshots needs a validation set (--valid-src, --valid-tgt): "
                  "snapshots are the models of validations");
        return -1;
    }
    if (a->s.average_snapshots && a->s.keep_snapshots < 2) {
        cli_error("--average-snapshots needs --keep-snapshots K with K of at least 2 (the "
                  "snapshots it averages)");
        return -1;
    }
    for (int c = O_INIT_SCALE; c <= O_INIT; c++)
        if (a->init_from && a->given[c]) {
            cli_error("--%s cannot be used with --init-from: the weights come from the "
                      "model file", option_name(c));
            return -1;
        }
    if (a->init_kind == 2 && a->given[O_INIT_SCALE]) {
        cli_error("--init-scale goes with --init uniform or orthogonal, not --init bahdanau "
                  "(whose scales are the paper's)");
        return -1;
    }
    if (a->init_from)
        for (size_t i = 0; i < sizeof arch / sizeof arch[0]; i++)
            if (a->given[arch[i]]) {
                cli_error("--%s cannot be used with --init-from: the model file fixes the "
                          "architecture, the vocabularies (words or pieces) and lowercasing",
                          option_name(arch[i]));
                return -1;
            }
    if (a->given[O_TIED] && a->given[O_UNTIED]) {
        cli_error("--tied-embeddings and --untied-embeddings: give one");
        return -1;
    }
    if (a->subwords && a->spm) {
        cli_error("--subwords and --spm: give one (learn a SentencePiece model, or use one)");
        return -1;
    }
    if ((a->subwords || a->spm) && (a->given[O_MIN_COUNT] || a->given[O_MAX_VOCAB])) {
        cli_error("--%s does not apply to subwords: the vocabularies are the SentencePiece "
                  "model's pieces (choose their number with --subwords N)",
                  a->given[O_MIN_COUNT] ? "min-count" : "max-vocab");
        return -1;
    }
    if (!a->init_from && nmt_attention_check(a->s.attention, a->s.bidirectional, a->s.hidden)) {
        cli_error("--attention %s with a bidirectional encoder: %s", nmt_attention_name(a->s.attention),
                  nmt_error_message());
        return -1;
    }
    if (!a->init_from && a->given[O_TIED] && a->s.out_dim != a->s.emb) {
        cli_error("--tied-embeddings needs --out-dim (%d) equal to --emb (%d): the output "
                  "matrix is the target embedding table", a->s.out_dim, a->s.emb);
        return -1;
    }
    if (!a->s.src_path || !a->s.tgt_path) {
        cli_error("--src and --tgt are required (or --resume DIR)");
        return -1;
    }
    if (!a->out) {
        cli_error("--out DIR is required (or --resume DIR)");
        return -1;
    }
    if (!a->s.valid_src_path != !a->s.valid_tgt_path) {
        cli_error("--valid-src and --valid-tgt go together");
        return -1;
    }
    return 0;
}

/* Returns 0 and fills a, or the exit code (2 usage, 0 after --help). */
static int parse_args(train_args *a, int argc, char **argv, int *exit_code)
{
    memset(a, 0, sizeof *a);
    nmt_train_settings_default(&a->s);
    a->s.threads = cli_default_threads();
    a->init_scale = 0.1;
    optind = 1;
    opterr = 1;
    int c;
    while ((c = getopt_long(argc, argv, "qvh", long_options, NULL)) != -1) {
        if (c == 'h') {
            help();
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
    if (!a->lr_given)
        a->s.lr = nmt_optim_default_lr(a->s.optimizer);
    /* a run limited by time alone: it goes on for as many epochs as fit */
    if (a->s.max_time > 0 && !a->given[O_EPOCHS])
        a->s.epochs = 0;
    if (a->given[O_DROPOUT]) {
        if (!a->given[O_DROPOUT_EMB])
            a->s.dropout_emb = a->dropout_all;
        if (!a->given[O_DROPOUT_ENC])
            a->s.dropout_enc = a->dropout_all;
        if (!a->given[O_DROPOUT_OUT])
            a->s.dropout_out = a->dropout_all;
    }
    /* tied embeddings (the default) need --out-dim = --emb: the deep output
     * follows --emb unless given, and a different --out-dim unties them
     * unless --tied-embeddings asks for both (refused below) */
    if (!a->given[O_OUT_DIM])
        a->s.out_dim = a->s.emb;
    else if (a->s.out_dim != a->s.emb && !a->given[O_TIED])
        a->s.tied_embeddings = 0;
    if (check_combinations(a) || train_check_batch_log(&a->s, a->spm, a->init_from, a->resume)) {
        *exit_code = 2;
        return -1;
    }
    return 0;
}

/* ---- memory estimate -------------------------------------------------------- */

/* The bytes a run holds at its peak: the parameters with their gradients
 * and the optimizer's moments, and the workspace of a batch of the longest
 * sentences, as the library's own sizing pass counts it (validation's
 * decoder, far smaller, is left out). */
static int estimate_bytes(const nmt_config *cfg, nmt_optim_kind opt, int B, int T, double *need)
{
    size_t n_params;
    if (nmt_tensor_table(cfg, NULL, 0, &n_params) < 0)
        return -1;
    int moments = 0;
    while (nmt_optim_moment_name(opt, moments))
        moments++;
    double workspace;
    if (nmt_workspace_bytes(cfg, B, T, T, &workspace))
        return -1;
    *need = (double)sizeof(float) * (double)n_params * (2 + moments) + workspace;
    return 0;
}

static int check_memory(const nmt_config *cfg, nmt_optim_kind opt, int B, int T)
{
    double need;
    if (estimate_bytes(cfg, opt, B, T, &need)) {
        cli_lib_error();
        return -1;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    double have = pages > 0 && page > 0 ? (double)pages * (double)page : 8.0 * (1 << 30);
    double limit = have < 8.0 * (1 << 30) ? have : 8.0 * (1 << 30);
    if (need > limit) {
        cli_error("these sizes would need about %.1f GiB (more than %.1f GiB): lower "
                  "--emb/--hidden/--att-dim/--out-dim, --batch-size, --max-len or --max-vocab",
                  need / (1 << 30), limit / (1 << 30));
        return -1;
    }
    return 0;
}

/* ---- reading everything ------------------------------------------------------- */

typedef struct run {
    train_args args;
    nmt_train_settings s;   /* what the run uses (from the checkpoint on resume) */
    nmt_file *ckpt;         /* --resume: the checkpoint */
    train_data data;        /* what s's corpus paths point at */
    nmt_model *model;
    double learn_s;         /* --subwords: seconds spent learning the pieces */
    nmt_corpus train, valid;
    int have_train, have_valid;
    char **refs;
    size_t n_refs;
    const char *dir;
} run;

static void run_free(run *r)
{
    nmt_free_lines(r->refs, r->n_refs);
    if (r->have_valid)
        nmt_corpus_free(&r->valid);
    if (r->have_train)
        nmt_corpus_free(&r->train);
    nmt_model_free(r->model);
    nmt_file_free(r->ckpt);
    train_data_free(&r->data);
}

static int check_out_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return 0; /* created later, once every input has been read */
    if (!S_ISDIR(st.st_mode)) {
        cli_error("--out %s: exists and is not a folder", dir);
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.safetensors", dir);
    if (access(path, F_OK) == 0) {
        cli_error("--out %s: already holds a run (continue it with --resume %s, or choose "
                  "another folder)", dir, dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        cli_error("--out %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* mkdir -p */
static int make_dir(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        cli_error("--out: path too long");
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char keep = *p;
            *p = 0;
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                cli_error("--out %s: cannot create %s: %s", dir, path, strerror(errno));
                return -1;
            }
            *p = keep;
            if (!keep)
                break;
        }
    }
    return 0;
}

static nmt_config config_of(const nmt_train_settings *s, int Vs, int Vt)
{
    return (nmt_config){.arch = NMT_ARCH_RNN,
                        .rnn = {.cell = s->cell, .attention = s->attention,
                                .bidirectional = s->bidirectional, .emb = s->emb,
                                .hidden = s->hidden, .att_dim = s->att_dim,
                                .out_dim = s->out_dim},
                        .tied = s->tied_embeddings, .lowercase = s->lowercase,
                        .src_vocab = Vs, .tgt_vocab = Vt};
}

/* A metadata number of the checkpoint (its validity was checked by the
 * settings' reader for train.*; state.* is checked again on restore). */
static long long ckpt_number(const run *r, const char *key)
{
    const char *v = nmt_file_meta(r->ckpt, key);
    return v ? strtoll(v, NULL, 10) : 0;
}

/* --max-steps or --epochs on --resume below where the run already is would
 * stop it at once and write the lower limit into its checkpoint: refused,
 * naming the run's step. */
static int check_limits_ahead(const run *r)
{
    const train_args *a = &r->args;
    long long step = ckpt_number(r, "state.step"), epoch = ckpt_number(r, "state.epoch");
    long long batch = ckpt_number(r, "state.batch"), done = epoch - 1;
    if (a->given[O_MAX_STEPS] && a->s.max_steps < step) {
        cli_error("--max-steps %lld: the run in %s is at step %lld already; give a "
                  "--max-steps above %lld to train on (nothing was changed)",
                  (long long)a->s.max_steps, a->resume, step, step);
        return -1;
    }
    if (a->given[O_EPOCHS] && (a->s.epochs < done || (a->s.epochs == done && batch > 0))) {
        cli_error("--epochs %d: the run in %s is past %d epochs already (step %lld, in "
                  "epoch %lld); give a larger --epochs to train on (nothing was changed)",
                  a->s.epochs, a->resume, a->s.epochs, step, epoch);
        return -1;
    }
    return 0;
}

static int load_model_or_checkpoint(run *r)
{
    train_args *a = &r->args;
    if (a->resume) {
        char path[4096];
        snprintf(path, sizeof path, "%s/checkpoint.safetensors", a->resume);
        if (access(path, F_OK) != 0) {
            cli_error("--resume %s: no checkpoint.safetensors there to resume", a->resume);
            return -1;
        }
        if (nmt_model_load(&r->model, path, &r->ckpt) ||
            nmt_train_settings_from_file(&r->s, r->ckpt)) {
            cli_lib_error();
            return -1;
        }
        if (check_limits_ahead(r))
            return -1;
        if (a->given[O_MAX_STEPS])
            r->s.max_steps = a->s.max_steps;
        if (a->given[O_EPOCHS])
            r->s.epochs = a->s.epochs;
        if (a->given[O_THREADS])
            r->s.threads = a->s.threads;
        if (a->given[O_MAX_TIME])
            r->s.max_time = a->s.max_time;
        if (a->given[O_EARLY_STOP])
            r->s.early_stop = a->s.early_stop;
        if (r->s.epochs == 0 && r->s.max_time <= 0 && r->s.max_steps < 0) {
            cli_error("--resume %s: the run has no limit but --max-time, and --max-time 0 "
                      "removes it: give --max-time, --epochs or --max-steps too", a->resume);
            return -1;
        }
        r->s.batch_log_path = a->s.batch_log_path;
        r->s.archive_dir = a->s.archive_dir;
        r->dir = a->resume;
        const char *given[4] = {a->given[O_SRC] ? a->s.src_path : NULL,
                                a->given[O_TGT] ? a->s.tgt_path : NULL,
                                a->given[O_VALID_SRC] ? a->s.valid_src_path : NULL,
                                a->given[O_VALID_TGT] ? a->s.valid_tgt_path : NULL};
        return train_data_resume(&r->data, &r->s, a->resume, given);
    }
    r->s = a->s;
    r->dir = a->out;
    if ((a->subwords || a->spm) && !a->given[O_MAX_LEN])
        r->s.max_len = SUBWORD_MAX_LEN;
    /* rank 0 makes and writes the run's folder (the others only train) */
    if (nmt_dist_rank() == 0 && check_out_dir(a->out))
        return -1;
    /* absurd sizes are refused at once, before the corpus is read (the
     * vocabularies are counted as if tiny; checked again once known) */
    nmt_config lower = config_of(&r->s, 4, 4);
    if (!a->init_from && check_memory(&lower, r->s.optimizer, r->s.batch_size, r->s.max_len + 1))
        return -1;
    if (a->init_from) {
        if (nmt_model_load(&r->model, a->init_from, NULL)) {
            cli_lib_error();
            return -1;
        }
        const nmt_config *cfg = &r->model->cfg;
        r->s.cell = cfg->rnn.cell;
        r->s.attention = cfg->rnn.attention;
        r->s.bidirectional = cfg->rnn.bidirectional;
        r->s.emb = cfg->rnn.emb;
        r->s.hidden = cfg->rnn.hidden;
        r->s.att_dim = cfg->rnn.att_dim;
        r->s.out_dim = cfg->rnn.out_dim;
        r->s.tied_embeddings = cfg->tied;
        r->s.lowercase = cfg->lowercase;
        if (r->model->subwords && !a->given[O_MAX_LEN])
            r->s.max_len = SUBWORD_MAX_LEN;
    }
    return 0;
}

/* --subwords N learns the pieces from the training corpus; --spm reads them. */
/* In a run of several processes rank 0 learns the pieces and sends them to
 * the others (learning them again on each could differ). */
static int share_subwords(int rc, nmt_subwords **out)
{
    if (nmt_dist_size() <= 1)
        return rc;
    size_t n = 0;
    const unsigned char *bytes = rc == NMT_OK && *out ? nmt_subwords_bytes(*out, &n) : NULL;
    unsigned long long len = nmt_dist_rank() == 0 ? (unsigned long long)n : 0;
    if (nmt_dist_bcast(&len, sizeof len))
        return NMT_ERR_IO;
    if (len == 0) /* rank 0 failed and says why */
        return rc ? rc : nmt_set_error(NMT_ERR_IO, "rank 0 could not learn the subwords");
    unsigned char *buf = nmt_dist_rank() == 0 ? (unsigned char *)bytes : malloc(len);
    if (!buf)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    rc = nmt_dist_bcast(buf, len);
    if (nmt_dist_rank() != 0) {
        if (!rc)
            rc = nmt_subwords_load(out, buf, len, "rank 0's subwords");
        free(buf);
    }
    return rc;
}

static int make_subwords(run *r, nmt_subwords **out)
{
    const train_args *a = &r->args;
    double t0 = nmt_now();
    int rc = NMT_OK;
    *out = NULL;
    if (a->spm)
        rc = nmt_subwords_load_file(out, a->spm);
    else if (nmt_dist_rank() == 0)
        rc = nmt_corpus_learn_subwords(out, r->s.src_path, r->s.tgt_path, a->subwords,
                                       r->s.lowercase);
    if (!a->spm)
        rc = share_subwords(rc, out);
    if (rc) {
        if (a->spm)
            cli_error("--spm %s", nmt_error_message());
        else
            cli_error("--subwords %d: %s", a->subwords, nmt_error_message());
        return -1;
    }
    if (!a->spm)
        r->learn_s = nmt_now() - t0;
    return 0;
}

/* Subword sampling draws from a unigram model's segmentations. */
static int check_sampling(const run *r, const nmt_subwords *sw)
{
    if (r->s.subword_alpha <= 0)
        return 0;
    if (!sw) {
        cli_error("--subword-alpha samples subwords: give --subwords N or --spm FILE (or "
                  "--init-from a model that reads subwords)");
        return -1;
    }
    if (strcmp(nmt_subwords_type(sw), "unigram")) {
        cli_error("--subword-alpha samples from a unigram model's segmentations; this "
                  "SentencePiece model is %s", nmt_subwords_type(sw));
        return -1;
    }
    return 0;
}

/* Validation keeps every pair (--max-len skips training pairs only), so a
 * pair too long for the passes (1 << 16 positions: tokens + </s>) or for
 * memory is refused here, by file and line, before the run starts. */
static int check_valid_lengths(const run *r)
{
    const nmt_corpus *c = &r->valid;
    const size_t limit = ((size_t)1 << 16) - 1;
    size_t longest = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t ls = c->src_off[i + 1] - c->src_off[i], lt = c->tgt_off[i + 1] - c->tgt_off[i];
        if (ls > limit || lt > limit) {
            cli_error("%s:%zu: a validation sentence of %zu tokens is too long (at most %zu)",
                      ls > limit ? r->s.valid_src_path : r->s.valid_tgt_path, c->line[i],
                      ls > limit ? ls : lt, limit);
            return -1;
        }
        longest = ls > longest ? ls : longest;
        longest = lt > longest ? lt : longest;
    }
    return check_memory(&r->model->cfg, r->s.optimizer, r->s.batch_size, (int)longest + 1);
}

/* A fresh model's vocabularies: counted on the corpus (words), or the
 * pieces of sw on both sides. */
static int fresh_vocabularies(const nmt_subwords *sw, nmt_vocab **sv, nmt_vocab **tv)
{
    if (!sw)
        return 0; /* nmt_corpus_read counted them */
    if (nmt_vocab_of_pieces(sw, sv) || nmt_vocab_of_pieces(sw, tv)) {
        cli_lib_error();
        return -1;
    }
    return 0;
}

/* The default units of a fresh run (AUTO_SUBWORDS): the words of the
 * corpus are counted first. */
static int choose_units(run *r)
{
    train_args *a = &r->args;
    if (r->model || a->given[O_SUBWORDS] || a->spm || a->given[O_MIN_COUNT] ||
        a->given[O_MAX_VOCAB])
        return 0;
    nmt_corpus c;
    nmt_vocab *sv = NULL, *tv = NULL;
    nmt_corpus_opts o = {.lowercase = r->s.lowercase, .max_len = r->s.max_len, .skip_empty = 1,
                         .min_count = 1};
    if (nmt_corpus_read(&c, r->s.src_path, r->s.tgt_path, &o, &sv, &tv)) {
        cli_lib_error();
        return -1;
    }
    int words = nmt_vocab_size(sv) > nmt_vocab_size(tv) ? nmt_vocab_size(sv) : nmt_vocab_size(tv);
    nmt_corpus_free(&c);
    nmt_vocab_free(sv);
    nmt_vocab_free(tv);
    if (words - NMT_N_SPECIAL > AUTO_SUBWORDS) {
        a->subwords = AUTO_SUBWORDS;
        a->subwords_auto = words - NMT_N_SPECIAL;
        if (!a->given[O_MAX_LEN])
            r->s.max_len = SUBWORD_MAX_LEN;
    }
    return 0;
}

static int read_corpora(run *r)
{
    const nmt_train_settings *s = &r->s;
    if (choose_units(r))
        return -1;
    nmt_subwords *fresh_sw = NULL; /* a fresh subword run's, until the model takes it */
    if (!r->model && (r->args.subwords || r->args.spm) && make_subwords(r, &fresh_sw))
        return -1;
    const nmt_subwords *sw = r->model ? r->model->subwords : fresh_sw;
    nmt_corpus_opts o = {.lowercase = s->lowercase, .max_len = s->max_len, .skip_empty = 1,
                         .min_count = s->min_count, .max_vocab = s->max_vocab, .subwords = sw};
    nmt_vocab *sv = r->model ? r->model->src_vocab : NULL;
    nmt_vocab *tv = r->model ? r->model->tgt_vocab : NULL;
    if (check_sampling(r, sw)) {
        nmt_subwords_free(fresh_sw);
        return -1;
    }
    if (nmt_corpus_read(&r->train, s->src_path, s->tgt_path, &o, &sv, &tv)) {
        cli_lib_error();
        nmt_subwords_free(fresh_sw);
        return -1;
    }
    r->have_train = 1;
    if (r->train.n == 0) {
        cli_error("%s: no pair left to train on (%zu longer than --max-len %d, %zu with an "
                  "empty side)", s->src_path, r->train.skipped_long, s->max_len,
                  r->train.skipped_empty);
        if (!r->model) {
            nmt_vocab_free(sv);
            nmt_vocab_free(tv);
        }
        nmt_subwords_free(fresh_sw);
        return -1;
    }
    if (!r->model) {
        if (fresh_vocabularies(fresh_sw, &sv, &tv)) {
            nmt_vocab_free(sv);
            nmt_subwords_free(fresh_sw);
            return -1;
        }
        nmt_config cfg = config_of(s, nmt_vocab_size(sv), nmt_vocab_size(tv));
        if (check_memory(&cfg, s->optimizer, s->batch_size, s->max_len + 1)) {
            nmt_vocab_free(sv);
            nmt_vocab_free(tv);
            nmt_subwords_free(fresh_sw);
            return -1;
        }
        if (nmt_model_create(&r->model, &cfg, sv, tv)) {
            cli_lib_error();
            nmt_subwords_free(fresh_sw);
            return -1;
        }
        r->model->subwords = fresh_sw;
        /* Every parameter uniform in +-0.1 by default: the paper's small
         * normal weights saturate the deep output under adam, and the
         * orthogonal scheme's forget bias of 1 keeps the attention from
         * aligning (docs/experiments/initial-weights.md). */
        static const nmt_init_scheme schemes[] = {NMT_INIT_UNIFORM, NMT_INIT_ORTHOGONAL,
                                                  NMT_INIT_BAHDANAU};
        if (nmt_model_init(r->model, schemes[r->args.init_kind], r->args.init_scale, s->seed)) {
            cli_lib_error();
            return -1;
        }
    }
    if (s->valid_src_path && nmt_dist_rank() == 0) { /* rank 0 validates for all */
        nmt_corpus_opts vo = {.lowercase = s->lowercase, .max_len = 0, .skip_empty = 0,
                              .subwords = r->model->subwords};
        sv = r->model->src_vocab;
        tv = r->model->tgt_vocab;
        if (nmt_corpus_read(&r->valid, s->valid_src_path, s->valid_tgt_path, &vo, &sv, &tv)) {
            cli_lib_error();
            return -1;
        }
        r->have_valid = 1;
        if (check_valid_lengths(r))
            return -1;
        if (nmt_read_lines(s->valid_tgt_path, &r->refs, &r->n_refs)) {
            cli_lib_error();
            return -1;
        }
        if (r->n_refs != r->valid.n) {
            cli_error("%s: %zu lines but %zu validation pairs", s->valid_tgt_path, r->n_refs,
                      r->valid.n);
            return -1;
        }
    }
    return 0;
}

/* A model's vocabularies that do not fit the corpus (--init-from a model of
 * another corpus) train on <unk>s: said before the run starts. A fresh
 * run's vocabularies are its corpus's own (or as small as --max-vocab and
 * --min-count asked), and a resumed run's corpus is the one it began on. */
static void warn_unknown(const run *r)
{
    if (cli_verbosity == 0 || !r->args.init_from)
        return;
    size_t unk[2], total[2];
    const char *units = nmt_units_name(r->model);
    nmt_corpus_count_unk(&r->train, unk, total);
    int warned = cli_warn_unknown(r->s.src_path, unk[0], total[0], units);
    warned |= cli_warn_unknown(r->s.tgt_path, unk[1], total[1], units);
    if (r->have_valid) {
        nmt_corpus_count_unk(&r->valid, unk, total);
        warned |= cli_warn_unknown(r->s.valid_src_path, unk[0], total[0], units);
        warned |= cli_warn_unknown(r->s.valid_tgt_path, unk[1], total[1], units);
    }
    if (warned)
        fprintf(stderr, "nmt train: --init-from keeps %s's vocabularies: a model for another "
                "corpus starts afresh without --init-from\n", r->args.init_from);
}

/* ---- what the user sees ------------------------------------------------------ */

typedef struct view {
    nmt_progress progress;
    int tty;
    int line_shown; /* a live line is on screen */
    const char *dir;
    nmt_best_metric metric;
    double max_time;
    int average_pending; /* an average was validated; did it become best? */
    int64_t steps_run;   /* steps of this session (for the MPI line) */
} view;


static void clear_live(view *v)
{
    if (v->line_shown) {
        fputs("\r\033[K", stderr);
        v->line_shown = 0;
    }
}

static void on_event(void *user, nmt_train_event ev, const nmt_train_status *st)
{
    view *v = user;
    if (cli_verbosity == 0)
        return;
    double now = nmt_now();
    char line[256], dur[32];
    switch (ev) {
    case NMT_TRAIN_STEP:
        if (v->tty && nmt_progress_due(&v->progress, now)) {
            nmt_progress_line(line, sizeof line, &v->progress, st, now);
            fprintf(stderr, "\r%s\033[K", line);
            v->line_shown = 1;
        }
        break;
    case NMT_TRAIN_REPORT:
        if (v->tty && cli_verbosity < 2)
            break;
        clear_live(v);
        nmt_format_duration(dur, sizeof dur, st->elapsed_s);
        fprintf(stderr, "epoch %d step %lld: loss %.4f ppl %.2f grad-norm %.3f lr %.3g "
                "%.0f tok/s, %s\n", st->epoch, (long long)st->step, st->loss, st->ppl,
                st->grad_norm, st->lr, st->tok_per_s, dur);
        break;
    case NMT_TRAIN_VALID:
        clear_live(v);
        fprintf(stderr, "validation at step %lld (epoch %d): ppl %.3f, BLEU %.2f\n",
                (long long)st->step, st->epoch, st->valid_ppl, st->valid_bleu);
        break;
    case NMT_TRAIN_BEST:
        if (st->best_average_of > 0) {
            clear_live(v);
            fprintf(stderr, "the average beats it (--best-metric %s): it is now "
                    "%s/best.safetensors\n", nmt_best_metric_name(v->metric), v->dir);
            v->average_pending = 0;
        } else if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "best so far: saved %s/best.safetensors\n", v->dir);
        }
        break;
    case NMT_TRAIN_SNAPSHOT:
        if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "snapshot saved: %s/snapshot-%lld.safetensors\n", v->dir,
                    (long long)st->step);
        }
        break;
    case NMT_TRAIN_TIME_UP:
        clear_live(v);
        nmt_format_duration(dur, sizeof dur, v->max_time);
        fprintf(stderr, "time limit reached (--max-time %s) at step %lld\n", dur,
                (long long)st->step);
        break;
    case NMT_TRAIN_AVERAGE:
        clear_live(v);
        fprintf(stderr, "average of %d snapshots (steps %lld-%lld) in %s/average.safetensors: "
                "ppl %.3f, BLEU %.2f", st->average_of, (long long)st->average_from,
                (long long)st->step, v->dir, st->valid_ppl, st->valid_bleu);
        if (st->best_step >= 0)
            fprintf(stderr, "; best.safetensors (step %lld): ppl %.3f, BLEU %.2f",
                    (long long)st->best_step, st->best_ppl, st->best_bleu);
        fputc('\n', stderr);
        v->average_pending = 1;
        break;
    case NMT_TRAIN_LR_DECAY:
        clear_live(v);
        fprintf(stderr, "no improvement in %d validations: learning rate lowered to %g\n",
                st->bad_validations, st->lr);
        break;
    case NMT_TRAIN_EARLY_STOP:
        clear_live(v);
        fprintf(stderr, "early stop: no improvement in %d validations\n", st->bad_validations);
        break;
    case NMT_TRAIN_EPOCH:
        if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "epoch %d done at step %lld\n", st->epoch, (long long)st->step);
        }
        break;
    case NMT_TRAIN_SAVED:
        if (cli_verbosity >= 2) {
            clear_live(v);
            fprintf(stderr, "checkpoint saved at step %lld\n", (long long)st->step);
        }
        break;
    }
}

static void describe(const run *r)
{
    if (cli_verbosity == 0)
        return;
    const nmt_config *c = &r->model->cfg;
    const nmt_train_settings *s = &r->s;
    if (r->ckpt)
        fprintf(stderr, "resuming %s\n", r->dir);
    const nmt_subwords *sw = r->model->subwords;
    if (sw) {
        fprintf(stderr, "subwords: SentencePiece %s model of %d pieces", nmt_subwords_type(sw),
                nmt_subwords_size(sw));
        if (r->learn_s > 0)
            fprintf(stderr, ", learned from both sides in %.1f s", r->learn_s);
        if (s->subword_alpha > 0)
            fprintf(stderr, "; sampled every epoch (alpha %g)", (double)s->subword_alpha);
        if (r->args.subwords_auto)
            fprintf(stderr, " (the default: a side has %d distinct words; --subwords 0 for "
                    "words)", r->args.subwords_auto);
        fputc('\n', stderr);
    }
    fprintf(stderr, "corpus: %zu pairs of %zu lines (%zu skipped by --max-len %d, %zu with "
            "an empty side); vocabularies %d / %d%s\n", r->train.n, r->train.n_lines,
            r->train.skipped_long, s->max_len, r->train.skipped_empty, c->src_vocab,
            c->tgt_vocab, sw ? " pieces" : "");
    const nmt_rnn_config *rc = &c->rnn;
    char att[32] = ""; /* att_dim only where it sizes something */
    if (nmt_attention_uses_att_dim(rc->attention))
        snprintf(att, sizeof att, " att %d", rc->att_dim);
    fprintf(stderr, "model: %s, %s attention, %s, emb %d hidden %d%s out %d%s: %zu "
            "parameters\n", nmt_cell_name(rc->cell), nmt_attention_name(rc->attention),
            rc->bidirectional ? "bidirectional" : "unidirectional", rc->emb, rc->hidden, att,
            rc->out_dim, c->tied ? " (tied to the embeddings)" : "", r->model->n_params);
    if (cli_verbosity >= 2)
        fprintf(stderr, "training: %s lr %g clip %g dropout emb %g enc %g out %g label "
                "smoothing %g batch %d epochs %d max-steps %lld max-time %gs seed %llu threads "
                "%d best-metric %s%s%s\n",
                nmt_optim_name(s->optimizer), s->lr, s->clip, (double)s->dropout_emb,
                (double)s->dropout_enc, (double)s->dropout_out, (double)s->label_smoothing,
                s->batch_size, s->epochs, (long long)s->max_steps, s->max_time,
                (unsigned long long)s->seed, s->threads, nmt_best_metric_name(s->best_metric),
                s->shuffle ? "" : " no-shuffle", r->have_valid ? ", validating" : "");
}

static void summary(const run *r, const view *v, const nmt_train_status *st, int interrupted)
{
    if (cli_verbosity == 0)
        return;
    char dur[32], limit[32];
    nmt_format_duration(dur, sizeof dur, st->elapsed_s);
    nmt_format_duration(limit, sizeof limit, r->s.max_time);
    double epochs = st->epoch - 1 + (st->n_batches ? (double)st->batch / (double)st->n_batches : 0);
    if (v->average_pending)
        fprintf(stderr, "the average does not beat it (--best-metric %s): best.safetensors "
                "stays\n", nmt_best_metric_name(r->s.best_metric));
    fprintf(stderr, "%s at step %lld (%.2f epochs) after %s%s%s%s; checkpoint: "
            "%s/checkpoint.safetensors\n", interrupted ? "stopped" : "done",
            (long long)st->step, epochs, dur, st->time_up ? " (--max-time " : "",
            st->time_up ? limit : "", st->time_up ? ")" : "", r->dir);
    if (nmt_dist_size() > 1 && v->steps_run > 0)
        fprintf(stderr, "MPI, %d processes: rank 0 spent %.3f s in collectives, %.2f ms a step, "
                "and sent %.2f MB a step\n", nmt_dist_size(), nmt_dist_seconds(),
                1e3 * nmt_dist_seconds() / (double)v->steps_run,
                nmt_dist_bytes_sent() / (double)v->steps_run / 1e6);
    if (st->best_step < 0)
        return;
    char what[64] = "";
    if (st->best_average_of > 0)
        snprintf(what, sizeof what, " (the average of %d snapshots)", st->best_average_of);
    if (r->s.best_metric == NMT_BEST_PPL)
        fprintf(stderr, "best validation perplexity %.3f (BLEU %.2f) at step %lld%s: "
                "%s/best.safetensors\n", st->best_ppl, st->best_bleu,
                (long long)st->best_step, what, r->dir);
    else
        fprintf(stderr, "best validation BLEU %.2f (ppl %.3f) at step %lld%s: "
                "%s/best.safetensors\n", st->best_bleu, st->best_ppl,
                (long long)st->best_step, what, r->dir);
}

/* A resumed run that early stopping had ended, and that stayed ended. */
static void early_stop_note(const run *r, const nmt_train_status *st)
{
    if (cli_verbosity == 0)
        return;
    fprintf(stderr, "the run in %s ended by early stopping at step %lld (%d validations without "
            "improvement, --early-stop %d): nothing to do. To train on, resume it with "
            "--early-stop 0 (off) or a larger --early-stop\n", r->dir, (long long)st->step,
            st->bad_validations, r->s.early_stop);
}

/* On a run that early stopping ended, an --early-stop below the validations
 * it has had without improvement would have ended it sooner: refused before
 * anything is written, as a --max-steps below the run's step is. */
static int check_early_stop_ahead(const run *r, const nmt_train_status *st)
{
    const train_args *a = &r->args;
    if (!a->given[O_EARLY_STOP] || !st->early_stopped || a->s.early_stop == 0 ||
        a->s.early_stop >= st->bad_validations)
        return 0;
    cli_error("--early-stop %d: the run in %s was ended by early stopping after %d validations "
              "without improvement; give --early-stop above %d to train on, or 0 to turn it "
              "off (nothing was changed)", a->s.early_stop, r->dir, st->bad_validations,
              st->bad_validations);
    return -1;
}

/* ---- signals ------------------------------------------------------------------ */

static volatile sig_atomic_t stop_signal = 0;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* the loop polls the flag; system calls carry on */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a file too large must fail the write (EFBIG), not kill the run */
    signal(SIGXFSZ, SIG_IGN);
}

static int train_main(int argc, char **argv)
{
    run r;
    memset(&r, 0, sizeof r);
    int code = 1;
    if (parse_args(&r.args, argc, argv, &code))
        return code;
    if (nmt_dist_rank() != 0)
        cli_verbosity = 0; /* rank 0 speaks for the run; the others only of errors */
    /* every input is read and checked before anything is written */
    if (load_model_or_checkpoint(&r) || read_corpora(&r)) {
        run_free(&r);
        return 1;
    }
    warn_unknown(&r);
    /* a fresh run's checkpoint names its corpora by absolute path, with
     * their path from the run folder and their prints, so that a resume
     * finds them from any folder and can check data that moved */
    if (!r.ckpt && (train_data_record(&r.data, &r.s) || (nmt_dist_rank() == 0 && make_dir(r.dir)))) {
        run_free(&r);
        return 1;
    }
    if (!r.ckpt)
        train_data_relate(&r.data, &r.s, r.dir);
    describe(&r);
    if (nmt_dist_size() > 1 && cli_verbosity > 0)
        fprintf(stderr, "data-parallel over %d processes (MPI): each step's batch is shared "
                "out by target tokens and the gradients summed in rank order\n",
                nmt_dist_size());
    nmt_valid_set valid = {.corpus = &r.valid, .refs = r.refs, .n_refs = r.n_refs};
    nmt_trainer *t = NULL;
    if (nmt_trainer_create(&t, r.model, &r.s, &r.train, r.have_valid ? &valid : NULL, r.dir) ||
        (r.ckpt && nmt_trainer_restore(t, r.ckpt))) {
        cli_lib_error();
        nmt_trainer_free(t);
        run_free(&r);
        return 1;
    }
    if (r.ckpt && check_early_stop_ahead(&r, nmt_trainer_status(t))) {
        nmt_trainer_free(t);
        run_free(&r);
        return 1;
    }
    view v = {.tty = isatty(STDERR_FILENO) && nmt_dist_rank() == 0, .dir = r.dir, .metric = r.s.best_metric,
              .max_time = r.s.max_time};
    nmt_progress_start(&v.progress, nmt_trainer_status(t)->step, 0.25);
    nmt_train_callbacks cb = {.user = &v, .on_event = on_event};
    catch_signals();
    int64_t first_step = nmt_trainer_status(t)->step;
    int rc = nmt_trainer_run(t, &cb, &stop_signal);
    v.steps_run = nmt_trainer_status(t)->step - first_step;
    clear_live(&v);
    const nmt_train_status *st = nmt_trainer_status(t);
    if (rc == NMT_OK) {
        if (r.ckpt && st->early_stopped && v.steps_run == 0)
            early_stop_note(&r, st);
        summary(&r, &v, st, 0);
        code = 0;
    } else if (rc == NMT_ERR_INTERRUPTED) {
        /* every process exits with the signal's code (any of them may have
         * received it: the loop shared its number), and rank 0 alone says so */
        if (nmt_dist_rank() == 0)
            cli_lib_error();
        summary(&r, &v, st, 1);
        code = 128 + st->stop_signal;
    } else {
        cli_lib_error();
        code = 1;
    }
    nmt_trainer_free(t);
    run_free(&r);
    return code;
}

/* Under mpirun every process runs this; the library shares the work out
 * (src/dist.c). Only rank 0 prints more than its errors. */
int cmd_train(int argc, char **argv)
{
    if (nmt_dist_init(&argc, &argv)) {
        cli_lib_error();
        return 1;
    }
    int code = train_main(argc, argv);
    /* an error on one process leaves the others waiting in a collective:
     * end them all (a signal ends them together, at one step) */
    if (code != 0 && code < 128 && nmt_dist_size() > 1)
        nmt_dist_abort(code);
    nmt_dist_finalize();
    return code;
}
