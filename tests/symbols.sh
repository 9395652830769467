#!/usr/bin/env bash
# Every global symbol that libnmt.a defines starts with nmt_, so that a program
# that links the library cannot collide with its internals (as dav1d prefixes
# its own). Weak and unique symbols (nm types W, V, u) are left out: they are
# the C++ standard library's template instantiations and typeinfo that
# subwords.cc pulls in, which the linker merges with any other copy; so are
# names that begin with __, the compiler's own (the sanitizers' __odr_asan.*).
# An ifunc (type i) is a function cloned for several ISA levels (src/base/
# simd.h) and is checked like any other; its clones are local, and GCC's
# resolver NAME.resolver is weak.
set -u
lib=${1:?usage: symbols.sh LIBNMT.A}
nm=$(command -v nm) || { echo "no nm: cannot list the symbols" >&2; exit 1; }
all=$("$nm" -g --defined-only "$lib" | awk 'NF == 3 && $2 ~ /^[TDRBCGi]$/ { print $3 }' | sort -u)
bad=$(grep -v '^nmt_' <<<"$all" | grep -v '^__')
n=$(wc -l <<<"$all")
if [ "$n" -lt 100 ]; then
    echo "FAIL: only $n global symbols found in $lib: is it the library?" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
if [ -n "$bad" ]; then
    echo "FAIL: global symbols without the nmt_ prefix:" >&2
    echo "$bad" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
echo "$n global symbols, all prefixed nmt_"
echo "1 passed, 0 failed"
