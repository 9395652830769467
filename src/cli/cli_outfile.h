/* The files the commands write with -o (and --alignments): an output never
 * overwrites an input, and a file appears complete or not at all.
 *
 * A regular file (or a new one) is written into a temporary file beside it,
 * ".NAME.tmp.PID", which is synced and renamed over it at the end, as the
 * library writes model files (nmt/atomic_file.h): a command that fails or is
 * interrupted (SIGINT, SIGTERM, SIGHUP) removes its temporary file, and an
 * output that existed keeps its bytes. A symbolic link is followed (the file
 * it points to is replaced); a hard link's other names keep the old file.
 * Standard output, devices and pipes are written as the lines come. */
#ifndef NMT_CLI_OUTFILE_H
#define NMT_CLI_OUTFILE_H

#include <stdio.h>

#include "nmt/atomic_file.h"

/* A file a command reads or writes, as its command line names it: the
 * option (or operand) that names it, for messages ("" or NULL: none), and
 * its path; "-" is standard input (an input) or standard output (an
 * output), a NULL path a file not given. */
typedef struct cli_file {
    const char *option;
    const char *path;
} cli_file;

/* Refuses outputs that would overwrite an input or one another. Files are
 * compared by device and inode, so that another spelling of a path, a
 * symbolic link or a hard link is still the same file; standard output
 * counts when it is a regular file (nmt translate -i x >>x). Returns 0, or 2
 * (the usage exit code) after naming both options and files. */
int cli_check_outputs(const cli_file *out, int n_out, const cli_file *in, int n_in);

/* The same for the RUN operands of nmt compare and nmt plot: an output may
 * be neither a RUN nor a file a run folder's RUN is read from (its log.tsv,
 * best.safetensors, checkpoint.safetensors). With beside_log, a RUN that is
 * a file also has the log.tsv of its folder read (nmt compare). */
int cli_check_run_outputs(const cli_file *out, const char *const *runs, int n_runs,
                          int beside_log);

/* An output being written. All zero: none (cli_out_commit and
 * cli_out_abort do nothing then). */
typedef struct cli_outfile {
    FILE *f;
    const char *name;       /* for messages: the path as given, or "standard output" */
    nmt_atomic_file atomic; /* a regular file's temporary (atomic.f NULL: written in place) */
    char *pending;          /* its name, as the signal handler removes it */
} cli_outfile;

/* Opens path for writing ("-" or NULL: standard output). Returns 0, or -1
 * after saying why on stderr. */
int cli_out_open(cli_outfile *o, const char *path);

/* Says "NAME: write failed" and returns -1 if a write to o has failed; 0
 * otherwise. */
int cli_out_failed(const cli_outfile *o);

/* Finishes a complete output: flushes, syncs and closes the temporary file
 * and renames it over the target (standard output is flushed only).
 * Returns 0, or -1 after saying what failed (the temporary is gone then,
 * the target untouched). */
int cli_out_commit(cli_outfile *o);

/* Drops the output of a command that failed: closes it and removes the
 * temporary file, so that an existing file keeps its bytes and no new one
 * appears. */
void cli_out_abort(cli_outfile *o);

#endif
