/* The SentencePiece shim (src/subwords.cc) when C++ throws: every entry
 * point is run with each of its allocations failing in turn
 * (tests/fault_new.cc), and the failure thrown as std::bad_alloc, as another
 * std::exception and as something that is no std::exception. Each run must
 * return an error with its message, never reach std::terminate, and (under
 * the sanitizers) leak nothing and close no file twice; the run after it must
 * work as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_new.h"
#include "nmt/error.h"
#include "nmt/subwords.h"
#include "nmt/text.h"
#include "test_common.h"
#include "test_files.h"

static const char *const kinds[] = {"std::bad_alloc", "std::length_error", "an int"};

/* A few sentences, over and over: enough for a small model, learned fast. */
static const char *const corpus[] = {
    "ein Hund läuft über die Wiese .", "eine Katze schläft auf dem Sofa .",
    "zwei Hunde spielen im Park .", "ein Mann liest ein Buch im Garten .",
    "die Kinder laufen zur Schule .", "eine Frau trinkt Kaffee im Café .",
};
enum { CORPUS_LINES = 6, PIECES = 40 };

static int next_line(void *ctx, const char **line, size_t *len)
{
    int *at = ctx;
    if (*at == 20 * CORPUS_LINES)
        return 0;
    *line = corpus[(*at)++ % CORPUS_LINES];
    *len = strlen(*line);
    return 1;
}

static nmt_subwords *learn(void)
{
    int at = 0;
    nmt_subwords *sw = NULL;
    ck_assert_msg(nmt_subwords_learn(&sw, PIECES, next_line, &at) == NMT_OK, "%s",
                  nmt_error_message());
    return sw;
}

/* One call of an entry point; returns its code (0 or NMT_ERR_*, or
 * NO_CODE for a failure of a call that returns NULL), and frees what it
 * made. */
enum { NO_CODE = -1000 };
typedef int (*attempt_fn)(void *ctx);

/* Runs `attempt` with allocation 0, 1, 2, ... failing as `kind`, until a run
 * makes no allocation fail (and must succeed). Each failed run must return
 * an error whose message says what was thrown (and holds `name` when given).
 * Returns the number of allocations of a run that could be made to fail. */
static long sweep(attempt_fn attempt, void *ctx, int kind, const char *name)
{
    for (long n = 0;; n++) {
        nmt_clear_error();
        fault_new_arm(n, kind);
        int rc = attempt(ctx);
        int fired = fault_new_disarm();
        if (!fired) {
            ck_assert_msg(rc == NMT_OK, "%s: with no failure: %s", kinds[kind], nmt_error_message());
            return n;
        }
        const char *msg = nmt_error_message();
        ck_assert_msg(rc < 0, "%s thrown at allocation %ld: no error", kinds[kind], n);
        switch (kind) {
        case FAULT_BAD_ALLOC:
            /* darts-clone, under SentencePiece, rethrows it as its own
             * std::exception ("failed to resize pool: std::bad_alloc") */
            ck_assert_msg(((rc == NMT_ERR_NOMEM || rc == NO_CODE) && strstr(msg, "out of memory")) ||
                          strstr(msg, "std::bad_alloc"),
                          "bad_alloc at allocation %ld: %d '%s'", n, rc, msg);
            break;
        case FAULT_STD_ERROR:
            ck_assert_msg(rc != NMT_ERR_NOMEM && strstr(msg, "injected by tests/fault_new.cc"),
                          "length_error at allocation %ld: %d '%s'", n, rc, msg);
            break;
        default:
            ck_assert_msg(rc != NMT_ERR_NOMEM && strstr(msg, "not a std::exception"),
                          "int at allocation %ld: %d '%s'", n, rc, msg);
        }
        if (name)
            ck_assert_msg(strstr(msg, name), "'%s' does not name %s", msg, name);
    }
}

/* ---- loading ----------------------------------------------------------------- */

static int load_file(void *path)
{
    nmt_subwords *sw = (nmt_subwords *)1;
    int rc = nmt_subwords_load_file(&sw, path);
    ck_assert(rc == NMT_OK ? sw != NULL : sw == NULL);
    nmt_subwords_free(sw);
    return rc;
}

typedef struct bytes {
    const unsigned char *p;
    size_t n;
} bytes;

static int load_bytes(void *ctx)
{
    const bytes *b = ctx;
    nmt_subwords *sw = (nmt_subwords *)1;
    int rc = nmt_subwords_load(&sw, b->p, b->n, "model.spm");
    ck_assert(rc == NMT_OK ? sw != NULL : sw == NULL);
    nmt_subwords_free(sw);
    return rc;
}

/* The file is closed once whatever fails, SentencePiece's loading and the
 * checks after it included (the model made so far is freed). */
START_TEST(loading_a_file_survives_every_exception)
{
    nmt_subwords *sw = learn();
    size_t n;
    const unsigned char *b = nmt_subwords_bytes(sw, &n);
    make_tmpdir();
    const char *path = write_file("model.spm", b, n);
    char copy[256];
    snprintf(copy, sizeof copy, "%s", path);
    for (int kind = 0; kind < 3; kind++)
        ck_assert_int_gt(sweep(load_file, copy, kind, copy), 10);
    remove_tmpdir();
    nmt_subwords_free(sw);
}
END_TEST

START_TEST(loading_bytes_survives_every_exception)
{
    nmt_subwords *sw = learn();
    bytes b;
    b.p = nmt_subwords_bytes(sw, &b.n);
    for (int kind = 0; kind < 3; kind++)
        ck_assert_int_gt(sweep(load_bytes, &b, kind, "model.spm"), 10);
    nmt_subwords_free(sw);
}
END_TEST

/* Learning, up to the allocations of its worker threads (an exception there
 * is SentencePiece's to stop, and it does not). protobuf makes its default
 * messages once, at their first use, and cannot do it again after an
 * exception: a first learning run, unharmed, makes them. */
static int learn_attempt(void *ctx)
{
    (void)ctx;
    int at = 0;
    nmt_subwords *sw = (nmt_subwords *)1;
    int rc = nmt_subwords_learn(&sw, PIECES, next_line, &at);
    ck_assert(rc == NMT_OK ? sw != NULL : sw == NULL);
    nmt_subwords_free(sw);
    return rc;
}

START_TEST(learning_survives_early_exceptions)
{
    ck_assert_int_eq(learn_attempt(NULL), NMT_OK);
    for (int kind = 0; kind < 3; kind++) {
        int refused = 0;
        for (long n = 0; n < 40; n++) {
            nmt_clear_error();
            fault_new_arm(n, kind);
            int rc = learn_attempt(NULL);
            ck_assert_msg(fault_new_disarm(), "allocation %ld was not made", n);
            /* SentencePiece turns some failures into its own refusals
             * ("cannot parse "1.0" as int"), and survives others */
            ck_assert_msg(rc == NMT_OK || ((rc == NMT_ERR_NOMEM || rc == NMT_ERR_ARG) &&
                                           *nmt_error_message()),
                          "%s at allocation %ld: %d '%s'", kinds[kind], n, rc,
                          nmt_error_message());
            refused += rc != NMT_OK;
        }
        ck_assert_int_gt(refused, 10);
    }
    ck_assert_int_eq(learn_attempt(NULL), NMT_OK);
}
END_TEST

/* ---- encoding and decoding ----------------------------------------------------- */

typedef struct text_case {
    const nmt_subwords *sw;
    const char *text;
    float alpha;
    nmt_ids ids;     /* reused from call to call, as a caller does */
    nmt_tokens toks; /* the same */
    char *decoded;
} text_case;

static int encode_ids(void *ctx)
{
    text_case *t = ctx;
    return nmt_subwords_encode_ids(t->sw, t->text, strlen(t->text), t->alpha, &t->ids);
}

static int encode(void *ctx)
{
    text_case *t = ctx;
    return nmt_subwords_encode(t->sw, t->text, strlen(t->text), &t->toks);
}

static int decode(void *ctx)
{
    text_case *t = ctx;
    free(t->decoded);
    t->decoded = nmt_subwords_decode(t->sw, (const char *const *)t->toks.tok, t->toks.n);
    return t->decoded ? NMT_OK : NO_CODE;
}

START_TEST(encoding_survives_every_exception)
{
    nmt_subwords *sw = learn();
    text_case t = {.sw = sw, .text = "zwei Katzen laufen über die Wiese im Park ."};
    ck_assert_int_eq(encode_ids(&t), NMT_OK);
    nmt_ids want = {0};
    ck_assert_int_eq(nmt_subwords_encode_ids(sw, t.text, strlen(t.text), 0, &want), NMT_OK);
    for (int kind = 0; kind < 3; kind++) {
        sweep(encode_ids, &t, kind, NULL);
        /* the ids after the failures are the ones before */
        ck_assert_uint_eq(t.ids.n, want.n);
        ck_assert_mem_eq(t.ids.id, want.id, want.n * sizeof *want.id);
    }
    t.alpha = 0.5f; /* sampling takes another way through SentencePiece */
    for (int kind = 0; kind < 3; kind++)
        sweep(encode_ids, &t, kind, NULL);
    for (int kind = 0; kind < 3; kind++)
        ck_assert_int_gt(sweep(encode, &t, kind, NULL), 0);
    ck_assert_uint_eq(t.toks.n, want.n);
    nmt_ids_free(&t.ids);
    nmt_ids_free(&want);
    nmt_tokens_free(&t.toks);
    nmt_subwords_free(sw);
}
END_TEST

START_TEST(decoding_survives_every_exception)
{
    nmt_subwords *sw = learn();
    text_case t = {.sw = sw, .text = "zwei Katzen laufen über die Wiese im Park ."};
    ck_assert_int_eq(encode(&t), NMT_OK);
    for (int kind = 0; kind < 3; kind++) {
        ck_assert_int_gt(sweep(decode, &t, kind, NULL), 0);
        ck_assert_str_eq(t.decoded, t.text);
    }
    free(t.decoded);
    nmt_tokens_free(&t.toks);
    nmt_subwords_free(sw);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("subwords-faults");
    TCase *tc = tcase_create("faults");
    tcase_add_test(tc, loading_a_file_survives_every_exception);
    tcase_add_test(tc, loading_bytes_survives_every_exception);
    tcase_add_test(tc, learning_survives_early_exceptions);
    tcase_add_test(tc, encoding_survives_every_exception);
    tcase_add_test(tc, decoding_survives_every_exception);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
