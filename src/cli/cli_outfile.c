/* Outputs that never overwrite an input and appear complete or not at all
 * (cli_outfile.h). */
#include "cli_outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_opts.h"

/* ---- the same file ---------------------------------------------------------- */

/* What a path names: an existing regular file's device and inode, or, for a
 * name with no file yet, the folder it would be made in and its name there.
 * Devices, pipes and terminals are never "the same file": reading one while
 * writing another overwrites nothing (and a terminal is often both standard
 * input and standard output). */
typedef struct file_id {
    enum { ID_NONE, ID_FILE, ID_NEW } kind;
    dev_t dev;
    ino_t ino;
    const char *base; /* ID_NEW: the name in that folder */
} file_id;

static file_id identify(const char *path, int std_fd)
{
    file_id id = {.kind = ID_NONE};
    struct stat st;
    int found = !strcmp(path, "-") ? fstat(std_fd, &st) == 0 : stat(path, &st) == 0;
    if (found) {
        if (S_ISREG(st.st_mode))
            id = (file_id){ID_FILE, st.st_dev, st.st_ino, NULL};
        return id;
    }
    if (!strcmp(path, "-") || errno != ENOENT)
        return id;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[4096];
    size_t dir_len = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 0;
    if (!*base || dir_len >= sizeof dir)
        return id;
    snprintf(dir, sizeof dir, "%.*s", (int)dir_len, path);
    if (stat(dir_len ? dir : ".", &st) == 0)
        id = (file_id){ID_NEW, st.st_dev, st.st_ino, base};
    return id;
}

static int same_file(const file_id *a, const file_id *b)
{
    return a->kind != ID_NONE && a->kind == b->kind && a->dev == b->dev && a->ino == b->ino &&
           (a->kind == ID_FILE || !strcmp(a->base, b->base));
}

/* "-o out.txt", "standard output", "runs/a/log.tsv". */
static void describe(char *buf, size_t cap, const cli_file *f, int output)
{
    if (!strcmp(f->path, "-"))
        snprintf(buf, cap, "%s", output ? "standard output" : "standard input");
    else if (f->option && *f->option)
        snprintf(buf, cap, "%s %s", f->option, f->path);
    else
        snprintf(buf, cap, "%s", f->path);
}

int cli_check_outputs(const cli_file *out, int n_out, const cli_file *in, int n_in)
{
    char a[4200], b[4200];
    for (int i = 0; i < n_out; i++) {
        if (!out[i].path)
            continue;
        file_id o = identify(out[i].path, STDOUT_FILENO);
        for (int k = 0; o.kind == ID_FILE && k < n_in; k++) {
            if (!in[k].path)
                continue;
            file_id f = identify(in[k].path, STDIN_FILENO);
            if (same_file(&o, &f)) {
                describe(a, sizeof a, &out[i], 1);
                describe(b, sizeof b, &in[k], 0);
                cli_error("%s is the same file as %s, which this command reads: give the "
                          "output another name", a, b);
                return 2;
            }
        }
        for (int k = 0; k < i; k++) {
            if (!out[k].path)
                continue;
            if (!strcmp(out[k].path, "-") && !strcmp(out[i].path, "-")) {
                cli_error("%s and %s both name standard output: give one of them a file",
                          out[k].option, out[i].option);
                return 2;
            }
            file_id f = identify(out[k].path, STDOUT_FILENO);
            if (same_file(&o, &f)) {
                describe(a, sizeof a, &out[k], 1);
                describe(b, sizeof b, &out[i], 1);
                cli_error("%s and %s are the same file: give each output its own name", a, b);
                return 2;
            }
        }
    }
    return 0;
}

int cli_check_run_outputs(const cli_file *out, const char *const *runs, int n_runs,
                          int beside_log)
{
    static const char *const in_folder[] = {"log.tsv", "best.safetensors",
                                            "checkpoint.safetensors"};
    enum { N_IN_FOLDER = sizeof in_folder / sizeof in_folder[0] };
    for (int i = 0; i < n_runs; i++) {
        if (!strcmp(runs[i], "-"))
            continue; /* a RUN is never standard input */
        char paths[N_IN_FOLDER][4200];
        cli_file files[1 + N_IN_FOLDER] = {{"RUN", runs[i]}};
        int n = 1;
        struct stat st;
        if (stat(runs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            for (int k = 0; k < N_IN_FOLDER; k++) {
                snprintf(paths[k], sizeof paths[k], "%s/%s", runs[i], in_folder[k]);
                files[n++] = (cli_file){NULL, paths[k]};
            }
        } else if (beside_log) {
            const char *slash = strrchr(runs[i], '/');
            snprintf(paths[0], sizeof paths[0], "%.*slog.tsv",
                     slash ? (int)(slash - runs[i] + 1) : 0, runs[i]);
            files[n++] = (cli_file){NULL, paths[0]};
        }
        int rc = cli_check_outputs(out, 1, files, n);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- temporary files and signals ------------------------------------------------- */

/* The temporary files being written, for the signal handler to remove. */
enum { MAX_PENDING = 8 };
static char *volatile pending[MAX_PENDING];

static void remove_pending_and_die(int sig)
{
    for (int k = 0; k < MAX_PENDING; k++) {
        char *p = pending[k];
        if (p)
            unlink(p);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Signals that end a command (Ctrl-C, kill, a closed terminal) remove the
 * temporary files first; a signal that a command catches itself, or that
 * was ignored when nmt started (nohup), is left alone. */
static void watch_signals(void)
{
    static int watching;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    if (watching)
        return;
    watching = 1;
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        struct sigaction old, sa;
        if (sigaction(sigs[k], NULL, &old) || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_pending_and_die;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[k], &sa, NULL);
    }
}

static void add_pending(char *tmp)
{
    watch_signals();
    for (int k = 0; k < MAX_PENDING; k++)
        if (!pending[k]) {
            pending[k] = tmp;
            return;
        }
}

static void drop_pending(const char *tmp)
{
    for (int k = 0; k < MAX_PENDING; k++)
        if (pending[k] == tmp)
            pending[k] = NULL;
}

/* ---- writing ----------------------------------------------------------------------- */

int cli_out_open(cli_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        o->name = "standard output";
        return 0;
    }
    o->name = path;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device or a pipe is written in place (a folder fails here, with
         * its reason) */
        if (!(o->f = fopen(path, "w"))) {
            cli_error("%s: cannot write: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    const char *slash = strrchr(path, '/');
    if (!*(slash ? slash + 1 : path)) {
        cli_error("%s: cannot write: a folder's name, not a file's", path);
        return -1;
    }
    /* a symbolic link stays: the file it names is replaced, and keeps its
     * permissions */
    char *target = exists ? realpath(path, NULL) : NULL;
    int rc = nmt_atomic_open(&o->atomic, target ? target : path, path, 1);
    free(target);
    if (rc) {
        cli_lib_error();
        return -1;
    }
    o->f = o->atomic.f;
    /* the handler's own copy of the name: it stays valid until dropped */
    if ((o->pending = strdup(o->atomic.tmp)))
        add_pending(o->pending);
    return 0;
}

int cli_out_failed(const cli_outfile *o)
{
    if (!o->f || !ferror(o->f))
        return 0;
    cli_error("%s: write failed", o->name);
    return -1;
}

int cli_out_commit(cli_outfile *o)
{
    if (!o->f)
        return 0;
    FILE *f = o->f;
    o->f = NULL;
    if (o->atomic.f) {
        int rc = nmt_atomic_commit(&o->atomic);
        drop_pending(o->pending);
        free(o->pending);
        o->pending = NULL;
        if (rc)
            cli_lib_error();
        return rc ? -1 : 0;
    }
    /* standard output, a device or a pipe: flushed only (the reason, when
     * the failing call is this one: an earlier failed write left only the
     * error flag) */
    int bad = ferror(f), e = 0;
    if (!bad && fflush(f)) {
        bad = 1;
        e = errno;
    }
    if (f != stdout && fclose(f) && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad && e)
        cli_error("%s: write failed: %s", o->name, strerror(e));
    else if (bad)
        cli_error("%s: write failed", o->name);
    return bad ? -1 : 0;
}

void cli_out_abort(cli_outfile *o)
{
    if (!o->f)
        return;
    if (o->atomic.f) {
        nmt_atomic_abort(&o->atomic);
        drop_pending(o->pending);
        free(o->pending);
        o->pending = NULL;
    } else if (o->f != stdout) {
        fclose(o->f);
    }
    o->f = NULL;
}
