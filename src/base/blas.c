/* The CPU's vector extensions and the OpenBLAS kernel they deserve
 * (nmt/blas.h). */
#include "nmt/blas.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nmt/error.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

/* XCR0, the register state the operating system saves (Intel SDM vol. 1,
 * 13.3): read only when cpuid says OSXSAVE. */
static unsigned long long read_xcr0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

void nmt_cpu_features_read(nmt_cpu_features *f)
{
    memset(f, 0, sizeof *f);
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave)
        return;
    unsigned long long xcr0 = read_xcr0();
    int ymm = (xcr0 & 0x6) == 0x6;            /* SSE and AVX state */
    int zmm = ymm && (xcr0 & 0xe0) == 0xe0;   /* opmask, ZMM_Hi256, Hi16_ZMM */
    if (!ymm)
        return;
    f->avx = (unsigned)avx;
    f->fma = (unsigned)fma;
    if (__get_cpuid_max(0, NULL) < 7)
        return;
    __cpuid_count(7, 0, a, b, c, d);
    f->avx2 = (b >> 5) & 1;
    if (zmm) {
        f->avx512f = (b >> 16) & 1;
        f->avx512dq = (b >> 17) & 1;
        f->avx512bw = (b >> 30) & 1;
        f->avx512vl = (b >> 31) & 1;
        unsigned max_sub = a;
        if (max_sub >= 1) {
            __cpuid_count(7, 1, a, b, c, d);
            f->avx512bf16 = (a >> 5) & 1;
        }
    }
}
#else
void nmt_cpu_features_read(nmt_cpu_features *f)
{
    memset(f, 0, sizeof *f);
}
#endif

/* The features by name, in the order nmt_cpu_features_format writes them. */
enum { N_FEATURES = 8 };
static const char *const feature_names[N_FEATURES] = {
    "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512bf16",
};

static void feature_set(nmt_cpu_features *f, int k, unsigned on)
{
    switch (k) {
    case 0: f->avx = on; break;
    case 1: f->avx2 = on; break;
    case 2: f->fma = on; break;
    case 3: f->avx512f = on; break;
    case 4: f->avx512bw = on; break;
    case 5: f->avx512vl = on; break;
    case 6: f->avx512dq = on; break;
    default: f->avx512bf16 = on; break;
    }
}

static unsigned feature_get(const nmt_cpu_features *f, int k)
{
    switch (k) {
    case 0: return f->avx;
    case 1: return f->avx2;
    case 2: return f->fma;
    case 3: return f->avx512f;
    case 4: return f->avx512bw;
    case 5: return f->avx512vl;
    case 6: return f->avx512dq;
    default: return f->avx512bf16;
    }
}

int nmt_cpu_features_parse(const char *list, nmt_cpu_features *f)
{
    memset(f, 0, sizeof *f);
    const char *p = list;
    while (*p) {
        size_t skip = strspn(p, ", ");
        p += skip;
        size_t len = strcspn(p, ", ");
        if (!len)
            break;
        int found = len == 4 && !strncmp(p, "none", 4);
        for (int k = 0; k < N_FEATURES && !found; k++)
            if (strlen(feature_names[k]) == len && !strncmp(p, feature_names[k], len)) {
                feature_set(f, k, 1);
                found = 1;
            }
        if (!found)
            return nmt_set_error(NMT_ERR_ARG, "unknown CPU feature '%.*s' (known: avx avx2 fma "
                                              "avx512f avx512bw avx512vl avx512dq avx512bf16)",
                                 (int)len, p);
        p += len;
    }
    return NMT_OK;
}

void nmt_cpu_features_format(const nmt_cpu_features *f, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap)
        buf[0] = '\0';
    for (int k = 0; k < N_FEATURES; k++)
        if (feature_get(f, k) && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " " : "", feature_names[k]);
    if (!n && cap)
        snprintf(buf, cap, "none");
}

int nmt_cpu_level(const nmt_cpu_features *f)
{
    if (f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq && f->avx2 && f->fma)
        return 3;
    if (f->avx2 && f->fma)
        return 2;
    return f->avx ? 1 : 0;
}

/* OpenBLAS's x86-64 kernels (the names openblas_get_corename gives) and the
 * instructions each uses. */
static const struct {
    const char *name;
    int level;
} kernels[] = {
    {"Prescott", 0}, {"Core2", 0}, {"Penryn", 0}, {"Dunnington", 0}, {"Nehalem", 0},
    {"Atom", 0}, {"Opteron", 0}, {"Opteron_SSE3", 0}, {"Barcelona", 0}, {"Bobcat", 0},
    {"Nano", 0},
    {"Sandybridge", 1}, {"Bulldozer", 1}, {"Piledriver", 1}, {"Steamroller", 1},
    {"Haswell", 2}, {"Zen", 2}, {"Excavator", 2},
    {"SkylakeX", 3}, {"Cooperlake", 3}, {"SapphireRapids", 3},
};

int nmt_blas_kernel_level(const char *kernel)
{
    if (!kernel)
        return -1;
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (!strcasecmp(kernel, kernels[i].name))
            return kernels[i].level;
    return -1;
}

const char *nmt_blas_kernel_for(const char *kernel, const nmt_cpu_features *f)
{
    /* the kernel of each level that OPENBLAS_CORETYPE has long accepted
     * (Cooperlake and SapphireRapids are not accepted by 0.3.21's) */
    static const char *const deserved[] = {NULL, "Sandybridge", "Haswell", "SkylakeX"};
    int have = nmt_blas_kernel_level(kernel), can = nmt_cpu_level(f);
    if (have < 0 || have >= can)
        return NULL;
    return deserved[can];
}

const char *nmt_blas_kernel(void)
{
    const char *k = openblas_get_corename();
    return k ? k : "unknown";
}

const char *nmt_blas_config(void)
{
    const char *c = openblas_get_config();
    return c ? c : "unknown";
}

int nmt_blas_threads(void)
{
    return openblas_get_num_threads();
}

void nmt_blas_describe(char *buf, size_t cap)
{
    const char *kernel = nmt_blas_kernel(), *chosen = getenv(NMT_BLAS_CHOSEN_ENV);
    const char *asked = getenv("OPENBLAS_CORETYPE");
    char from[64];
    if (chosen && asked && sscanf(chosen, "%63s", from) == 1)
        snprintf(buf, cap, "%s (OpenBLAS chose %s; nmt set OPENBLAS_CORETYPE=%s)", kernel, from,
                 asked);
    else if (asked && *asked)
        snprintf(buf, cap, "%s (OPENBLAS_CORETYPE=%s)", kernel, asked);
    else
        snprintf(buf, cap, "%s (OpenBLAS's choice)", kernel);
}
