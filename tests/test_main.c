/* The shared main of every unit-test binary: runs the one suite the binary
 * was built with. CK_ENV, CK_VERBOSITY, CK_RUN_CASE etc. work as Check says.
 * With NMT_VALGRIND set (the "valgrind" test setup), the binary re-executes
 * itself under that command line, once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_common.h"
#include "valgrind_reexec.h"

int main(int argc, char **argv)
{
    (void)argc;
    nmt_reexec_under_valgrind(argv);
    SRunner *sr = srunner_create(nmt_test_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
