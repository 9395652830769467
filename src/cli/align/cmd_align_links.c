/* nmt align --links: Pharaoh links files read line by line with the gold,
 * so that the peers' alignments (fast_align's, eflomal's, a reverse
 * model's) are scored by the very scorer nmt's own are. See
 * cmd_align_links.h. */
#include "align/cmd_align_links.h"

#include <stdlib.h>
#include <string.h>

#include "align/cmd_align_input.h"
#include "cli_opts.h"
#include "cli_outfile.h"
#include "nmt/error.h"
#include "nmt/symmetrize.h"

void align_put_aer(FILE *f, const nmt_aer *r)
{
    fprintf(f, "AER %.4f  precision %.4f  recall %.4f  (%zu pairs, %zu model links, "
               "%zu gold links, %zu in both; possible: %zu links, %zu in both)",
            nmt_aer_rate(r), nmt_aer_precision(r), nmt_aer_recall(r), r->pairs, r->hyp,
            r->gold, r->both, r->possible - r->gold, r->both_possible - r->both);
}

/* One line of a links file as links (source-target: a reverse file's are
 * turned), or -1 after saying which file and line are wrong. */
static int parse_links(const char *path, const lines *l, size_t line, int reverse,
                       nmt_link **out, size_t *n)
{
    if (nmt_pharaoh_parse(l->line[line], out, n)) {
        cli_error("%s, line %zu: %s", path, line + 1, nmt_error_message());
        return -1;
    }
    if (reverse)
        nmt_links_reverse(*out, *n);
    return 0;
}

/* The other aligners' files of one direction (--links or --reverse-links
 * given again), read whole and checked against the first file's lines. */
typedef struct agree_files {
    lines l[MAX_AGREE];
    int n;
} agree_files;

static int agree_read(agree_files *g, const char *const *paths, int n, const lines *first,
                      const char *first_path)
{
    for (g->n = 0; g->n < n; g->n++) {
        if (align_lines_read(&g->l[g->n], paths[g->n])) {
            cli_error("%s", nmt_error_message());
            g->n++;
            return -1;
        }
        if (align_lines_same_count(first, first_path, &g->l[g->n], paths[g->n])) {
            g->n++;
            return -1;
        }
    }
    return 0;
}

static void agree_free(agree_files *g)
{
    for (int k = 0; k < g->n; k++)
        align_lines_free(&g->l[k]);
}

/* Keeps in links[*n] (line `line` of one direction) only those every other
 * file of that direction has too. */
static int agree_apply(const agree_files *g, const char *const *paths, size_t line, int reverse,
                       nmt_link *links, size_t *n)
{
    for (int k = 0; k < g->n; k++) {
        nmt_link *other = NULL;
        size_t n_other = 0;
        if (parse_links(paths[k], &g->l[k], line, reverse, &other, &n_other))
            return -1;
        nmt_links_agree(links, n, other, n_other);
        free(other);
    }
    return 0;
}

int align_links_run(const align_args *a)
{
    /* the links file stands where the source would: it sets the pairs, and
     * --reverse-links and --gold must have as many lines */
    align_files files = {.src = a->links, .tgt = a->rev_links, .gold = a->gold,
                         .line_spec = a->line_spec, .gold_reverse = a->gold_reverse,
                         .aer_flags = a->gold_partial ? NMT_AER_PARTIAL : 0u};
    inputs in = {0};
    cli_outfile out = {0};
    nmt_aer aer = {0};
    nmt_link *fwd = NULL, *rev = NULL, *sym = NULL;
    agree_files more_fwd = {0}, more_rev = {0};
    int status = 1, writing = a->symmetrize >= 0;
    if (align_read_inputs(&files, &in))
        goto done;
    if (agree_read(&more_fwd, a->agree, a->n_agree, &in.src, a->links) ||
        (writing && agree_read(&more_rev, a->rev_agree, a->n_rev_agree, &in.src, a->links)))
        goto done;
    if (writing && cli_out_open(&out, a->out))
        goto done;
    for (size_t k = 0; k < in.n; k++) {
        size_t line = in.sel[k], n_fwd = 0, n_rev = 0, n = 0;
        free(fwd);
        free(rev);
        free(sym);
        fwd = rev = sym = NULL;
        if (parse_links(a->links, &in.src, line, 0, &fwd, &n_fwd) ||
            (writing && parse_links(a->rev_links, &in.tgt, line, 1, &rev, &n_rev)) ||
            agree_apply(&more_fwd, a->agree, line, 0, fwd, &n_fwd) ||
            (writing && agree_apply(&more_rev, a->rev_agree, line, 1, rev, &n_rev)))
            goto done;
        const nmt_link *hyp = fwd;
        n = n_fwd;
        if (writing) {
            if (nmt_symmetrize((nmt_symmetrize_method)a->symmetrize, fwd, n_fwd, rev, n_rev,
                               &sym, &n)) {
                cli_error("%s, line %zu: %s", a->links, line + 1, nmt_error_message());
                goto done;
            }
            hyp = sym;
            if (nmt_pharaoh_write(out.f, sym, n)) {
                cli_lib_error();
                goto done;
            }
        }
        if (a->gold &&
            nmt_aer_add_opts(&aer, hyp, n, in.gold_links[k], in.n_gold[k], in.aer_flags)) {
            cli_lib_error();
            goto done;
        }
    }
    if (writing && cli_out_commit(&out))
        goto done;
    if (a->gold) {
        /* the scores on stdout, unless the links went there */
        align_put_aer(writing && (!a->out || !strcmp(a->out, "-")) ? stderr : stdout, &aer);
        fputc('\n', writing && (!a->out || !strcmp(a->out, "-")) ? stderr : stdout);
    }
    status = 0;
done:
    agree_free(&more_fwd);
    agree_free(&more_rev);
    cli_out_abort(&out);
    free(fwd);
    free(rev);
    free(sym);
    align_inputs_free(&in);
    return status;
}
