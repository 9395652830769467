/* nmt align's options: what they are, their help, and their checks. */
#ifndef NMT_CLI_ALIGN_ARGS_H
#define NMT_CLI_ALIGN_ARGS_H

#include "nmt/model.h"

enum { FMT_TEXT, FMT_TSV, FMT_JSON, FMT_PHARAOH, FMT_SVG, FMT_PNG, FMT_HTML };
enum { UNITS_DEFAULT = -1, UNITS_PIECES = 0, UNITS_WORDS = 1 };
enum { MAX_MODELS = 8, MAX_AGREE = 3 };

extern const char *const align_format_names[];

typedef struct align_args {
    const char *model[MAX_MODELS];
    int n_models;
    const char *src, *tgt, *out, *gold, *ref, *line_spec;
    int format, format_given, beam, color, threads, units, width;
    int layer, head;      /* --layer, --head: NMT_MAP_DEFAULT / NMT_MAP_MEAN when not given */
    int layer_given, head_given;
    int per_head;         /* --per-head: the AER of every map */
    int ensemble;         /* --ensemble: the -m models translate together, and each
                           * one's attention on that translation is shown */
    int gold_partial;     /* --gold-partial: AER of partially annotated gold */
    int gold_reverse;     /* --gold-reverse: the gold file lists target-source */
    const char *links;    /* --links: score (or symmetrise) this links file, no model */
    const char *rev_links;/* --reverse-links: the reverse direction's links */
    const char *agree[MAX_AGREE];     /* --links given again: more aligners of the
                                       * forward direction, whose links must agree */
    int n_agree;
    const char *rev_agree[MAX_AGREE]; /* --reverse-links given again */
    int n_rev_agree;
    int symmetrize;       /* --symmetrize: an nmt_symmetrize_method, or -1 */
    int src_given;        /* --src was given (its default is standard input) */
    int shift;            /* --shift 1, --no-shift 0, else -1: the model's own */
    int eos_unaligned;    /* --eos-unaligned */
    float min_weight;     /* --min-weight (0: every word linked) */
    int batch;            /* --batch-size: pairs per teacher-forced forward (1: the
                           * decoding steps, pair by pair) */
    int em;               /* --em: links from IBM Model 2 trained by EM, no model */
    int em_iterations;    /* --em-iterations */
    double em_null, em_tension, em_alpha; /* --em-null, --em-tension, --em-alpha */
    int em_fixed_tension; /* --em-fixed-tension */
    const char *em_opt;   /* the last --em-* option given, for its refusal */
} align_args;

/* Parses nmt align's command line into *a: returns -1 to go on, else the
 * exit status (0 after --help, 2 after saying what is wrong). */
int align_parse_args(int argc, char **argv, align_args *a);

/* The format an output name's extension asks for: a FMT_*, -1 for a name
 * without one, -2 for an extension no format has. */
int align_ext_format(const char *out);

#endif
