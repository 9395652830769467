# nmt train --keep-snapshots K --average-snapshots (3, and on, by default when
# validating): the models of the last K
# validations are kept (and no more), their mean is written, validated (a
# log.tsv row of its own) and made best.safetensors when it is better; a
# resumed run, after kill -9 at any moment, ends with the same snapshots,
# average, best model and log as one never interrupted.
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

meta_of() { # meta_of FILE KEY: a metadata value
    "$PY" - "$1" "$2" <<'EOF'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    print(json.loads(f.read(n))["__metadata__"].get(sys.argv[2], ""))
EOF
}
snapshots() { (cd "$1" && ls snapshot-*.safetensors 2>/dev/null | tr '\n' ' '); }

zcat "$TOY/valid.src.gz" | head -n 30 >"$TMP/v.src"
zcat "$TOY/valid.tgt.gz" | head -n 30 >"$TMP/v.tgt"
RUN=("$NMT" train --arch rnn --src "$TOY/train.src.gz" --tgt "$TOY/train.tgt.gz" --valid-src "$TMP/v.src"
     --valid-tgt "$TMP/v.tgt" --emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16
     --threads 1 --seed 3)

# --- refused settings ---------------------------------------------------------------
refused() { # refused NAME PATTERN ARGS...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    expect_fail "$name" "$pattern" "$@" --out "$TMP/refused"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
refused "snapshots without validation" "--keep-snapshots needs a validation set" \
    "$NMT" train --arch rnn --src "$TMP/v.src" --tgt "$TMP/v.tgt" --keep-snapshots 3
refused "average without snapshots" "--average-snapshots needs --keep-snapshots K with K of at least 2" \
    "${RUN[@]}" --average-snapshots
refused "average of one" "--average-snapshots needs --keep-snapshots" \
    "${RUN[@]}" --keep-snapshots 1 --average-snapshots
refused "bad count" "--keep-snapshots: 'many' is not a whole number" "${RUN[@]}" --keep-snapshots many
refused "negative count" "--keep-snapshots: -1 is out of range" "${RUN[@]}" --keep-snapshots -1

# --- the defaults: with validation and neither option, keep 3 and average --------------------
expect_ok "defaults" "${RUN[@]}" --max-steps 40 --valid-every 10 --out "$TMP/d"
[ "$(snapshots "$TMP/d")" = "snapshot-20.safetensors snapshot-30.safetensors snapshot-40.safetensors " ] &&
    pass || fail "snapshots kept by default: $(snapshots "$TMP/d")"
[ "$(meta_of "$TMP/d/average.safetensors" average.of)" = 3 ] && pass || fail "no default average"
[ "$(awk -F'\t' 'NR > 1 && $11 == 3' "$TMP/d/log.tsv" | wc -l)" = 1 ] && pass ||
    fail "no log.tsv row of the default average: $(cat "$TMP/d/log.tsv")"
[ "$(meta_of "$TMP/d/checkpoint.safetensors" train.keep_snapshots)" = 3 ] &&
    [ "$(meta_of "$TMP/d/checkpoint.safetensors" train.average_snapshots)" = 1 ] && pass ||
    fail "the checkpoint does not record the default snapshots"
# a run that stops between validations: the message names the newest snapshot, not the last step
expect_ok "defaults, stop between validations" "${RUN[@]}" --max-steps 45 --valid-every 10 --out "$TMP/d45"
grep -q "average of 3 snapshots (steps 20-40) in $TMP/d45/average.safetensors" "$TMP/err" &&
    [ "$(meta_of "$TMP/d45/average.safetensors" average.to_step)" = 40 ] && pass ||
    fail "the average's steps after a stop between validations: $(grep average "$TMP/err")"
# either option given: no defaults for the other; --keep-snapshots 0: none
expect_ok "keep 4, no average" "${RUN[@]}" --max-steps 40 --valid-every 10 --keep-snapshots 4 --out "$TMP/k4"
[ "$(snapshots "$TMP/k4" | wc -w)" = 4 ] && [ ! -e "$TMP/k4/average.safetensors" ] && pass ||
    fail "--keep-snapshots 4 alone: $(ls "$TMP/k4")"
expect_ok "keep 0" "${RUN[@]}" --max-steps 20 --valid-every 10 --keep-snapshots 0 --out "$TMP/k0"
[ -z "$(snapshots "$TMP/k0")" ] && [ ! -e "$TMP/k0/average.safetensors" ] && pass ||
    fail "--keep-snapshots 0: $(ls "$TMP/k0")"
# no validation: nothing to keep, and no refusal
expect_ok "defaults without validation" "$NMT" train --arch rnn --src "$TMP/v.src" --tgt "$TMP/v.tgt" \
    --emb 8 --hidden 8 --att-dim 8 --out-dim 8 --max-steps 2 --threads 1 --out "$TMP/nv"
[ -z "$(snapshots "$TMP/nv")" ] && [ ! -e "$TMP/nv/average.safetensors" ] &&
    [ "$(meta_of "$TMP/nv/checkpoint.safetensors" train.keep_snapshots)" = 0 ] && pass ||
    fail "snapshots without validation: $(ls "$TMP/nv")"

# --- a run keeps the last three and averages them --------------------------------------------
# a stale snapshot in the folder is no snapshot of this run
mkdir -p "$TMP/s"
cp "$SRC/models/toy-attention.safetensors" "$TMP/s/snapshot-999.safetensors"
expect_ok "run" "${RUN[@]}" --max-steps 60 --valid-every 10 --keep-snapshots 3 --average-snapshots \
    --out "$TMP/s"
[ "$(snapshots "$TMP/s")" = "snapshot-40.safetensors snapshot-50.safetensors snapshot-60.safetensors " ] &&
    pass || fail "snapshots kept: $(snapshots "$TMP/s")"
grep -q "average of 3 snapshots (steps 40-60) in $TMP/s/average.safetensors: ppl" "$TMP/err" && pass ||
    fail "no average line: $(cat "$TMP/err")"
grep -Eq "the average (beats it|does not beat it) \\(--best-metric bleu\\)" "$TMP/err" && pass ||
    fail "no word on the average against the best: $(cat "$TMP/err")"
[ "$(meta_of "$TMP/s/snapshot-50.safetensors" snapshot.step)" = 50 ] && pass || fail "snapshot metadata"
expect_ok "a snapshot is a model" "$NMT" info -v "$TMP/s/snapshot-50.safetensors"
grep -q "adam" "$TMP/out" && fail "a snapshot holds optimizer state" || pass
[ "$(meta_of "$TMP/s/average.safetensors" average.of)" = 3 ] &&
    [ "$(meta_of "$TMP/s/average.safetensors" average.from_step)" = 40 ] && pass || fail "average metadata"
# the average is nmt average of the three, and numpy's mean of them
expect_ok "nmt average of the snapshots" "$NMT" average -q "$TMP"/s/snapshot-{40,50,60}.safetensors \
    -o "$TMP/mean.safetensors"
same_data "$TMP/mean.safetensors" "$TMP/s/average.safetensors" && pass ||
    fail "average.safetensors is not nmt average of the snapshots"
"$PY" - "$SRC/tests" "$TMP/s" <<'EOF' && pass || fail "numpy mean of the snapshots"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from interop import read_safetensors
d = sys.argv[2]
snaps = [read_safetensors("%s/snapshot-%d.safetensors" % (d, s))[1] for s in (40, 50, 60)]
_, avg, _, _ = read_safetensors(d + "/average.safetensors")
for k, v in avg.items():
    want = np.mean(np.stack([s[k].astype(np.float64) for s in snaps]), axis=0).astype(np.float32)
    assert v.tobytes() == want.tobytes(), k
EOF
# its row in log.tsv: no training columns, its validation, and how many
last=$(tail -n 1 "$TMP/s/log.tsv")
[ "$(echo "$last" | cut -f1,4,5,6,7,11)" = "60					3" ] && pass || fail "average row: $last"
ppl=$("$NMT" score -m "$TMP/s/average.safetensors" --src "$TMP/v.src" --tgt "$TMP/v.tgt" |
      awk '$1 == "perplexity" { printf "%.3f", $2 }')
[ "$(echo "$last" | cut -f9)" = "$ppl" ] && pass || fail "the row's valid_ppl $(echo "$last" | cut -f9), nmt score $ppl"
# best.safetensors: the row that wins by BLEU (ties, and BLEU below 1: perplexity), the
# average's included
"$PY" - "$TMP/s" "$(meta_of "$TMP/s/best.safetensors" best.step)" \
    "$(meta_of "$TMP/s/best.safetensors" best.average_of)" <<'EOF' && pass || fail "best model"
import sys
d, best_step, best_avg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [l.rstrip("\n").split("\t") for l in open(d + "/log.tsv")]
col = {n: i for i, n in enumerate(lines[0])}
best = None
for r in lines[1:]:
    if r[col["valid_ppl"]] == "":
        continue
    key = (float(r[col["valid_bleu"]]), -float(r[col["valid_ppl"]]))
    if best is not None and key[0] < 1 and best[0][0] < 1:  # below 1 BLEU, perplexity decides
        better = (key[1], key[0]) > (best[0][1], best[0][0])
    else:
        better = best is None or key > best[0]
    if better:
        best = (key, int(r[col["step"]]), r[col["average_of"]])
assert best[1] == best_step and best[2] == best_avg, (best, best_step, best_avg)
EOF

# --- resumed: nothing to do is nothing done; more steps, a new average ---------------------------
n_rows=$(wc -l <"$TMP/s/log.tsv")
cp "$TMP/s/average.safetensors" "$TMP/avg.before"
expect_ok "resume a finished run" "$NMT" train -q --resume "$TMP/s"
[ "$(wc -l <"$TMP/s/log.tsv")" = "$n_rows" ] && pass || fail "a finished run averaged again"
cmp -s "$TMP/avg.before" "$TMP/s/average.safetensors" && pass || fail "average.safetensors rewritten"
expect_ok "resume for more" "$NMT" train -q --resume "$TMP/s" --max-steps 80
[ "$(snapshots "$TMP/s")" = "snapshot-60.safetensors snapshot-70.safetensors snapshot-80.safetensors " ] &&
    pass || fail "snapshots after resuming: $(snapshots "$TMP/s")"
[ "$(tail -n 1 "$TMP/s/log.tsv" | cut -f1,11)" = "80	3" ] && pass || fail "no new average row"
[ "$(meta_of "$TMP/s/average.safetensors" average.from_step)" = 60 ] && pass || fail "new average's steps"
[ "$(cut -f1 "$TMP/s/log.tsv" | grep -c '^60$')" = 2 ] && pass || fail "rows of step 60 (trained, average)"

# --- kill -9 at random moments, resumed each time: the same end ----------------------------------
KRUN=("${RUN[@]}" -q --dropout 0.3 --max-steps 90 --valid-every 7 --save-every 5 --report-every 5
      --keep-snapshots 3 --average-snapshots)
expect_ok "uninterrupted" "${KRUN[@]}" --out "$TMP/long"
kill_resume "$TMP/k" 4 "${KRUN[@]}"
[ $kills -ge 1 ] && pass || fail "no kill landed: the run is too short for this test"
[ "$(snapshots "$TMP/k")" = "$(snapshots "$TMP/long")" ] && pass ||
    fail "snapshots differ: $(snapshots "$TMP/k") vs $(snapshots "$TMP/long")"
for f in checkpoint best average $(cd "$TMP/long" && ls snapshot-* | sed 's/\.safetensors$//'); do
    same_data "$TMP/long/$f.safetensors" "$TMP/k/$f.safetensors" && pass || fail "kill -9 + resume: $f differs"
done
cmp -s <(cut -f1-6,9-11 "$TMP/long/log.tsv") <(cut -f1-6,9-11 "$TMP/k/log.tsv") && pass ||
    fail "kill -9 + resume: log.tsv differs"
[ "$(ls "$TMP/k" | grep -c tmp)" = 0 ] && pass || fail "temporary files left: $(ls "$TMP/k")"

finish
