# The BLAS kernel the CPU deserves (src/cli/cli_blas.c): nmt runs itself
# again with OPENBLAS_CORETYPE when OpenBLAS runs a kernel below the CPU's,
# says so in one line (not with -q, only rank 0 under mpirun), never touches
# a variable the user set, keeps OpenBLAS's choice with NMT_BLAS_KERNEL=keep,
# and runs again at most once. On a machine where OpenBLAS chooses well the
# test settings stand in for what it reports: NMT_TEST_BLAS_FALLBACK=1 takes
# OPENBLAS_CORETYPE=Prescott (which OpenBLAS really loads) for OpenBLAS's own
# fallback, and NMT_TEST_CPU_FEATURES for cpuid.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:?}
cd "$TMP" || exit 1
unset OPENBLAS_CORETYPE NMT_BLAS_KERNEL NMT_BLAS_CHOSEN NMT_TEST_BLAS_FALLBACK NMT_TEST_CPU_FEATURES

case $(uname -m) in
x86_64) ;;
*) echo "SKIP: OpenBLAS's x86-64 kernels are what this test changes" >&2; exit 77 ;;
esac
if ! "$NMT" info >info 2>/dev/null || ! grep -q '^blas  *OpenBLAS.*DYNAMIC_ARCH' info; then
    echo "SKIP: this OpenBLAS has one kernel (not DYNAMIC_ARCH): OPENBLAS_CORETYPE does nothing" >&2
    exit 77
fi

# nmt info without a model: the library, its version, the kernel, the CPU, the threads
for key in nmt blas kernel cpu threads; do
    if grep -q "^$key  " info; then pass; else fail "info: no '$key' line: $(cat info)"; fi
done
if grep -Eq '^blas  +OpenBLAS [0-9]+\.[0-9]+' info; then pass; else fail "info: no version: $(grep ^blas info)"; fi

AVX512="avx avx2 fma avx512f avx512bw avx512vl avx512dq"
fallback() { # FEATURES CMD...: OpenBLAS "falls back" to Prescott on a CPU with FEATURES
    local features=$1
    shift
    OPENBLAS_CORETYPE=Prescott NMT_TEST_BLAS_FALLBACK=1 NMT_TEST_CPU_FEATURES=$features "$@"
}

# the fallback on an AVX-512 CPU: one line on stderr, then SkylakeX
fallback "$AVX512" "$NMT" info >out 2>err
if [ "$(wc -l <err)" -eq 1 ] && grep -q 'OpenBLAS chose its Prescott kernel on a CPU with AVX-512: running with OPENBLAS_CORETYPE=SkylakeX (NMT_BLAS_KERNEL=keep' err; then
    pass
else
    fail "AVX-512 fallback: stderr is not the one line: $(cat err)"
fi
if grep -q '^kernel  *SkylakeX (OpenBLAS chose Prescott; nmt set OPENBLAS_CORETYPE=SkylakeX)' out; then
    pass
else
    fail "AVX-512 fallback: the new process does not run SkylakeX: $(grep ^kernel out)"
fi
# on an AVX2 CPU: Haswell (safe to load on this CPU too: no product runs in nmt info)
fallback "avx avx2 fma" "$NMT" info >out 2>err
if grep -q 'CPU with AVX2 and FMA: running with OPENBLAS_CORETYPE=Haswell' err &&
   grep -q '^kernel  *Haswell (OpenBLAS chose Prescott' out; then pass; else
    fail "AVX2 fallback: $(cat err) / $(grep ^kernel out)"; fi
# a CPU with SSE only deserves Prescott: nothing happens
fallback "" "$NMT" info >out 2>err
if [ ! -s err ] && grep -q '^kernel  *Prescott' out; then pass; else
    fail "SSE CPU: $(cat err) / $(grep ^kernel out)"; fi

# a variable the user set is never touched, whatever the CPU
OPENBLAS_CORETYPE=Prescott NMT_TEST_CPU_FEATURES=$AVX512 "$NMT" info >out 2>err
if [ ! -s err ] && grep -q '^kernel  *Prescott (OPENBLAS_CORETYPE=Prescott)' out; then pass; else
    fail "the user's OPENBLAS_CORETYPE: $(cat err) / $(grep ^kernel out)"; fi
# NMT_BLAS_KERNEL=keep keeps OpenBLAS's choice; another value says so and keeps it too
NMT_BLAS_KERNEL=keep fallback "$AVX512" "$NMT" info >out 2>err
if [ ! -s err ] && grep -q '^kernel  *Prescott' out; then pass; else
    fail "NMT_BLAS_KERNEL=keep: $(cat err) / $(grep ^kernel out)"; fi
NMT_BLAS_KERNEL=fast fallback "$AVX512" "$NMT" info >out 2>err
if grep -q "NMT_BLAS_KERNEL=fast is neither 'keep' nor 'auto'" err && grep -q '^kernel  *Prescott' out; then
    pass; else fail "NMT_BLAS_KERNEL=fast: $(cat err)"; fi
# at most once: a process that was run again does not run again, and says
# when OpenBLAS did not take the kernel asked for
NMT_BLAS_CHOSEN="Prescott SkylakeX" fallback "$AVX512" "$NMT" info >out 2>err
if grep -q 'OpenBLAS did not take OPENBLAS_CORETYPE=SkylakeX: it runs Prescott' err &&
   [ "$(wc -l <err)" -eq 1 ] && grep -q '^kernel  *Prescott' out; then pass; else
    fail "run again once: $(cat err) / $(grep ^kernel out)"; fi
# a bad test setting is named
NMT_TEST_CPU_FEATURES="avx sse9" OPENBLAS_CORETYPE=Prescott NMT_TEST_BLAS_FALLBACK=1 "$NMT" info >out 2>err
if grep -q "NMT_TEST_CPU_FEATURES: unknown CPU feature 'sse9'" err; then pass; else fail "bad features: $(cat err)"; fi
# commands that run no product never run again
fallback "$AVX512" "$NMT" bleu <(echo a b c) -i <(echo a b c) >out 2>err
if ! grep -q OPENBLAS_CORETYPE err; then pass; else fail "nmt bleu ran again: $(cat err)"; fi
# help runs no product either
fallback "$AVX512" "$NMT" train --help >out 2>err
if [ ! -s err ]; then pass; else fail "nmt train --help ran again: $(cat err)"; fi

# a real training run where the CPU can run SkylakeX: the line, then the
# kernel in the run's own description and in its checkpoint; with -q silent
if grep -q avx512dq <(grep ^cpu info); then
    zcat "$ROOT/corpora/toy/train.src.gz" | head -n 200 >s
    zcat "$ROOT/corpora/toy/train.tgt.gz" | head -n 200 >t
    T=(train --src s --tgt t --d-model 16 --heads 2 --ff 32 --layers 1 --max-steps 2 --threads 1)
    fallback "$AVX512" "$NMT" "${T[@]}" --out run >out 2>err
    if [ "$(grep -c 'OPENBLAS_CORETYPE=SkylakeX (NMT_BLAS_KERNEL' err)" -eq 1 ] &&
       grep -q '^blas: kernel SkylakeX (OpenBLAS chose Prescott; nmt set OPENBLAS_CORETYPE=SkylakeX), 1 threads' err; then
        pass; else fail "train: $(cat err)"; fi
    "$NMT" info -v run/checkpoint.safetensors >out 2>&1
    if grep -q 'state.blas = SkylakeX (OpenBLAS chose Prescott' out; then pass; else
        fail "checkpoint: no state.blas: $(grep blas out)"; fi
    fallback "$AVX512" "$NMT" "${T[@]}" -q --out run-q >out 2>err
    if [ ! -s err ] && [ -f run-q/checkpoint.safetensors ]; then pass; else fail "train -q: $(cat err)"; fi
    # the user's choice stands in the run too
    OPENBLAS_CORETYPE=Haswell "$NMT" "${T[@]}" --out run-u >out 2>err
    if ! grep -q 'running with' err && grep -q '^blas: kernel Haswell (OPENBLAS_CORETYPE=Haswell)' err; then
        pass; else fail "train, the user's kernel: $(cat err)"; fi

    # under mpirun every rank runs again, and only rank 0 says so
    if [ "${NMT_HAVE_MPI:-0}" = 1 ] && command -v mpirun >/dev/null; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
        fallback "$AVX512" mpirun --oversubscribe -x OPENBLAS_CORETYPE -x NMT_TEST_BLAS_FALLBACK \
            -x NMT_TEST_CPU_FEATURES -np 2 "$NMT" info >out 2>err
        if [ "$(grep -c 'running with OPENBLAS_CORETYPE=SkylakeX' err)" -eq 1 ] &&
           [ "$(grep -c '^kernel  *SkylakeX (OpenBLAS chose Prescott' out)" -eq 2 ]; then
            pass; else fail "mpirun: $(cat err) / $(grep ^kernel out)"; fi
    fi
else
    echo "note: this CPU has no AVX-512: the training run on SkylakeX is not tried" >&2
fi

echo "$n_pass passed, $n_fail failed"
[ "$n_fail" -eq 0 ]
