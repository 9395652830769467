/* A plain main for a fuzz target, so that the normal (gcc) build replays the
 * seeds and the kept crash inputs through the target's entry function:
 *   fuzz-replay-TARGET FILE_OR_DIR...
 * Each file is one input; a folder is every regular file in it (not
 * recursive), in name order; a folder that does not exist is skipped (the
 * regressions folder of a target with no finding yet). Fails when no input
 * was found at all. A crash, or a sanitizer report in a sanitized build, is
 * the failure the test looks for. With NMT_VALGRIND set (the "valgrind" test
 * setup) the program re-executes itself under that command line, as
 * tests/test_main.c does. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "valgrind_reexec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    /* a copy of exactly the input's size, so that ASan sees reads past it */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file in a folder; returns the count or -1. */
static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len)))
            break;
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    int count = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!stat(names[i], &st) && S_ISREG(st.st_mode)) {
            if (run_file(names[i]))
                failed = 1;
            count++;
        }
        free(names[i]);
    }
    free(names);
    return failed ? -1 : count;
}

int main(int argc, char **argv)
{
    nmt_reexec_under_valgrind(argv);
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int k;
        if (!stat(argv[i], &st) && S_ISDIR(st.st_mode))
            k = run_dir(argv[i]);
        else if (stat(argv[i], &st) && errno == ENOENT)
            k = 0;
        else
            k = run_file(argv[i]) ? -1 : 1;
        if (k < 0)
            return EXIT_FAILURE;
        printf("%s: %d input%s\n", argv[i], k, k == 1 ? "" : "s");
        total += k;
    }
    if (!total) {
        fprintf(stderr, "no inputs found\n");
        return EXIT_FAILURE;
    }
    printf("%d inputs replayed\n", total);
    return EXIT_SUCCESS;
}
