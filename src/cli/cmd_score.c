/* nmt score: a model's loss and perplexity on a parallel corpus, the same
 * loss training minimises (mean -log p over the target tokens, </s>
 * included), without dropout. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cli_opts.h"
#include "cli_unknown.h"
#include "nmt/batch.h"
#include "nmt/corpus.h"
#include "nmt/error.h"
#include "nmt/model.h"
#include "nmt/modelfile.h"
#include "nmt/units.h"

static void help(void)
{
    printf("Usage: nmt score -m FILE --src F --tgt F [OPTIONS]\n\n"
           "The loss of a model on a parallel corpus: the mean over all target tokens\n"
           "(each sentence's </s> included) of -log p, in nats, and the perplexity\n"
           "exp(loss). The corpus is tokenized as the model was trained (its vocabularies,\n"
           "its lowercase setting; unknown words become <unk>). For a model that reads\n"
           "subwords the tokens are the pieces of its SentencePiece model, and the loss\n"
           "and perplexity are per piece. Every pair is scored, in corpus order, without\n"
           "dropout. Files may be plain text or gzip.\n\n"
           "Options:\n"
           "  -m, --model FILE     the model (or checkpoint) file\n"
           "      --src FILE       source sentences, one a line\n"
           "      --tgt FILE       target sentences, line-aligned with --src\n"
           "      --batch-size N   sentences per forward pass (default 64)\n"
           "      --threads N      threads for the matrix products (default: every core\n"
           "                       this process may use)\n"
           "      --per-sentence   print one line per pair: its total -log p (nats) and\n"
           "                       its token count, tab-separated; the summary then\n"
           "                       goes to stderr\n"
           "  -h, --help           this help\n\n"
           "Output: sentences, tokens, loss (nats/token) and perplexity, one a line.\n");
}

typedef struct score_args {
    const char *model, *src, *tgt;
    int batch_size, threads, per_sentence;
} score_args;

/* 0 on success, else the exit code. */
static int parse_args(score_args *a, int argc, char **argv)
{
    enum { OPT_SRC = 256, OPT_TGT, OPT_PER };
    static const struct option long_options[] = {
        {"model", required_argument, NULL, 'm'},
        {"src", required_argument, NULL, OPT_SRC},
        {"tgt", required_argument, NULL, OPT_TGT},
        CLI_OPTION_BATCH_SIZE,
        CLI_OPTION_THREADS,
        {"per-sentence", no_argument, NULL, OPT_PER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *a = (score_args){.batch_size = 64, .threads = cli_default_threads()};
    const cli_model_opts shared = {.batch_size = &a->batch_size, .threads = &a->threads};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:h", long_options, NULL)) != -1) {
        switch (c) {
        case 'm': a->model = optarg; break;
        case OPT_SRC: a->src = optarg; break;
        case OPT_TGT: a->tgt = optarg; break;
        case OPT_PER: a->per_sentence = 1; break;
        case 'h': help(); return -1;
        default:
            if (cli_model_option_or_usage(c, optarg, &shared))
                return 2;
        }
    }
    if (cli_no_operands(argc, argv))
        return 2;
    const char *missing = !a->model ? "--model" : !a->src ? "--src" : !a->tgt ? "--tgt" : NULL;
    if (missing) {
        cli_error("%s is required", missing);
        return cli_usage_error();
    }
    return 0;
}

/* The corpus's longest source and target, </s> (or <s>) included. */
static void max_lengths(const nmt_corpus *c, int *src_T, int *tgt_T)
{
    size_t s = 1, t = 1;
    for (size_t i = 0; i < c->n; i++) {
        size_t ls = c->src_off[i + 1] - c->src_off[i] + 1, lt = c->tgt_off[i + 1] - c->tgt_off[i] + 1;
        s = ls > s ? ls : s;
        t = lt > t ? lt : t;
    }
    *src_T = s > (size_t)1 << 30 ? 1 << 30 : (int)s;
    *tgt_T = t > (size_t)1 << 30 ? 1 << 30 : (int)t;
}

/* The passes take at most 1 << 16 positions (tokens + </s>): a longer
 * sentence is refused by file and line rather than by the workspace. */
static int check_lengths(const nmt_corpus *c, const char *src, const char *tgt)
{
    const size_t limit = ((size_t)1 << 16) - 1;
    for (size_t i = 0; i < c->n; i++) {
        size_t ls = c->src_off[i + 1] - c->src_off[i], lt = c->tgt_off[i + 1] - c->tgt_off[i];
        if (ls > limit || lt > limit) {
            cli_error("%s:%zu: a sentence of %zu tokens is too long (at most %zu)",
                      ls > limit ? src : tgt, c->line[i], ls > limit ? ls : lt, limit);
            return -1;
        }
    }
    return 0;
}

typedef struct scores {
    double *nll;    /* [n] per pair */
    size_t *tokens; /* [n] per pair */
    double total;
    size_t n_tokens;
} scores;

/* Runs the model over the corpus in batches of consecutive pairs. */
static int score_corpus(scores *out, const nmt_model *m, const nmt_corpus *c, int batch_size)
{
    int src_T, tgt_T, B = c->n < (size_t)batch_size ? (int)c->n : batch_size;
    max_lengths(c, &src_T, &tgt_T);
    nmt_batch_plan plan = {0};
    nmt_batch batch = {0};
    nmt_workspace *ws = NULL;
    out->nll = calloc(c->n, sizeof *out->nll);
    out->tokens = calloc(c->n, sizeof *out->tokens);
    int rc = out->nll && out->tokens ? NMT_OK : nmt_set_error(NMT_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = nmt_batch_plan_make(&plan, c, batch_size, 0, 0, 0);
    if (!rc)
        rc = nmt_batch_alloc(&batch, B, src_T, tgt_T);
    if (!rc)
        rc = nmt_workspace_create(&ws, m, B, src_T, tgt_T);
    for (size_t k = 0; !rc && k < plan.n_batches; k++) {
        size_t n = plan.start[k + 1] - plan.start[k];
        rc = nmt_batch_fill(&batch, c, plan.index + plan.start[k], (int)n);
        if (rc)
            break;
        if ((rc = nmt_forward(NULL, m, ws, &batch, NULL, NULL)))
            break;
        const double *nll = nmt_workspace_sentence_nll(ws);
        for (int i = 0; i < batch.B; i++) {
            out->nll[batch.pair[i]] = nll[i];
            out->tokens[batch.pair[i]] = (size_t)batch.tgt_len[i];
            out->total += nll[i];
            out->n_tokens += (size_t)batch.tgt_len[i];
        }
    }
    nmt_workspace_free(ws);
    nmt_batch_free(&batch);
    nmt_batch_plan_free(&plan);
    return rc;
}

/* Every sentence's log-probability is finite, or the model is refused
 * before anything is printed: NaN or Inf comes from weights that are not
 * numbers or so large that the pass overflows, and a loss of NaN is no
 * score. The first such sentence is named by its line. */
static int check_finite(const scores *s, const nmt_corpus *c, const char *model, const char *src)
{
    for (size_t i = 0; i < c->n; i++)
        if (!isfinite(s->nll[i])) {
            cli_error("%s: the log-probability of line %zu of %s is not finite (%s): the "
                      "model's weights are not numbers, or so large that its forward pass "
                      "overflows", model, c->line[i], src, isnan(s->nll[i]) ? "NaN" : "Inf");
            return -1;
        }
    return 0;
}

/* A corpus the model does not know scores a perplexity of <unk>s, which
 * means nothing: say so. */
static void warn_unknown(const nmt_corpus *c, const nmt_model *m, const char *src,
                         const char *tgt)
{
    size_t unk[2], total[2];
    nmt_corpus_count_unk(c, unk, total);
    cli_warn_unknown(src, unk[0], total[0], nmt_units_name(m));
    cli_warn_unknown(tgt, unk[1], total[1], nmt_units_name(m));
}

int cmd_score(int argc, char **argv)
{
    score_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    cli_set_threads(a.threads);

    nmt_model *m;
    if (nmt_model_load(&m, a.model, NULL)) {
        cli_lib_error();
        return 1;
    }
    nmt_corpus corpus = {0};
    nmt_corpus_opts co = {.lowercase = m->cfg.lowercase, .subwords = m->subwords};
    nmt_vocab *sv = m->src_vocab, *tv = m->tgt_vocab;
    scores s = {0};
    int status = 0;
    if (nmt_corpus_read(&corpus, a.src, a.tgt, &co, &sv, &tv)) {
        cli_lib_error();
        status = 1;
    } else if (check_lengths(&corpus, a.src, a.tgt)) {
        status = 1;
    } else if (score_corpus(&s, m, &corpus, a.batch_size)) {
        cli_lib_error();
        status = 1;
    } else if (check_finite(&s, &corpus, a.model, a.src)) {
        status = 1;
    } else {
        double loss = s.total / (double)s.n_tokens;
        FILE *summary = a.per_sentence ? stderr : stdout;
        if (a.per_sentence)
            for (size_t i = 0; i < corpus.n; i++)
                printf("%.6f\t%zu\n", s.nll[i], s.tokens[i]);
        fprintf(summary, "sentences   %zu\n", corpus.n);
        fprintf(summary, "tokens      %zu\n", s.n_tokens);
        fprintf(summary, "loss        %.6f\n", loss);
        fprintf(summary, "perplexity  %.4f\n", exp(loss));
        warn_unknown(&corpus, m, a.src, a.tgt);
    }
    free(s.nll);
    free(s.tokens);
    nmt_corpus_free(&corpus);
    nmt_model_free(m);
    return status;
}
