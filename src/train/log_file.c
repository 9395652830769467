/* log.tsv on disk: opened by the loop, a fresh run's with its header, a
 * resumed run's cut back to the checkpoint's step (see trainer.h). Its rows
 * are written by the loop (train.c) from nmt_log_row (progress.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nmt/error.h"
#include "nmt/progress.h"
#include "nmt/text.h"
#include "train/trainer.h"

/* ---- log.tsv ------------------------------------------------------------------ */

static size_t count_tabs(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\t';
    return n;
}

/* Drops rows past the restored step (written after the checkpoint by a run
 * that was then killed), so that the resumed run's rows follow on. A log
 * written before a column was added gets today's header, and its rows empty
 * cells for the new columns. */
static int log_trim(const char *path, int64_t step)
{
    char **lines;
    size_t n;
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return NMT_OK;
    fclose(probe);
    int rc = nmt_read_lines(path, &lines, &n);
    if (rc)
        return rc;
    size_t keep = n > 0 ? 1 : 0;
    while (keep < n && strtoll(lines[keep], NULL, 10) <= step)
        keep++;
    char head[256];
    nmt_log_header(head, sizeof head);
    head[strcspn(head, "\n")] = '\0';
    int old_header = n > 0 && strcmp(lines[0], head) != 0;
    if (keep < n || old_header) {
        /* Into a temporary file renamed over the log, so that a kill during
         * the rewrite leaves the old rows rather than a cut log. */
        size_t len = strlen(path) + 8;
        char *tmp = malloc(len);
        FILE *f = tmp ? (snprintf(tmp, len, "%s.trim", path), fopen(tmp, "wb")) : NULL;
        if (!f)
            rc = nmt_set_error(NMT_ERR_IO, "%s: cannot rewrite: %s", path, strerror(errno));
        for (size_t i = 0; f && i < keep; i++) {
            fputs(i == 0 ? head : lines[i], f);
            for (size_t c = count_tabs(lines[i]); i > 0 && c < count_tabs(head); c++)
                fputc('\t', f);
            fputc('\n', f);
        }
        if (f) {
            int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
            bad |= fclose(f) != 0;
            if (bad || rename(tmp, path)) {
                rc = nmt_set_error(NMT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
                remove(tmp);
            }
        }
        free(tmp);
    }
    nmt_free_lines(lines, n);
    return rc;
}

int nmt_trainer_log_open(nmt_trainer *t)
{
    if (t->rank != 0) /* rank 0 writes the run's files */
        return NMT_OK;
    char *path = nmt_path_join(t->dir, "log.tsv");
    if (!path)
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    int rc = t->restored ? log_trim(path, t->st.step) : NMT_OK;
    if (!rc) {
        t->log = fopen(path, t->restored ? "ab" : "wb");
        if (!t->log)
            rc = nmt_set_error(NMT_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    }
    if (!rc && ftell(t->log) == 0) {
        char head[256];
        nmt_log_header(head, sizeof head);
        fputs(head, t->log);
        fflush(t->log);
    }
    free(path);
    return rc;
}
