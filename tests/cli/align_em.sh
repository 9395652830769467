# nmt align --em: word links from IBM Model 2 with a diagonal prior trained
# by EM on the pairs themselves (src/align/ibm2.c). On a hand-made corpus
# where co-occurrence decides: the links, one line per pair (an empty one
# for a pair with an empty side), --line, the reverse direction and its
# symmetrisation, the scores against --gold (stdout with -o, else stderr),
# the same bytes twice, the toy test set's gold (AER under 0.08) and nmt
# train --guided-links reading the links, and the refusals, each naming
# its option or file.
. "$(dirname "$0")/lib.sh"

# A B C D translate as x y z w; every two of them, in the same order and
# crossed (tests/test_ibm2.c trains on the same pairs), then a pair with
# an empty target and one with an empty source
printf '%s\n' "A B" "A B" "A C" "A C" "A D" "A D" "B C" "B C" "B D" "B D" "C D" "C D" \
    "A B" "" >"$TMP/s"
printf '%s\n' "x y" "y x" "x z" "z x" "x w" "w x" "y z" "z y" "y w" "w y" "z w" "w z" \
    "" "x" >"$TMP/t"
# the links: in order 0-0 1-1, crossed 1-0 0-1 (sorted by target word)
WANT=$(for k in 1 2 3 4 5 6; do printf '0-0 1-1\n1-0 0-1\n'; done; printf '\n\n')

expect_ok "--help" "$NMT" align --help
grep -q -- "--em-iterations" "$TMP/out" && grep -q -- "--em " "$TMP/out" && pass ||
    fail "--help does not name --em and --em-iterations"

expect_ok "--em" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t"
[ "$(cat "$TMP/out")" = "$WANT" ] && pass || fail "--em links: $(cat "$TMP/out")"
[ "$(wc -l <"$TMP/out")" = 14 ] && pass || fail "--em: $(wc -l <"$TMP/out") lines, want 14"
grep -q "^em: iteration 5 of 5" "$TMP/err" && pass || fail "--em: no iteration lines"

# -o, and the same bytes twice
expect_ok "--em -o" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" -o "$TMP/a.align"
expect_ok "--em -o again" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" -o "$TMP/b.align"
cmp -s "$TMP/a.align" "$TMP/b.align" && [ "$(cat "$TMP/a.align")" = "$WANT" ] && pass ||
    fail "--em -o: two runs differ or are not the links"

# --line: only those pairs' links, trained on all
expect_ok "--em --line" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --line 2,13-14
[ "$(cat "$TMP/out")" = "$(printf '1-0 0-1\n\n')" ] && [ "$(wc -l <"$TMP/out")" = 3 ] && pass ||
    fail "--em --line 2,13-14: $(cat "$TMP/out")"

# the reverse direction (target-source) and grow-diag-final-and join
expect_ok "--em reverse" "$NMT" align --em --src "$TMP/t" --tgt "$TMP/s" -o "$TMP/rev.align"
expect_ok "--symmetrize" "$NMT" align --links "$TMP/a.align" --reverse-links "$TMP/rev.align" \
    --symmetrize grow-diag-final-and
[ "$(cat "$TMP/out")" = "$(for k in 1 2 3 4 5 6; do printf '0-0 1-1\n0-1 1-0\n'; done; printf '\n\n')" ] &&
    pass || fail "--em both ways, symmetrised: $(cat "$TMP/out")"

# --gold: pair 1's gold 0-0 1-1 (both found), pair 2's 0-1 sure and 1?0
# possible (both found), pair 3's 0-1 (missed, and the links 0-0 1-1
# wrong): |A| 6, |S| 4, |A∩S| 3, |A∩P| 4: AER 1 - 7/10, precision 4/6, recall 3/4
printf '0-0 1-1\n0-1 1?0\n0-1\n\n\n\n\n\n\n\n\n\n\n\n' >"$TMP/gold"
GOLD_LINE='AER 0.3000  precision 0.6667  recall 0.7500  (3 pairs, 6 model links, 4 gold links, 3 in both; possible: 1 links, 1 in both)'
expect_ok "--em --gold -o" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --gold "$TMP/gold" \
    --line 1-3 -o "$TMP/g.align"
grep -qxF -- "$GOLD_LINE" "$TMP/out" && pass || fail "--em --gold: $(cat "$TMP/out")"
# the same links scored by --links give the same line
expect_ok "--links of --em's" "$NMT" align --links "$TMP/a.align" --gold "$TMP/gold" --line 1-3
grep -qxF -- "$GOLD_LINE" "$TMP/out" && pass || fail "--links: $(cat "$TMP/out")"
# to standard output the scores go to stderr
expect_ok "--em --gold, stdout" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --gold "$TMP/gold"
grep -q "^AER " "$TMP/err" && ! grep -q "AER" "$TMP/out" && pass ||
    fail "--em --gold to stdout: the scores are not on stderr"
# --gold-partial: pair 3's links 0-0 and 1-1 each have a word without
# gold (target 0, source 1) and are left out: |A| 4, AER 1 - 7/8
expect_ok "--em --gold-partial" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" \
    --gold "$TMP/gold" --gold-partial --line 1-3 -o "$TMP/g.align"
grep -q "^AER 0.1250  precision 1.0000  recall 0.7500  (3 pairs, 4 model links" "$TMP/out" && pass ||
    fail "--em --gold-partial: $(cat "$TMP/out")"

# the options of the model
expect_ok "--em options" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --em-iterations 2 \
    --em-null 0.2 --em-tension 8 --em-alpha 0 --em-fixed-tension
grep -q "^em: iteration 2 of 2: .*tension 8.000" "$TMP/err" && pass ||
    fail "--em options: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/out")" = 14 ] && pass || fail "--em options: $(wc -l <"$TMP/out") lines"

# --- the toy corpus: its gold, and guided alignment reading the links ------------------
TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
zcat "$TOY/test.src.gz" >"$TMP/toy.s"
zcat "$TOY/test.tgt.gz" >"$TMP/toy.t"
expect_ok "--em on the toy test set" "$NMT" align --em --src "$TMP/toy.s" --tgt "$TMP/toy.t" \
    --gold "$TOY/test.align" -o "$TMP/toy.align"
# 0.0645 when written; the toy's attention models reach 0.03 to 0.09
awk '/^AER/ { exit !($2 < 0.08) }' "$TMP/out" && pass || fail "toy AER: $(cat "$TMP/out")"
[ "$(wc -l <"$TMP/toy.align")" = 1000 ] && pass || fail "toy: $(wc -l <"$TMP/toy.align") lines"
expect_ok "--guided-links reads them" "$NMT" train -q --arch transformer --src "$TMP/toy.s" \
    --tgt "$TMP/toy.t" --d-model 16 --heads 2 --ff 32 --layers 2 --batch-size 20 --threads 1 \
    --seed 3 --guided-links "$TMP/toy.align" --max-steps 1 --out "$TMP/guided"

# --- refusals -----------------------------------------------------------------------
head -n 5 "$TMP/t" >"$TMP/t5"
expect_fail "line counts" "s has 14 lines but .*t5 has 5" \
    "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t5"
expect_fail "--em with -m" "--em .*cannot be used with -m" \
    "$NMT" align --em -m "$TMP/none.safetensors" --src "$TMP/s" --tgt "$TMP/t"
expect_fail "--em with --links" "--em .*cannot be used with --links" \
    "$NMT" align --em --links "$TMP/a.align" --src "$TMP/s" --tgt "$TMP/t"
expect_fail "--em without --tgt" "--em .*--tgt" "$NMT" align --em --src "$TMP/s"
expect_fail "--em without --src" "--em .*--src" "$NMT" align --em --tgt "$TMP/t"
expect_fail "--em-iterations without --em" "--em-iterations .*--em" \
    "$NMT" align --em-iterations 3 --src "$TMP/s" --tgt "$TMP/t"
expect_fail "--em --format json" "--em: .*Pharaoh.*--format json" \
    "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --format json
expect_fail "--em-null 1" "--em-null" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --em-null 1
expect_fail "--em-tension 0" "--em-tension" \
    "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --em-tension 0
expect_fail "--em-iterations x" "--em-iterations" \
    "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --em-iterations x
expect_fail "-o over --src" "-o .*--src" "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" -o "$TMP/s"
printf '0-0\n0-5\n\n\n\n\n\n\n\n\n\n\n\n\n' >"$TMP/gold_out"
expect_fail "gold link outside" "gold_out, line 2: the link 0-5 is outside the pair" \
    "$NMT" align --em --src "$TMP/s" --tgt "$TMP/t" --gold "$TMP/gold_out"
[ "$(cat "$TMP/s" | wc -l)" = 14 ] && pass || fail "--src was changed"

finish
