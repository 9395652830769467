/* Damaged SentencePiece models (src/data/subwords.cc) and damaged "subwords"
 * tensors in model files (src/io/modelfile.c), the loaders' regression test
 * without libFuzzer: text that is no model and every cut through its
 * specials; thousands of seeded damaged normalization tables, and of damaged
 * "subwords" tensors with valid CRCs, each refused naming the file or, if it
 * loads, safe to encode and decode with (ASan and valgrind watch). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "nmt/error.h"
#include "nmt/modelfile.h"
#include "nmt/subwords.h"
#include "nmt/text.h"
#include "nmt/units.h"
#include "test_common.h"
#include "test_files.h"
#include "test_subwords.h"

/* A protobuf varint at p: its length, and its value in *v. */
static size_t varint_at(const unsigned char *p, uint64_t *v)
{
    size_t n = 0;
    *v = 0;
    do
        *v |= (uint64_t)(p[n] & 0x7f) << (7 * n);
    while (p[n++] & 0x80);
    return n;
}

/* ---- damaged SentencePiece models ---- */

/* Where a NormalizerSpec's precompiled charsmap is in a serialized model:
 * field 3 of the model, field 2 inside it. */
static void find_charsmap(const unsigned char *b, size_t n, size_t *begin, size_t *end)
{
    size_t at = 0;
    while (at < n) {
        uint64_t key, len = 0;
        at += varint_at(b + at, &key);
        ck_assert_uint_eq(key & 7, 2);
        at += varint_at(b + at, &len);
        if (key >> 3 == 3) {
            size_t in = at;
            while (in < at + len) {
                uint64_t k2, l2 = 0;
                in += varint_at(b + in, &k2);
                if ((k2 & 7) == 0) {
                    in += varint_at(b + in, &l2);
                    continue;
                }
                in += varint_at(b + in, &l2);
                if (k2 >> 3 == 2) {
                    *begin = in;
                    *end = in + l2;
                    return;
                }
                in += l2;
            }
        }
        at += len;
    }
    ck_abort_msg("no charsmap");
}

/* SentencePiece walks the normalization table with the offsets in it; a
 * damaged table must be refused before it does. Thousands of damaged
 * tables, seeded; each either refused or, if it loads, safe to use. */
START_TEST(damaged_normalization_table)
{
    make_tmpdir();
    size_t n, begin = 0, end = 0;
    unsigned char *good = spm_train("--pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3", &n);
    remove_tmpdir();
    find_charsmap(good, n, &begin, &end);
    ck_assert_uint_gt(end - begin, 10000);
    unsigned char *bad = malloc(n);
    uint64_t s = 0x2545f4914f6cdd1dULL;
    int loaded = 0, refused = 0;
    int cases = getenv("NMT_VALGRIND") ? 40 : 1500;
    const char *line = "Zwei ｆｕｌｌ Männer ½ spielen\t Fußball… ﬁ ㈱ Ⅻ";
    for (int k = 0; k < cases; k++) {
        memcpy(bad, good, n);
        for (int f = 0; f < 1 + k % 4; f++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            /* mostly the trie's first units, which every lookup reads */
            size_t span = k % 2 ? end - begin : 4096;
            size_t at = begin + (size_t)(s % span);
            bad[at] = k % 3 ? (unsigned char)(bad[at] ^ (1u << (s >> 61))) : (unsigned char)(s >> 40);
        }
        nmt_subwords *sw = NULL;
        int rc = nmt_subwords_load(&sw, bad, n, "damaged.model");
        if (rc) {
            ck_assert_int_eq(rc, NMT_ERR_FORMAT);
            ck_assert_ptr_nonnull(strstr(nmt_error_message(), "damaged.model: "));
            refused++;
            continue;
        }
        loaded++;
        char *back = round_trip(sw, line);
        free(back);
        nmt_subwords_free(sw);
    }
    ck_assert_int_gt(refused, cases / 10);
    ck_assert_int_gt(loaded, 0);
    /* The root unit's offset sent to 2^29 units: SentencePiece would read
     * 2 GB past the table at the first character (a crash; ASan cannot see
     * it, the library is not instrumented). 4 bytes of length come first. */
    memcpy(bad, good, n);
    uint32_t root = (0x1fffffu << 10) | (1u << 9);
    for (int k = 0; k < 4; k++)
        bad[begin + 4 + (size_t)k] = (unsigned char)(root >> (8 * k));
    nmt_subwords *sw = NULL;
    ck_assert_int_eq(nmt_subwords_load(&sw, bad, n, "far.model"), NMT_ERR_FORMAT);
    ck_assert_str_eq(nmt_error_message(),
                     "far.model: the SentencePiece model's normalization table is damaged");
    free(bad);
    free(good);
}
END_TEST

START_TEST(not_a_model_refused)
{
    nmt_subwords *sw = learn(PIECES), *bad = NULL;
    size_t n;
    const unsigned char *bytes = nmt_subwords_bytes(sw, &n);
    static const char text[] = "just some text, not a model";
    ck_assert_int_eq(nmt_subwords_load(&bad, text, sizeof text - 1, "text"), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "text: not a SentencePiece model"));
    ck_assert_int_eq(nmt_subwords_load(&bad, bytes, 0, "empty"), NMT_ERR_FORMAT);
    /* every cut through the four specials, the model's first four fields */
    size_t specials = 0;
    for (int k = 0; k < 4; k++) {
        uint64_t key, len;
        specials += varint_at(bytes + specials, &key);
        specials += varint_at(bytes + specials, &len);
        specials += len;
    }
    for (size_t cut = 1; cut < specials; cut++) {
        int rc = nmt_subwords_load(&bad, bytes, cut, "cut");
        ck_assert_msg(rc == NMT_ERR_FORMAT, "a model cut to %zu bytes loaded", cut);
        ck_assert_ptr_null(bad);
    }
    /* further cuts: refused, or a smaller model that is whole up to there */
    for (size_t cut = specials; cut < n; cut += 97) {
        int rc = nmt_subwords_load(&bad, bytes, cut, "cut");
        ck_assert(rc == NMT_OK || rc == NMT_ERR_FORMAT);
        nmt_subwords_free(bad);
    }
    nmt_subwords_free(sw);
}
END_TEST

/* ---- the model file's "subwords" tensor, damaged ---- */

/* The first place of needle in hay, or NULL (memmem is a GNU extension). */
static unsigned char *find_bytes(unsigned char *hay, size_t n, const char *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(hay + i, needle, k))
            return hay + i;
    return NULL;
}

/* Where the data section and the "subwords" tensor are in a file image. */
static void locate_subwords(const unsigned char *img, size_t n, size_t *data, size_t *begin,
                            size_t *end)
{
    size_t header = 0;
    for (int k = 7; k >= 0; k--)
        header = (header << 8) | img[k];
    *data = 8 + header;
    char *json = strndup((const char *)img + 8, header);
    const char *at = strstr(json, "\"subwords\":");
    ck_assert_ptr_nonnull(at);
    ck_assert_ptr_nonnull(strstr(at, "\"U8\""));
    ck_assert_int_eq(sscanf(strstr(at, "data_offsets") + 14, "[%zu,%zu]", begin, end), 2);
    ck_assert_uint_eq(*data + *end, n); /* the last tensor */
    free(json);
}

/* The crc32 of the data section, written over the header's old one. */
static void fix_crc(unsigned char *img, size_t n, size_t data)
{
    uint32_t crc = (uint32_t)crc32(0, img + data, (uInt)(n - data));
    unsigned char *key = find_bytes(img, data, "\"crc32\":\"", 9);
    ck_assert_ptr_nonnull(key);
    char hex[9];
    snprintf(hex, sizeof hex, "%08x", crc);
    memcpy(key + 9, hex, 8);
}

/* A file image of a model with subwords, and where its parts are. */
typedef struct image {
    unsigned char *bytes;
    size_t n, data, begin, end;
} image;

static image model_image(void)
{
    make_tmpdir();
    nmt_model *m = subword_model(learn(PIECES), 0);
    const char *path = tmp_path("m.safetensors");
    ck_assert_int_eq(nmt_model_save(m, path, NULL, 0, NULL, 0), NMT_OK);
    nmt_model_free(m);
    image im;
    im.bytes = read_bytes(path, &im.n);
    remove_tmpdir();
    locate_subwords(im.bytes, im.n, &im.data, &im.begin, &im.end);
    return im;
}

/* Loads a changed image with its crc fixed: OK, or refused naming the
 * file; never a crash (ASan and valgrind watch). A model that loads must
 * still encode and decode. */
static int load_changed(unsigned char *img, size_t n, size_t data)
{
    fix_crc(img, n, data);
    nmt_model *m = NULL;
    int rc = nmt_model_load_memory(&m, img, n, "changed.safetensors", NULL);
    if (rc == NMT_OK) {
        nmt_tokens t = {0};
        const char *line = "Zwei Männer ｆｕｌｌ ½ spielen\t Fußball…";
        ck_assert_int_eq(nmt_units_split(m, line, strlen(line), &t), NMT_OK);
        char *text = nmt_units_join(m, (const char *const *)t.tok, t.n);
        free(text);
        nmt_tokens_free(&t);
        nmt_model_free(m);
    } else {
        ck_assert_int_eq(rc, NMT_ERR_FORMAT);
        ck_assert_msg(!strncmp(nmt_error_message(), "changed.safetensors: ", 21), "%s",
                      nmt_error_message());
    }
    return rc;
}

START_TEST(damaged_subwords_refused)
{
    image im = model_image();
    size_t sw_n = im.end - im.begin;
    unsigned char *img = malloc(im.n);
    /* garbage in place of the model */
    memcpy(img, im.bytes, im.n);
    memset(img + im.data + im.begin, 0xff, sw_n);
    ck_assert_int_eq(load_changed(img, im.n, im.data), NMT_ERR_FORMAT);
    ck_assert_msg(strstr(nmt_error_message(), "changed.safetensors: tensor 'subwords': not a "
                                               "SentencePiece model"), "%s", nmt_error_message());
    /* one piece renamed ("▁a..." to "▁Q..."): the vocabularies no longer agree */
    memcpy(img, im.bytes, im.n);
    unsigned char *at = find_bytes(img + im.data + im.begin, sw_n, "\xe2\x96\x81" "a", 4);
    ck_assert_ptr_nonnull(at);
    at[3] = 'Q';
    int rc = load_changed(img, im.n, im.data);
    ck_assert_int_eq(rc, NMT_ERR_FORMAT);
    ck_assert_msg(strstr(nmt_error_message(), "(they must be the same)") ||
                  strstr(nmt_error_message(), "already defined"), "%s", nmt_error_message());
    /* a model whose crc does not match is refused before SentencePiece sees it */
    memcpy(img, im.bytes, im.n);
    img[im.data + im.begin + 10] ^= 0x20;
    nmt_model *m = NULL;
    ck_assert_int_eq(nmt_model_load_memory(&m, img, im.n, "flipped", NULL), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "crc32 mismatch"));
    free(img);
    free(im.bytes);
}
END_TEST

/* The loader's regression test: thousands of damaged subword models, each
 * with a valid crc so that the damage reaches SentencePiece. Seeded, so
 * the same cases run every time. */
START_TEST(loader_survives_damage)
{
    image im = model_image();
    size_t sw_n = im.end - im.begin;
    unsigned char *img = malloc(im.n);
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int loaded = 0, refused = 0;
    int cases = getenv("NMT_VALGRIND") ? 60 : 1500;
    for (int k = 0; k < cases; k++) {
        memcpy(img, im.bytes, im.n);
        int flips = 1 + k % 8;
        for (int f = 0; f < flips; f++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            size_t at = im.data + im.begin + (size_t)(s % sw_n);
            img[at] = k % 3 ? (unsigned char)(img[at] ^ (1u << (s >> 60) % 8)) : (unsigned char)(s >> 32);
        }
        if (load_changed(img, im.n, im.data) == NMT_OK)
            loaded++;
        else
            refused++;
    }
    /* most damage to a piece is caught; a damaged score is not damage */
    ck_assert_int_gt(refused, cases / 4);
    ck_assert_int_gt(loaded, 0);
    free(img);
    free(im.bytes);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("subwords-damaged");
    TCase *tc = tcase_create("SentencePiece model");
    tcase_add_test(tc, damaged_normalization_table);
    tcase_add_test(tc, not_a_model_refused);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("model file");
    tcase_add_test(tc, damaged_subwords_refused);
    tcase_add_test(tc, loader_survives_damage);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}
