/* The shared main of every unit-test binary: runs the one suite the binary
 * was built with. CK_ENV, CK_VERBOSITY, CK_RUN_CASE etc. work as Check says.
 * With NMT_VALGRIND set (the "valgrind" test setup), the binary re-executes
 * itself under that command line, once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_common.h"

static void reexec_under_valgrind(char **argv)
{
    const char *cmd = getenv("NMT_VALGRIND");
    if (!cmd || !*cmd || getenv("NMT_UNDER_VALGRIND"))
        return;
    setenv("NMT_UNDER_VALGRIND", "1", 1);
    char *copy = strdup(cmd);
    char *args[64];
    int n = 0;
    for (char *w = strtok(copy, " "); w && n < 60; w = strtok(NULL, " "))
        args[n++] = w;
    for (int i = 0; argv[i] && n < 63; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    execvp(args[0], args);
    perror("cannot run NMT_VALGRIND");
    exit(EXIT_FAILURE);
}

int main(int argc, char **argv)
{
    (void)argc;
    reexec_under_valgrind(argv);
    SRunner *sr = srunner_create(nmt_test_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
