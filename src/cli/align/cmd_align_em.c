/* nmt align --em (cmd_align_em.h): every pair of --src and --tgt is read
 * and trained on, then the chosen lines (--line, else all) get their
 * links, one Pharaoh line each, and the scores against --gold. */
#include "align/cmd_align_em.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "align/cmd_align_input.h"
#include "align/cmd_align_links.h"
#include "cli_opts.h"
#include "cli_outfile.h"
#include "nmt/error.h"
#include "nmt/ibm2.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Refuses gold links outside their pair's words, as the model's mode does. */
static int check_gold(const align_args *a, const inputs *in, const nmt_ibm2 *m)
{
    for (size_t k = 0; k < in->n; k++) {
        int ns, nt;
        nmt_ibm2_pair_size(m, in->sel[k], &ns, &nt);
        long bad = nmt_links_outside(in->gold_links[k], in->n_gold[k], ns, nt);
        if (bad < 0)
            continue;
        const nmt_link *l = &in->gold_links[k][bad];
        cli_error("%s, line %zu: the link %d-%d is outside the pair: its source has %d words "
                  "and its target %d (indices from 0)", a->gold, in->sel[k] + 1, l->src,
                  l->tgt, ns, nt);
        return -1;
    }
    return 0;
}

int align_em_run(const align_args *a)
{
    align_files files = {.src = a->src, .tgt = a->tgt, .gold = a->gold,
                         .line_spec = a->line_spec, .gold_reverse = a->gold_reverse,
                         .aer_flags = a->gold_partial ? NMT_AER_PARTIAL : 0u};
    inputs in = {0};
    cli_outfile out = {0};
    nmt_aer aer = {0};
    nmt_ibm2 *m = NULL;
    nmt_link *links = NULL;
    int status = 1, max_tgt = 1;
    if (align_read_inputs(&files, &in))
        goto done;
    nmt_ibm2_opts o = nmt_ibm2_defaults();
    o.p_null = a->em_null;
    o.tension = a->em_tension;
    o.learn_tension = !a->em_fixed_tension;
    o.alpha = a->em_alpha;
    double t0 = now();
    if (nmt_ibm2_create(&m, &o)) {
        cli_lib_error();
        goto done;
    }
    for (size_t k = 0; k < in.src.n; k++) {
        const char *s = in.src.line[k], *t = in.tgt.line[k];
        if (nmt_ibm2_add(m, s, strlen(s), t, strlen(t))) {
            cli_error("%s, line %zu: %s", a->src, k + 1, nmt_error_message());
            goto done;
        }
        int ns, nt;
        nmt_ibm2_pair_size(m, k, &ns, &nt);
        max_tgt = nt > max_tgt ? nt : max_tgt;
    }
    if (a->gold && check_gold(a, &in, m))
        goto done;
    size_t vs, vt;
    nmt_ibm2_vocab_sizes(m, &vs, &vt);
    fprintf(stderr, "em: %zu pairs, %zu source and %zu target words (read in %.1f s)\n",
            in.src.n, vs, vt, now() - t0);
    for (int it = 0; it < a->em_iterations; it++) {
        double t1 = now();
        nmt_ibm2_stats st;
        if (nmt_ibm2_iterate(m, &st)) {
            cli_lib_error();
            goto done;
        }
        fprintf(stderr, "em: iteration %d of %d: log p per target word %.4f, NULL %.1f%%, "
                "tension %.3f (%.1f s)\n", st.iteration, a->em_iterations, st.log_prob,
                100 * st.null_share, st.tension, now() - t1);
    }
    if (!(links = malloc((size_t)max_tgt * sizeof *links))) {
        cli_error("out of memory");
        goto done;
    }
    if (cli_out_open(&out, a->out))
        goto done;
    for (size_t k = 0; k < in.n; k++) {
        int n = nmt_ibm2_links(m, in.sel[k], links);
        if (n < 0 || nmt_pharaoh_write(out.f, links, (size_t)n)) {
            cli_lib_error();
            goto done;
        }
        if (a->gold && nmt_aer_add_opts(&aer, links, (size_t)n, in.gold_links[k], in.n_gold[k],
                                        in.aer_flags)) {
            cli_lib_error();
            goto done;
        }
    }
    if (cli_out_commit(&out))
        goto done;
    fprintf(stderr, "em: %.1f s in all\n", now() - t0);
    if (a->gold) {
        /* the scores on stdout, unless the links went there */
        FILE *f = !a->out || !strcmp(a->out, "-") ? stderr : stdout;
        align_put_aer(f, &aer);
        fputc('\n', f);
    }
    status = 0;
done:
    cli_out_abort(&out);
    free(links);
    nmt_ibm2_free(m);
    align_inputs_free(&in);
    return status;
}
