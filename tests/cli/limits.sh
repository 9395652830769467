# nmt train's limits and judgement: --max-time (strict durations, the run
# validates and saves when the time is up, counted across resumes), the
# checkpoint left by every way a run ends, --threads defaulting to every
# core, --best-metric bleu|ppl (best.safetensors and the lr schedule follow
# it), and checkpoints written before these settings existed.
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
# ge X Y: X >= Y (decimals)
ge() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= y) }'; }
rows() { tail -n +2 "$1" | wc -l; }

zcat "$TOY/valid.src.gz" | head -n 30 >"$TMP/v.src"
zcat "$TOY/valid.tgt.gz" | head -n 30 >"$TMP/v.tgt"
SMALL=(--emb 8 --hidden 8 --att-dim 8 --out-dim 8 --batch-size 16 --threads 1)
TOYRUN=("$NMT" train --arch rnn --src "$TOY/train.src.gz" --tgt "$TOY/train.tgt.gz" "${SMALL[@]}")
VALID=(--valid-src "$TMP/v.src" --valid-tgt "$TMP/v.tgt")

# --- help -------------------------------------------------------------------------
expect_ok "help" "$NMT" train --help
for opt in max-time best-metric keep-snapshots average-snapshots; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
grep -q "here $(nproc))" "$TMP/out" && pass || fail "help does not give the default threads"
grep -q "same seed and --threads give the same" "$TMP/out" && pass || fail "reproducibility note"

# --- durations are parsed strictly -------------------------------------------------
refused() { # refused NAME PATTERN ARGS...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    expect_fail "$name" "$pattern" "${TOYRUN[@]}" "$@" --out "$TMP/refused"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
for bad in 90 1m30 30x h 1h1h 30m1h -5m "" 1.5h "2 h" 10s5m; do
    refused "--max-time '$bad'" "--max-time: '$bad' is not a duration" --max-time "$bad"
done
refused "--max-time too long" "--max-time: .* is too long" --max-time 100001h
# a number of more digits than a double holds exactly is still a number
refused "--max-time of 17 digits" "--max-time: 12345678901234567s is too long" \
    --max-time 12345678901234567s
refused "--max-time of 400 digits" "--max-time: 9{400}h is too long" --max-time "$(printf '9%.0s' $(seq 400))h"
refused "--best-metric" "--best-metric: unknown value 'loss' \\(expected one of: bleu, ppl\\)" \
    --best-metric loss

# --- --max-time: stops, validates and saves; epochs unlimited ----------------------------
expect_ok "max-time 2s" "${TOYRUN[@]}" "${VALID[@]}" --max-time 2s --report-every 20 --out "$TMP/t"
grep -q "time limit reached (--max-time 2.0s) at step" "$TMP/err" && pass ||
    fail "no time limit message: $(cat "$TMP/err")"
grep -q "^done at step [0-9]* .* (--max-time 2.0s)" "$TMP/err" && pass || fail "summary: $(cat "$TMP/err")"
CK=$TMP/t/checkpoint.safetensors
step=$(meta_of "$CK" state.step)
elapsed=$(meta_of "$CK" state.elapsed_s)
[ "$step" -gt 5 ] && pass || fail "only $step steps in 2 s"
ge "$elapsed" 2 && ! ge "$elapsed" 60 && pass || fail "elapsed $elapsed s for --max-time 2s"
[ "$(meta_of "$CK" train.max_time)" = 2 ] && pass || fail "train.max_time $(meta_of "$CK" train.max_time)"
[ "$(meta_of "$CK" train.epochs)" = 0 ] && pass || fail "epochs not unlimited: $(meta_of "$CK" train.epochs)"
last=$(tail -n 1 "$TMP/t/log.tsv")
[ "$(echo "$last" | cut -f1)" = "$step" ] && pass || fail "last log row is not step $step: $last"
[ -n "$(echo "$last" | cut -f10)" ] && pass || fail "no validation at the end: $last"
[ "$(meta_of "$CK" state.last_valid_step)" = "$step" ] && pass || fail "validation state"

# resumed with the time spent: nothing to do; with more time: goes on, across resumes
n_rows=$(rows "$TMP/t/log.tsv")
expect_ok "resume, time spent" "$NMT" train --resume "$TMP/t"
grep -q "has used its --max-time 2.0s (.*): nothing to do" "$TMP/err" && pass ||
    fail "resume after the limit: $(cat "$TMP/err")"
[ "$(meta_of "$CK" state.step)" = "$step" ] && pass || fail "a step was taken past the limit"
[ "$(rows "$TMP/t/log.tsv")" = "$n_rows" ] && pass || fail "rows added past the limit"
expect_ok "resume with --max-time 4s" "$NMT" train -q --resume "$TMP/t" --max-time 4s
step2=$(meta_of "$CK" state.step)
[ "$step2" -gt "$step" ] && pass || fail "resume --max-time 4s took no step"
ge "$(meta_of "$CK" state.elapsed_s)" 4 && pass || fail "elapsed $(meta_of "$CK" state.elapsed_s) < 4"
[ "$(meta_of "$CK" train.max_time)" = 4 ] && pass || fail "--max-time on resume not kept"
expect_fail "no limit left" "has no limit but --max-time.*give --max-time, --epochs or --max-steps" \
    "$NMT" train --resume "$TMP/t" --max-time 0
[ "$(meta_of "$CK" state.step)" = "$step2" ] && pass || fail "a refused resume trained"
expect_ok "--max-time 0 --max-steps" "$NMT" train -q --resume "$TMP/t" --max-time 0 \
    --max-steps $((step2 + 3))
[ "$(meta_of "$CK" state.step)" = $((step2 + 3)) ] && pass || fail "--max-steps after --max-time"
# --epochs given: it stays a limit beside the time
expect_ok "max-time with epochs" "$NMT" train --arch rnn -q --src "$TMP/v.src" --tgt "$TMP/v.tgt" "${SMALL[@]}" \
    --max-time 1h --epochs 2 --out "$TMP/te"
[ "$(meta_of "$TMP/te/checkpoint.safetensors" state.epoch)" = 3 ] && pass || fail "--epochs 2 with --max-time"

# --- every end leaves the checkpoint of the end -----------------------------------------
expect_ok "ends by --max-steps" "$NMT" train --arch rnn -q --src "$TMP/v.src" --tgt "$TMP/v.tgt" "${SMALL[@]}" \
    --max-steps 3 --save-every 1000 --out "$TMP/ms"
[ "$(meta_of "$TMP/ms/checkpoint.safetensors" state.step)" = 3 ] && pass || fail "--max-steps 3"
expect_ok "ends by --epochs" "$NMT" train --arch rnn -q --src "$TMP/v.src" --tgt "$TMP/v.tgt" "${SMALL[@]}" \
    --epochs 3 --save-every 1000 --out "$TMP/ep"
[ "$(meta_of "$TMP/ep/checkpoint.safetensors" state.step)" = 6 ] &&
    [ "$(meta_of "$TMP/ep/checkpoint.safetensors" state.epoch)" = 4 ] && pass ||
    fail "--epochs 3 of 2 batches: step $(meta_of "$TMP/ep/checkpoint.safetensors" state.step)"

# --- --threads: every core the process may use ----------------------------------------------
expect_ok "default threads" "$NMT" train --arch rnn -q --src "$TMP/v.src" --tgt "$TMP/v.tgt" --emb 8 --hidden 8 \
    --att-dim 8 --out-dim 8 --max-steps 1 --out "$TMP/th"
[ "$(meta_of "$TMP/th/checkpoint.safetensors" train.threads)" = "$(nproc)" ] && pass ||
    fail "threads $(meta_of "$TMP/th/checkpoint.safetensors" train.threads), nproc $(nproc)"
expect_ok "threads under taskset" taskset -c 0 "$NMT" train --arch rnn -q --src "$TMP/v.src" --tgt "$TMP/v.tgt" \
    --emb 8 --hidden 8 --att-dim 8 --out-dim 8 --max-steps 1 --out "$TMP/th1"
[ "$(meta_of "$TMP/th1/checkpoint.safetensors" train.threads)" = 1 ] && pass ||
    fail "threads under taskset -c 0: $(meta_of "$TMP/th1/checkpoint.safetensors" train.threads)"
for cmd in translate score compare align; do
    "$NMT" "$cmd" --help | grep -q "every core" && pass || fail "$cmd --help: threads default"
done

# --- --best-metric: best.safetensors and the lr schedule follow it ----------------------------
# Five pairs learnt by heart at a high learning rate, validated on
# themselves every 3 steps with patience 1: BLEU and perplexity zigzag, so the
# two metrics pick different best models. The log's rows are checked
# against the rules replayed here (nmt train --help); no average of
# snapshots, which could become the best model by neither rule.
printf 'ein Hund läuft .\neine Katze schläft .\nzwei Hunde spielen im Park .\nein Mann liest\nder Mann sieht den Hund\n' >"$TMP/p.de"
printf 'a dog runs .\na cat sleeps .\ntwo dogs play in the park .\na man reads\nthe man sees the dog\n' >"$TMP/p.en"
for metric in bleu ppl; do
    expect_ok "best-metric $metric" "$NMT" train --arch rnn -q --src "$TMP/p.de" --tgt "$TMP/p.en" \
        --valid-src "$TMP/p.de" --valid-tgt "$TMP/p.en" --emb 8 --hidden 8 --att-dim 8 --out-dim 8 \
        --batch-size 2 --threads 1 --dropout 0 --label-smoothing 0 --untied-embeddings \
        --best-metric "$metric" --epochs 20 --valid-every 3 \
        --patience 1 --lr-decay 0.7 --lr 0.3 --keep-snapshots 0 --out "$TMP/bm-$metric"
    [ "$(meta_of "$TMP/bm-$metric/checkpoint.safetensors" train.best_metric)" = "$metric" ] &&
        pass || fail "train.best_metric $metric"
    "$PY" - "$TMP/bm-$metric" "$metric" "$(meta_of "$TMP/bm-$metric/best.safetensors" best.step)" \
        <<'EOF' && pass || fail "best-metric $metric: best model or lr schedule"
import sys
d, metric, best_step = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = [l.rstrip("\n").split("\t") for l in open(d + "/log.tsv")]
col = {n: i for i, n in enumerate(lines[0])}
valid = [r for r in lines[1:] if r[col["valid_ppl"]] != ""]
assert len(valid) == 20, len(valid)
best = (-1.0, float("inf"), -1)     # bleu, ppl, step
highest, lowest, lr, decays = -1.0, float("inf"), 0.3, 0
for r in valid:
    step, ppl, bleu = int(r[col["step"]]), float(r[col["valid_ppl"]]), float(r[col["valid_bleu"]])
    if metric == "ppl":
        beats = ppl < best[1] or (ppl == best[1] and bleu > best[0])
        improved = ppl < lowest
    else:
        if bleu < 1 and best[0] < 1:  # BLEU below 1 is noise: perplexity decides
            beats = ppl < best[1] or (ppl == best[1] and bleu > best[0])
        else:
            beats = bleu > best[0] or (bleu == best[0] and ppl < best[1])
        improved = bleu > highest or ppl < lowest
    lowest, highest = min(lowest, ppl), max(highest, bleu)
    if beats:
        best = (bleu, ppl, step)
    if not improved:
        lr *= 0.7
        decays += 1
    assert "%.6g" % lr == r[col["lr"]], (step, lr, r[col["lr"]])
assert best[2] == best_step, (best, best_step)
assert decays > 0, "the schedule never decayed: a weak test"
EOF
done
[ "$(meta_of "$TMP/bm-bleu/best.safetensors" best.step)" != \
  "$(meta_of "$TMP/bm-ppl/best.safetensors" best.step)" ] && pass ||
    fail "both metrics chose the same best model: the test does not tell them apart"

# --- a checkpoint and log of before these settings resume as they were -------------------------
expect_ok "run to age" "${TOYRUN[@]}" -q "${VALID[@]}" --max-steps 10 --out "$TMP/old"
"$PY" - "$TMP/old" <<'EOF'
import json, struct, sys
d = sys.argv[1]
path = d + "/checkpoint.safetensors"
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
for k in ("train.max_time", "train.best_metric", "train.keep_snapshots",
          "train.average_snapshots", "state.highest_bleu", "state.best_average_of",
          "state.averaged_step"):
    del head["__metadata__"][k]
text = json.dumps(head).encode()
open(path, "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
rows = [l.rstrip("\n").split("\t")[:10] for l in open(d + "/log.tsv")]
open(d + "/log.tsv", "w").write("".join("\t".join(r) + "\n" for r in rows))
EOF
[ -z "$(meta_of "$TMP/old/checkpoint.safetensors" train.best_metric)" ] && pass || fail "key not removed"
expect_ok "resume an old checkpoint" "$NMT" train -q --resume "$TMP/old" --max-steps 20
CK=$TMP/old/checkpoint.safetensors
[ "$(meta_of "$CK" state.step)" = 20 ] && pass || fail "old checkpoint: step $(meta_of "$CK" state.step)"
[ "$(meta_of "$CK" train.best_metric)" = bleu ] && [ "$(meta_of "$CK" train.max_time)" = 0 ] &&
    [ "$(meta_of "$CK" train.keep_snapshots)" = 0 ] && pass || fail "old checkpoint: defaults"
head -n 1 "$TMP/old/log.tsv" | grep -q "	valid_bleu	average_of$" && pass || fail "old log header not updated"
[ "$(awk -F'\t' '{ print NF }' "$TMP/old/log.tsv" | sort -u)" = 11 ] && pass ||
    fail "old log rows not padded to 11 cells"

finish
