/* A temporary folder of files for the suites that read files (text, corpus).
 * One folder at a time per test; paths come from a small ring of buffers. */
#ifndef NMT_TEST_FILES_H
#define NMT_TEST_FILES_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[64];

static inline void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/nmt-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static inline void remove_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A path in the temp dir; static storage, one at a time per slot. */
static inline const char *tmp_path(const char *name)
{
    static char paths[4][256];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    return p;
}

static inline const char *write_file(const char *name, const void *data, size_t n)
{
    const char *p = tmp_path(name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
    return p;
}

#endif
