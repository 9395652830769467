/* nmt plot: training curves of runs from their log.tsv, as small multiples
 * in one SVG: training loss, validation perplexity and validation BLEU
 * (columns), against steps and against elapsed time (rows), one line per
 * run. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "cli_opts.h"
#include "cli_outfile.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/runlog.h"
#include "draw/svg.h"

/* The settings a legend names at most per run. */
enum { MAX_SHOWN_SETTINGS = 4 };

static void help(void)
{
    printf("Usage: nmt plot RUN... -o FILE.svg [--title TEXT]\n\n"
           "Draws the training curves of runs as one SVG of six panels: training loss,\n"
           "validation perplexity (log scale) and validation BLEU, against steps (top\n"
           "row) and against elapsed wall-clock time (bottom row), one line per run,\n"
           "named in the legend. Hollow squares are the validations of averaged\n"
           "snapshots (nmt train --average-snapshots).\n\n"
           "A RUN is a folder written by nmt train (its log.tsv is read), or a\n"
           "tab-separated file whose header names the same columns (step, elapsed_s,\n"
           "loss, valid_ppl, valid_bleu; any of them but step may be missing, and a\n"
           "cell may be empty where a value is unknown), so that another program's\n"
           "log (pytorch/torch_baseline.py train --log FILE) can be drawn beside\n"
           "nmt's. A run is named after its folder, or its file without .tsv, and\n"
           "followed by the training settings that differ between the runs (from\n"
           "each folder's checkpoint.safetensors, else best.safetensors; at most %d\n"
           "named), e.g. \"none (attention=none)\".\n\n"
           "Options:\n"
           "  -o, --output FILE   the SVG to write (atomically; never one of the files\n"
           "                      read)\n"
           "      --title TEXT    a title above the panels\n"
           "  -h, --help          this help\n",
           MAX_SHOWN_SETTINGS);
}

typedef struct run {
    char name[512];
    char dir[4096];   /* the run's folder ("" for a log file alone) */
    nmt_runlog log;
    nmt_file *file;   /* its checkpoint's metadata, when it has one */
} run;

/* The last part of a path, without trailing slashes and without `strip` at
 * its end. */
static void last_part(char *out, size_t cap, const char *path, const char *strip)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t start = n;
    while (start > 0 && path[start - 1] != '/')
        start--;
    size_t len = n - start, sl = strlen(strip);
    if (len > sl && !strncmp(path + start + len - sl, strip, sl))
        len -= sl;
    snprintf(out, cap, "%.*s", (int)len, path + start);
}

/* Reads one RUN argument: a folder's log.tsv or a file. */
static int read_run(run *r, const char *arg)
{
    struct stat st;
    char path[4096];
    if (stat(arg, &st) != 0) {
        cli_error("%s: %s", arg, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(path, sizeof path, "%s/log.tsv", arg);
        snprintf(r->dir, sizeof r->dir, "%s", arg);
        last_part(r->name, sizeof r->name, arg, "");
    } else {
        snprintf(path, sizeof path, "%s", arg);
        last_part(r->name, sizeof r->name, arg, ".tsv");
        if (!strcmp(r->name, "log")) { /* DIR/log.tsv: the run's folder */
            char dir[4096];
            snprintf(dir, sizeof dir, "%s", arg);
            char *slash = strrchr(dir, '/');
            if (slash && slash != dir) {
                *slash = '\0';
                last_part(r->name, sizeof r->name, dir, "");
                snprintf(r->dir, sizeof r->dir, "%s", dir);
            }
        }
    }
    if (nmt_runlog_read(&r->log, path)) {
        cli_lib_error();
        return -1;
    }
    return 0;
}

/* The settings a run was trained with: the metadata of its folder's
 * checkpoint.safetensors (else best.safetensors); none for a log alone or
 * a folder without either (another program's run). */
static void read_settings(run *r)
{
    static const char *const files[] = {"checkpoint.safetensors", "best.safetensors"};
    for (int k = 0; k < 2 && r->dir[0] && !r->file; k++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", r->dir, files[k]);
        if (stat(path, &st) != 0)
            continue;
        nmt_model *m = NULL;
        if (nmt_model_load(&m, path, &r->file) == NMT_OK)
            nmt_model_free(m);
        else
            r->file = NULL; /* an unreadable model: the curves alone */
    }
}

/* Whether a training setting tells runs apart in a legend: not the data's
 * paths and fingerprints, not the state. */
static int is_setting(const char *key)
{
    static const char *const skip[] = {"train.src", "train.tgt", "train.valid_src",
                                       "train.valid_tgt"};
    if (strncmp(key, "train.", 6))
        return 0;
    for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
        if (!strncmp(key, skip[k], strlen(skip[k])))
            return 0;
    return 1;
}

/* A setting's value as a legend shows it: a fraction stored to the last
 * digit of its float or double ("0.0030000000000000001", "0.100000001")
 * in 6 significant digits; anything else as it is. */
static const char *legend_value(const char *v, char *buf, size_t size)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !strpbrk(v, ".eE"))
        return v;
    snprintf(buf, size, "%.6g", x);
    return buf;
}

/* Appends to each run's name the settings (train.* metadata) whose values
 * differ between the runs that have them: "none (attention=none)". */
static void label_settings(run *runs, int n)
{
    int with = 0;
    for (int i = 0; i < n; i++)
        with += runs[i].file != NULL;
    if (with < 2)
        return;
    for (int i = 0; i < n; i++) {
        if (!runs[i].file)
            continue;
        char add[512] = "", value[32];
        size_t len = 0;
        int shown = 0, more = 0;
        for (int k = 0; k < nmt_file_n_meta(runs[i].file); k++) {
            const char *key = nmt_file_meta_key(runs[i].file, k);
            const char *mine = nmt_file_meta(runs[i].file, key);
            if (!is_setting(key))
                continue;
            int differs = 0;
            for (int j = 0; j < n && !differs; j++) {
                const char *theirs = runs[j].file ? nmt_file_meta(runs[j].file, key) : NULL;
                differs = runs[j].file && (!theirs || strcmp(theirs, mine));
            }
            if (!differs)
                continue;
            if (shown == MAX_SHOWN_SETTINGS) {
                more++;
                continue;
            }
            int w = snprintf(add + len, sizeof add - len, "%s%s=%s", shown ? ", " : "", key + 6,
                             legend_value(mine, value, sizeof value));
            if (w < 0 || (size_t)w >= sizeof add - len)
                break;
            len += (size_t)w;
            shown++;
        }
        if (!shown)
            continue;
        size_t nl = strlen(runs[i].name);
        if (more)
            snprintf(runs[i].name + nl, sizeof runs[i].name - nl, " (%s, %d more)", add, more);
        else
            snprintf(runs[i].name + nl, sizeof runs[i].name - nl, " (%s)", add);
    }
}

/* Runs of the same name are told apart by the arguments as given: the
 * names are compared before any is changed. */
static int unique_names(run *runs, int n, char **args)
{
    char *shared = calloc((size_t)n, 1);
    if (!shared)
        return -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            shared[i] |= j != i && !strcmp(runs[i].name, runs[j].name);
    for (int i = 0; i < n; i++)
        if (shared[i])
            snprintf(runs[i].name, sizeof runs[i].name, "%s", args[i]);
    free(shared);
    return 0;
}

/* ---- the panels -------------------------------------------------------------- */

enum { Q_LOSS, Q_PPL, Q_BLEU, N_QUANT };
enum { N_PANELS = 2 * N_QUANT };

typedef struct time_unit {
    double seconds;
    const char *title;
} time_unit;

/* Minutes for runs of minutes, hours for runs of hours: ticks at round
 * numbers of a unit one reads at a glance. */
static time_unit unit_for(const run *runs, int n)
{
    double longest = 0;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < runs[i].log.n; k++)
            if (isfinite(runs[i].log.elapsed_s[k]))
                longest = fmax(longest, runs[i].log.elapsed_s[k]);
    if (longest <= 120)
        return (time_unit){1, "elapsed time (seconds)"};
    if (longest <= 2 * 3600)
        return (time_unit){60, "elapsed time (minutes)"};
    return (time_unit){3600, "elapsed time (hours)"};
}

static const double *quantity(const nmt_runlog *log, int q)
{
    return q == Q_LOSS ? log->loss : q == Q_PPL ? log->valid_ppl : log->valid_bleu;
}

/* Points (and marks: averaged snapshots' validations) of one run in one
 * panel, into x/y and mx/my (each [log->n]). */
static void panel_points(const nmt_runlog *log, int q, int by_time, double unit,
                         nmt_svg_series *line, double *x, double *y, nmt_svg_series *mark,
                         double *mx, double *my)
{
    const double *v = quantity(log, q), *at = by_time ? log->elapsed_s : log->step;
    size_t n = 0, m = 0;
    for (size_t k = 0; k < log->n; k++) {
        double px = by_time ? at[k] / unit : at[k];
        if (!isfinite(v[k]) || !isfinite(px))
            continue;
        int averaged = q != Q_LOSS && log->average_of[k] > 0;
        if (averaged) {
            mx[m] = px;
            my[m++] = v[k];
        } else {
            x[n] = px;
            y[n++] = v[k];
        }
    }
    line->n = n;
    line->x = x;
    line->y = y;
    mark->n = m;
    mark->x = mx;
    mark->y = my;
}

static int write_svg(FILE *f, const run *runs, int n, const char *title)
{
    static const char *const titles[N_QUANT] = {"training loss", "validation perplexity",
                                                "validation BLEU"};
    static const char *const y_titles[N_QUANT] = {"loss (nats per token)",
                                                  "perplexity (log scale)", "BLEU"};
    time_unit unit = unit_for(runs, n);
    size_t points = 0;
    for (int i = 0; i < n; i++)
        points += runs[i].log.n;
    nmt_svg_series *lines = calloc((size_t)(N_PANELS * n), sizeof *lines);
    nmt_svg_series *marks = calloc((size_t)(N_PANELS * n), sizeof *marks);
    double *buf = malloc((points ? points : 1) * 4 * N_PANELS * sizeof *buf);
    if (!lines || !marks || !buf) {
        free(lines);
        free(marks);
        free(buf);
        return nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    }
    nmt_svg_panel panels[N_PANELS];
    double *p = buf;
    for (int k = 0; k < N_PANELS; k++) {
        int q = k % N_QUANT, by_time = k / N_QUANT;
        for (int i = 0; i < n; i++) {
            size_t rows = runs[i].log.n;
            nmt_svg_series *line = &lines[k * n + i], *mark = &marks[k * n + i];
            panel_points(&runs[i].log, q, by_time, unit.seconds, line, p, p + rows, mark,
                         p + 2 * rows, p + 3 * rows);
            p += 4 * rows;
            line->name = mark->name = runs[i].name;
        }
        panels[k] = (nmt_svg_panel){
            .chart = {.title = titles[q], .x_title = by_time ? unit.title : "step",
                      .y_title = y_titles[q], .series = &lines[k * n], .n_series = n},
            .log_y = q == Q_PPL,
            .marks = &marks[k * n],
        };
    }
    int rc = nmt_svg_panel_grid(f, title, panels, N_PANELS, N_QUANT,
                                "validation of averaged snapshots");
    free(lines);
    free(marks);
    free(buf);
    return rc;
}

/* Writes the SVG (through a temporary file: cli_outfile.h). */
static int write_file(const char *path, const run *runs, int n, const char *title)
{
    cli_outfile o;
    if (cli_out_open(&o, path))
        return -1;
    if (write_svg(o.f, runs, n, title)) {
        cli_lib_error();
        cli_out_abort(&o);
        return -1;
    }
    return cli_out_commit(&o);
}

int cmd_plot(int argc, char **argv)
{
    enum { OPT_TITLE = 256 };
    static const struct option long_options[] = {
        {"output", required_argument, NULL, 'o'},
        {"title", required_argument, NULL, OPT_TITLE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *title = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", long_options, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case OPT_TITLE: title = optarg; break;
        case 'h': help(); return 0;
        default: return cli_usage_error();
        }
    }
    int n = argc - optind;
    if (n < 1) {
        cli_error("no runs given (folders of nmt train, or log files)");
        return cli_usage_error();
    }
    if (!out) {
        cli_error("-o FILE.svg is required");
        return cli_usage_error();
    }
    /* an SVG over a run's log would lose the log */
    const cli_file out_file = {"-o", out};
    int rc = cli_check_run_outputs(&out_file, (const char *const *)(argv + optind), n, 0);
    if (rc)
        return rc;
    run *runs = calloc((size_t)n, sizeof *runs);
    if (!runs) {
        cli_error("out of memory");
        return 1;
    }
    int status = 0;
    for (int i = 0; i < n && !status; i++)
        status = read_run(&runs[i], argv[optind + i]);
    if (!status) {
        status = unique_names(runs, n, argv + optind);
        if (status)
            cli_error("out of memory");
        for (int i = 0; i < n && !status; i++)
            read_settings(&runs[i]);
        label_settings(runs, n);
        if (!status)
            status = write_file(out, runs, n, title);
    }
    for (int i = 0; i < n; i++) {
        nmt_runlog_free(&runs[i].log);
        nmt_file_free(runs[i].file);
    }
    free(runs);
    return status ? 1 : 0;
}
