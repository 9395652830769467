/* A temporary folder of files for the suites that read and write files (text,
 * corpus, the model files...), in $TMPDIR or /tmp. One folder at a time per
 * test; paths come from a small ring of buffers. */
#ifndef NMT_TEST_FILES_H
#define NMT_TEST_FILES_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_common.h"

static char tmpdir[256];

static inline void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/nmt-test-XXXXXX", test_env_or("TMPDIR", "/tmp"));
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static inline void remove_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A path in the temp dir; static storage, one at a time per slot. */
static inline const char *tmp_path(const char *name)
{
    static char paths[4][400];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", tmpdir, name);
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

/* Writes n bytes at b to path (any path, not only in the temp dir). */
static inline void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* The whole of path, malloc'ed, its size in *n. */
static inline unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    b[len] = 0; /* so that strstr on it stops */
    *n = (size_t)len;
    return b;
}

#endif
