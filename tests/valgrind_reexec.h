/* The "valgrind" test setup (meson.build) sets NMT_VALGRIND to a valgrind
 * command line; a test program calls nmt_reexec_under_valgrind(argv) first
 * thing in main and so re-executes itself under that command, once
 * (NMT_UNDER_VALGRIND marks the second run). Without NMT_VALGRIND it returns
 * at once. Used by the unit-test main, the fuzz replayers and parity_grad. */
#ifndef NMT_TESTS_VALGRIND_REEXEC_H
#define NMT_TESTS_VALGRIND_REEXEC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void nmt_reexec_under_valgrind(char **argv)
{
    const char *cmd = getenv("NMT_VALGRIND");
    if (!cmd || !*cmd || getenv("NMT_UNDER_VALGRIND"))
        return;
    setenv("NMT_UNDER_VALGRIND", "1", 1);
    char *copy = strdup(cmd);
    char *args[64];
    int n = 0;
    for (char *w = copy ? strtok(copy, " ") : NULL; w && n < 60; w = strtok(NULL, " "))
        args[n++] = w;
    for (int i = 0; argv[i] && n < 63; i++)
        args[n++] = argv[i];
    args[n] = NULL;
    if (n > 0)
        execvp(args[0], args);
    perror("cannot run NMT_VALGRIND");
    exit(EXIT_FAILURE);
}

#endif
