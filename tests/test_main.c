/* The shared main of every unit-test binary: runs the one suite the binary
 * was built with. CK_ENV, CK_VERBOSITY, CK_RUN_CASE etc. work as Check says. */
#include <stdlib.h>

#include "test_common.h"

int main(void)
{
    SRunner *sr = srunner_create(nmt_test_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
