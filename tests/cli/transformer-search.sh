# scripts/experiments/transformer-search end to end at a tiny size: runs of 3 seconds
# on a "Multi30k" cut from the toy corpus (train and val only: the search
# never reads a test set), tiny Transformers given by the configurations.
# Checks the records, the table's ranking (by the validation BLEU of the
# models handed over, recomputed here with nmt), the SVG, that a second call
# adds only the new configurations, and the refusals.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=$(dirname "$(dirname "$NMT_BIN")")
SEARCH=("$ROOT/scripts/experiments/transformer-search")
export NMT_BUILD_DIR=$BUILD

C=$TMP/m30k
mkdir -p "$C"
for split in train:train:1500 val:valid:40; do
    IFS=: read -r to from n <<<"$split"
    zcat "$ROOT/corpora/toy/$from.src.gz" | head -n "$n" | gzip >"$C/$to.de.gz"
    zcat "$ROOT/corpora/toy/$from.tgt.gz" | head -n "$n" | gzip >"$C/$to.en.gz"
done
TINY="--d-model 16 --heads 2 --ff 32 --layers 1 --valid-every 20"
cat >"$TMP/configs" <<EOF
# two tiny ones
small   $TINY
small-drop $TINY \\
        --dropout 0.3   # a continuation line
EOF
OUT=$TMP/search
run() { (cd "$TMP" && "${SEARCH[@]}" --from "$C" --configs "$TMP/configs" --minutes 0.05 "$@"); }

expect_ok "first sitting" run --out "$OUT"
for n in small small-drop; do
    for f in run.tsv log.tsv best.safetensors val.beam.txt; do
        [ -s "$OUT/$n/$f" ] && pass || fail "$n: no $f"
    done
    for k in name options command commit direction threads max_time date_start load_before \
             load_after params valid_beam_bleu valid_beam_chrf valid_beam_alpha; do
        v=$(awk -F'\t' -v k=$k '$1 == k { print $2 }' "$OUT/$n/run.tsv")
        [ -n "$v" ] && pass || fail "$n: run.tsv has no $k"
    done
    # the recorded score is the one nmt gives the handed-over model on val
    want=$("$NMT" bleu -i "$OUT/$n/val.beam.txt" "$C/val.en.gz" -b)
    got=$(awk -F'\t' '$1 == "valid_beam_bleu" { print $2 }' "$OUT/$n/run.tsv")
    [ "$want" = "$got" ] && pass || fail "$n: recorded valid BLEU $got, nmt bleu says $want"
done
grep -q -- '--dropout 0.3' "$OUT/small-drop/run.tsv" && pass ||
    fail "the continuation line's options were lost"
# the table: every run, ranked by the validation BLEU (beam), best first
rows=$(tail -n +2 "$OUT/results.tsv" | wc -l)
[ "$rows" = 2 ] && pass || fail "results.tsv has $rows runs, not 2"
sorted=$(tail -n +2 "$OUT/results.tsv" | awk -F'\t' '{ print $15 }' | sort -gr | tr '\n' ' ')
ranked=$(tail -n +2 "$OUT/results.tsv" | awk -F'\t' '{ print $15 }' | tr '\n' ' ')
[ "$sorted" = "$ranked" ] && pass || fail "results.tsv is not ranked by valid BLEU: $ranked"
grep -q '^| 1 | ' "$OUT/results.md" && grep -q '^| 2 | ' "$OUT/results.md" && pass ||
    fail "results.md lacks its rows"
grep -q 'no test set was read' "$OUT/results.md" && pass || fail "results.md does not say how it chose"
# the epoch- and minute-matched table: a row a run, its epoch 1 cell the
# greedy BLEU log.tsv has at epoch 1's last validation
for n in small small-drop; do
    want=$(awk -F'\t' 'NR > 1 && $2 == 1 && $10 != "" { b = $10 } END { print b }' "$OUT/$n/log.tsv")
    got=$(awk -F' [|] ' -v n="$n" '$1 == "| " n { print $2 }' "$OUT/results.md")
    [ -n "$want" ] && [ "$got" = "$(printf '%.2f' "$want")" ] && pass ||
        fail "$n: matched epoch 1 cell '$got', log.tsv has '$want'"
done
python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1])
assert len(d.getElementsByTagName("polyline")) == 2' "$OUT/valid-bleu-vs-time.svg" && pass ||
    fail "the SVG does not parse or lacks a line a run"
ls "$C" | grep -q test && fail "a test set appeared" || pass

# a second sitting runs only what is new
before=$(stat -c %Y "$OUT/small/log.tsv")
echo "third $TINY --label-smoothing 0.2" >>"$TMP/configs"
expect_ok "second sitting" run --out "$OUT"
[ "$(stat -c %Y "$OUT/small/log.tsv")" = "$before" ] && pass || fail "a finished run ran again"
[ -s "$OUT/third/run.tsv" ] && pass || fail "the new configuration did not run"
rows=$(tail -n +2 "$OUT/results.tsv" | wc -l)
[ "$rows" = 3 ] && pass || fail "results.tsv has $rows runs after the second sitting, not 3"
expect_ok "--report-only" run --out "$OUT" --report-only
grep -q 'different alphas' "$OUT/results.md" && fail "one alpha, yet a warning" || pass

# --rescore: the handed-over model decoded again at another alpha; its record
# says so, the score is what nmt gives at that alpha, the table warns
before=$(stat -c %Y "$OUT/small/log.tsv")
expect_ok "--rescore" run --out "$OUT" --rescore --only small --alpha 0.6
[ "$(awk -F'\t' '$1 == "valid_beam_alpha" { print $2 }' "$OUT/small/run.tsv")" = 0.6 ] && pass ||
    fail "run.tsv does not record the rescoring alpha"
"$NMT" translate -m "$OUT/small/best.safetensors" -i "$C/val.de.gz" --alpha 0.6 -o "$TMP/a06.txt" -q
want=$("$NMT" bleu -i "$TMP/a06.txt" "$C/val.en.gz" -b)
got=$(awk -F'\t' '$1 == "valid_beam_bleu" { print $2 }' "$OUT/small/run.tsv")
[ "$want" = "$got" ] && pass || fail "rescored valid BLEU $got, nmt bleu at alpha 0.6 says $want"
[ "$(grep -c '^valid_beam_bleu' "$OUT/small/run.tsv")" = 1 ] && pass || fail "the old score is kept beside the new"
[ "$(stat -c %Y "$OUT/small/log.tsv")" = "$before" ] && pass || fail "--rescore trained"
grep -q 'different alphas (0.6, 1.2)' "$OUT/results.md" && pass ||
    fail "the table does not warn of rows decoded at different alphas"
[ "$(awk -F'\t' '$2 == "small" { print $17 }' "$OUT/results.tsv")" = 0.6 ] && pass ||
    fail "results.tsv lacks the alpha column"
expect_ok "--rescore back" run --out "$OUT" --rescore --only small
grep -q 'different alphas' "$OUT/results.md" && fail "the warning outlived the rescoring" || pass
expect_fail "bad --alpha" "--alpha: not a number" run --out "$OUT" --rescore --alpha x

# refusals, before any training
sed -i 's/--label-smoothing 0.2/--label-smoothing 0.3/' "$TMP/configs"
expect_fail "changed options" "third ran with other options" run --out "$OUT"
sed -i 's/--label-smoothing 0.3/--label-smoothing 0.2/' "$TMP/configs"
expect_fail "other minutes" "ran for 3s" run --out "$OUT" --minutes 0.1
expect_fail "unknown --only" "no configuration 'nope'" run --out "$OUT" --only nope
echo "bad --max-time 5m" >"$TMP/bad"
expect_fail "the script's option" "bad gives --max-time, which is the script's" \
    "${SEARCH[@]}" --from "$C" --configs "$TMP/bad" --out "$TMP/o2"
mkdir -p "$TMP/foreign" && touch "$TMP/foreign/x"
expect_fail "a foreign --out" "holds files this script did not write" \
    run --out "$TMP/foreign"
expect_fail "bad --minutes" "--minutes: not a number" run --out "$OUT" --minutes x
expect_fail "bad --direction" "--direction: de-en or en-de" run --out "$OUT" --direction fr-en

# a run cut off (SIGTERM to the script and its nmt train, as when the machine
# stops) resumes from its checkpoint on the next call and keeps what it had
echo "cut $TINY" >"$TMP/cut"
O3=$TMP/cut-out
(cd "$TMP" && exec setsid "${SEARCH[@]}" --from "$C" --configs "$TMP/cut" --minutes 0.4 \
    --out "$O3" >"$TMP/cut1.out" 2>&1) &
pid=$!
for _ in $(seq 600); do  # until a checkpoint and a few log rows exist (up to 60 s)
    [ -f "$O3/cut/checkpoint.safetensors" ] && [ "$(wc -l <"$O3/cut/log.tsv" 2>/dev/null || echo 0)" -ge 3 ] && break
    sleep 0.1
done
kill -TERM -- -"$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ -f "$O3/cut/run.tsv" ]; then
    fail "the run ended before it could be cut (a slow machine?)"
else
    first=$(sed -n 2p "$O3/cut/log.tsv")
    [ -f "$O3/cut.started" ] && pass || fail "no cut.started record of the cut-off run"
    expect_ok "the second call after a cut" \
        bash -c "cd '$TMP' && '${SEARCH[0]}' --from '$C' --configs '$TMP/cut' --minutes 0.4 --out '$O3' >'$TMP/cut2.out' 2>&1"
    grep -q 'cut: resuming its cut-off run' "$TMP/cut2.out" && pass ||
        fail "the second call did not resume: $(head -c 300 "$TMP/cut2.out")"
    [ "$(sed -n 2p "$O3/cut/log.tsv")" = "$first" ] && pass ||
        fail "log.tsv was begun again, not continued"
    [ "$(awk -F'\t' '$1 == "resumes" { print $2 }' "$O3/cut/run.tsv")" = 1 ] && pass ||
        fail "run.tsv does not count the resume"
    [ ! -e "$O3/cut.started" ] && pass || fail "cut.started is left behind"
    # nmt train's clock went on from where it stopped: 24 s in all, not 24 s more
    last=$(tail -n 1 "$O3/cut/log.tsv" | cut -f8)
    awk -v t="$last" 'BEGIN { exit !(t >= 23 && t < 40) }' && pass ||
        fail "the resumed run trained $last s in all, not about 24"
fi

echo "$n_pass passed, $n_fail failed"
[ $n_fail -eq 0 ]
