#include "cli/opts.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"

const char *cli_command = "nmt";
int cli_verbosity = 1;

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nmt%s%s: ", strcmp(cli_command, "nmt") ? " " : "",
            strcmp(cli_command, "nmt") ? cli_command : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_lib_error(void)
{
    const char *msg = nmt_error_message();
    cli_error("%s", msg && *msg ? msg : "unknown error");
}

int opt_long(const char *name, const char *val, long min, long max, long *out)
{
    char *end;
    errno = 0;
    if (!val || !*val || (!(val[0] >= '0' && val[0] <= '9') && val[0] != '-')) {
        cli_error("%s: '%s' is not a whole number", name, val ? val : "");
        return -1;
    }
    long v = strtol(val, &end, 10);
    if (*end) {
        cli_error("%s: '%s' is not a whole number", name, val);
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        cli_error("%s: %s is out of range (%ld to %ld)", name, val, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int opt_int(const char *name, const char *val, long min, long max, int *out)
{
    long v;
    if (opt_long(name, val, min, max, &v))
        return -1;
    *out = (int)v;
    return 0;
}

int opt_u64(const char *name, const char *val, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!val || !(val[0] >= '0' && val[0] <= '9')) {
        cli_error("%s: '%s' is not a non-negative whole number", name, val ? val : "");
        return -1;
    }
    unsigned long long v = strtoull(val, &end, 10);
    if (*end || errno == ERANGE) {
        cli_error("%s: '%s' is not a non-negative whole number that fits 64 bits", name, val);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int opt_double(const char *name, const char *val, double min, double max, double *out)
{
    char *end;
    errno = 0;
    if (!val || !*val || strchr(" \t\n", val[0])) {
        cli_error("%s: '%s' is not a number", name, val ? val : "");
        return -1;
    }
    double v = strtod(val, &end);
    if (*end || !isfinite(v)) {
        cli_error("%s: '%s' is not a finite number", name, val);
        return -1;
    }
    if (v < min || v > max) {
        cli_error("%s: %s is out of range (%g to %g)", name, val, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int opt_float(const char *name, const char *val, double min, double max, float *out)
{
    double v;
    if (opt_double(name, val, min, max, &v))
        return -1;
    *out = (float)v;
    return 0;
}

int opt_choice(const char *name, const char *val, const char *const *choices)
{
    for (int i = 0; choices[i]; i++)
        if (!strcmp(val, choices[i]))
            return i;
    char list[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (i)
            strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
    }
    cli_error("%s: unknown value '%s' (expected one of: %s)", name, val, list);
    return -1;
}

int cli_usage_error(void)
{
    fprintf(stderr, "Try 'nmt %s --help' for the options.\n", cli_command);
    return 2;
}
