#include <stdio.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/vocab.h"
#include "test_common.h"

static int32_t id_of(const nmt_vocab *v, const char *tok)
{
    return nmt_vocab_id(v, tok, strlen(tok));
}

START_TEST(from_tokens_round_trips)
{
    const char *toks[] = {"<pad>", "<unk>", "<s>", "</s>", "der", "Mann", "über", "."};
    nmt_vocab *v;
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, toks, 8), NMT_OK);
    ck_assert_int_eq(nmt_vocab_size(v), 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_str_eq(nmt_vocab_token(v, i), toks[i]);
        ck_assert_int_eq(id_of(v, toks[i]), i);
    }
    ck_assert_int_eq(id_of(v, "Frau"), NMT_UNK);
    ck_assert_int_eq(id_of(v, "de"), NMT_UNK);    /* a prefix is not a match */
    ck_assert_int_eq(id_of(v, "derr"), NMT_UNK);
    ck_assert_int_eq(nmt_vocab_id(v, "derxyz", 3), 4); /* only len bytes count */
    ck_assert_ptr_null(nmt_vocab_token(v, 8));
    ck_assert_ptr_null(nmt_vocab_token(v, -1));
    nmt_vocab_free(v);
}
END_TEST

START_TEST(from_tokens_refuses_bad_lists)
{
    nmt_vocab *v = (nmt_vocab *)1;
    const char *no_specials[] = {"a", "b", "c", "d", "e"};
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, no_specials, 5), NMT_ERR_FORMAT);
    ck_assert_ptr_null(v);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "<pad>"));

    const char *dup[] = {"<pad>", "<unk>", "<s>", "</s>", "a", "b", "a"};
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, dup, 7), NMT_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "'a' appears twice"));

    const char *empty[] = {"<pad>", "<unk>", "<s>", "</s>", ""};
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, empty, 5), NMT_ERR_FORMAT);
    const char *newline[] = {"<pad>", "<unk>", "<s>", "</s>", "a\nb"};
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, newline, 5), NMT_ERR_FORMAT);
    ck_assert_int_eq(nmt_vocab_from_tokens(&v, dup, 3), NMT_ERR_FORMAT);
}
END_TEST

/* Counts "a a a b b c c d" style input given as one space-separated string. */
static nmt_vocab_counter *count_words(const char *text, int32_t *prov, int *n_prov)
{
    nmt_vocab_counter *c;
    ck_assert_int_eq(nmt_vocab_counter_new(&c), NMT_OK);
    int n = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int32_t id = nmt_vocab_counter_add(c, p, len);
        ck_assert_int_ge(id, 0);
        if (prov)
            prov[n] = id;
        n++;
        p += len + (e != NULL);
    }
    if (n_prov)
        *n_prov = n;
    return c;
}

START_TEST(order_is_count_then_bytes)
{
    /* counts: the 4, a 2, b 2, ab 2, B 2, z 1, é 1; ties by bytes: "B" < "a" <
     * "ab" < "b" (memcmp, a prefix first), and "z" < "é" (0x7a < 0xc3). */
    int32_t prov[32];
    int n;
    nmt_vocab_counter *c = count_words("é b the a ab z the B b the a ab B the", prov, &n);
    ck_assert_uint_eq(nmt_vocab_counter_types(c), 7);
    ck_assert_int_eq(prov[0], 0);          /* provisional ids by first appearance */
    ck_assert_int_eq(prov[2], 2);
    ck_assert_int_eq(prov[6], 2);          /* "the" again */
    nmt_vocab *v;
    int32_t *remap;
    ck_assert_int_eq(nmt_vocab_counter_build(c, 1, 0, &v, &remap), NMT_OK);
    const char *want[] = {"<pad>", "<unk>", "<s>", "</s>", "the", "B", "a", "ab", "b", "z", "é"};
    ck_assert_int_eq(nmt_vocab_size(v), 11);
    for (int i = 0; i < 11; i++)
        ck_assert_str_eq(nmt_vocab_token(v, i), want[i]);
    /* remap agrees with the vocabulary for every provisional id */
    for (int i = 0; i < n; i++) {
        const char *tok = nmt_vocab_token(v, remap[prov[i]]);
        ck_assert_ptr_nonnull(tok);
        ck_assert_int_eq(remap[prov[i]], id_of(v, tok));
    }
    free(remap);
    nmt_vocab_free(v);

    /* min_count 2 drops z and é; max_vocab 6 keeps the, B. */
    ck_assert_int_eq(nmt_vocab_counter_build(c, 2, 0, &v, &remap), NMT_OK);
    ck_assert_int_eq(nmt_vocab_size(v), 9);
    ck_assert_int_eq(remap[0], NMT_UNK); /* é */
    ck_assert_int_eq(id_of(v, "z"), NMT_UNK);
    free(remap);
    nmt_vocab_free(v);
    ck_assert_int_eq(nmt_vocab_counter_build(c, 2, 6, &v, NULL), NMT_OK);
    ck_assert_int_eq(nmt_vocab_size(v), 6);
    ck_assert_str_eq(nmt_vocab_token(v, 5), "B");
    ck_assert_int_eq(id_of(v, "a"), NMT_UNK);
    nmt_vocab_free(v);

    ck_assert_int_eq(nmt_vocab_counter_build(c, 1, 3, &v, NULL), NMT_ERR_ARG);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(nmt_vocab_counter_build(c, 1, 4, &v, NULL), NMT_OK);
    ck_assert_int_eq(nmt_vocab_size(v), 4);
    nmt_vocab_free(v);
    nmt_vocab_counter_free(c);
}
END_TEST

START_TEST(order_does_not_depend_on_input_order)
{
    nmt_vocab_counter *a = count_words("x y z y x w v w z", NULL, NULL);
    nmt_vocab_counter *b = count_words("w z v x y w x y z", NULL, NULL);
    nmt_vocab *va, *vb;
    ck_assert_int_eq(nmt_vocab_counter_build(a, 1, 0, &va, NULL), NMT_OK);
    ck_assert_int_eq(nmt_vocab_counter_build(b, 1, 0, &vb, NULL), NMT_OK);
    ck_assert_int_eq(nmt_vocab_size(va), nmt_vocab_size(vb));
    for (int i = 0; i < nmt_vocab_size(va); i++)
        ck_assert_str_eq(nmt_vocab_token(va, i), nmt_vocab_token(vb, i));
    ck_assert_str_eq(nmt_vocab_token(va, 8), "v"); /* the one seen once, last */
    nmt_vocab_free(va);
    nmt_vocab_free(vb);
    nmt_vocab_counter_free(a);
    nmt_vocab_counter_free(b);
}
END_TEST

START_TEST(specials_in_text_map_to_specials)
{
    nmt_vocab_counter *c = count_words("<unk> a <unk> </s> <s> <pad>", NULL, NULL);
    nmt_vocab *v;
    int32_t *remap;
    ck_assert_int_eq(nmt_vocab_counter_build(c, 1, 0, &v, &remap), NMT_OK);
    ck_assert_int_eq(nmt_vocab_size(v), 5);
    ck_assert_int_eq(remap[0], NMT_UNK);
    ck_assert_int_eq(remap[1], 4);
    ck_assert_int_eq(remap[2], NMT_EOS);
    ck_assert_int_eq(remap[3], NMT_BOS);
    ck_assert_int_eq(remap[4], NMT_PAD);
    free(remap);
    nmt_vocab_free(v);
    nmt_vocab_counter_free(c);
}
END_TEST

START_TEST(many_types_survive_table_growth)
{
    enum { N = 200000 };
    nmt_vocab_counter *c;
    ck_assert_int_eq(nmt_vocab_counter_new(&c), NMT_OK);
    char buf[32];
    /* token k appears (k % 3) + 1 times */
    for (int rep = 0; rep < 3; rep++)
        for (int k = 0; k < N; k++)
            if (k % 3 >= rep) {
                int len = snprintf(buf, sizeof buf, "w%d", k);
                ck_assert_int_eq(nmt_vocab_counter_add(c, buf, (size_t)len), k);
            }
    ck_assert_uint_eq(nmt_vocab_counter_types(c), N);
    nmt_vocab *v;
    ck_assert_int_eq(nmt_vocab_counter_build(c, 3, 0, &v, NULL), NMT_OK);
    ck_assert_int_eq(nmt_vocab_size(v), NMT_N_SPECIAL + N / 3 /* k = 2, 5, .. < N */);
    for (int k = 0; k < N; k++) {
        int len = snprintf(buf, sizeof buf, "w%d", k);
        int32_t id = nmt_vocab_id(v, buf, (size_t)len);
        if (k % 3 == 2)
            ck_assert_str_eq(nmt_vocab_token(v, id), buf);
        else
            ck_assert_int_eq(id, NMT_UNK);
    }
    nmt_vocab_free(v);
    nmt_vocab_counter_free(c);
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("vocab");
    TCase *tc = tcase_create("vocab");
    tcase_add_test(tc, from_tokens_round_trips);
    tcase_add_test(tc, from_tokens_refuses_bad_lists);
    tcase_add_test(tc, order_is_count_then_bytes);
    tcase_add_test(tc, order_does_not_depend_on_input_order);
    tcase_add_test(tc, specials_in_text_map_to_specials);
    tcase_add_test(tc, many_types_survive_table_growth);
    tcase_set_timeout(tc, 60); /* slow under sanitizers on a busy machine */
    suite_add_tcase(s, tc);
    return s;
}
