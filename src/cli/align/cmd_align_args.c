/* nmt align's options: the help, the parsing, and the checks that need
 * every option at once (the format from -o's name, outputs that are not
 * inputs). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "align/cmd_align_args.h"
#include "commands.h"
#include "cli_opts.h"
#include "cli_outfile.h"
#include "nmt/ibm2.h"
#include "nmt/symmetrize.h"
#include "nmt/decode.h"
#include "nmt/error.h"

const char *const align_format_names[] = {"text", "tsv",  "json", "pharaoh",
                                           "svg",  "png",  "html", NULL};
static const char *const color_names[] = {"auto", "always", "never", NULL};
static const char *const unit_names[] = {"pieces", "words", NULL};

static const struct {
    const char *ext;
    int fmt;
} by_ext[] = {
    {".svg", FMT_SVG},   {".png", FMT_PNG},  {".json", FMT_JSON},      {".jsonl", FMT_JSON},
    {".tsv", FMT_TSV},   {".txt", FMT_TEXT}, {".align", FMT_PHARAOH}, {".html", FMT_HTML},
    {".htm", FMT_HTML},
};
#define KNOWN_EXTENSIONS ".txt .tsv .json .jsonl .align .svg .png .html"

static void help(void)
{
    printf(
        "Usage: nmt align -m MODEL [-m MODEL2 ...] [--ensemble] [--src FILE] [--tgt FILE]\n"
        "                 [--line N] [--format FMT] [-o OUT] [--gold FILE] [--ref FILE]\n"
        "                 [--beam K] [--layer L] [--head T] [--shift] [--eos-unaligned]\n"
        "                 [--min-weight W] [--threads N] [--batch-size N]\n"
        "       nmt align --links FILE --gold FILE [--gold-partial] [--gold-reverse]\n"
        "       nmt align --links FWD --reverse-links REV --symmetrize METHOD [-o OUT]\n"
        "                 [--gold FILE]\n"
        "       nmt align --em --src FILE --tgt FILE [-o OUT] [--em-iterations N]\n"
        "                 [--gold FILE]\n\n"
        "The attention of an attention model over each sentence pair: which source\n"
        "words the decoder looked at while it produced each target word. Both sides\n"
        "include the final </s>, so each row of weights sums to 1.\n\n"
        "With --tgt, the pairs are the lines of --src and --tgt and the given target\n"
        "is forced through the decoder. Without it, the model translates each source\n"
        "with the search of nmt translate (beam %d, alpha %.1f, unless --beam says\n"
        "otherwise), so both show the same translation, and the attention is that of\n"
        "its own translation. Sources come from --src or standard input; plain text\n"
        "or gzip.\n\n"
        "Options:\n"
        "  -m, --model FILE     the model (a .safetensors file written by nmt); give it\n"
        "                       up to %d times with --format html to see the models side\n"
        "                       by side, each with its own translation\n"
        "      --ensemble       the -m models translate together, as nmt translate -m A\n"
        "                       -m B does (the mean of their log-probabilities, with\n"
        "                       --beam), and each model's attention on that one\n"
        "                       translation is shown: one map per model and pair, the\n"
        "                       models in -m order (text: each headed by its model;\n"
        "                       json: a \"model\" key; html: side by side). Formats\n"
        "                       text, json and html; not with --tgt\n"
        "  -s, --src FILE       source sentences, one a line ('-': standard input)\n"
        "  -t, --tgt FILE       target sentences, line by line with the sources\n"
        "  -l, --line N         only these lines (1-based, as the files number them):\n"
        "                       N, N-M, or a list of both (3,10-12); the pictures,\n"
        "                       headers and files carry the line number\n"
        "  -f, --format FMT     text     a heatmap for the terminal: target words down,\n"
        "                                source words across (written downwards),\n"
        "                                shades ' ░▒▓█', with colour on a terminal;\n"
        "                                each pair headed by its line number, fitted\n"
        "                                to the terminal's width\n"
        "                       tsv      per pair a header row of source tokens, one row\n"
        "                                per target token with its weights, a blank line\n"
        "                       json     JSON Lines: {\"line\", \"source\", \"target\",\n"
        "                                \"attention\"}, and \"gold\" with --gold\n"
        "                       pharaoh  hard links i-j (source-target, 0-based, </s>\n"
        "                                left out): each target word to the source word\n"
        "                                it attends most (the lower index on a tie)\n"
        "                       svg, png a heatmap picture per pair\n"
        "                       html     one self-contained page for the whole set: a\n"
        "                                sortable, filterable list of the sentences\n"
        "                                (length, AER with --gold, BLEU with --ref) and\n"
        "                                the heatmaps of the one chosen, one per model\n"
        "                       Default: from the -o name's extension (" KNOWN_EXTENSIONS
        "),\n"
        "                       else text on a terminal, else tsv. Another extension\n"
        "                       needs --format.\n"
        "  -o, --output OUT     where to write (default standard output). For svg and png\n"
        "                       with several pairs, OUT is a folder (created if needed)\n"
        "                       that gets line-0001.svg, line-0002.svg, ... (by line).\n"
        "                       A file is replaced when complete; it may not be one\n"
        "                       of the files read\n"
        "  -g, --gold FILE      gold alignments, one Pharaoh line per line of --src: i-j\n"
        "                       a sure link, i?j or ipj a possible one (a link given as\n"
        "                       both is sure): prints the alignment error rate,\n"
        "                       precision and recall of the model's hard links, summed\n"
        "                       over the pairs, and draws the gold links on the heatmaps\n"
        "                       (text, svg, png, html: possible ones dashed or '()';\n"
        "                       json lists them, the possible ones again apart).\n"
        "                       Alignments are then written only if --format or -o\n"
        "                       asks for them. i and j count words from 0 (</s> is\n"
        "                       none): a link past the source's words, or past\n"
        "                       --tgt's, is refused naming the line and the link;\n"
        "                       without --tgt, one past the model's translation counts\n"
        "                       as a gold link it missed\n"
        "      --gold-partial   the gold was annotated in part: a model link counts only\n"
        "                       when its source word and its target word each stand in\n"
        "                       some gold link of the pair (--per-head too)\n"
        "      --gold-reverse   the gold file lists target-source links (j-i), as the\n"
        "                       Bible's gold does for a model from Spanish to English\n"
        "      --links FILE     no model: score this Pharaoh links file (source-target,\n"
        "                       one line per pair, as fast_align or eflomal write it)\n"
        "                       against --gold, which must have as many lines. Given\n"
        "                       again (up to 4 files), the aligners must agree: a\n"
        "                       pair's links are those every file has\n"
        "      --reverse-links FILE\n"
        "                       the reverse direction's own links (target-source, as nmt\n"
        "                       align of the reverse model writes them), line by line\n"
        "                       with --links, for --symmetrize; given again, as --links\n"
        "      --symmetrize METHOD\n"
        "                       join --links and --reverse-links into one alignment,\n"
        "                       written as Pharaoh links (source-target, sorted) to -o\n"
        "                       or standard output, and scored with --gold: intersection,\n"
        "                       union, grow-diag, grow-diag-final, grow-diag-final-and\n"
        "                       (docs/alignments.md describes each)\n"
        "      --em             no model: word links from IBM Model 2 with a diagonal\n"
        "                       prior (Dyer et al. 2013), trained by EM on the pairs of\n"
        "                       --src and --tgt (words: what spaces separate, case\n"
        "                       kept), written as Pharaoh lines i-j (source-target, one\n"
        "                       per pair, --line's or all, empty when a side is) to -o\n"
        "                       or standard output and scored with --gold. Each target\n"
        "                       word is linked to its most probable source word, or to\n"
        "                       none when NULL is likelier. Swap --src and --tgt for the\n"
        "                       reverse direction's links, which --reverse-links reads\n"
        "      --em-iterations N\n"
        "                       EM iterations (default 5)\n"
        "      --em-null P      the probability of NULL, p0 (default 0.08)\n"
        "      --em-tension L   the diagonal prior's tension at the start (default 4),\n"
        "                       re-estimated after each iteration within [0.1, 100]\n"
        "      --em-fixed-tension\n"
        "                       keep the tension where it starts\n"
        "      --em-alpha A     the Dirichlet prior of the variational-Bayes estimate of\n"
        "                       the translation table (default 0.0001); 0: plain maximum\n"
        "                       likelihood\n"
        "  -r, --ref FILE       reference translations, line by line with the sources\n"
        "                       (html, without --tgt): each translation's sentence BLEU\n"
        "                       (sacreBLEU's sentence_bleu) in the list\n"
        "  -b, --beam K         beam size for the model's own translation (default %d,\n"
        "                       as nmt translate; 1 is greedy)\n"
        "      --layer L        a Transformer's decoder layer whose cross-attention is\n"
        "                       shown, from 0 (default: the head a guided model was\n"
        "                       trained to align, read at the step it was trained at\n"
        "                       (nmt info: aligned head); else the model's default map,\n"
        "                       chosen by alignment error on the toy corpus and\n"
        "                       kept on the Bible's verses: docs/alignments.md)\n"
        "      --head T         that layer's head T (from 0), or mean (the default):\n"
        "                       the mean of its heads\n"
        "      --shift          a target word's row is the cross-attention of the\n"
        "                       decoder step that reads it (Shift-Att, Chen et al.\n"
        "                       2020): the step after the one that predicts it. The\n"
        "                       final </s> is read by no step: its row is all on the\n"
        "                       source </s>. In every format, --units words, --gold,\n"
        "                       --per-head; with or without --tgt. A map chosen by\n"
        "                       --layer or --head is read at the predicting step\n"
        "                       without it. A Transformer's only: an RNN's attention\n"
        "                       is made before its step reads the word\n"
        "      --no-shift       the step that predicts each word (the default, but for\n"
        "                       a model trained with --guided-step read)\n"
        "      --eos-unaligned  a target word whose largest weight is on the source\n"
        "                       </s> gets no link (pharaoh, --gold, the pictures' dots)\n"
        "      --min-weight W   a target word whose largest weight over the real\n"
        "                       source words is below W (0 to 1) gets no link\n"
        "      --per-head       with --gold: the AER of every map the model has, each\n"
        "                       decoder layer's heads and their mean (an RNN has one),\n"
        "                       as a table after the scores of the map shown; one\n"
        "                       pass, as the maps come from the same decoder steps\n"
        "  -u, --units U        for a model that reads subwords: pieces (default) shows\n"
        "                       the SentencePiece pieces the model reads and writes;\n"
        "                       words groups them into words (a piece starting with\n"
        "                       \u2581 begins one): a target word's row is the mean of\n"
        "                       its pieces' rows, a source word's column the sum of its\n"
        "                       pieces' columns, so each row still sums to 1. Pharaoh\n"
        "                       links and pictures with --gold are of words unless\n"
        "                       --units pieces is given, and --gold always compares\n"
        "                       words. A model that reads words has words only\n"
        "      --width N        text: the columns to fit (default: $COLUMNS, else the\n"
        "                       terminal's width; 0: no limit). Long sources are\n"
        "                       wrapped into bands of columns, each under its words\n"
        "      --threads N      with --tgt and one model, for pharaoh links or --gold's\n"
        "                       scores alone: the pairs split over N threads, each\n"
        "                       forcing its own, the output in input order, the same\n"
        "                       bytes for any N. Otherwise: threads for the matrix\n"
        "                       products.\n"
        "                       Default: every core this process may use\n"
        "      --batch-size N   on that path, N pairs (1 to 512) at once through one\n"
        "                       teacher-forced training forward, which holds every\n"
        "                       map (a Transformer's; an RNN goes pair by pair). The\n"
        "                       batch's products round otherwise than the decoding\n"
        "                       steps' (default 1), within 1e-5 of a weight: a link\n"
        "                       can move where two weights nearly tie\n"
        "      --color WHEN     auto (default: when writing text to a terminal, and\n"
        "                       NO_COLOR is not set), always or never; 24-bit colour\n"
        "                       when COLORTERM says truecolor, else 256 colours;\n"
        "                       weights below 0.1 keep the terminal's background\n"
        "  -h, --help           this help\n\n"
        "AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|), precision = |A∩P| / |A|,\n"
        "recall = |A∩S| / |S| (Och and Ney; A the model's links, S the sure gold links,\n"
        "P the possible ones, sure included). With no model links precision is 1,\n"
        "with no sure gold links recall is 1, with neither AER is 0.\n",
        NMT_DEFAULT_BEAM, (double)NMT_DEFAULT_ALPHA, MAX_MODELS, NMT_DEFAULT_BEAM);
}

int align_ext_format(const char *out)
{
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        return -1;
    for (size_t k = 0; k < sizeof by_ext / sizeof by_ext[0]; k++)
        if (!strcmp(dot, by_ext[k].ext))
            return by_ext[k].fmt;
    return -2;
}

/* Settles the format from --format and -o, refusing names that say another
 * format or none. Returns 0, or 2 after saying what is wrong. */
static int settle_format(align_args *a)
{
    int to_stdout = !a->out || !strcmp(a->out, "-");
    if (to_stdout) {
        if (!a->format_given)
            a->format = isatty(STDOUT_FILENO) ? FMT_TEXT : FMT_TSV;
        return 0;
    }
    int e = align_ext_format(a->out);
    if (!a->format_given) {
        if (e >= 0) {
            a->format = e;
            return 0;
        }
        if (e == -2)
            cli_error("-o %s: unknown extension '%s': give --format FMT, or a name ending in "
                      "one of " KNOWN_EXTENSIONS, a->out, strrchr(a->out, '.'));
        else
            cli_error("-o %s: no extension to tell the format by: give --format FMT, or a name "
                      "ending in one of " KNOWN_EXTENSIONS, a->out);
        return 2;
    }
    if (e >= 0 && e != a->format) {
        cli_error("--format %s does not match -o %s: change one of them",
                  align_format_names[a->format], a->out);
        return 2;
    }
    return 0;
}

/* Refuses an -o that is one of the files read. */
static int check_files(const align_args *a)
{
    cli_file in[6 + MAX_MODELS + 2 * MAX_AGREE] = {{"--src", a->src},   {"--tgt", a->tgt},
                                   {"--gold", a->gold}, {"--ref", a->ref},
                                   {"--links", a->links}, {"--reverse-links", a->rev_links}};
    for (int k = 0; k < a->n_models; k++)
        in[6 + k] = (cli_file){"-m", a->model[k]};
    int n_in = 6 + a->n_models;
    for (int k = 0; k < a->n_agree; k++)
        in[n_in++] = (cli_file){"--links", a->agree[k]};
    for (int k = 0; k < a->n_rev_agree; k++)
        in[n_in++] = (cli_file){"--reverse-links", a->rev_agree[k]};
    const cli_file out = {"-o", a->out ? a->out : "-"};
    return cli_check_outputs(&out, 1, in, n_in);
}

/* --em: no model, the pairs of --src and --tgt in, Pharaoh lines out.
 * Returns -1 to go on, else 2 after saying what is wrong. */
static int check_em_mode(align_args *a)
{
    const char *other = a->n_models ? "-m" : a->links ? "--links"
                        : a->rev_links ? "--reverse-links" : a->symmetrize >= 0 ? "--symmetrize"
                        : a->ref ? "--ref" : a->per_head ? "--per-head"
                        : a->ensemble ? "--ensemble" : a->layer_given ? "--layer"
                        : a->head_given ? "--head" : a->units != UNITS_DEFAULT ? "--units" : NULL;
    if (other) {
        cli_error("--em trains its own word aligner on --src and --tgt: it cannot be used "
                  "with %s", other);
        return 2;
    }
    if (!a->src_given || !a->tgt) {
        cli_error("--em aligns the pairs of two files: give --src FILE and --tgt FILE");
        return 2;
    }
    if (!strcmp(a->src, "-") && !strcmp(a->tgt, "-")) {
        cli_error("--src and --tgt cannot both be standard input");
        return 2;
    }
    if (a->format_given && a->format != FMT_PHARAOH) {
        cli_error("--em: the links are written as Pharaoh lines, not --format %s",
                  align_format_names[a->format]);
        return 2;
    }
    a->format = FMT_PHARAOH;
    return check_files(a) ? 2 : -1;
}

/* --links and --symmetrize: no model, Pharaoh files in and out. Returns
 * -1 to go on, else 2 after saying what is wrong. */
static int check_links_mode(align_args *a)
{
    if (!a->links) {
        cli_error("%s needs --links FILE (the forward direction's links)",
                  a->symmetrize >= 0 ? "--symmetrize" : "--reverse-links");
        return 2;
    }
    if (a->symmetrize >= 0 && !a->rev_links) {
        cli_error("--symmetrize joins two directions: give --reverse-links FILE (the reverse "
                  "model's links, target-source)");
        return 2;
    }
    if (a->rev_links && a->symmetrize < 0) {
        cli_error("--reverse-links is read by --symmetrize METHOD: give one");
        return 2;
    }
    if (a->symmetrize < 0 && !a->gold) {
        cli_error("--links scores a links file against the gold: give --gold FILE (or "
                  "--symmetrize METHOD with --reverse-links)");
        return 2;
    }
    const char *model_opt = a->n_models ? "-m" : a->tgt ? "--tgt" : a->src_given ? "--src"
                            : a->ref ? "--ref" : a->per_head ? "--per-head"
                            : a->ensemble ? "--ensemble" : NULL;
    if (model_opt) {
        cli_error("--links reads links, not a model's attention: it cannot be used with %s",
                  model_opt);
        return 2;
    }
    if (a->format_given && a->format != FMT_PHARAOH) {
        cli_error("--links: the links are written as Pharaoh lines, not --format %s",
                  align_format_names[a->format]);
        return 2;
    }
    if (a->out && a->symmetrize < 0) {
        cli_error("-o: --links without --symmetrize writes nothing but its scores");
        return 2;
    }
    a->format = FMT_PHARAOH;
    return check_files(a) ? 2 : -1;
}

int align_parse_args(int argc, char **argv, align_args *a)
{
    enum { OPT_WIDTH = 256, OPT_LAYER, OPT_HEAD, OPT_PER_HEAD, OPT_ENSEMBLE, OPT_GOLD_PARTIAL,
           OPT_GOLD_REVERSE, OPT_LINKS, OPT_REV_LINKS, OPT_SYMMETRIZE, OPT_SHIFT, OPT_NO_SHIFT,
           OPT_EOS_UNALIGNED, OPT_MIN_WEIGHT, OPT_BATCH,
           OPT_EM, OPT_EM_ITER, OPT_EM_NULL, OPT_EM_TENSION, OPT_EM_FIXED, OPT_EM_ALPHA };
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},  {"src", required_argument, NULL, 's'},
        {"tgt", required_argument, NULL, 't'},    {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'}, {"gold", required_argument, NULL, 'g'},
        CLI_OPTION_BEAM,                          {"color", required_argument, NULL, 'C'},
        {"colour", required_argument, NULL, 'C'}, {"units", required_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},         CLI_OPTION_THREADS,
        {"line", required_argument, NULL, 'l'},   {"ref", required_argument, NULL, 'r'},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"layer", required_argument, NULL, OPT_LAYER}, {"head", required_argument, NULL, OPT_HEAD},
        {"per-head", no_argument, NULL, OPT_PER_HEAD},
        {"ensemble", no_argument, NULL, OPT_ENSEMBLE},
        {"gold-partial", no_argument, NULL, OPT_GOLD_PARTIAL},
        {"gold-reverse", no_argument, NULL, OPT_GOLD_REVERSE},
        {"links", required_argument, NULL, OPT_LINKS},
        {"reverse-links", required_argument, NULL, OPT_REV_LINKS},
        {"symmetrize", required_argument, NULL, OPT_SYMMETRIZE},
        {"symmetrise", required_argument, NULL, OPT_SYMMETRIZE},
        {"shift", no_argument, NULL, OPT_SHIFT}, {"no-shift", no_argument, NULL, OPT_NO_SHIFT},
        {"eos-unaligned", no_argument, NULL, OPT_EOS_UNALIGNED},
        {"min-weight", required_argument, NULL, OPT_MIN_WEIGHT},
        {"batch-size", required_argument, NULL, OPT_BATCH},
        {"em", no_argument, NULL, OPT_EM},
        {"em-iterations", required_argument, NULL, OPT_EM_ITER},
        {"em-null", required_argument, NULL, OPT_EM_NULL},
        {"em-tension", required_argument, NULL, OPT_EM_TENSION},
        {"em-fixed-tension", no_argument, NULL, OPT_EM_FIXED},
        {"em-alpha", required_argument, NULL, OPT_EM_ALPHA},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->src = "-";
    a->beam = NMT_DEFAULT_BEAM;
    a->format = -1;
    a->threads = cli_default_threads();
    a->units = UNITS_DEFAULT;
    a->width = -1;
    a->layer = NMT_MAP_DEFAULT;
    a->head = NMT_MAP_MEAN;
    a->symmetrize = -1;
    a->shift = -1;
    a->batch = 1;
    const nmt_ibm2_opts em = nmt_ibm2_defaults();
    a->em_iterations = 5;
    a->em_null = em.p_null;
    a->em_tension = em.tension;
    a->em_alpha = em.alpha;
    const cli_model_opts shared = {.beam = &a->beam, .threads = &a->threads};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:s:t:f:o:g:b:u:l:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (opt_model(optarg, a->model, &a->n_models, MAX_MODELS))
                return 2;
            break;
        case 's':
            a->src = optarg;
            a->src_given = 1;
            break;
        case 't': a->tgt = optarg; break;
        case 'o': a->out = optarg; break;
        case 'g': a->gold = optarg; break;
        case 'r': a->ref = optarg; break;
        case 'l': a->line_spec = optarg; break;
        case 'f':
            if ((a->format = opt_choice("--format", optarg, align_format_names)) < 0)
                return 2;
            a->format_given = 1;
            break;
        case OPT_WIDTH:
            if (opt_int("--width", optarg, 0, 100000, &a->width))
                return 2;
            break;
        case OPT_LAYER:
            if (opt_int("--layer", optarg, 0, 1000, &a->layer))
                return 2;
            a->layer_given = 1;
            break;
        case OPT_HEAD:
            if (strcmp(optarg, "mean") && opt_int("--head", optarg, 0, 65536, &a->head))
                return 2;
            a->head_given = 1;
            break;
        case OPT_PER_HEAD: a->per_head = 1; break;
        case OPT_ENSEMBLE: a->ensemble = 1; break;
        case OPT_GOLD_PARTIAL: a->gold_partial = 1; break;
        case OPT_GOLD_REVERSE: a->gold_reverse = 1; break;
        case OPT_LINKS:
        case OPT_REV_LINKS: {
            /* given again: another aligner of the same direction (agreement) */
            int rev = c == OPT_REV_LINKS;
            const char **first = rev ? &a->rev_links : &a->links;
            const char **more = rev ? a->rev_agree : a->agree;
            int *n_more = rev ? &a->n_rev_agree : &a->n_agree;
            if (!*first)
                *first = optarg;
            else if (*n_more < MAX_AGREE)
                more[(*n_more)++] = optarg;
            else {
                cli_error("%s: at most %d files", rev ? "--reverse-links" : "--links",
                          MAX_AGREE + 1);
                return 2;
            }
            break;
        }
        case OPT_SYMMETRIZE:
            if ((a->symmetrize = opt_choice("--symmetrize", optarg, nmt_symmetrize_names)) < 0)
                return 2;
            break;
        case OPT_SHIFT: a->shift = 1; break;
        case OPT_NO_SHIFT: a->shift = 0; break;
        case OPT_EOS_UNALIGNED: a->eos_unaligned = 1; break;
        case OPT_BATCH:
            if (opt_int("--batch-size", optarg, 1, 512, &a->batch))
                return 2;
            break;
        case OPT_MIN_WEIGHT:
            if (opt_float("--min-weight", optarg, 0, 1, &a->min_weight))
                return 2;
            break;
        case OPT_EM: a->em = 1; break;
        case OPT_EM_ITER:
            a->em_opt = "--em-iterations";
            if (opt_int("--em-iterations", optarg, 0, 1000, &a->em_iterations))
                return 2;
            break;
        case OPT_EM_NULL:
            a->em_opt = "--em-null";
            if (opt_double("--em-null", optarg, 0, 0.999, &a->em_null))
                return 2;
            break;
        case OPT_EM_TENSION:
            a->em_opt = "--em-tension";
            if (opt_double("--em-tension", optarg, NMT_IBM2_TENSION_MIN, NMT_IBM2_TENSION_MAX,
                           &a->em_tension))
                return 2;
            break;
        case OPT_EM_FIXED:
            a->em_opt = "--em-fixed-tension";
            a->em_fixed_tension = 1;
            break;
        case OPT_EM_ALPHA:
            a->em_opt = "--em-alpha";
            if (opt_double("--em-alpha", optarg, 0, 1e6, &a->em_alpha))
                return 2;
            break;
        case 'C':
            if ((a->color = opt_choice("--color", optarg, color_names)) < 0)
                return 2;
            break;
        case 'u':
            if ((a->units = opt_choice("--units", optarg, unit_names)) < 0)
                return 2;
            break;
        case 'h': help(); return 0;
        case ':':
            cli_error("option '%s' needs a value", argv[optind - 1]);
            return cli_usage_error();
        default: {
            int r = cli_model_option(c, optarg, &shared);
            if (r == 1) {
                cli_error("unknown option '%s'", argv[optind - 1]);
                return cli_usage_error();
            }
            if (r)
                return 2;
        }
        }
    }
    if (cli_no_operands(argc, argv))
        return 2;
    if ((a->gold_partial || a->gold_reverse) && !a->gold) {
        cli_error("%s: it says how to read the gold file: give --gold FILE",
                  a->gold_partial ? "--gold-partial" : "--gold-reverse");
        return 2;
    }
    if (a->em_opt && !a->em) {
        cli_error("%s sets up the word aligner of --em: give --em", a->em_opt);
        return 2;
    }
    if (a->em)
        return check_em_mode(a);
    if (a->links || a->rev_links || a->symmetrize >= 0)
        return check_links_mode(a);
    if (!a->n_models) {
        cli_error("which model? give -m FILE");
        return cli_usage_error();
    }
    if (a->tgt && !strcmp(a->tgt, "-") && !strcmp(a->src, "-")) {
        cli_error("--src and --tgt cannot both be standard input");
        return 2;
    }
    if (a->gold && a->units == UNITS_PIECES) {
        cli_error("--gold links words to words: it cannot be used with --units pieces");
        return 2;
    }
    if (a->per_head && !a->gold) {
        cli_error("--per-head compares every layer and head with the gold links: give --gold "
                  "FILE");
        return 2;
    }
    int rc = settle_format(a);
    if (rc)
        return rc;
    if (a->ensemble && a->tgt) {
        cli_error("--ensemble shows the attention on the models' joint translation: it "
                  "cannot be used with --tgt");
        return 2;
    }
    if (a->ensemble && a->format != FMT_TEXT && a->format != FMT_JSON &&
        a->format != FMT_HTML) {
        cli_error("--ensemble: one map per model and pair is shown by --format text, json or "
                  "html, not %s", align_format_names[a->format]);
        return 2;
    }
    if (a->n_models > 1 && a->format != FMT_HTML && !a->ensemble) {
        cli_error("-m given %d times: several models are shown side by side by --format html "
                  "only (or translate together with --ensemble)", a->n_models);
        return 2;
    }
    if (a->ref && a->tgt) {
        cli_error("--ref scores the model's own translations: it cannot be used with --tgt");
        return 2;
    }
    if (a->ref && a->format != FMT_HTML) {
        cli_error("--ref: the sentences' BLEU is shown by --format html only");
        return 2;
    }
    if (check_files(a))
        return 2;
    return -1; /* go on */
}
