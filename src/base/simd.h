/* Internal: NMT_SIMD, for the element-wise loops of a training step.
 *
 * The distribution's compiler targets the oldest x86-64 (SSE2: 4 floats a
 * vector), while the machines nmt trains on have AVX2 (8) or AVX-512 (16).
 * Marked NMT_SIMD, a function is compiled three times, for x86-64 and the
 * levels x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512), and the dynamic
 * loader picks the one the CPU runs (an ifunc, resolved once at start). So
 * one binary runs everywhere and uses the wide vectors where they exist.
 *
 * The clones give the same bits: they vectorize the same loops in the same
 * order, with -ffp-contract=off (meson.build) so that no clone turns a * b + c
 * into an FMA, which rounds once where the baseline rounds twice; and sums
 * are never reordered (no -ffast-math: lanes are explicit, see layers.h).
 *
 * Where the compiler or the platform cannot (not x86, no ifunc without glibc
 * and ELF, a compiler that does not know the levels), meson does not define
 * NMT_HAVE_TARGET_CLONES and the mark is empty: one build for the baseline.
 *
 * A call to a marked function goes through the ifunc (an indirect call, a
 * few nanoseconds), so the mark goes on what a chunk of the pool or a pass
 * over rows runs, not on a helper called per element; its helpers are
 * NMT_SIMD_INLINE. */
#ifndef NMT_SIMD_H
#define NMT_SIMD_H

#ifdef NMT_HAVE_TARGET_CLONES
#define NMT_SIMD __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define NMT_SIMD
#endif

/* For the static helpers that hold a marked function's loops: always
 * inlined, so that each clone has its own copy built for its level. Left to
 * its judgement of size, GCC keeps a helper called from three clones out of
 * line, built once, for the baseline. */
#if defined(__GNUC__)
#define NMT_SIMD_INLINE static inline __attribute__((always_inline))
#else
#define NMT_SIMD_INLINE static inline
#endif

#endif
