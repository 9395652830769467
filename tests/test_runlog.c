/* log.tsv, the one module of its format: nmt train's own log (written by
 * the same nmt_log_header/nmt_log_row the trainer uses) read back, a run's
 * log opened anew and cut back on resume, other programs' logs with a
 * subset of the columns, and refusals that name the file, line and column. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>

#include "nmt/error.h"
#include "nmt/runlog.h"
#include "test_common.h"
#include "test_files.h"

START_TEST(reads_nmt_train_logs)
{
    make_tmpdir();
    char text[2048];
    size_t n = (size_t)nmt_log_header(text, sizeof text);
    nmt_train_status st = {.step = 100, .epoch = 1, .lr = 1e-3, .loss = 4.5, .ppl = exp(4.5),
                           .grad_norm = 2, .tok_per_s = 900, .elapsed_s = 12.5};
    n += (size_t)nmt_log_row(text + n, sizeof text - n, &st);
    st.step = 200;
    st.loss = 3.25;
    st.elapsed_s = 25;
    st.has_valid = 1;
    st.valid_ppl = 30.5;
    st.valid_bleu = 12.25;
    n += (size_t)nmt_log_row(text + n, sizeof text - n, &st);
    st.average_of = 4; /* the validation of an average of snapshots */
    st.valid_ppl = 28;
    st.elapsed_s = 26;
    n += (size_t)nmt_log_row(text + n, sizeof text - n, &st);
    nmt_runlog log;
    ck_assert_msg(nmt_runlog_read(&log, write_file("log.tsv", text, n)) == NMT_OK, "%s",
                  nmt_error_message());
    ck_assert_uint_eq(log.n, 3);
    ck_assert(log.step[0] == 100 && log.step[1] == 200 && log.step[2] == 200);
    ck_assert(log.elapsed_s[0] == 12.5 && log.elapsed_s[2] == 26);
    ck_assert(log.loss[0] == 4.5 && log.loss[1] == 3.25);
    ck_assert(isnan(log.loss[2])); /* no training in an average's row */
    ck_assert(log.tok_per_s[0] == 900 && isnan(log.tok_per_s[2]));
    ck_assert(isnan(log.valid_ppl[0]) && isnan(log.valid_bleu[0]));
    ck_assert(log.valid_ppl[1] == 30.5 && log.valid_bleu[1] == 12.25);
    ck_assert(isnan(log.average_of[0]) && isnan(log.average_of[1]));
    ck_assert(log.average_of[2] == 4 && log.valid_ppl[2] == 28);
    nmt_runlog_free(&log);
    remove_tmpdir();
}
END_TEST

/* pytorch/torch_baseline.py train --log: step, loss, grad_norm; CRLF and
 * blank lines are fine, cells past a short row are empty. */
START_TEST(reads_other_programs_logs)
{
    make_tmpdir();
    static const char text[] = "step\tloss\tgrad_norm\r\n1\t9.5\t1.0\r\n\r\n2\t8.25\r\n\n"
                               "3\t\t0.5\n";
    nmt_runlog log;
    ck_assert_msg(nmt_runlog_read(&log, write_file("torch.tsv", text, sizeof text - 1)) ==
                      NMT_OK, "%s", nmt_error_message());
    ck_assert_uint_eq(log.n, 3);
    ck_assert(log.step[1] == 2 && log.loss[1] == 8.25 && isnan(log.loss[2]));
    for (size_t i = 0; i < 3; i++)
        ck_assert(isnan(log.elapsed_s[i]) && isnan(log.valid_ppl[i]) &&
                  isnan(log.valid_bleu[i]) && isnan(log.average_of[i]));
    nmt_runlog_free(&log);
    /* a header alone: no rows */
    ck_assert_int_eq(nmt_runlog_read(&log, write_file("head.tsv", "step\tloss\n", 10)), NMT_OK);
    ck_assert_uint_eq(log.n, 0);
    nmt_runlog_free(&log);
    remove_tmpdir();
}
END_TEST

static void expect_refused(const char *name, const char *text, const char *what)
{
    nmt_runlog log;
    const char *path = write_file(name, text, strlen(text));
    int rc = nmt_runlog_read(&log, path);
    ck_assert_msg(rc != NMT_OK, "%s was read", name);
    const char *msg = nmt_error_message();
    ck_assert_msg(strstr(msg, name) && strstr(msg, what), "%s: '%s' lacks '%s'", name, msg, what);
    ck_assert_uint_eq(log.n, 0);
    ck_assert_ptr_null(log.step);
}

START_TEST(refusals_name_file_line_and_column)
{
    make_tmpdir();
    expect_refused("nostep.tsv", "epoch\tloss\n1\t2\n", ":1: the header names no 'step'");
    expect_refused("twice.tsv", "step\tloss\tloss\n1\t2\t3\n", ":1: column 'loss' appears twice");
    expect_refused("word.tsv", "step\tloss\n1\t2\n2\tabc\n", "word.tsv:3: column 'loss': 'abc'");
    expect_refused("junk.tsv", "step\tvalid_bleu\n1\t2.5x\n", ":2: column 'valid_bleu'");
    expect_refused("wide.tsv", "step\tloss\n1\t2\t3\n", ":2: more cells than the header's 2");
    expect_refused("nostepcell.tsv", "step\tloss\n\t2\n", ":2: the row has no step");
    expect_refused("empty.tsv", "", "empty");
    expect_refused("binary.tsv", "step\n\xff\xfe\n", "binary.tsv");
    nmt_runlog log;
    ck_assert_int_ne(nmt_runlog_read(&log, tmp_path("missing.tsv")), NMT_OK);
    ck_assert_ptr_nonnull(strstr(nmt_error_message(), "missing.tsv"));
    remove_tmpdir();
}
END_TEST

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* A fresh run's log starts anew with the header; a resumed run's keeps its
 * rows up to the checkpoint's step, drops those after it, and a log from
 * before a column existed gets today's header and an empty cell a row. */
START_TEST(opens_fresh_and_resumed_logs)
{
    make_tmpdir();
    char head[256];
    nmt_log_header(head, sizeof head);
    const char *path = write_file("log.tsv", "stale\n", 6);
    FILE *f;
    ck_assert_int_eq(nmt_runlog_open(&f, path, -1), NMT_OK);
    nmt_train_status st = {.step = 10, .epoch = 1, .lr = 0.5, .loss = 2, .ppl = exp(2)};
    for (int k = 1; k <= 3; k++) {
        st.step = 10 * k;
        ck_assert_int_eq(nmt_runlog_append(f, path, &st), NMT_OK);
    }
    fclose(f);
    nmt_runlog log;
    ck_assert_int_eq(nmt_runlog_read(&log, path), NMT_OK);
    ck_assert_uint_eq(log.n, 3);
    nmt_runlog_free(&log);
    ck_assert_int_eq(strncmp(slurp(path), head, strlen(head)), 0);
    /* resumed at step 20: the row of step 30 goes, the next follows on */
    ck_assert_int_eq(nmt_runlog_open(&f, path, 20), NMT_OK);
    st.step = 21;
    ck_assert_int_eq(nmt_runlog_append(f, path, &st), NMT_OK);
    fclose(f);
    ck_assert_int_eq(nmt_runlog_read(&log, path), NMT_OK);
    ck_assert_uint_eq(log.n, 3);
    ck_assert(log.step[0] == 10 && log.step[1] == 20 && log.step[2] == 21);
    nmt_runlog_free(&log);
    /* a log without the last column: today's header, a cell more a row */
    const char old[] = "step\tepoch\tlr\tloss\tppl\tgrad_norm\ttok_per_s\telapsed_s"
                       "\tvalid_ppl\tvalid_bleu\n5\t1\t0.5\t2\t7.4\t1\t10\t1.5\t\t\n";
    path = write_file("old.tsv", old, sizeof old - 1);
    ck_assert_int_eq(nmt_runlog_open(&f, path, 5), NMT_OK);
    fclose(f);
    char want[600];
    snprintf(want, sizeof want, "%s5\t1\t0.5\t2\t7.4\t1\t10\t1.5\t\t\t\n", head);
    ck_assert_str_eq(slurp(path), want);
    /* no temporary file is left beside it */
    DIR *d = opendir(tmpdir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        ck_assert_msg(!strstr(e->d_name, ".tmp."), "%s left", e->d_name);
    closedir(d);
    remove_tmpdir();
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("runlog");
    TCase *tc = tcase_create("runlog");
    tcase_add_test(tc, reads_nmt_train_logs);
    tcase_add_test(tc, reads_other_programs_logs);
    tcase_add_test(tc, refusals_name_file_line_and_column);
    tcase_add_test(tc, opens_fresh_and_resumed_logs);
    suite_add_tcase(s, tc);
    return s;
}
