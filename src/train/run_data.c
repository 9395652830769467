/* Finding a run's corpora again on resume (train/run_data.h). The
 * checkpoint keeps each file's absolute path, its path from the run's
 * folder (for a run folder moved together with its data), and its print
 * (size and a hash of the first lines), so that data found elsewhere is
 * used only when it is the same. */
#include "train/run_data.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nmt/corpus.h"
#include "nmt/error.h"

static const char *const option[NMT_RUN_FILES] = {"--src", "--tgt", "--valid-src",
                                                  "--valid-tgt", "--guided-links"};
static const char *const role[NMT_RUN_FILES] = {"training source", "training target",
                                                "validation source", "validation target",
                                                "guided alignment links"};

/* A note through the callbacks (NMT_SETUP_NOTE), printf-style. */
static void note(const nmt_setup_callbacks *cb, const nmt_train_run *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void note(const nmt_setup_callbacks *cb, const nmt_train_run *r, const char *fmt, ...)
{
    if (!cb || !cb->on_event)
        return;
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cb->on_event(cb->user, NMT_SETUP_NOTE, r, text);
}

static const char **slot(nmt_train_settings *s, int k)
{
    return k == 0 ? &s->src_path : k == 1 ? &s->tgt_path : k == 2 ? &s->valid_src_path
                                                : k == 3 ? &s->valid_tgt_path : &s->guided_links;
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

/* Points slot k of the settings at the absolute form of path (kept as
 * given when it has none). */
static int set_path(nmt_train_run *r, int k, const char *path)
{
    char *abs = realpath(path, NULL);
    if (!abs && !(abs = strdup(path)))
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    free(r->data_path[k]);
    r->data_path[k] = abs;
    *slot(&r->s, k) = abs;
    return NMT_OK;
}

int nmt_run_data_record(nmt_train_run *r)
{
    nmt_train_settings *s = &r->s;
    for (int k = 0; k < NMT_RUN_FILES; k++) {
        const char *p = *slot(s, k);
        if (!p || !is_file(p))
            continue;
        int rc = nmt_data_print_of(p, &s->data_print[k]);
        if (!rc)
            rc = set_path(r, k, p);
        if (rc)
            return rc;
    }
    return NMT_OK;
}

void nmt_run_data_relate(nmt_train_run *r, const char *dir)
{
    nmt_train_settings *s = &r->s;
    char *dir_abs = realpath(dir, NULL);
    for (int k = 0; k < NMT_RUN_FILES; k++) {
        free(r->data_from_run[k]);
        r->data_from_run[k] = NULL;
        const char *p = *slot(s, k);
        if (dir_abs && p && p[0] == '/')
            r->data_from_run[k] = relative_path(dir_abs, p);
        s->data_from_run[k] = r->data_from_run[k]; /* NULL: not known */
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
    int rc = nmt_data_print_of(path, &got);
    if (rc)
        return rc;
    if (!want->known)
        return NMT_OK; /* a checkpoint from before prints: nothing to check against */
    if (got.bytes == want->bytes && got.hash == want->hash)
        return NMT_OK;
    char why[160];
    if (got.bytes != want->bytes)
        snprintf(why, sizeof why, "%" PRIu64 " bytes where the run's file had %" PRIu64,
                 got.bytes, want->bytes);
    else
        snprintf(why, sizeof why, "its first lines differ from the run's file's");
    return nmt_set_error(NMT_ERR_ARG, "%s: not the data the run began on%s%s%s: %s; a resumed "
                         "run continues on its own data (for other data, start a new run "
                         "with --init-from)", named, was ? " (" : "", was ? was : "",
                         was ? ")" : "", why);
}

/* Slot k of a resumed run: the file to use, checked. */
static int resume_slot(nmt_train_run *r, int k, const char *given, const nmt_setup_callbacks *cb)
{
    nmt_train_settings *s = &r->s;
    const char *was = *slot(s, k);
    char named[4200];
    if (!was) {
        if (given)
            return nmt_set_error(NMT_ERR_ARG, "%s: the run in %s has no %s (a resumed run "
                                 "keeps its settings)", option[k], r->dir,
                                 k == 4 ? "guided alignment" : "validation set");
        return NMT_OK;
    }
    const char *use = NULL;
    char *from_run = NULL;
    int missing = 0;
    if (given) {
        use = given;
        snprintf(named, sizeof named, "%s %s", option[k], use);
    } else if (access(was, R_OK) == 0) {
        use = was;
        snprintf(named, sizeof named, "%s (the %s file of the checkpoint)", was, role[k]);
    } else {
        missing = errno;
        /* a run folder moved along with its data finds it where it lay */
        if (s->data_from_run[k] && was[0] == '/' && s->data_from_run[k][0] != '/' &&
            (from_run = join(r->dir, s->data_from_run[k])) && access(from_run, R_OK) == 0) {
            use = from_run;
            snprintf(named, sizeof named, "%s", use);
        }
    }
    if (!use) {
        free(from_run);
        return nmt_set_error(NMT_ERR_IO, "--resume %s: the %s file %s (from the checkpoint) "
                             "cannot be opened: %s; if the data moved, give %s FILE (checked "
                             "to be the same data)", r->dir, role[k], was, strerror(missing),
                             option[k]);
    }
    int rc = check_same(use, &s->data_print[k], named, use == was ? NULL : was);
    if (rc) {
        free(from_run);
        return rc;
    }
    if (use == from_run)
        note(cb, r, "the %s file %s (from the checkpoint) is not there; using %s, "
                       "where it lies from the run folder as it did", role[k], was, from_run);
    if (!s->data_print[k].known && given)
        note(cb, r, "%s %s: not checked against the run's data (the checkpoint is "
                       "older than data checks)", option[k], given);
    rc = set_path(r, k, use);
    free(from_run);
    return rc;
}

int nmt_run_data_resume(nmt_train_run *r, const char *const given[NMT_RUN_FILES],
                        const nmt_setup_callbacks *cb)
{
    for (int k = 0; k < NMT_RUN_FILES; k++) {
        int rc = resume_slot(r, k, given[k], cb);
        if (rc)
            return rc;
    }
    nmt_run_data_relate(r, r->dir);
    return NMT_OK;
}

void nmt_run_data_free(nmt_train_run *r)
{
    for (int k = 0; k < NMT_RUN_FILES; k++) {
        free(r->data_path[k]);
        free(r->data_from_run[k]);
    }
}
