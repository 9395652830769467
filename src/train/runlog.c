/* log.tsv (include/nmt/runlog.h): its rows made, a run's log opened (and
 * cut back on resume), and logs read back for nmt plot and nmt compare. */
#include "nmt/runlog.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/atomic_file.h"
#include "nmt/error.h"
#include "nmt/text.h"

/* ---- writing ------------------------------------------------------------------ */

int nmt_log_header(char *buf, size_t cap)
{
    return snprintf(buf, cap, "step\tepoch\tlr\tloss\tppl\tgrad_norm\ttok_per_s\telapsed_s"
                              "\tvalid_ppl\tvalid_bleu\taverage_of\n");
}

int nmt_log_row(char *buf, size_t cap, const nmt_train_status *st)
{
    char valid[64] = "\t";
    if (st->has_valid)
        snprintf(valid, sizeof valid, "%.3f\t%.2f", st->valid_ppl, st->valid_bleu);
    if (st->average_of > 0) /* no training happened for this row */
        return snprintf(buf, cap, "%lld\t%d\t%.6g\t\t\t\t\t%.1f\t%s\t%d\n",
                        (long long)st->step, st->epoch, st->lr, st->elapsed_s, valid,
                        st->average_of);
    return snprintf(buf, cap, "%lld\t%d\t%.6g\t%.4f\t%.3f\t%.4f\t%.0f\t%.1f\t%s\t\n",
                    (long long)st->step, st->epoch, st->lr, st->loss, st->ppl, st->grad_norm,
                    st->tok_per_s, st->elapsed_s, valid);
}

static size_t count_tabs(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\t';
    return n;
}

/* Drops rows past step (written after the checkpoint by a run that was then
 * killed), so that the resumed run's rows follow on, and gives a log
 * written before a column was added today's header, and its rows empty
 * cells for the new columns. Rewritten whole or not at all, so that a kill
 * during the rewrite leaves the old rows rather than a cut log. */
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
    nmt_atomic_file out;
    if ((keep < n || old_header) && !(rc = nmt_atomic_open(&out, path, NULL, 1))) {
        for (size_t i = 0; i < keep; i++) {
            fputs(i == 0 ? head : lines[i], out.f);
            for (size_t c = count_tabs(lines[i]); i > 0 && c < count_tabs(head); c++)
                fputc('\t', out.f);
            fputc('\n', out.f);
        }
        rc = nmt_atomic_commit(&out);
    }
    nmt_free_lines(lines, n);
    return rc;
}

int nmt_runlog_open(FILE **out, const char *path, int64_t resume_step)
{
    *out = NULL;
    int rc = resume_step >= 0 ? log_trim(path, resume_step) : NMT_OK;
    if (rc)
        return rc;
    FILE *f = fopen(path, resume_step >= 0 ? "ab" : "wb");
    if (!f)
        return nmt_set_error(NMT_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    if (ftell(f) == 0) {
        char head[256];
        nmt_log_header(head, sizeof head);
        fputs(head, f);
        fflush(f);
    }
    *out = f;
    return NMT_OK;
}

int nmt_runlog_append(FILE *f, const char *path, const nmt_train_status *st)
{
    char row[512];
    nmt_log_row(row, sizeof row, st);
    if (f && (fputs(row, f) < 0 || fflush(f)))
        return nmt_set_error(NMT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return NMT_OK;
}

/* ---- reading ------------------------------------------------------------------ */

/* The columns read, in nmt_runlog's order. */
enum {
    COL_STEP, COL_ELAPSED, COL_LOSS, COL_TOK_PER_S, COL_VALID_PPL, COL_VALID_BLEU,
    COL_AVERAGE_OF, N_COLS
};
static const char *const col_names[N_COLS] = {
    "step", "elapsed_s", "loss", "tok_per_s", "valid_ppl", "valid_bleu", "average_of",
};

static double **column(nmt_runlog *log, int c)
{
    double **cols[N_COLS] = {&log->step, &log->elapsed_s, &log->loss, &log->tok_per_s,
                             &log->valid_ppl, &log->valid_bleu, &log->average_of};
    return cols[c];
}

void nmt_runlog_free(nmt_runlog *log)
{
    for (int c = 0; c < N_COLS; c++)
        free(*column(log, c));
    memset(log, 0, sizeof *log);
}

/* Splits a line on tabs in place (a trailing \r dropped); returns the number
 * of cells, or max + 1 when there are more than max. */
static size_t split_tabs(char *line, char **cells, size_t max)
{
    size_t n = 0, len = strlen(line);
    if (len && line[len - 1] == '\r')
        line[len - 1] = '\0';
    for (char *p = line;;) {
        if (n == max)
            return max + 1;
        cells[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            return n;
        *tab = '\0';
        p = tab + 1;
    }
}

/* The header's names: where each column read is (-1: absent). */
static int find_columns(char *header, int where[N_COLS], size_t *n_names, const char *path)
{
    enum { MAX_NAMES = 256 };
    char *names[MAX_NAMES];
    size_t n = split_tabs(header, names, MAX_NAMES);
    if (n > MAX_NAMES)
        return nmt_set_error(NMT_ERR_FORMAT, "%s:1: more than %d columns", path, MAX_NAMES);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[i], names[j]))
                return nmt_set_error(NMT_ERR_FORMAT, "%s:1: column '%.60s' appears twice in the "
                                     "header", path, names[i]);
    for (int c = 0; c < N_COLS; c++) {
        where[c] = -1;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(names[i], col_names[c]))
                where[c] = (int)i;
    }
    if (where[COL_STEP] < 0)
        return nmt_set_error(NMT_ERR_FORMAT, "%s:1: the header names no 'step' column (a "
                             "training log's first line names its tab-separated columns: "
                             "step, elapsed_s, loss, valid_ppl, valid_bleu, ...)", path);
    *n_names = n;
    return NMT_OK;
}

/* An empty cell is NaN; anything else must be a number, whole. */
static int cell_number(const char *cell, double *out)
{
    if (!*cell) {
        *out = (double)NAN;
        return 0;
    }
    char *end;
    *out = strtod(cell, &end);
    return *end || end == cell ? -1 : 0;
}

static int read_rows(nmt_runlog *log, char **lines, size_t n_lines, const int where[N_COLS],
                     size_t n_names, const char *path)
{
    char **cells = malloc((n_names + 1) * sizeof *cells);
    if (!cells)
        return nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    int rc = NMT_OK;
    for (size_t i = 1; i < n_lines && rc == NMT_OK; i++) {
        if (!lines[i][0] || !strcmp(lines[i], "\r"))
            continue;
        size_t n = split_tabs(lines[i], cells, n_names);
        if (n > n_names) {
            rc = nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: more cells than the header's %zu "
                               "columns", path, i + 1, n_names);
            break;
        }
        for (int c = 0; c < N_COLS && rc == NMT_OK; c++) {
            double v = (double)NAN;
            const char *cell = where[c] >= 0 && (size_t)where[c] < n ? cells[where[c]] : "";
            if (cell_number(cell, &v))
                rc = nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: column '%s': '%.40s' is not a "
                                   "number", path, i + 1, col_names[c], cell);
            else if (c == COL_STEP && !isfinite(v))
                rc = nmt_set_error(NMT_ERR_FORMAT, "%s:%zu: the row has no step", path, i + 1);
            (*column(log, c))[log->n] = v;
        }
        log->n++;
    }
    free(cells);
    return rc;
}

int nmt_runlog_read(nmt_runlog *log, const char *path)
{
    memset(log, 0, sizeof *log);
    char **lines;
    size_t n_lines;
    int rc = nmt_read_lines(path, &lines, &n_lines);
    if (rc)
        return rc;
    int where[N_COLS];
    size_t n_names = 0;
    if (n_lines == 0)
        rc = nmt_set_error(NMT_ERR_FORMAT, "%s: empty (a training log starts with a header "
                           "line)", path);
    if (!rc)
        rc = find_columns(lines[0], where, &n_names, path);
    for (int c = 0; c < N_COLS && !rc; c++)
        if (!(*column(log, c) = malloc(n_lines * sizeof(double))))
            rc = nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
    if (!rc)
        rc = read_rows(log, lines, n_lines, where, n_names, path);
    nmt_free_lines(lines, n_lines);
    if (rc)
        nmt_runlog_free(log);
    return rc;
}
