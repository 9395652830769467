/* nmt: subcommands in the manner of git. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli_blas.h"
#include "cli_opts.h"
#include "commands.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv); /* NULL: not implemented yet */
    const char *summary;
    int blas;  /* runs matrix products (or says which kernel would): gets the
                * BLAS kernel the CPU deserves first (cli_blas.h) */
} command;

static const command commands[] = {
    {"train", cmd_train, "train a model on a parallel corpus (or --resume a run)", 1},
    {"translate", cmd_translate, "translate sentences with a model (greedy or beam search)", 1},
    {"score", cmd_score, "loss and perplexity of a model on a parallel corpus", 1},
    {"bleu", cmd_bleu, "corpus BLEU and chrF exactly as sacreBLEU computes them", 0},
    {"align", cmd_align, "attention matrices as text, TSV, JSON, Pharaoh, SVG or PNG", 1},
    {"compare", cmd_compare, "runs side by side: BLEU overall and by sentence length", 1},
    {"info", cmd_info, "a model's settings and size; without one, the BLAS kernel and CPU", 1},
    {"average", cmd_average, "the element-wise mean of several models (checkpoint averaging)", 0},
    {"plot", cmd_plot, "training curves of runs from their log.tsv, as SVG", 0},
    {"serve", cmd_serve, "translations and their attention over HTTP: a JSON API and a page", 1},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "Usage: nmt COMMAND [OPTIONS]\n\n"
               "Neural machine translation trained on the CPU: the Transformer (nmt\n"
               "train's default architecture: self-attention, multi-head attention, the\n"
               "feed-forward network) and, with nmt train --arch rnn, RNN, GRU and LSTM\n"
               "encoder-decoders joined by attention (Bahdanau's additive, Luong's dot\n"
               "and general, the scaled dot product, or none), every gradient written by\n"
               "hand; BLEU and chrF as sacreBLEU computes them; attention as alignments.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "help", "the options of a command (nmt help CMD)");
    fprintf(f, "\nRun 'nmt COMMAND --help' for the options of a command.\n");
}

static const command *find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

static int run(const command *c, int argc, char **argv)
{
    cli_command = c->name;
    if (!c->run) {
        cli_error("not implemented yet");
        return 1;
    }
    int rc = c->run(argc, argv);
    /* output lost to a full disk or a file size limit is no success */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        cli_error("standard output: write failed");
        rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    /* Past a file size limit (ulimit -f) a write must fail with EFBIG, which
     * every command reports, rather than kill the program mid-file. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("nmt " NMT_VERSION "\n");
        return 0;
    }
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        const command *c = find(argv[2]);
        if (!c) {
            fprintf(stderr, "nmt: unknown command '%s'\n", argv[2]);
            return 2;
        }
        char *help_argv[] = {argv[2], "--help", NULL};
        return run(c, 2, help_argv);
    }
    const command *c = find(name);
    if (!c) {
        fprintf(stderr, "nmt: unknown command '%s'\n", name);
        usage(stderr);
        return 2;
    }
    if (c->blas)
        cli_blas_choose(argc, argv);
    return run(c, argc - 1, argv + 1);
}
