/* sched_getaffinity and CPU_COUNT are GNU's */
#define _GNU_SOURCE
#include "cli_opts.h"

#include <errno.h>
#include <float.h>
#include <sched.h>
#include <unistd.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nmt/error.h"
#include "nmt/threads.h"

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

/* A number the user wrote other than 0 that is nearer to 0 than `least`,
 * the smallest normal number of the type that holds it, is refused (1e-400
 * would be taken as 0, 1e-310 with fewer digits than it was written with);
 * `underflow`: strtod said so. */
static int refuse_tiny(const char *name, const char *val, double v, int underflow, double least)
{
    if ((underflow || v != 0) && fabs(v) < least) {
        cli_error("%s: %s is too small: write 0, or a number of at least %g", name, val, least);
        return -1;
    }
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
    /* strtod says ERANGE when the number is beyond a double (v is then
     * +-HUGE_VAL) or so near 0 that it came out 0 or denormal */
    int overflow = errno == ERANGE && isinf(v), underflow = errno == ERANGE && !isinf(v);
    if (*end || (!isfinite(v) && !overflow)) {
        cli_error("%s: '%s' is not a finite number", name, val);
        return -1;
    }
    if (overflow || v < min || v > max) {
        cli_error("%s: %s is out of range (%g to %g)", name, val, min, max);
        return -1;
    }
    if (refuse_tiny(name, val, v, underflow, DBL_MIN))
        return -1;
    *out = v;
    return 0;
}

int opt_float(const char *name, const char *val, double min, double max, float *out)
{
    double v;
    if (opt_double(name, val, min, max, &v))
        return -1;
    /* as a float, a number below FLT_MIN loses its digits or becomes 0 */
    if (refuse_tiny(name, val, v, 0, FLT_MIN))
        return -1;
    *out = (float)v;
    return 0;
}

int opt_duration(const char *name, const char *val, double max, double *out)
{
    static const char units[] = "hms";
    static const double seconds[] = {3600, 60, 1};
    const char *p = val ? val : "";
    double total = 0;
    int next_unit = 0, ok = *p != '\0';
    if (!strcmp(p, "0")) {
        *out = 0;
        return 0;
    }
    while (ok && *p) {
        if (!(*p >= '0' && *p <= '9')) {
            ok = 0;
            break;
        }
        /* every digit is read, however many: a number too large for a
         * duration is too long, not something else (it stops growing past
         * any limit, so that it never overflows) */
        double v = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            v = v < 1e18 ? v * 10 + (*p - '0') : v;
        const char *u = *p ? strchr(units + next_unit, *p) : NULL;
        if (!u) {
            ok = 0;
            break;
        }
        total += v * seconds[u - units];
        next_unit = (int)(u - units) + 1;
        p++;
    }
    if (!ok) {
        cli_error("%s: '%s' is not a duration (e.g. 90s, 30m, 2h, 1h30m; 0 for no limit)",
                  name, val ? val : "");
        return -1;
    }
    if (total > max) {
        cli_error("%s: %s is too long (at most %.0f hours)", name, val, max / 3600);
        return -1;
    }
    *out = total;
    return 0;
}

int cli_default_threads(void)
{
    long n = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
#endif
    if (n < 1)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

int cli_model_option(int c, const char *arg, const cli_model_opts *o)
{
    switch (c) {
    case 'b':
        if (!o->beam)
            return 1;
        return opt_int("--beam", arg, 1, 1000, o->beam) ? 2 : 0;
    case CLI_OPT_ALPHA:
        if (!o->alpha)
            return 1;
        return opt_float("--alpha", arg, 0, 10, o->alpha) ? 2 : 0;
    case CLI_OPT_BATCH_SIZE:
        if (!o->batch_size)
            return 1;
        return opt_int("--batch-size", arg, 1, 4096, o->batch_size) ? 2 : 0;
    case CLI_OPT_THREADS:
        if (!o->threads)
            return 1;
        return opt_int("--threads", arg, 1, 256, o->threads) ? 2 : 0;
    default:
        return 1;
    }
}

int cli_model_option_or_usage(int c, const char *arg, const cli_model_opts *o)
{
    int r = cli_model_option(c, arg, o);
    return r == 1 ? cli_usage_error() : r;
}

int cli_no_operands(int argc, char **argv)
{
    if (optind >= argc)
        return 0;
    cli_error("unexpected argument '%s'", argv[optind]);
    return cli_usage_error();
}

void cli_set_threads(int n)
{
    if (nmt_set_threads(n) != NMT_OK)
        fprintf(stderr, "nmt %s: warning: %s\n", cli_command, nmt_error_message());
}

int opt_model(const char *path, const char **models, int *n, int max)
{
    if (*n == max) {
        cli_error("-m: at most %d models", max);
        return 2;
    }
    models[(*n)++] = path;
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
