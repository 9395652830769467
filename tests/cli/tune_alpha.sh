# The beam's length normalisation chosen at the end of a validated run
# (--tune-alpha, on by default with a validation set; src/train/tune_alpha.c):
# the alpha written into best.safetensors is the one of the best validation
# BLEU among 0.6 ... 2.0 as nmt translate and nmt bleu score them (of equal
# scores the nearest to 1.2), with the BLEU at 1.2 the run printed; the
# weights and the other metadata of best.safetensors are kept; nmt info
# shows it and nmt translate, nmt compare and nmt align decode with it
# unless --alpha is given; --no-tune-alpha, a run below BLEU 1 and a run
# without validation write none; a finished run resumed changes nothing;
# the refusals.
. "$(dirname "$0")/lib.sh"

# a copy task a tiny Transformer learns in seconds: BLEU above 1 on
# validation within 90 steps
C=$TMP/c
mkdir -p "$C"
words() {
    awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed); split("a b c d e f g h", w, " ")
        for (i = 0; i < n; i++) { k = 3 + int(rand() * 6); s = ""
            for (j = 0; j < k; j++) s = s (j ? " " : "") w[1 + int(rand() * 8)]
            print s } }'
}
words 2000 1 >"$C/train.src"
cp "$C/train.src" "$C/train.tgt"
words 40 2 >"$C/val.src"
cp "$C/val.src" "$C/val.tgt"
TINY=(--arch transformer --d-model 32 --heads 2 --ff 64 --layers 1 --src "$C/train.src"
      --tgt "$C/train.tgt" --threads 1)
VALID=(--valid-src "$C/val.src" --valid-tgt "$C/val.tgt" --valid-every 50)

rewrite_alpha() {
    python3 - "$1" "$2" "$3" <<'EOF'
import json, struct, sys, zlib
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
head["__metadata__"]["decode.alpha"] = sys.argv[3]
text = json.dumps(head).encode()
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
EOF
}

R=$TMP/run
expect_ok "train" "$NMT" train "${TINY[@]}" "${VALID[@]}" --max-steps 90 \
    --archive-snapshots "$TMP/arch" --out "$R"
cp "$TMP/err" "$TMP/train.err"
line=$(grep '^length normalisation: alpha' "$TMP/train.err")
[ -n "$line" ] && pass || fail "no line on the alpha: $(tail -5 "$TMP/train.err")"
chosen=$(sed 's/^length normalisation: alpha \([0-9.]*\) .*/\1/' <<<"$line")
said_top=$(sed 's/.* with the beam, \([0-9.]*\) against .*/\1/' <<<"$line")
at_default=$(sed 's/.* against \([0-9.]*\) at 1.2, .*/\1/' <<<"$line")
said_tried=$(sed 's/.*(\([0-9]*\) alphas tried by steps of 0.2, .*/\1/' <<<"$line")

"$NMT" info -v "$R/best.safetensors" >"$TMP/info"
grep -q "^decode alpha    $chosen (" "$TMP/info" && pass ||
    fail "nmt info: $(grep alpha "$TMP/info")"

# the walk, recomputed: each alpha's beam BLEU on the validation set as
# nmt translate and nmt bleu give it (alphas in tenths)
score() {
    local a
    a=$(awk -v t="$1" 'BEGIN { printf "%.1f", t / 10 }')
    "$NMT" translate -q -m "$R/best.safetensors" --alpha "$a" -i "$C/val.src" -o "$TMP/hyp.$1"
    "$NMT" bleu -b -w 6 -i "$TMP/hyp.$1" "$C/val.tgt"
}
above() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
top=$(score 12) at=12 dir=0 tried=3
s=$(score 10); if above "$s" "$top"; then top=$s at=10 dir=-2; fi
s=$(score 14); if above "$s" "$top"; then top=$s at=14 dir=2; fi
while [ $dir -ne 0 ] && [ $((at + dir)) -ge 0 ] && [ $((at + dir)) -le 30 ]; do
    tried=$((tried + 1))
    s=$(score $((at + dir)))
    above "$s" "$top" || break
    top=$s at=$((at + dir))
done
walk=$(awk -v t=$at 'BEGIN { printf "%g", t / 10 }')
[ "$walk" = "$chosen" ] && pass || fail "the run chose alpha $chosen, the walk ends at $walk ($top)"
[ "$tried" = "$said_tried" ] && pass || fail "the run tried $said_tried alphas, the walk $tried"
[ "$("$NMT" bleu -b -i "$TMP/hyp.12" "$C/val.tgt")" = "$at_default" ] && pass ||
    fail "BLEU at 1.2: the run said $at_default"
[ "$(printf '%.2f' "$top")" = "$said_top" ] && pass || fail "the best BLEU: $said_top, not $top"
best=$at

# without --alpha, the model's; --alpha still rules
"$NMT" translate -q -m "$R/best.safetensors" -i "$C/val.src" -o "$TMP/hyp.model"
cmp -s "$TMP/hyp.model" "$TMP/hyp.$best" && pass || fail "translate without --alpha"
# the n-best lists and their scores (log-probability / length^alpha) are
# those of --alpha at the model's alpha
"$NMT" translate -q -m "$R/best.safetensors" --n-best 3 -i "$C/val.src" -o "$TMP/nb.model"
"$NMT" translate -q -m "$R/best.safetensors" --alpha "$chosen" --n-best 3 -i "$C/val.src" \
    -o "$TMP/nb.given"
cmp -s "$TMP/nb.model" "$TMP/nb.given" && pass || fail "the n-best lists at the model's alpha"

# nmt align translates with it too (a file whose decode.alpha says 2 shows
# the translations of --alpha 2)
rewrite_alpha "$R/best.safetensors" "$TMP/two.safetensors" "2"
"$NMT" align -m "$TMP/two.safetensors" --src "$C/val.src" --format json >"$TMP/al.json"
"$NMT" translate -q -m "$R/best.safetensors" --alpha 2 -i "$C/val.src" -o "$TMP/hyp.two"
python3 - "$TMP/al.json" "$TMP/hyp.two" <<'EOF' && pass || fail "nmt align's translations"
import json, sys
got = [" ".join(t for t in json.loads(l)["target"] if t != "</s>") for l in open(sys.argv[1])]
sys.exit(0 if got == [l.rstrip("\n") for l in open(sys.argv[2])] else 1)
EOF

# best.safetensors keeps its weights and its other metadata
step=$(sed -n 's/.*, step \([0-9]*\), epoch.*/\1/p' "$TMP/info")
[ -n "$step" ] && [ -e "$TMP/arch/snapshot-$step.safetensors" ] && pass ||
    fail "best's step ($step) has no archived snapshot"
same_data "$R/best.safetensors" "$TMP/arch/snapshot-$step.safetensors" && pass ||
    fail "best.safetensors's weights changed"
grep -Eq "^  best.valid_bleu = [0-9.]+$" "$TMP/info" && pass || fail "best.valid_bleu lost"

# the checkpoint says the run chooses; a finished run resumed writes nothing
"$NMT" info -v "$R/checkpoint.safetensors" | grep -q "^  train.tune_alpha = 1$" && pass ||
    fail "train.tune_alpha not in the checkpoint"
cp "$R/best.safetensors" "$TMP/best.before"
expect_ok "resume after the end" "$NMT" train --resume "$R"
cmp -s "$R/best.safetensors" "$TMP/best.before" && pass || fail "resume rewrote best"
! grep -q "length normalisation" "$TMP/err" && pass || fail "resume chose again"

# --no-tune-alpha: none, and the decoders' 1.2
expect_ok "--no-tune-alpha" "$NMT" train "${TINY[@]}" "${VALID[@]}" --max-steps 90 \
    --no-tune-alpha --out "$TMP/off"
! grep -q "length normalisation" "$TMP/err" && pass || fail "--no-tune-alpha chose"
"$NMT" info "$TMP/off/best.safetensors" | grep -q "^decode alpha    none" && pass ||
    fail "--no-tune-alpha: $("$NMT" info "$TMP/off/best.safetensors" | grep alpha)"
"$NMT" info -v "$TMP/off/checkpoint.safetensors" | grep -q "^  train.average_snapshots" &&
    ! "$NMT" info -v "$TMP/off/checkpoint.safetensors" | grep -q "train.tune_alpha" && pass ||
    fail "--no-tune-alpha's checkpoint has the key"
"$NMT" translate -q -m "$TMP/off/best.safetensors" -i "$C/val.src" -o "$TMP/off.model"
"$NMT" translate -q -m "$TMP/off/best.safetensors" --alpha 1.2 -i "$C/val.src" -o "$TMP/off.12"
cmp -s "$TMP/off.model" "$TMP/off.12" && pass || fail "a model without alpha is not at 1.2"

# a run that learned nothing yet (BLEU below 1) does not choose
expect_ok "short run" "$NMT" train "${TINY[@]}" "${VALID[@]}" --max-steps 3 --out "$TMP/short"
! grep -q "length normalisation" "$TMP/err" && pass || fail "a run below BLEU 1 chose"
"$NMT" info "$TMP/short/best.safetensors" | grep -q "^decode alpha    none" && pass ||
    fail "short run's alpha"

# refusals
expect_fail "--tune-alpha without validation" "--tune-alpha needs a validation set" \
    "$NMT" train "${TINY[@]}" --max-steps 3 --tune-alpha --out "$TMP/nv"
expect_fail "--no-tune-alpha on --resume" "cannot be changed on --resume" \
    "$NMT" train --resume "$R" --no-tune-alpha
rewrite_alpha "$R/best.safetensors" "$TMP/bad.safetensors" "-1"
expect_fail "a negative decode.alpha" "decode.alpha '-1' is not a number in 0..10" \
    "$NMT" translate -m "$TMP/bad.safetensors" -i "$C/val.src"
"$NMT" translate -q -m "$TMP/two.safetensors" -i "$C/val.src" -o "$TMP/two.model"
"$NMT" translate -q -m "$R/best.safetensors" --alpha 2 -i "$C/val.src" -o "$TMP/hyp.two"
cmp -s "$TMP/two.model" "$TMP/hyp.two" && pass || fail "a file's decode.alpha 2 is not used"
finish
