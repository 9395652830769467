/* Shared by the unit-test binaries. */
#ifndef NMT_TEST_COMMON_H
#define NMT_TEST_COMMON_H

#include <check.h>
#include <stdlib.h>

/* Each suite file defines this. */
Suite *nmt_test_suite(void);

/* Paths given by the build (see tests/meson.build). */
static inline const char *test_env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}
#define NMT_SOURCE_ROOT() test_env_or("NMT_SOURCE_ROOT", ".")
#define NMT_CORPORA() test_env_or("NMT_CORPORA", "../shared/corpora")
#define NMT_BIN() test_env_or("NMT_BIN", "nmt")

#endif
