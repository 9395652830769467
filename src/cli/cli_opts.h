/* Strict option parsing shared by the subcommands: a bad value names its
 * option. These print to stderr (the CLI is the only code that prints). */
#ifndef NMT_CLI_OPTS_H
#define NMT_CLI_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

/* The running subcommand's name, for messages ("nmt train: ..."). */
extern const char *cli_command;
/* -q / -v: 0 quiet, 1 normal, 2 verbose. */
extern int cli_verbosity;

/* Prints "nmt CMD: message" to stderr. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Prints the library's last error message as cli_error does. */
void cli_lib_error(void);

/* Whole numbers in [min, max]; decimal only, no trailing junk. On a bad value
 * print "--name: 'x' is not ..." and return -1; 0 on success. */
int opt_int(const char *name, const char *val, long min, long max, int *out);
int opt_long(const char *name, const char *val, long min, long max, long *out);
int opt_u64(const char *name, const char *val, uint64_t *out);
/* Finite floats in [min, max]. */
int opt_float(const char *name, const char *val, double min, double max, float *out);
int opt_double(const char *name, const char *val, double min, double max, double *out);
/* A wall-clock duration in seconds: whole numbers with units h, m, s in
 * that order, each at most once ("90s", "30m", "2h", "1h30m", "1h0m5s"), or
 * "0" for none; at most max seconds. */
int opt_duration(const char *name, const char *val, double max, double *out);
/* One of the given words (NULL-terminated list); returns its index or -1. */
int opt_choice(const char *name, const char *val, const char *const *choices);

/* One more -m FILE into models[*n] (at most max of them: an ensemble's
 * limit); 0, or 2 after saying so. */
int opt_model(const char *path, const char **models, int *n, int max);

/* The default of --threads: every core this process may run on (its CPU
 * affinity, else the cores online), at least 1 and at most 256. */
int cli_default_threads(void);
/* Sets the threads of the passes; if not all could be started, prints a
 * warning that says how many run (the work goes on with those). */
void cli_set_threads(int n);

/* The options that the commands which run a model share (translate, score,
 * align, compare), written once: the entries of their getopt tables, and
 * one parser with one range and one message for each. */
enum { CLI_OPT_ALPHA = 0x1000, CLI_OPT_BATCH_SIZE, CLI_OPT_THREADS };
#define CLI_OPTION_BEAM {"beam", required_argument, NULL, 'b'}
#define CLI_OPTION_ALPHA {"alpha", required_argument, NULL, CLI_OPT_ALPHA}
#define CLI_OPTION_BATCH_SIZE {"batch-size", required_argument, NULL, CLI_OPT_BATCH_SIZE}
#define CLI_OPTION_THREADS {"threads", required_argument, NULL, CLI_OPT_THREADS}
/* Where a command keeps them (NULL for one it does not take). */
typedef struct cli_model_opts {
    int *beam;          /* 1 .. 1000 */
    float *alpha;       /* 0 .. 10 */
    int *batch_size;    /* sentences, 1 .. 4096 */
    int *threads;       /* 1 .. 256 */
} cli_model_opts;
/* If getopt's c is one of the shared options that o keeps, parses arg into
 * it: 0, or 2 (the usage exit code) after naming a bad value. 1 if c is not
 * one of them. */
int cli_model_option(int c, const char *arg, const cli_model_opts *o);
/* For getopt's default case: cli_model_option, and anything it does not
 * know is a usage error. 0 when c was taken, else 2 (the exit code). */
int cli_model_option_or_usage(int c, const char *arg, const cli_model_opts *o);

/* After the options: 0 if no operand is left, else says which one is
 * unexpected and returns 2. */
int cli_no_operands(int argc, char **argv);

/* Reports an unknown option or a missing argument the way getopt found it,
 * with a hint to --help. Always returns 2 (the exit code for usage errors). */
int cli_usage_error(void);

#endif
