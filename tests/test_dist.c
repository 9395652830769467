/* dist.c built without MPI (as it is where Open MPI is missing): a run of
 * one process, whose collectives change nothing, and which refuses to start
 * when mpirun launched several copies of it. */
#include <stdlib.h>
#include <string.h>

#include "nmt/dist.h"
#include "nmt/error.h"
#include "test_common.h"

START_TEST(one_process_without_mpi)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_SIZE");
    ck_assert_int_eq(nmt_dist_init(NULL, NULL), NMT_OK);
    ck_assert_int_eq(nmt_dist_rank(), 0);
    ck_assert_int_eq(nmt_dist_size(), 1);
    float f[3] = {1, 2, 3};
    double d[2] = {4, 5};
    ck_assert_int_eq(nmt_dist_sum_floats(f, 3), NMT_OK);
    ck_assert_int_eq(nmt_dist_sum_doubles(d, 2), NMT_OK);
    ck_assert(f[0] == 1 && f[2] == 3 && d[1] == 5);
    ck_assert_int_eq(nmt_dist_max_int(7), 7);
    /* mpirun -np 1 is one process too */
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    ck_assert_int_eq(nmt_dist_init(NULL, NULL), NMT_OK);
    nmt_dist_finalize();
}
END_TEST

START_TEST(refused_under_mpirun_without_mpi)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (int i = 0; i < 3; i++) {
        unsetenv("OMPI_COMM_WORLD_SIZE");
        unsetenv("PMI_SIZE");
        unsetenv("PMIX_SIZE");
        setenv(vars[i], "3", 1);
        ck_assert_int_eq(nmt_dist_init(NULL, NULL), NMT_ERR_ARG);
        ck_assert_ptr_nonnull(strstr(nmt_error_message(), "this build of nmt has no MPI"));
        ck_assert_ptr_nonnull(strstr(nmt_error_message(), "started 3"));
    }
}
END_TEST

Suite *nmt_test_suite(void)
{
    Suite *s = suite_create("dist");
    TCase *tc = tcase_create("dist");
    tcase_add_test(tc, one_process_without_mpi);
    tcase_add_test(tc, refused_under_mpirun_without_mpi);
    suite_add_tcase(s, tc);
    return s;
}
