# The shipped demo model, models/toy-attention.safetensors: it loads as an
# attention model, translates the toy test set as docs/experiments/demo.md
# records, and its attention is the alignment (AER against the gold links).
# Checked on the first 200 test pairs, greedy, so that it stays quick (also
# under valgrind).
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
MODEL="$ROOT/models/toy-attention.safetensors"
TOY="$ROOT/corpora/toy"
N=200

expect_ok "info" "$NMT" info "$MODEL"
grep -Eq '^attention +bahdanau' "$TMP/out" && pass || fail "an attention model: $(cat "$TMP/out")"
grep -Eq '^checkpoint +no' "$TMP/out" && pass || fail "a model, not a checkpoint"
# A few MB at most: it is committed.
[ "$(wc -c <"$MODEL")" -lt 5000000 ] && pass || fail "model file under 5 MB"

zcat "$TOY/test.src.gz" | head -n $N >"$TMP/src"
zcat "$TOY/test.tgt.gz" | head -n $N >"$TMP/ref"
head -n $N "$TOY/test.align" >"$TMP/gold"

expect_ok "translate" "$NMT" translate -m "$MODEL" -i "$TMP/src" -o "$TMP/hyp" --beam 1 -q
[ "$(wc -l <"$TMP/hyp")" -eq $N ] && pass || fail "one translation per line"
expect_ok "bleu" "$NMT" bleu -b "$TMP/ref" -i "$TMP/hyp"
bleu=$(cat "$TMP/out")
awk -v b="$bleu" 'BEGIN { exit !(b >= 90) }' && pass || fail "greedy BLEU $bleu, expected >= 90"

# Long sentences too: the point of attention.
paste -d '\t' "$TMP/src" "$TMP/ref" "$TMP/hyp" | awk -F'\t' 'split($1, w, " ") >= 40' >"$TMP/long"
[ -s "$TMP/long" ] && pass || fail "some test sentences of 40+ words among the first $N"
cut -f2 "$TMP/long" >"$TMP/long.ref"
cut -f3 "$TMP/long" >"$TMP/long.hyp"
expect_ok "bleu long" "$NMT" bleu -b "$TMP/long.ref" -i "$TMP/long.hyp"
bleu=$(cat "$TMP/out")
awk -v b="$bleu" 'BEGIN { exit !(b >= 85) }' && pass || fail "greedy BLEU on 40+ words $bleu, expected >= 85"

# Forced alignment of the references against the gold links.
expect_ok "align --gold" "$NMT" align -m "$MODEL" --src "$TMP/src" --tgt "$TMP/ref" --gold "$TMP/gold"
aer=$(awk '$1 == "AER" { print $2 }' "$TMP/out")
[ -n "$aer" ] && awk -v a="$aer" 'BEGIN { exit !(a <= 0.15) }' && pass ||
    fail "AER ${aer:-missing} > 0.15: $(cat "$TMP/out")"
# The same pairs with every target word moved one place on (the last to the
# first: a link must stay inside its pair): far worse.
awk 'NR == FNR { n[FNR] = NF; next }
     { out = ""; for (i = 1; i <= NF; i++) { split($i, p, "-"); out = out (i > 1 ? " " : "") p[1] "-" (p[2] + 1) % n[FNR] } print out }' \
    "$TMP/ref" "$TMP/gold" >"$TMP/shifted"
expect_ok "align --gold shifted" "$NMT" align -m "$MODEL" --src "$TMP/src" --tgt "$TMP/ref" --gold "$TMP/shifted"
aer2=$(awk '$1 == "AER" { print $2 }' "$TMP/out")
awk -v a="$aer" -v b="$aer2" 'BEGIN { exit !(b > a + 0.5) }' && pass ||
    fail "shifted gold AER $aer2 not far above $aer"

# The picture the demo writes.
head -n 1 "$TMP/src" >"$TMP/one"
expect_ok "align svg" "$NMT" align -m "$MODEL" --src "$TMP/one" -o "$TMP/one.svg"
grep -q '<svg' "$TMP/one.svg" && pass || fail "an SVG file"
finish
