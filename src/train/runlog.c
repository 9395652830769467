/* Training logs read back (include/nmt/runlog.h), for `nmt plot`. */
#include "nmt/runlog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/progress.h"
#include "nmt/text.h"

/* The columns read, in nmt_runlog's order. */
enum { COL_STEP, COL_ELAPSED, COL_LOSS, COL_VALID_PPL, COL_VALID_BLEU, COL_AVERAGE_OF, N_COLS };
static const char *const col_names[N_COLS] = {
    "step", "elapsed_s", "loss", "valid_ppl", "valid_bleu", "average_of",
};

static double **column(nmt_runlog *log, int c)
{
    double **cols[N_COLS] = {&log->step, &log->elapsed_s, &log->loss, &log->valid_ppl,
                             &log->valid_bleu, &log->average_of};
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
