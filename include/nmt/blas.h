/* The BLAS under nmt and the CPU under it: which OpenBLAS kernel runs, what
 * the CPU can run, and the kernel it deserves.
 *
 * OpenBLAS built with DYNAMIC_ARCH (Debian's is) picks its kernel when it
 * loads, by the CPU's model number. A CPU it does not know, such as a new
 * cloud Xeon that reports only "Intel(R) Xeon(R) Processor", gets its
 * oldest x86-64 kernel (Prescott: SSE3) even when the CPU has AVX-512, and
 * runs its products 3 to 6 times slower without a word. The variable
 * OPENBLAS_CORETYPE, read when the library loads, overrides the choice; the
 * command line (src/cli/cli_blas.c) sets it and runs nmt again when the
 * rule below says so. */
#ifndef NMT_BLAS_H
#define NMT_BLAS_H

#include <stddef.h>

/* What the CPU can run, as far as the BLAS kernels care. An extension
 * counts only when the operating system saves its registers (XGETBV), as a
 * CPU whose kernel does not cannot use it. */
typedef struct nmt_cpu_features {
    unsigned avx : 1;
    unsigned avx2 : 1;
    unsigned fma : 1;
    unsigned avx512f : 1;
    unsigned avx512bw : 1;
    unsigned avx512vl : 1;
    unsigned avx512dq : 1;
    unsigned avx512bf16 : 1;
} nmt_cpu_features;

/* The features of the CPU this runs on (cpuid and XGETBV); all zero on
 * other architectures than x86-64. */
void nmt_cpu_features_read(nmt_cpu_features *f);

/* Features from a list of names separated by commas or spaces, each one of
 * avx avx2 fma avx512f avx512bw avx512vl avx512dq avx512bf16 (lower case),
 * as nmt_cpu_features_format writes them; "none" or "" for none. NMT_OK, or
 * NMT_ERR_ARG naming the unknown name. Used where a test stands in for
 * cpuid. */
int nmt_cpu_features_parse(const char *list, nmt_cpu_features *f);

/* The features as that list ("avx avx2 fma ..."; "none" when there are
 * none) into buf. */
void nmt_cpu_features_format(const nmt_cpu_features *f, char *buf, size_t cap);

/* The level of vector instructions a CPU's features allow, and the level a
 * kernel of OpenBLAS uses, on one scale:
 *   0  SSE (Prescott, Core2, Penryn, Dunnington, Nehalem, Atom, the
 *      Opterons and Barcelona: OpenBLAS's kernels before AVX)
 *   1  AVX (Sandybridge; Bulldozer, Piledriver, Steamroller)
 *   2  AVX2 with FMA (Haswell, Zen, Excavator)
 *   3  AVX-512 F, BW, VL and DQ together (SkylakeX, Cooperlake,
 *      SapphireRapids)
 * nmt_blas_kernel_level returns -1 for a name it does not know (such a
 * kernel is left alone); names are compared without regard to case. */
int nmt_cpu_level(const nmt_cpu_features *f);
int nmt_blas_kernel_level(const char *kernel);

/* The kernel to ask OpenBLAS for when it runs `kernel` on a CPU with
 * features f: "SkylakeX" (level 3), "Haswell" (level 2) or "Sandybridge"
 * (level 1), the kernel of the CPU's level that OPENBLAS_CORETYPE accepts
 * in every OpenBLAS that has it, when the running kernel is of a lower
 * level; NULL when the running kernel is as good as the CPU allows, is
 * better than its features say, or is unknown. */
const char *nmt_blas_kernel_for(const char *kernel, const nmt_cpu_features *f);

/* The running OpenBLAS: the kernel it picked ("Haswell"), its build
 * ("OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell MAX_THREADS=64") and its own
 * thread count (nmt runs its products on one OpenBLAS thread each and
 * makes its own threads: nmt/threads.h). */
const char *nmt_blas_kernel(void);
const char *nmt_blas_config(void);
int nmt_blas_threads(void);

/* The environment variables of the choice. NMT_BLAS_KERNEL=keep keeps
 * OpenBLAS's own choice; the command line sets NMT_BLAS_CHOSEN ("FROM TO":
 * the kernel OpenBLAS chose and the one nmt asked for) when it runs itself
 * again, so that the new process knows the choice was nmt's. */
#define NMT_BLAS_KERNEL_ENV "NMT_BLAS_KERNEL"
#define NMT_BLAS_CHOSEN_ENV "NMT_BLAS_CHOSEN"

/* One line on the kernel that runs and who chose it, for logs and
 * checkpoints: "SkylakeX (OpenBLAS chose Prescott; nmt set
 * OPENBLAS_CORETYPE=SkylakeX)", "Haswell (OPENBLAS_CORETYPE=Haswell)" or
 * "Cooperlake (OpenBLAS's choice)". */
void nmt_blas_describe(char *buf, size_t cap);

#endif
