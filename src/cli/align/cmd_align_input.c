/* Reading the inputs of nmt align. See cmd_align_input.h. */
#include "align/cmd_align_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "nmt/error.h"
#include "nmt/text.h"
#include "nmt/units.h"

void align_lines_free(lines *l)
{
    for (size_t k = 0; k < l->n; k++)
        free(l->line[k]);
    free(l->line);
}

int align_lines_read(lines *l, const char *path)
{
    nmt_reader *r;
    if (nmt_reader_open(&r, path))
        return -1;
    const char *text;
    size_t len;
    int rc;
    while ((rc = nmt_reader_next(r, &text, &len)) == 1) {
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 64;
            char **grown = realloc(l->line, cap * sizeof *grown);
            if (!grown) {
                rc = nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            l->line = grown;
            l->cap = cap;
        }
        if (!(l->line[l->n] = strdup(text))) {
            rc = nmt_set_error(NMT_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        l->n++;
    }
    nmt_reader_close(r);
    return rc < 0 ? -1 : 0;
}

int align_lines_same_count(const lines *x, const char *xp, const lines *y, const char *yp)
{
    if (x->n == y->n)
        return 0;
    cli_error("%s has %zu lines but %s has %zu: they must pair up line by line",
              !strcmp(xp, "-") ? "standard input" : xp, x->n, yp, y->n);
    return -1;
}

/* Parses N, N-M and lists of them into a sorted list of 0-based line
 * indices below n_lines (each once). Returns the count, or -1 after saying
 * what is wrong. */
static long select_lines(const char *spec, size_t n_lines, size_t **out)
{
    char *seen = calloc(n_lines ? n_lines : 1, 1);
    if (!seen) {
        cli_error("out of memory");
        return -1;
    }
    const char *p = spec;
    for (;;) {
        char *end;
        long lo, hi;
        if (!(*p >= '0' && *p <= '9'))
            goto bad;
        errno = 0;
        lo = strtol(p, &end, 10);
        hi = lo;
        if (*end == '-') {
            p = end + 1;
            if (!(*p >= '0' && *p <= '9'))
                goto bad;
            hi = strtol(p, &end, 10);
        }
        if (errno || lo < 1 || hi < lo)
            goto bad;
        if ((size_t)hi > n_lines) {
            cli_error("--line %s: line %ld is past the end (the source has %zu lines)", spec, hi,
                      n_lines);
            free(seen);
            return -1;
        }
        for (long k = lo; k <= hi; k++)
            seen[k - 1] = 1;
        if (*end == '\0')
            break;
        if (*end != ',')
            goto bad;
        p = end + 1;
    }
    size_t n = 0;
    for (size_t k = 0; k < n_lines; k++)
        n += seen[k];
    *out = malloc(n * sizeof **out);
    if (!*out) {
        free(seen);
        cli_error("out of memory");
        return -1;
    }
    for (size_t k = 0, m = 0; k < n_lines; k++)
        if (seen[k])
            (*out)[m++] = k;
    free(seen);
    return (long)n;
bad:
    free(seen);
    cli_error("--line: '%s' is not a line number, a range N-M or a list of them (3,10-12)",
              spec);
    return -1;
}

void align_inputs_free(inputs *in)
{
    for (size_t k = 0; in->gold_links && k < in->n; k++)
        free(in->gold_links[k]);
    free(in->gold_links);
    free(in->n_gold);
    free(in->sel);
    align_lines_free(&in->src);
    align_lines_free(&in->tgt);
    align_lines_free(&in->gold);
    align_lines_free(&in->ref);
}

int align_read_inputs(const align_files *a, inputs *in)
{
    if (align_lines_read(&in->src, a->src) || (a->tgt && align_lines_read(&in->tgt, a->tgt)) ||
        (a->gold && align_lines_read(&in->gold, a->gold)) || (a->ref && align_lines_read(&in->ref, a->ref))) {
        cli_lib_error();
        return -1;
    }
    if ((a->tgt && align_lines_same_count(&in->src, a->src, &in->tgt, a->tgt)) ||
        (a->gold && align_lines_same_count(&in->src, a->src, &in->gold, a->gold)) ||
        (a->ref && align_lines_same_count(&in->src, a->src, &in->ref, a->ref)))
        return -1;
    if (in->src.n == 0) {
        cli_error("no sentences to align");
        return -1;
    }
    if (a->line_spec) {
        long n = select_lines(a->line_spec, in->src.n, &in->sel);
        if (n < 0)
            return -1;
        in->n = (size_t)n;
    } else {
        if (!(in->sel = malloc(in->src.n * sizeof *in->sel))) {
            cli_error("out of memory");
            return -1;
        }
        for (size_t k = 0; k < in->src.n; k++)
            in->sel[k] = k;
        in->n = in->src.n;
    }
    in->aer_flags = a->aer_flags;
    if (!a->gold)
        return 0;
    in->gold_links = calloc(in->n, sizeof *in->gold_links);
    in->n_gold = calloc(in->n, sizeof *in->n_gold);
    if (!in->gold_links || !in->n_gold) {
        cli_error("out of memory");
        return -1;
    }
    for (size_t k = 0; k < in->n; k++)
        if (nmt_pharaoh_parse(in->gold.line[in->sel[k]], &in->gold_links[k], &in->n_gold[k])) {
            cli_error("%s, line %zu: %s", a->gold, in->sel[k] + 1, nmt_error_message());
            return -1;
        } else if (a->gold_reverse) {
            nmt_links_reverse(in->gold_links[k], in->n_gold[k]);
        }
    return 0;
}


/* The words of one side of a pair under model m (what gold indices count),
 * or -1 after an error said. */
static int words_of(const nmt_model *m, const char *line, nmt_tokens *tok)
{
    if (nmt_units_split(m, line, strlen(line), tok)) {
        cli_lib_error();
        return -1;
    }
    if (tok->n > 100000) { /* as nmt align refuses it */
        cli_error("a line of %zu %s is too long to align", tok->n, nmt_units_name(m));
        return -1;
    }
    return nmt_align_word_count((const char *const *)tok->tok, (int)tok->n, m->subwords != NULL);
}

int align_check_gold(const align_files *f, const inputs *in, const nmt_model *m,
                     const char *whose)
{
    nmt_tokens tok = {0};
    int rc = 0;
    for (size_t k = 0; k < in->n && !rc; k++) {
        if (!in->n_gold[k])
            continue;
        size_t line = in->sel[k];
        int n_src = words_of(m, in->src.line[line], &tok);
        int n_tgt = n_src < 0 || !f->tgt ? -1 : words_of(m, in->tgt.line[line], &tok);
        if (n_src < 0 || (f->tgt && n_tgt < 0)) {
            rc = -1;
            break;
        }
        long bad = nmt_links_outside(in->gold_links[k], in->n_gold[k], n_src, n_tgt);
        if (bad < 0)
            continue;
        const nmt_link *l = &in->gold_links[k][bad];
        char target[64] = "";
        if (f->tgt)
            snprintf(target, sizeof target, " and its target %d", n_tgt);
        cli_error("%s, line %zu: the link %d-%d is outside the pair: its source has %d "
                  "words%s (indices from 0%s%s%s)", f->gold, line + 1, l->src, l->tgt, n_src,
                  target, whose ? "; words as " : "", whose ? whose : "",
                  whose ? " splits them" : "");
        rc = -1;
    }
    nmt_tokens_free(&tok);
    return rc;
}
