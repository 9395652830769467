/* Snapshots: the model of each validation, kept as
 * DIR/snapshot-STEP.safetensors so that the last few can be averaged (see
 * trainer.h for which are kept). The folder itself is the list: nothing
 * about them needs saving in the checkpoint. A snapshot that cannot be
 * deleted costs disk space, not correctness (only the newest are averaged),
 * so pruning never fails a run. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "train/trainer.h"

#define PREFIX "snapshot-"
#define SUFFIX ".safetensors"

/* "snapshot-1200.safetensors" -> 1200; 0 for any other name (the temporary
 * files of an atomic write start with a dot and never match). */
static int parse_name(const char *name, int64_t *step)
{
    size_t lp = strlen(PREFIX), ls = strlen(SUFFIX), n = strlen(name);
    if (n <= lp + ls || strncmp(name, PREFIX, lp) || strcmp(name + n - ls, SUFFIX))
        return 0;
    int64_t v = 0;
    for (const char *p = name + lp; p < name + n - ls; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (*p - '0');
    }
    *step = v;
    return 1;
}

static int newest_first(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a < b) - (a > b);
}

/* The steps of the snapshots in dir, newest first. */
static int list_steps(const char *dir, int64_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    DIR *d = opendir(dir);
    if (!d)
        return nmt_set_error(NMT_ERR_IO, "%s: cannot list the snapshots", dir);
    int64_t *steps = NULL, step;
    size_t n = 0, cap = 0;
    int rc = NMT_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!parse_name(e->d_name, &step))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(steps, cap * sizeof *grown);
            if (!grown) {
                rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory listing the snapshots");
                break;
            }
            steps = grown;
        }
        steps[n++] = step;
    }
    closedir(d);
    if (rc) {
        free(steps);
        return rc;
    }
    if (n)
        qsort(steps, n, sizeof *steps, newest_first);
    *out = steps;
    *n_out = n;
    return NMT_OK;
}

static char *snapshot_path(const char *dir, int64_t step)
{
    char name[64];
    snprintf(name, sizeof name, PREFIX "%" PRId64 SUFFIX, step);
    return nmt_path_join(dir, name);
}

static void delete_snapshot(const char *dir, int64_t step)
{
    char *path = snapshot_path(dir, step);
    if (path)
        remove(path);
    free(path);
}

void nmt_snapshots_prune(const nmt_trainer *t)
{
    int64_t *steps;
    size_t n, k = (size_t)t->s.keep_snapshots, rank_saved = 0;
    if (list_steps(t->dir, &steps, &n))
        return;
    for (size_t i = 0; i < n; i++) {
        int keep = i < k;
        if (steps[i] <= t->last_saved_step)
            keep |= rank_saved++ < k;
        if (!keep)
            delete_snapshot(t->dir, steps[i]);
    }
    free(steps);
}

void nmt_snapshots_drop_after(const nmt_trainer *t, int64_t step)
{
    int64_t *steps;
    size_t n;
    if (list_steps(t->dir, &steps, &n))
        return;
    for (size_t i = 0; i < n; i++)
        if (steps[i] > step)
            delete_snapshot(t->dir, steps[i]);
    free(steps);
}

/* The model of this validation, with its step, epoch and scores, to dir. */
static int save_validated(const nmt_trainer *t, const char *dir)
{
    const nmt_train_status *st = &t->st;
    char values[4][32];
    snprintf(values[0], sizeof values[0], "%" PRId64, st->step);
    snprintf(values[1], sizeof values[1], "%d", st->epoch);
    snprintf(values[2], sizeof values[2], "%.3f", st->valid_ppl);
    snprintf(values[3], sizeof values[3], "%.2f", st->valid_bleu);
    const nmt_meta meta[4] = {
        {"snapshot.step", values[0]},
        {"snapshot.epoch", values[1]},
        {"snapshot.valid_ppl", values[2]},
        {"snapshot.valid_bleu", values[3]},
    };
    char *path = snapshot_path(dir, st->step);
    if (!path)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int rc = nmt_model_save(t->m, path, NULL, 0, meta, 4);
    free(path);
    return rc;
}

int nmt_snapshot_save(nmt_trainer *t)
{
    if (t->rank != 0)
        return NMT_OK;
    int rc = save_validated(t, t->dir);
    if (rc == NMT_OK)
        nmt_snapshots_prune(t);
    return rc;
}

int nmt_snapshot_archive(const nmt_trainer *t)
{
    if (t->rank != 0)
        return NMT_OK;
    return save_validated(t, t->s.archive_dir);
}

void nmt_snapshot_paths_free(char **paths, int n)
{
    for (int i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}

int nmt_snapshot_paths(const nmt_trainer *t, char ***paths_out, int *n_out, int64_t *first_step,
                       int64_t *last_step)
{
    *paths_out = NULL;
    *n_out = 0;
    int64_t *steps;
    size_t n;
    int rc = list_steps(t->dir, &steps, &n);
    if (rc)
        return rc;
    size_t skip = 0; /* none should be past the step; if one is, it is not this run's */
    while (skip < n && steps[skip] > t->st.step)
        skip++;
    size_t take = n - skip < (size_t)t->s.keep_snapshots ? n - skip : (size_t)t->s.keep_snapshots;
    char **paths = calloc(take ? take : 1, sizeof *paths);
    if (!paths)
        rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !rc && i < take; i++) {
        /* oldest first */
        int64_t step = steps[skip + take - 1 - i];
        if (!(paths[i] = snapshot_path(t->dir, step)))
            rc = nmt_set_error(NMT_ERR_NOMEM, "out of memory");
        if (i == 0)
            *first_step = step;
        *last_step = step;
    }
    free(steps);
    if (rc) {
        nmt_snapshot_paths_free(paths, (int)take);
        return rc;
    }
    *paths_out = paths;
    *n_out = (int)take;
    return NMT_OK;
}
