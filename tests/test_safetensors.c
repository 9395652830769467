/* The safetensors container (src/io/safetensors.c): round trip and
 * padding, escaping, hostile headers, truncation, failing writes, byte
 * tensors, and reading only some tensors. The model files written on top of
 * it are the modelfile suite's (tests/test_modelfile.c). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "nmt/error.h"
#include "io/safetensors.h"
#include "test_common.h"
#include "test_files.h"

/* ---- helpers -------------------------------------------------------------- */

/* A file image: 8-byte LE length of json, json, data. malloc'ed. */
static unsigned char *image(const char *json, const void *data, size_t n_data, size_t *size)
{
    size_t n = strlen(json);
    *size = 8 + n + n_data;
    unsigned char *b = malloc(*size ? *size : 1);
    ck_assert_ptr_nonnull(b);
    for (int k = 0; k < 8; k++)
        b[k] = (unsigned char)((uint64_t)n >> (8 * k));
    memcpy(b + 8, json, n);
    if (n_data)
        memcpy(b + 8 + n, data, n_data);
    return b;
}

/* Parsing the image must fail with NMT_ERR_FORMAT and a message holding
 * `want`. */
static void expect_bad(const char *json, const void *data, size_t n_data, const char *want)
{
    size_t size;
    unsigned char *b = image(json, data, n_data, &size);
    st_file f;
    nmt_clear_error();
    int rc = nmt_st_parse(&f, b, size, "hostile.safetensors");
    free(b);
    ck_assert_msg(rc == NMT_ERR_FORMAT, "accepted: %s", json);
    ck_assert_msg(strstr(nmt_error_message(), want) != NULL, "for %s: message '%s' lacks '%s'", json,
                  nmt_error_message(), want);
    ck_assert_msg(strstr(nmt_error_message(), "hostile.safetensors") != NULL, "message names no file");
    ck_assert_ptr_null(f.tensors);
    ck_assert_ptr_null(f.data);
}

static int parse_ok(st_file *f, const char *json, const void *data, size_t n_data)
{
    size_t size;
    unsigned char *b = image(json, data, n_data, &size);
    int rc = nmt_st_parse(f, b, size, "mem");
    free(b);
    return rc;
}

/* ---- the container -------------------------------------------------------- */

START_TEST(round_trip_and_padding)
{
    make_tmpdir();
    float a[6] = {1.5f, -2.0f, 0.0f, 3.25e-8f, -0.0f, 1e30f};
    float b[3] = {7.0f, 8.0f, 9.0f};
    float s = 42.0f;
    nmt_named_tensor t[3] = {
        {"a.matrix", 2, {2, 3}, a, NULL},
        {"b", 1, {3, 0}, b, NULL},
        {"scalar", 0, {0, 0}, &s, NULL},
    };
    /* every character JSON must escape, and UTF-8 */
    const char *tricky = "quote \" backslash \\ newline \n tab \t cr \r bell \a unit \x1f \xc3\xa4 \xe2\x80\x9e";
    nmt_meta meta[2] = {{"tricky", tricky}, {"\"key\\", "v"}};
    const char *path = tmp_path("x.safetensors");
    ck_assert_int_eq(nmt_st_write(path, t, 3, meta, 2, "crc32"), NMT_OK);

    size_t n;
    unsigned char *raw = read_bytes(path, &n);
    uint64_t hlen = 0;
    for (int k = 7; k >= 0; k--)
        hlen = (hlen << 8) | raw[k];
    ck_assert_uint_eq((8 + hlen) % 8, 0);           /* data starts aligned */
    ck_assert_uint_eq(n, 8 + hlen + 4 * (6 + 3 + 1)); /* nothing else */
    /* the header's raw text has the escapes, not the raw controls */
    char *hdr = strndup((const char *)raw + 8, (size_t)hlen);
    ck_assert_ptr_nonnull(strstr(hdr, "newline \\n tab \\t cr \\r bell \\u0007 unit \\u001f"));
    ck_assert_ptr_nonnull(strstr(hdr, "quote \\\" backslash \\\\"));
    ck_assert_ptr_null(strchr(hdr, '\n'));
    free(hdr);
    /* crc32 is 8 lowercase hex digits of zlib's crc of the data section */
    char want_crc[16];
    snprintf(want_crc, sizeof want_crc, "%08lx", crc32(0, raw + 8 + hlen, (uInt)(n - 8 - hlen)));
    free(raw);

    st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), NMT_OK);
    ck_assert_int_eq(f.n_tensors, 3);
    const st_tensor *ta = nmt_st_find(&f, "a.matrix");
    ck_assert_ptr_nonnull(ta);
    ck_assert_int_eq(ta->ndim, 2);
    ck_assert_int_eq(ta->shape[0], 2);
    ck_assert_int_eq(ta->shape[1], 3);
    ck_assert_mem_eq(f.data + ta->begin, a, sizeof a);
    ck_assert_mem_eq(f.data + nmt_st_find(&f, "b")->begin, b, sizeof b);
    ck_assert_int_eq(nmt_st_find(&f, "scalar")->ndim, 0);
    ck_assert_mem_eq(f.data + nmt_st_find(&f, "scalar")->begin, &s, 4);
    ck_assert_str_eq(nmt_st_meta(&f, "tricky"), tricky);
    ck_assert_str_eq(nmt_st_meta(&f, "\"key\\"), "v");
    ck_assert_str_eq(nmt_st_meta(&f, "crc32"), want_crc);
    ck_assert_uint_eq(f.data_crc, strtoul(want_crc, NULL, 16));
    nmt_st_free(&f);
    /* no temporary file is left next to it */
    ck_assert_int_ne(access(tmp_path(".x.safetensors.tmp.0"), F_OK), 0);
    remove_tmpdir();
}
END_TEST

START_TEST(json_escapes_decode)
{
    st_file f;
    /* \u escapes (BMP and a surrogate pair), the simple escapes, raw UTF-8 */
    const char *json = "{\"__metadata__\":{\"k\":\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t \xc3\xa4\"},"
                       " \"t\" : {\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]} }   ";
    float x = 1.0f;
    ck_assert_int_eq(parse_ok(&f, json, &x, 4), NMT_OK);
    ck_assert_str_eq(nmt_st_meta(&f, "k"), "\xc3\xa9\xf0\x9f\x98\x80\"\\/\b\f\n\r\t \xc3\xa4");
    nmt_st_free(&f);
    /* nmt_st_json_quote's output parses back to the same bytes */
    const char *s = "a\"b\\c\nd\x01\xe2\x82\xac";
    char *q = nmt_st_json_quote(s);
    ck_assert_ptr_nonnull(q);
    char buf[256];
    snprintf(buf, sizeof buf, "{\"__metadata__\":{\"k\":%s}}", q);
    free(q);
    ck_assert_int_eq(parse_ok(&f, buf, NULL, 0), NMT_OK);
    ck_assert_str_eq(nmt_st_meta(&f, "k"), s);
    nmt_st_free(&f);
}
END_TEST

#define T1 "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}"

START_TEST(malformed_json_refused)
{
    float x[4] = {0};
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{", "unexpected end"},
        {"[]", "not a JSON object"},
        {"{\"t\" 1}", "expected ':'"},
        {"{\"t\":1,}", "expected a string key"},
        {T1 "} x", "trailing characters"},
        {T1 ",\"u\":[1,2,]}", "unexpected character"},
        {"{\"a\":[1 2]}", "expected ',' or ']'"},
        {"{\"a\":{\"b\":1 \"c\":2}}", "expected ',' or '}'"},
        {"{\"a\":\"unterminated}", "unterminated string"},
        {"{\"a\":\"bad \\q escape\"}", "unknown escape"},
        {"{\"a\":\"\\u12g4\"}", "4 hex digits"},
        {"{\"a\":\"\\ud800 alone\"}", "high surrogate"},
        {"{\"a\":\"\\udc00\"}", "lone low surrogate"},
        {"{\"a\":\"\\u0000\"}", "\\u0000"},
        {"{\"a\":\"tab\tinside\"}", "control character"},
        {"{\"a\":\"\xc3\"}", "invalid UTF-8"},
        {"{\"a\":\"\xc0\xaf\"}", "invalid UTF-8"},      /* overlong */
        {"{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8"},  /* surrogate */
        {"{\"a\":01}", "leading zero"},
        {"{\"a\":1.5}", "whole numbers"},
        {"{\"a\":1e3}", "whole numbers"},
        {"{\"a\":99999999999999999999}", "too large"},
        {"{\"a\":-}", "expected a digit"},
        {"{\"a\":tru}", "unexpected character"},
        {"{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", "nested too deeply"},
        {"{\"a\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
         "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}", "too many items"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        expect_bad(cases[k].json, x, 4, cases[k].want);
    /* a NUL byte inside the header */
    unsigned char nul[] = "{\"a\":\"x\0y\"}";
    unsigned char img[8 + sizeof nul - 1];
    memset(img, 0, 8);
    img[0] = sizeof nul - 1;
    memcpy(img + 8, nul, sizeof nul - 1);
    st_file f;
    ck_assert_int_eq(nmt_st_parse(&f, img, sizeof img, "nul"), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "control character"));
}
END_TEST

START_TEST(bad_tensors_refused)
{
    float x[8] = {0};
    static const struct {
        const char *json;
        size_t n_data;
        const char *want;
    } cases[] = {
        {"{\"t\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "dtype 'F16'; only F32"},
        {"{\"t\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype is not a string"},
        {"{\"t\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "lacks 'dtype'"},
        {"{\"t\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "lacks 'shape'"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "lacks 'data_offsets'"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4, "unknown field 'x'"},
        {"{\"t\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "'dtype' twice"},
        {"{\"t\":[1]}", 4, "not a JSON object"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "other than a size"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "at most 8"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", 4,
         "absurdly large"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "[begin, end]"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 4, "outside the data section"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4, "outside the data section"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "outside the data section"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
         "hold 8 bytes but shape [3] needs 12"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"u\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "overlap"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"u\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, "bytes 4 to 8"},
        {"{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "bytes 4 to 8"},
        {"{}", 4, "no tensors"},
        {T1 ",\"t\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}", 4, "'t' appears twice"},
        {"{\"__metadata__\":[]}", 0, "__metadata__ is not a JSON object"},
        {"{\"__metadata__\":{\"a\":1}}", 0, "value of 'a' is not a string"},
        {"{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0, "metadata key 'a' appears twice"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        expect_bad(cases[k].json, x, cases[k].n_data, cases[k].want);
}
END_TEST

START_TEST(bad_lengths_refused)
{
    make_tmpdir();
    st_file f;
    const char *path = tmp_path("short.safetensors");
    /* shorter than the length prefix */
    write_bytes(path, "\x10\0\0", 3);
    ck_assert_int_eq(nmt_st_read(&f, path), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "truncated: 3 bytes"));
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), path));
    /* a length beyond the end of the file */
    unsigned char beyond[8 + 10] = {100, 0, 0, 0, 0, 0, 0, 0};
    memcpy(beyond + 8, "{\"a\":\"b\"} ", 10);
    write_bytes(path, beyond, sizeof beyond);
    ck_assert_int_eq(nmt_st_read(&f, path), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "header length 100 is beyond the end of the file (18 bytes)"));
    /* an absurd length is refused before anything is allocated */
    unsigned char absurd[16] = {0, 0, 0, 0, 0, 0, 0, 0x40, '{', '}'};
    write_bytes(path, absurd, sizeof absurd);
    ck_assert_int_eq(nmt_st_read(&f, path), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "is absurd"));
    /* empty and missing files, a directory */
    write_bytes(path, "", 0);
    ck_assert_int_eq(nmt_st_read(&f, path), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "truncated: 0 bytes"));
    ck_assert_int_eq(nmt_st_read(&f, tmp_path("missing.safetensors")), NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "No such file"));
    ck_assert_int_eq(nmt_st_read(&f, tmpdir), NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "is a directory"));
    remove_tmpdir();
}
END_TEST

/* Every prefix of a valid file is refused cleanly (and the whole accepted). */
START_TEST(every_truncation_refused)
{
    float a[5] = {1, 2, 3, 4, 5};
    nmt_named_tensor t[2] = {{"a", 1, {3, 0}, a, NULL}, {"b", 2, {1, 2}, a + 3, NULL}};
    nmt_meta meta[1] = {{"k", "v"}};
    make_tmpdir();
    const char *path = tmp_path("t.safetensors");
    ck_assert_int_eq(nmt_st_write(path, t, 2, meta, 1, "crc32"), NMT_OK);
    size_t n;
    unsigned char *raw = read_bytes(path, &n);
    st_file f;
    for (size_t cut = 0; cut < n; cut++) {
        nmt_clear_error();
        ck_assert_int_eq(nmt_st_parse(&f, raw, cut, "cut"), NMT_ERR_FORMAT);
        ck_assert_str_ne(nmt_error_message(), "");
    }
    ck_assert_int_eq(nmt_st_parse(&f, raw, n, "whole"), NMT_OK);
    nmt_st_free(&f);
    free(raw);
    remove_tmpdir();
}
END_TEST

static void check_unchanged(const char *path, const unsigned char *before, size_t n_before)
{
    size_t n;
    unsigned char *now = read_bytes(path, &n);
    ck_assert_uint_eq(n, n_before);
    ck_assert_mem_eq(now, before, n);
    free(now);
}

static int dir_entries(const char *dir)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    return system(cmd) == 0 ? 1 : 0;
}

START_TEST(failed_writes_leave_old_file)
{
    make_tmpdir();
    float a[1000];
    for (int k = 0; k < 1000; k++)
        a[k] = (float)k;
    nmt_named_tensor small = {"a", 1, {10, 0}, a, NULL}, big = {"a", 1, {1000, 0}, a, NULL};
    /* a nonexistent folder, and a path below a regular file */
    const char *nodir = tmp_path("no/such/dir/m.safetensors");
    ck_assert_int_eq(nmt_st_write(nodir, &small, 1, NULL, 0, "crc32"), NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), nodir));
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), strerror(ENOENT)));
    const char *old = tmp_path("old.safetensors");
    ck_assert_int_eq(nmt_st_write(old, &small, 1, NULL, 0, "crc32"), NMT_OK);
    char below[512];
    snprintf(below, sizeof below, "%s/m.safetensors", old);
    ck_assert_int_eq(nmt_st_write(below, &small, 1, NULL, 0, NULL), NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), strerror(ENOTDIR)));

    /* a file-size limit makes the write fail half-way (EFBIG): the old file
     * stays byte-identical and no temporary file is left */
    size_t n_before;
    unsigned char *before = read_bytes(old, &n_before);
    struct rlimit saved, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim = saved;
    lim.rlim_cur = 1024;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = nmt_st_write(old, &big, 1, NULL, 0, "crc32");
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, prev);
    ck_assert_int_eq(rc, NMT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), old));
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), strerror(EFBIG)));
    check_unchanged(old, before, n_before);
    ck_assert_int_eq(dir_entries(tmpdir), 1);
    /* the same write without the limit replaces it */
    ck_assert_int_eq(nmt_st_write(old, &big, 1, NULL, 0, "crc32"), NMT_OK);
    st_file f;
    ck_assert_int_eq(nmt_st_read(&f, old), NMT_OK);
    ck_assert_int_eq(nmt_st_find(&f, "a")->shape[0], 1000);
    nmt_st_free(&f);
    free(before);
    remove_tmpdir();
}
END_TEST

START_TEST(bad_write_arguments)
{
    float a[2] = {0};
    nmt_named_tensor dup[2] = {{"a", 1, {1, 0}, a, NULL}, {"a", 1, {1, 0}, a + 1, NULL}};
    ck_assert_int_eq(nmt_st_write("unused.safetensors", dup, 2, NULL, 0, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "'a' appears twice"));
    nmt_named_tensor meta_name = {"__metadata__", 1, {1, 0}, a, NULL};
    ck_assert_int_eq(nmt_st_write("unused.safetensors", &meta_name, 1, NULL, 0, NULL), NMT_ERR_ARG);
    nmt_meta clash = {"crc32", "0"};
    ck_assert_int_eq(nmt_st_write("unused.safetensors", dup, 1, &clash, 1, "crc32"), NMT_ERR_ARG);
    ck_assert_int_eq(access("unused.safetensors", F_OK), -1);
}
END_TEST

/* The filter of nmt_st_read_some: every tensor but those named skip... */
static int keep_not_skip(const char *name, void *ctx)
{
    (void)ctx;
    return strncmp(name, "skip", 4) != 0;
}

/* Byte tensors: written last, read back as bytes; a float after an odd
 * number of bytes (unaligned) is refused on writing and on reading; skipped
 * tensors do not unalign the floats held after a byte tensor. */
START_TEST(byte_tensors)
{
    make_tmpdir();
    float a[3] = {1.0f, -2.5f, 3.0f}, sk[2] = {9, 9};
    static const unsigned char bytes[5] = {0, 0xff, 'x', '\n', 7};
    nmt_named_tensor t[3] = {
        {.name = "a", .ndim = 1, .shape = {3, 0}, .data = a},
        {.name = "skip", .ndim = 1, .shape = {2, 0}, .data = sk},
        {.name = "u", .ndim = 1, .shape = {5, 0}, .bytes = bytes},
    };
    const char *path = tmp_path("u.safetensors");
    ck_assert_int_eq(nmt_st_write(path, t, 3, NULL, 0, "crc32"), NMT_OK);
    size_t n;
    unsigned char *raw = read_bytes(path, &n);
    uint64_t hlen = 0;
    for (int k = 7; k >= 0; k--)
        hlen = (hlen << 8) | raw[k];
    ck_assert_uint_eq(n, 8 + hlen + 12 + 8 + 5);
    char *hdr = strndup((const char *)raw + 8, (size_t)hlen);
    ck_assert_ptr_nonnull(strstr(hdr, "\"u\":{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[20,25]}"));
    free(hdr);
    ck_assert_mem_eq(raw + n - 5, bytes, 5);
    st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), NMT_OK);
    const st_tensor *u = nmt_st_find(&f, "u");
    ck_assert_int_eq(u->dtype, ST_U8);
    ck_assert_int_eq(nmt_st_find(&f, "a")->dtype, ST_F32);
    ck_assert_uint_eq(u->end - u->begin, 5);
    ck_assert_mem_eq(f.data + u->begin, bytes, 5);
    ck_assert_uint_eq(f.data_crc, crc32(0, raw + 8 + hlen, (uInt)(n - 8 - hlen)));
    nmt_st_free(&f);
    free(raw);

    /* the header lists u first: held without "skip", a still lands on a
     * multiple of 4 after u's 5 bytes */
    static const char json[] =
        "{\"u\":{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[20,25]},"
        "\"skip\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}";
    unsigned char data[25];
    memcpy(data, a, 12);
    memcpy(data + 12, sk, 8);
    memcpy(data + 20, bytes, 5);
    unsigned char *img = image(json, data, sizeof data, &n);
    write_bytes(path, img, n);
    free(img);
    ck_assert_int_eq(nmt_st_read_some(&f, path, keep_not_skip, NULL), NMT_OK);
    const st_tensor *ta = nmt_st_find(&f, "a");
    ck_assert_ptr_null(nmt_st_find(&f, "skip"));
    ck_assert_uint_eq(ta->begin % 4, 0);
    ck_assert_uint_ge(ta->begin, 5);
    ck_assert_mem_eq(f.data + ta->begin, a, 12);
    ck_assert_mem_eq(f.data + nmt_st_find(&f, "u")->begin, bytes, 5);
    nmt_st_free(&f);

    /* floats after an odd number of bytes */
    nmt_named_tensor late[2] = {t[2], t[0]};
    ck_assert_int_eq(nmt_st_write(path, late, 2, NULL, 0, NULL), NMT_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "write byte tensors last"));
    static const char unaligned[] =
        "{\"u\":{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[0,5]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[5,17]}}";
    img = image(unaligned, data, 17, &n);
    ck_assert_int_eq(nmt_st_parse(&f, img, n, "mem"), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "F32 tensor 'a' begins at byte 5"));
    free(img);
    /* a U8 tensor's bytes must match its shape too; other dtypes are refused */
    static const char wrong_size[] =
        "{\"u\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,5]}}";
    img = image(wrong_size, data, 5, &n);
    ck_assert_int_eq(nmt_st_parse(&f, img, n, "mem"), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "hold 5 bytes but shape [4] needs 4"));
    free(img);
    static const char f16[] =
        "{\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}";
    img = image(f16, data, 4, &n);
    ck_assert_int_eq(nmt_st_parse(&f, img, n, "mem"), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "dtype 'F16'; only F32 (and U8)"));
    free(img);
    remove_tmpdir();
}
END_TEST

/* nmt_st_read_some holds only the tensors asked for, across the pieces it reads
 * in (1 MiB), with the same bytes and CRC as nmt_st_read; what it skips is not
 * found. */
START_TEST(read_some_holds_what_is_asked)
{
    make_tmpdir();
    enum { NA = 300000, NS = 200001, NB = 500000 }; /* a and b straddle piece boundaries */
    float *a = malloc(NA * sizeof *a), *sk = malloc(NS * sizeof *sk), *b = malloc(NB * sizeof *b);
    for (int k = 0; k < NA; k++)
        a[k] = (float)k * 0.5f;
    for (int k = 0; k < NS; k++)
        sk[k] = -1;
    for (int k = 0; k < NB; k++)
        b[k] = (float)k - 7;
    nmt_named_tensor t[4] = {
        {"a", 1, {NA, 0}, a, NULL},
        {"skip1", 1, {NS, 0}, sk, NULL},
        {"b", 1, {NB, 0}, b, NULL},
        {"skip2", 0, {0, 0}, sk, NULL},
    };
    const char *path = tmp_path("some.safetensors");
    ck_assert_int_eq(nmt_st_write(path, t, 4, NULL, 0, "crc32"), NMT_OK);
    st_file all, some;
    ck_assert_int_eq(nmt_st_read(&all, path), NMT_OK);
    ck_assert_int_eq(nmt_st_read_some(&some, path, keep_not_skip, NULL), NMT_OK);
    ck_assert_uint_eq(some.data_crc, all.data_crc);
    ck_assert_uint_eq(some.data_size, all.data_size);
    ck_assert_int_eq(some.n_tensors, 4);
    ck_assert_ptr_nonnull(nmt_st_find(&all, "skip1"));
    ck_assert_ptr_null(nmt_st_find(&some, "skip1"));
    ck_assert_ptr_null(nmt_st_find(&some, "skip2"));
    const st_tensor *sa = nmt_st_find(&some, "a"), *sb = nmt_st_find(&some, "b");
    ck_assert_ptr_nonnull(sa);
    ck_assert_ptr_nonnull(sb);
    ck_assert_uint_eq(sa->end - sa->begin, sizeof(float) * NA);
    ck_assert_uint_eq(sb->end - sb->begin, sizeof(float) * NB);
    ck_assert_mem_eq(some.data + sa->begin, a, sizeof(float) * NA);
    ck_assert_mem_eq(some.data + sb->begin, b, sizeof(float) * NB);
    /* held compactly: together they fill what was allocated for them */
    ck_assert_uint_eq((sa->begin < sb->begin ? sb->end : sa->end), sizeof(float) * (NA + NB));
    nmt_st_free(&all);
    nmt_st_free(&some);
    free(a);
    free(sk);
    free(b);
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("container");
    /* read_some's file is 4 MB */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_trip_and_padding);
    tcase_add_test(tc, json_escapes_decode);
    tcase_add_test(tc, malformed_json_refused);
    tcase_add_test(tc, bad_tensors_refused);
    tcase_add_test(tc, bad_lengths_refused);
    tcase_add_test(tc, every_truncation_refused);
    tcase_add_test(tc, failed_writes_leave_old_file);
    tcase_add_test(tc, bad_write_arguments);
    tcase_add_test(tc, byte_tensors);
    tcase_add_test(tc, read_some_holds_what_is_asked);
    suite_add_tcase(s, tc);
    return s;
}
