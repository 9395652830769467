/* nmt train's options: the table, the help, strict parsing of each value,
 * and the combinations refused before anything is read (cmd_train_opts.h). */
#include "cmd_train_opts.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_opts.h"
#include "cli_outfile.h"
#include "nmt/error.h"
#include "nmt/vocab.h"

static void help(void)
{
    printf(
        "Usage: nmt train --src F --tgt F --out DIR [OPTIONS]\n"
        "       nmt train --resume DIR [--max-steps N] [--epochs N] [--max-time T]\n"
        "                              [--early-stop N] [--threads N] [--src F] [--tgt F]\n"
        "                              [--valid-src F] [--valid-tgt F]\n"
        "       nmt train --init-from FILE --src F --tgt F --out DIR [OPTIONS]\n\n"
        "Trains an encoder-decoder (an RNN with attention, or a Transformer) on a\n"
        "parallel corpus (plain or gzip files, one sentence per line). Writes\n"
        "DIR/checkpoint.safetensors (the latest state, resumable), DIR/best.safetensors\n"
        "(best on validation) and DIR/log.tsv.\n\n"
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
        "                         and first lines), other data is refused. A run past\n"
        "                         its limits (steps, epochs, time, early stop) has\n"
        "                         nothing to do: it says so and changes no file\n"
        "  --init-from FILE       start from a model's weights, architecture (every size\n"
        "                         too) and vocabularies, with new training settings\n"
        "  --lowercase            lowercase the text (default: keep case)\n"
        "  --max-len N            skip training pairs longer than N tokens (default 50;\n"
        "                         with subwords N pieces, default %d)\n"
        "  --min-count N          word vocabulary: words seen at least N times (default\n"
        "                         1); giving it (or --max-vocab) trains on words\n"
        "  --max-vocab N          word vocabulary: at most N entries per side (default\n"
        "                         0: all)\n"
        "  --no-shuffle           batches in corpus order (default: shuffled\n"
        "                         length-sorted pools)\n"
        "  --shuffle-buffer N     stream the training corpus from its files in blocks\n"
        "                         of N pairs, each shuffled and batched on its own, so\n"
        "                         that a corpus larger than memory trains in memory\n"
        "                         bounded by N (one pass over the files an epoch; the\n"
        "                         vocabularies are counted in a first pass; subwords\n"
        "                         are learned from a sample of 1 M pairs); a shuffle\n"
        "                         within N pairs, not over the corpus (default 0: the\n"
        "                         corpus is read into memory and shuffled whole)\n\n"
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
        "  --arch rnn|transformer the architecture (default rnn): a recurrent encoder-\n"
        "                         decoder with attention, or a Transformer (pre-norm\n"
        "                         layers of multi-head attention and feed-forward)\n"
        "  --tied-embeddings      the output projection is the target embedding table\n"
        "                         (no separate output matrix); the default, but for an\n"
        "                         RNN whose --out-dim differs from --emb\n"
        "  --untied-embeddings    a separate output matrix out.W\n"
        " The RNN's (--arch rnn):\n"
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
        "  --out-dim N            deep output size (default: --emb); tied embeddings\n"
        "                         need --out-dim = --emb\n"
        " The Transformer's (--arch transformer):\n"
        "  --d-model D            the width of every layer (default 128)\n"
        "  --heads H              attention heads, each of d-model / H; H must divide\n"
        "                         --d-model (default 4)\n"
        "  --ff F                 the feed-forward network's inner width (default 256)\n"
        "  --layers N             encoder and decoder layers (default 4 each)\n"
        "  --enc-layers N, --dec-layers N\n"
        "                         one side's layers (over --layers)\n"
        "  --norm layer|scale     every norm ScaleNorm (default): g * u / max(|u|,\n"
        "                         1e-5) with one scalar gain g per norm, initially\n"
        "                         sqrt(d-model) (Nguyen and Salazar), or a layer norm\n"
        "  --fixnorm, --no-fixnorm\n"
        "                         read every embedding row at unit length (and with\n"
        "                         tied embeddings project onto the normalised table;\n"
        "                         default on); --norm layer --no-fixnorm is the\n"
        "                         plain model of Vaswani et al.\n"
        "  --joint-vocab          one vocabulary for both sides (the subword pieces,\n"
        "                         or the words of both sides counted together, with\n"
        "                         --min-count and --max-vocab on that count) and one\n"
        "                         embedding table, read by the encoder, the decoder\n"
        "                         and the tied output (default: one of each a side)\n\n"
        "Optimisation:\n"
        "  --optimizer sgd|adam|adadelta\n"
        "                         (default adam; adadelta: rho 0.95, eps 1e-6)\n"
        "  --lr X                 learning rate (default 1e-3 for adam, 3e-3 for adam\n"
        "                         with a Transformer, 1 for sgd and adadelta, where\n"
        "                         it multiplies the update)\n"
        "  --clip X               clip the global gradient norm to X (default 5; 0 off)\n"
        "  --dropout X            sets every dropout rate of the architecture below at\n"
        "                         once (each one's own option overrides it); 0 turns\n"
        "                         every kind of dropout off, word dropout too unless\n"
        "                         a --word-dropout option is given (a rate above 0\n"
        "                         sets no word dropout: it drops units, not words)\n"
        "  --dropout-emb X        on the source and target embeddings (default 0.3; a\n"
        "                         Transformer's, with their positions: 0.1*)\n"
        "  --dropout-enc X        rnn: on the encoder's annotations h_j, as the\n"
        "                         attention, the context and the summary z read them;\n"
        "                         not inside the recurrence (default 0.3)\n"
        "  --dropout-out X        rnn: on the deep output t, before the vocabulary\n"
        "                         projection (default 0.3)\n"
        "  --dropout-residual X   transformer: on each sublayer's output, before it is\n"
        "                         added to the residual stream (default 0.1*)\n"
        "  --dropout-att X        transformer: on the attention weights (default 0.1*)\n"
        "  --dropout-ff X         transformer: on the feed-forward network's inner layer\n"
        "                         (default 0.1*; *: 0.2 given --max-time of 1h or more)\n"
        "  --word-dropout X       replace each source token (not </s>) and each token\n"
        "                         the decoder reads (not <s>) by <unk> with probability\n"
        "                         X while training; the labels stay (default 0)\n"
        "  --word-dropout-src X, --word-dropout-tgt X\n"
        "                         one side's rate (over --word-dropout)\n"
        "  --label-smoothing X    train on (1-X)(-log p[y]) + X * mean over the target\n"
        "                         vocabulary of -log p (default 0.1); the loss in log.tsv,\n"
        "                         the perplexities and nmt score stay -log p[y]\n"
        "  --batch-size N         sentences per batch (default 64; with --batch-tokens,\n"
        "                         the most a batch may hold)\n"
        "  --batch-tokens N       batches by target tokens: a batch takes pairs while\n"
        "                         pairs x its longest target (tokens + </s>: padding\n"
        "                         counted) stays within N, and at most --batch-size\n"
        "                         pairs, which sizes the memory (raise it with N); a\n"
        "                         longer pair makes a batch alone (default 0: off)\n"
        "  --accumulate K         sum the gradients of K batches into one step: the\n"
        "                         step of one batch of their pairs, within float\n"
        "                         rounding, in the memory of one (default 1);\n"
        "                         --max-steps, --warmup, --save-every count such steps\n"
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
        "  --warmup N             the lr rises from 0 to --lr over N steps, then falls as\n"
        "                         --lr * sqrt(N / step) (Vaswani et al.'s schedule with\n"
        "                         --lr as its peak); it decays the lr itself, so\n"
        "                         --lr-decay and --patience do not go with it (default\n"
        "                         RNN 0: a constant --lr, lowered by --lr-decay;\n"
        "                         Transformer 300, or 0 with --lr-decay or --patience)\n"
        "  --lr-schedule plateau|rsqrt|linear\n"
        "                         how the lr moves: plateau, --lr lowered by --lr-decay\n"
        "                         after --patience validations without improvement (the\n"
        "                         RNN's default); rsqrt, --warmup's (the Transformer's;\n"
        "                         an RNN's warm-up 300 unless given); linear, after the\n"
        "                         warm-up (the Transformer's 300, the RNN's none, or\n"
        "                         --warmup) a straight line down to 0 at the run's end,\n"
        "                         the nearer of --max-steps and --max-time (one is\n"
        "                         needed): by the clock with --max-time, so two runs of\n"
        "                         one seed then differ\n"
        "  --decay-from F         with --lr-schedule linear: hold --lr over the first\n"
        "                         part F of the run (0 <= F < 1), then the line down to\n"
        "                         0 (default 0: from the warm-up's end)\n"
        "  --early-stop N         stop after N validations without improvement\n"
        "                         (default 0: off). A run it ended stays ended on\n"
        "                         --resume; --early-stop 0 or a larger N goes on\n"
        "  --seed N               random seed: init, shuffling, dropout (default 1)\n"
        "  --init uniform|orthogonal|bahdanau|xavier\n"
        "                         initial weights (fresh runs). uniform (the RNN's\n"
        "                         default): every parameter, recurrent matrices and\n"
        "                         biases too, uniform in [-X, X], X = --init-scale\n"
        "                         (default 0.1, OpenNMT-py's param_init). orthogonal:\n"
        "                         the same but recurrent matrices orthogonal, biases 0\n"
        "                         and the LSTM forget bias 1 (the default before; on\n"
        "                         Multi30k its attention fails to align and it learns\n"
        "                         half as fast: docs/experiments/initial-weights.md).\n"
        "                         bahdanau:\n"
        "                         the paper's appendix (att.W, att.U ~ N(0, 0.001^2),\n"
        "                         att.v 0, the rest N(0, 0.01^2), recurrent\n"
        "                         orthogonal); with adam its deep output saturates and\n"
        "                         it sits at the target unigram perplexity for\n"
        "                         thousands of steps. xavier (the Transformer's default\n"
        "                         and only one): matrices Xavier-uniform, biases 0,\n"
        "                         layer norms' gains 1, embeddings N(0, 1/d-model)\n"
        "  --init-scale X         the X of --init uniform and orthogonal (default 0.1)\n"
        "  --threads N            threads (default: every core this process may use,\n"
        "                         here %d); the same seed and --threads give the same\n"
        "                         weights, other thread counts may round differently\n"
        "  (under mpirun -np N: one run data-parallel over N processes; each step's\n"
        "  batch is shared out, the gradients summed round a ring in a fixed order;\n"
        "  rank 0 validates, writes and prints; --threads is each process's own;\n"
        "  docs/training.md, \"Several processes (MPI)\")\n\n"
        "Saving and reporting:\n"
        "  --valid-every N        also validate every N steps (default 0: epoch ends only)\n"
        "  --save-every N         checkpoint every N steps (default 1000; 0: only at\n"
        "                         epoch ends, the end, and on SIGINT/SIGTERM)\n"
        "  --report-every N       a log.tsv row every N steps (default 0: every 10 s)\n"
        "  --keep-snapshots K     keep the models of the last K validations as\n"
        "                         DIR/snapshot-STEP.safetensors (needs validation;\n"
        "                         default: 3, with --average-snapshots, when validating\n"
        "                         and neither option is given; 0: none); nmt average\n"
        "                         can average them\n"
        "  --average-snapshots    at the end, average the kept snapshots into\n"
        "                         DIR/average.safetensors and validate it (a log.tsv\n"
        "                         row with average_of set); if it is better by\n"
        "                         --best-metric it becomes DIR/best.safetensors\n"
        "  --batch-log FILE       write every step's batch as JSON Lines of token ids\n"
        "                         and the step's lr, after a first line with the crc32\n"
        "                         of the weights they start from (to replay the run:\n"
        "                         pytorch/torch_baseline.py train --batches FILE)\n"
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
        NMT_SUBWORD_MAX_LEN, NMT_AUTO_SUBWORDS, cli_default_threads());
}

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
    O_BATCH_TOKENS, O_ACCUMULATE, O_SHUFFLE_BUFFER, O_LR_SCHEDULE, O_DECAY_FROM, O_NORM,
    O_FIXNORM, O_NO_FIXNORM, O_JOINT_VOCAB, O_WORD_DROPOUT, O_WORD_DROPOUT_SRC,
    O_WORD_DROPOUT_TGT, O_END
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
    {"joint-vocab", no_argument, 0, O_JOINT_VOCAB},
    {"word-dropout", required_argument, 0, O_WORD_DROPOUT},
    {"word-dropout-src", required_argument, 0, O_WORD_DROPOUT_SRC},
    {"word-dropout-tgt", required_argument, 0, O_WORD_DROPOUT_TGT},
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
                                          O_JOINT_VOCAB, 0};
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
    if (a->schedule == NMT_SCHEDULE_LINEAR && !a->given[O_MAX_STEPS] && !a->given[O_MAX_TIME] &&
        !a->q.resume_dir) {
        cli_error("--lr-schedule linear decays to 0 at the run's end: give --max-steps or "
                  "--max-time");
        return -1;
    }
    if (a->given[O_DECAY_FROM] && a->schedule != NMT_SCHEDULE_LINEAR) {
        cli_error("--decay-from needs --lr-schedule linear: it is where that line down starts");
        return -1;
    }
    if (s->warmup > 0 && (a->given[O_LR_DECAY] || (a->given[O_PATIENCE] && s->patience > 0))) {
        cli_error("--%s does not go with --warmup: the warmup's schedule lowers the lr itself, "
                  "as --lr * sqrt(warmup / step) (docs/training.md)",
                  a->given[O_LR_DECAY] ? "lr-decay" : "patience");
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
                           {"--spm", q->spm},              {"--init-from", q->init_from}};
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
        .dropout_emb = g[O_DROPOUT_EMB], .dropout_enc = g[O_DROPOUT_ENC],
        .dropout_out = g[O_DROPOUT_OUT], .dropout_residual = g[O_DROPOUT_RESIDUAL],
        .dropout_att = g[O_DROPOUT_ATT], .dropout_ff = g[O_DROPOUT_FF],
        .word_dropout = g[O_WORD_DROPOUT], .word_dropout_src = g[O_WORD_DROPOUT_SRC],
        .word_dropout_tgt = g[O_WORD_DROPOUT_TGT],
        .schedule = a->schedule, .keep_snapshots = g[O_KEEP_SNAPSHOTS],
        .average_snapshots = g[O_AVERAGE_SNAPSHOTS],
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
