/* The BLAS kernel the CPU deserves (nmt/blas.h), set before any work.
 *
 * OpenBLAS reads OPENBLAS_CORETYPE once, when it loads, so a better kernel
 * can only be had by running the program again with the variable set:
 * cli_blas_choose does that (execv of /proc/self/exe with the same
 * arguments) when OpenBLAS runs a kernel below what the CPU can run, saying
 * so in one line on stderr (not with -q; under mpirun only rank 0 says it).
 * It never touches a variable the user set, does nothing with
 * NMT_BLAS_KERNEL=keep, and runs again at most once.
 *
 * Two settings stand in, for the tests, for what the machine reports, so
 * that the path runs on a machine where OpenBLAS chooses well:
 *   NMT_TEST_CPU_FEATURES="avx avx2 fma ..."  the CPU's features, in place
 *       of cpuid (nmt_cpu_features_parse's names);
 *   NMT_TEST_BLAS_FALLBACK=1  an OPENBLAS_CORETYPE in the environment is
 *       taken for OpenBLAS's own choice, not the user's: with
 *       OPENBLAS_CORETYPE=Prescott, OpenBLAS really runs Prescott, as it
 *       does on a CPU it does not know. */
#ifndef NMT_CLI_BLAS_H
#define NMT_CLI_BLAS_H

/* Runs nmt again with a better kernel when the rule says so (and does not
 * return then); returns when there is nothing to do, or when running again
 * failed (after a warning: the work goes on with the kernel there is). In
 * the process run again, warns when OpenBLAS did not take the kernel. */
void cli_blas_choose(int argc, char **argv);

#endif
