/* Finding a run's corpora again on --resume (cli/train_data.h). The
 * checkpoint keeps each file's absolute path, its path from the run's
 * folder (for a run folder moved together with its data), and its print
 * (size and a hash of the first lines), so that data found elsewhere is
 * used only when it is the same. */
#include "train_data.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opts.h"
#include "outfile.h"
#include "nmt/corpus.h"
#include "nmt/error.h"

static const char *const option[4] = {"--src", "--tgt", "--valid-src", "--valid-tgt"};
static const char *const role[4] = {"training source", "training target", "validation source",
                                    "validation target"};

static const char **slot(nmt_train_settings *s, int k)
{
    return k == 0 ? &s->src_path : k == 1 ? &s->tgt_path : k == 2 ? &s->valid_src_path
                                                                   : &s->valid_tgt_path;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The path of the absolute `to` as seen from the absolute folder `from`:
 * "../data/x.de". Malloc'ed; NULL when out of memory. */
static char *relative_path(const char *from, const char *to)
{
    size_t i = 0, common = 0, n_from = strlen(from);
    while (from[i] && from[i] == to[i]) {
        if (from[i] == '/')
            common = i + 1;
        i++;
    }
    if (!from[i] && to[i] == '/')
        common = i + 1;
    int ups = 0;
    for (const char *p = common < n_from ? from + common : ""; *p;) {
        ups++;
        p += strcspn(p, "/");
        p += strspn(p, "/");
    }
    const char *rest = to + common;
    char *out = malloc(3 * (size_t)ups + strlen(rest) + 2);
    if (!out)
        return NULL;
    out[0] = '\0';
    for (int k = 0; k < ups; k++)
        strcat(out, "../");
    strcat(out, *rest ? rest : ".");
    return out;
}

/* dir/name, malloc'ed (NULL when out of memory). */
static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Points slot k of s at the absolute form of path (kept as given when it
 * has none). 0, or -1 when out of memory. */
static int set_path(train_data *d, nmt_train_settings *s, int k, const char *path)
{
    char *abs = realpath(path, NULL);
    if (!abs && !(abs = strdup(path))) {
        cli_error("out of memory");
        return -1;
    }
    free(d->path[k]);
    d->path[k] = abs;
    *slot(s, k) = abs;
    return 0;
}

int train_data_record(train_data *d, nmt_train_settings *s)
{
    for (int k = 0; k < 4; k++) {
        const char *p = *slot(s, k);
        if (!p || !is_file(p))
            continue;
        if (nmt_data_print_of(p, &s->data_print[k])) {
            cli_lib_error();
            return -1;
        }
        if (set_path(d, s, k, p))
            return -1;
    }
    return 0;
}

void train_data_relate(train_data *d, nmt_train_settings *s, const char *dir)
{
    char *dir_abs = realpath(dir, NULL);
    for (int k = 0; k < 4; k++) {
        free(d->from_run[k]);
        d->from_run[k] = NULL;
        const char *p = *slot(s, k);
        if (dir_abs && p && p[0] == '/')
            d->from_run[k] = relative_path(dir_abs, p);
        s->data_from_run[k] = d->from_run[k]; /* NULL: not known */
    }
    free(dir_abs);
}

/* Whether the file at path is the data the run began on (want). `named`
 * says how the message names it, `was` (NULL: the same file) the file the
 * run began on. */
static int check_same(const char *path, const nmt_data_print *want, const char *named,
                      const char *was)
{
    nmt_data_print got;
    if (nmt_data_print_of(path, &got)) {
        cli_lib_error();
        return -1;
    }
    if (!want->known)
        return 0; /* a checkpoint from before prints: nothing to check against */
    if (got.bytes == want->bytes && got.hash == want->hash)
        return 0;
    char why[160];
    if (got.bytes != want->bytes)
        snprintf(why, sizeof why, "%" PRIu64 " bytes where the run's file had %" PRIu64,
                 got.bytes, want->bytes);
    else
        snprintf(why, sizeof why, "its first lines differ from the run's file's");
    cli_error("%s: not the data the run began on%s%s%s: %s; a resumed run continues on its "
              "own data (for other data, start a new run with --init-from)", named,
              was ? " (" : "", was ? was : "", was ? ")" : "", why);
    return -1;
}

int train_data_resume(train_data *d, nmt_train_settings *s, const char *dir,
                      const char *const given[4])
{
    for (int k = 0; k < 4; k++) {
        const char *was = *slot(s, k);
        char named[4200];
        if (!was) {
            if (given[k]) {
                cli_error("%s: the run in %s has no validation set (a resumed run keeps its "
                          "settings)", option[k], dir);
                return -1;
            }
            continue;
        }
        const char *use = NULL;
        char *from_run = NULL;
        int missing = 0;
        if (given[k]) {
            use = given[k];
            snprintf(named, sizeof named, "%s %s", option[k], use);
        } else if (access(was, R_OK) == 0) {
            use = was;
            snprintf(named, sizeof named, "%s (the %s file of the checkpoint)", was, role[k]);
        } else {
            missing = errno;
            /* a run folder moved along with its data finds it where it lay */
            if (s->data_from_run[k] && was[0] == '/' && s->data_from_run[k][0] != '/' &&
                (from_run = join(dir, s->data_from_run[k])) && access(from_run, R_OK) == 0) {
                use = from_run;
                snprintf(named, sizeof named, "%s", use);
            }
        }
        if (!use) {
            cli_error("--resume %s: the %s file %s (from the checkpoint) cannot be opened: %s; "
                      "if the data moved, give %s FILE (checked to be the same data)", dir,
                      role[k], was, strerror(missing), option[k]);
            free(from_run);
            return -1;
        }
        if (check_same(use, &s->data_print[k], named, use == was ? NULL : was)) {
            free(from_run);
            return -1;
        }
        if (use == from_run && cli_verbosity > 0)
            fprintf(stderr, "nmt train: the %s file %s (from the checkpoint) is not there; "
                    "using %s, where it lies from the run folder as it did\n", role[k], was,
                    from_run);
        if (!s->data_print[k].known && given[k] && cli_verbosity > 0)
            fprintf(stderr, "nmt train: %s %s: not checked against the run's data (the "
                    "checkpoint is older than data checks)\n", option[k], given[k]);
        int rc = set_path(d, s, k, use);
        free(from_run);
        if (rc)
            return -1;
    }
    train_data_relate(d, s, dir);
    return 0;
}

void train_data_free(train_data *d)
{
    for (int k = 0; k < 4; k++) {
        free(d->path[k]);
        free(d->from_run[k]);
    }
}

int train_check_batch_log(const nmt_train_settings *s, const char *spm, const char *init_from,
                          const char *resume)
{
    const cli_file log = {"--batch-log", s->batch_log_path};
    const cli_file in[] = {{"--src", s->src_path},         {"--tgt", s->tgt_path},
                           {"--valid-src", s->valid_src_path}, {"--valid-tgt", s->valid_tgt_path},
                           {"--spm", spm},                 {"--init-from", init_from}};
    int rc = cli_check_outputs(&log, 1, in, sizeof in / sizeof in[0]);
    return rc || !resume ? rc : cli_check_run_outputs(&log, &resume, 1, 0);
}
