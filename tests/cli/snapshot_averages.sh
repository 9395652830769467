# scripts/experiments/snapshot-averages on a tiny Transformer trained on the
# toy corpus with every validation's snapshot archived: one row a K, K = 1 is the last snapshot
# itself, each row's score is the one nmt gives nmt average's mean of the
# same files, the best single snapshot is the one log.tsv validated best,
# and the refusals.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
AVG=("$ROOT/scripts/experiments/snapshot-averages")
export NMT=$NMT_BIN

C=$TMP/c
mkdir -p "$C"
zcat "$ROOT/corpora/toy/train.src.gz" | head -n 1500 | gzip >"$C/train.src.gz"
zcat "$ROOT/corpora/toy/train.tgt.gz" | head -n 1500 | gzip >"$C/train.tgt.gz"
zcat "$ROOT/corpora/toy/valid.src.gz" | head -n 40 >"$C/val.src"
zcat "$ROOT/corpora/toy/valid.tgt.gz" | head -n 40 >"$C/val.tgt"
R=$TMP/run
expect_ok "train" "$NMT" train --arch transformer --d-model 16 --heads 2 --ff 32 --layers 1 \
    --src "$C/train.src.gz" --tgt "$C/train.tgt.gz" --valid-src "$C/val.src" \
    --valid-tgt "$C/val.tgt" --valid-every 15 --max-steps 90 --keep-snapshots 2 \
    --archive-snapshots "$TMP/all" --threads 1 --out "$R"
mapfile -t snaps < <(ls "$TMP/all"/snapshot-*.safetensors | sort -t- -k2 -n)
n=${#snaps[@]}
[ "$n" -ge 5 ] && pass || fail "the run archived $n snapshots, not 5 or more"

expect_ok "K = 1,2,4" "${AVG[@]}" "$R" --snapshots "$TMP/all" --src "$C/val.src" \
    --ref "$C/val.tgt" --ks 1,2,4
cp "$TMP/out" "$TMP/table"
[ "$(head -1 "$TMP/table")" = "$(printf 'K\tsteps\tvalid_bleu\tvalid_chrf')" ] && pass ||
    fail "header: $(head -1 "$TMP/table")"
[ "$(cut -f1 "$TMP/table" | tail -n +2 | tr '\n' ' ')" = "1 2 4 best " ] && pass ||
    fail "rows: $(cut -f1 "$TMP/table" | tr '\n' ' ')"
step() { sed 's/.*snapshot-\([0-9]*\)\.safetensors$/\1/' <<<"$1"; }
row() { awk -F'\t' -v k="$1" '$1 == k' "$TMP/table"; }
[ "$(row 4 | cut -f2)" = "$(step "${snaps[n - 4]}")-$(step "${snaps[n - 1]}")" ] && pass ||
    fail "K = 4 averaged $(row 4 | cut -f2)"
[ "$(row 1 | cut -f2)" = "$(step "${snaps[n - 1]}")-$(step "${snaps[n - 1]}")" ] && pass ||
    fail "K = 1 is not the last snapshot: $(row 1 | cut -f2)"

# each score recomputed with nmt from the files themselves
bleu_of() {
    "$NMT" translate -m "$1" -i "$C/val.src" -o "$TMP/hyp" -q &&
        "$NMT" bleu -i "$TMP/hyp" "$C/val.tgt" -m bleu chrf -b | paste -s -d '\t'
}
[ "$(row 1 | cut -f3-)" = "$(bleu_of "${snaps[n - 1]}")" ] && pass || fail "K = 1's score"
"$NMT" average -q "${snaps[n - 2]}" "${snaps[n - 1]}" -o "$TMP/two.safetensors"
[ "$(row 2 | cut -f3-)" = "$(bleu_of "$TMP/two.safetensors")" ] && pass || fail "K = 2's score"
cmp -s "$TMP/two.safetensors" "$R/average-2.safetensors" && pass ||
    fail "average-2.safetensors is not the mean of the last two snapshots"
best=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["valid_bleu"] != "" && $c["valid_bleu"] + 0 > b { b = $c["valid_bleu"] + 0; s = $c["step"] }
    END { print s }' "$R/log.tsv")
[ "$(row best | cut -f2)" = "$best" ] && pass || fail "best: $(row best | cut -f2), log.tsv: $best"
[ "$(row best | cut -f3-)" = "$(bleu_of "$TMP/all/snapshot-$best.safetensors")" ] && pass ||
    fail "the best snapshot's score"
# the run's own folder keeps its last 2: K = 4 is refused there

# refusals
expect_fail "K beyond the snapshots" "4 snapshots asked, .* has 2" \
    "${AVG[@]}" "$R" --src "$C/val.src" --ref "$C/val.tgt" --ks 1,4
expect_fail "bad list" "--ks: comma-separated" \
    "${AVG[@]}" "$R" --src "$C/val.src" --ref "$C/val.tgt" --ks 1,,2
expect_fail "no snapshots" "no snapshot-STEP" \
    "${AVG[@]}" "$C" --src "$C/val.src" --ref "$C/val.tgt"
expect_fail "no --ref" "--src and --ref are needed" "${AVG[@]}" "$R" --src "$C/val.src"
expect_ok "--help" "${AVG[@]}" --help
grep -q -- "--ks LIST" "$TMP/out" && pass || fail "--help lacks --ks"
finish
