#!/usr/bin/env bash
# --accumulate K and --batch-tokens N (src/train/train.c, src/data/batch.c):
# K batches of B pairs make the step of one batch of K B pairs, within float
# rounding (one SGD step, for the RNN and the Transformer; the batches in
# corpus order, so both runs see the same pairs); --batch-tokens makes
# batches whose padded target (pairs x the longest target, </s> counted)
# is within the budget but where one pair is longer, takes every pair once
# an epoch, trains, and is kept by --resume (the resumed run ends on the
# uninterrupted one's bits); bad values are refused by name.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:?}
DIFF=(python3 "$ROOT/tests/st_diff.py")
cd "$TMP" || exit 1
zcat "$ROOT/corpora/toy/train.src.gz" | head -n 300 >s
zcat "$ROOT/corpora/toy/train.tgt.gz" | head -n 300 >t

within() { # NAME A B BOUND [--except SUFFIX]...: A's and B's weights agree within BOUND
    if out=$("${DIFF[@]}" "$2/checkpoint.safetensors" "$3/checkpoint.safetensors" "${@:4}"); then
        pass
        echo "$1: largest relative difference $out" >&2
    else
        fail "$1: $out"
    fi
}

# --- --accumulate: 3 batches of 4 against one batch of 12, one SGD step
# (label smoothing on: it is normalised per token like the loss)
RNN=(train --arch rnn --src s --tgt t --emb 16 --hidden 16 --att-dim 16 --out-dim 16)
TF=(train --src s --tgt t --arch transformer --d-model 16 --heads 2 --ff 32 --layers 2 --warmup 0)
ONE=(--threads 1 -q --no-shuffle --dropout 0 --label-smoothing 0.1 --optimizer sgd --lr 0.5
     --max-steps 1)
for arch in rnn tf; do
    if [ $arch = rnn ]; then M=("${RNN[@]}"); else M=("${TF[@]}"); fi
    expect_ok "$arch: one batch of 12" "$NMT" "${M[@]}" "${ONE[@]}" --batch-size 12 --out $arch-12
    expect_ok "$arch: 3 batches of 4" "$NMT" "${M[@]}" "${ONE[@]}" --batch-size 4 --accumulate 3 \
        --out $arch-4x3
    # a Transformer's key biases have a zero gradient but for rounding
    # (tests/st_diff.py)
    within "$arch: --accumulate 3 against one batch of the sum" $arch-12 $arch-4x3 1e-5 --except .b_k
    # and it is a different step from one batch of 4: the bound means something
    expect_ok "$arch: one batch of 4" "$NMT" "${M[@]}" "${ONE[@]}" --batch-size 4 --out $arch-4
    if "${DIFF[@]}" $arch-12/checkpoint.safetensors $arch-4/checkpoint.safetensors 1e-5 \
        --except .b_k >/dev/null; then
        fail "$arch: one batch of 4 is within the bound of one of 12"
    else pass; fi
done

# --- --batch-tokens: every logged batch within the budget, or one pair
# (--max-len 200: every one of the 300 pairs is trained on)
TOK=("${RNN[@]}" --threads 1 -q --dropout 0 --batch-size 40 --batch-tokens 60 --max-len 200
     --epochs 1 --save-every 0)
expect_ok "--batch-tokens 60: an epoch" "$NMT" "${TOK[@]}" --batch-log tok.jsonl --out tok
if out=$(python3 - tok.jsonl 2>&1 <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])][1:]
sizes, pairs = [], 0
for b in lines:
    n = len(b["tgt"])
    padded = n * max(len(y) + 1 for y in b["tgt"])
    if padded > 60 and n > 1:
        sys.exit(f"step {b['step']}: {n} pairs, padded target {padded} > 60")
    sizes.append(n)
    pairs += n
if pairs != 300:
    sys.exit(f"{pairs} pairs in the epoch's batches, not 300")
if len(set(sizes)) < 2 or max(sizes) < 3:
    sys.exit(f"batch sizes {sorted(set(sizes))}: not filled by tokens")
print(f"{len(lines)} batches of {min(sizes)}-{max(sizes)} pairs")
EOF
); then pass; echo "--batch-tokens 60: $out" >&2; else fail "--batch-tokens 60: $out"; fi
steps=$(($(wc -l <tok.jsonl) - 1))
tail -n 1 tok/log.tsv | grep -q "^$steps	" && pass ||
    fail "the epoch's steps are not its batches ($steps): $(tail -n 1 tok/log.tsv)"

# --- both kept by --resume: 4 steps, then 4 more, as 8 at once
BOTH=("${TF[@]}" --threads 1 -q --dropout 0.1 --batch-tokens 80 --batch-size 30 --accumulate 2)
expect_ok "8 steps at once" "$NMT" "${BOTH[@]}" --max-steps 8 --out whole
expect_ok "4 steps" "$NMT" "${BOTH[@]}" --max-steps 4 --out part
expect_ok "4 more on --resume" "$NMT" train -q --resume part --max-steps 8
if out=$("${DIFF[@]}" whole/checkpoint.safetensors part/checkpoint.safetensors --same); then pass
else fail "--resume with --batch-tokens and --accumulate: $out"; fi

# --- refused by name
expect_fail "--accumulate 0" "--accumulate" "$NMT" "${RNN[@]}" --accumulate 0 --out bad
expect_fail "--batch-tokens x" "--batch-tokens" "$NMT" "${RNN[@]}" --batch-tokens x --out bad
expect_fail "changed on --resume" "--accumulate cannot be changed on --resume" \
    "$NMT" train --resume part --accumulate 3
finish
