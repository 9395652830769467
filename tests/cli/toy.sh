# The toy corpus: the committed files are exactly what scripts/data/make-toy-corpus
# generates, its alignments and statistics are as promised, and a tampered
# copy is refused. Needs only python3 (whichever is on PATH).
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GEN="$ROOT/scripts/data/make-toy-corpus"

expect_ok "committed corpus checks" python3 "$GEN" --check
grep -q "^ok: 9 files byte-identical" "$TMP/out" && pass || fail "check reports byte-identical files"
# The promised shape, read from the files themselves rather than the script.
[ "$(zcat "$ROOT/corpora/toy/train.src.gz" | wc -l)" -eq 46400 ] && pass || fail "46400 training pairs"
[ "$(wc -l <"$ROOT/corpora/toy/test.align")" -eq "$(zcat "$ROOT/corpora/toy/test.src.gz" | wc -l)" ] &&
    pass || fail "one alignment line per test pair"
zcat "$ROOT/corpora/toy/test.src.gz" | awk '{ n[NF]++ } END { for (l = 3; l <= 60; l++) if (n[l] < 17 || n[l] > 18) exit 1; for (l in n) if (l + 0 < 3 || l + 0 > 60) exit 1 }' &&
    pass || fail "test source lengths spread evenly over 3..60"
# gzip headers without time stamp or file name (what makes the bytes reproducible).
head -c 10 "$ROOT/corpora/toy/train.src.gz" | od -An -tx1 | grep -q "1f 8b 08 00 00 00 00 00" &&
    pass || fail "gzip header has no name and mtime 0"

# A tampered copy: one edited alignment line and one missing file.
cp -r "$ROOT/corpora/toy" "$TMP/toy"
sed -i '1s/^0-0/0-1/' "$TMP/toy/test.align"
rm "$TMP/toy/valid.tgt.gz"
expect_fail "tampered copy refused" "test.align: differs" python3 "$GEN" --check --out "$TMP/toy"
grep -q "valid.tgt.gz" "$TMP/err" && pass || fail "missing file named: $(cat "$TMP/err")"

# Writing to a directory (the path users take) gives the same bytes.
expect_ok "generate into a directory" python3 "$GEN" --out "$TMP/gen"
cmp -s "$TMP/gen/train.tgt.gz" "$ROOT/corpora/toy/train.tgt.gz" && pass || fail "regenerated train.tgt.gz differs"
finish
