/* The <unk> warning of translate, score, align and train (cli_unknown.h). */
#include "cli_unknown.h"

#include <stdio.h>
#include <string.h>

#include "cli_opts.h"

int cli_unknown_high(size_t unk, size_t n)
{
    return n > 0 && (double)unk > CLI_UNK_WARN * (double)n;
}

int cli_warn_unknown(const char *what, size_t unk, size_t n, const char *units)
{
    if (!cli_unknown_high(unk, n))
        return 0;
    int pieces = !strcmp(units, "pieces");
    fprintf(stderr, "nmt%s%s: warning: %.1f%% of the %s of %s (%zu of %zu) are unknown to "
            "the model (<unk>, more than %.0f%%): %s\n",
            strcmp(cli_command, "nmt") ? " " : "", strcmp(cli_command, "nmt") ? cli_command : "",
            100.0 * (double)unk / (double)n, units, what, unk, n, 100.0 * CLI_UNK_WARN,
            pieces ? "the text likely has characters its training text never had (another "
                     "script or language than the model's)"
                   : "the text is likely not in the model's language, or not from the corpus "
                     "it was trained on (a word model knows only its training corpus's "
                     "words); check the model and the file");
    return 1;
}
