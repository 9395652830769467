/* nmt average: the element-wise mean of several models or checkpoints of one
 * model (checkpoint averaging), written as a plain model file. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "cli_opts.h"
#include "nmt/average.h"
#include "nmt/error.h"
#include "nmt/modelfile.h"

static void help(void)
{
    printf("Usage: nmt average FILE... -o FILE\n\n"
           "Writes the element-wise mean of the weights of several model files:\n"
           "models or checkpoints (nmt train's snapshot-STEP.safetensors, say) of one\n"
           "architecture, vocabulary and settings. Only the model's weights are\n"
           "averaged (a checkpoint's optimizer state is left out); the output is a\n"
           "plain model file that every command loads, with the first file's\n"
           "settings. Means are summed in double and rounded to float once, so one\n"
           "file gives an exact copy of its model. Files that differ in anything but\n"
           "their weights (cell, attention, sizes, vocabularies, lowercasing, ...) are\n"
           "refused, naming the two files and what differs. The files are read one\n"
           "after another: memory holds two models and the sum, whatever their number.\n\n"
           "Options:\n"
           "  -o, --output FILE   the averaged model (written atomically)\n"
           "  -q, --quiet         no summary line on stderr\n"
           "  -h, --help          this help\n");
}

int cmd_average(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out_path = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", long_options, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case 'q': cli_verbosity = 0; break;
        case 'h': help(); return 0;
        default: return cli_usage_error();
        }
    }
    int n = argc - optind;
    if (n < 1) {
        cli_error("no model files given");
        return cli_usage_error();
    }
    if (!out_path) {
        cli_error("-o FILE is required (where the averaged model goes)");
        return cli_usage_error();
    }
    nmt_model *m = NULL;
    if (nmt_average_models(&m, (const char *const *)(argv + optind), n) ||
        nmt_model_save(m, out_path, NULL, 0, NULL, 0)) {
        cli_lib_error();
        nmt_model_free(m);
        return 1;
    }
    if (cli_verbosity > 0)
        fprintf(stderr, "%s: the mean of %d file%s (%zu parameters)\n", out_path, n,
                n == 1 ? "" : "s", m->n_params);
    nmt_model_free(m);
    return 0;
}
