#!/usr/bin/env bash
# A training corpus streamed from its files (--shuffle-buffer N,
# src/train/stream_blocks.c), on 1200 pairs of the toy corpus: a buffer larger
# than the corpus makes one block, planned into the in-memory run's
# batches (the same bits, with --accumulate and --batch-tokens too); with
# --no-shuffle, blocks of a multiple of the batch size are the in-memory
# batches; the counted vocabularies are the in-memory ones; subwords
# learned from the sample of a small corpus are its whole-corpus pieces;
# stops at --max-steps mid-block and mid-epoch, and kill -9 at random
# moments, resume to the uninterrupted run's checkpoint (weights, moments
# and state, the stream's position with it); what is refused. The MPI
# runs are tests/cli/stream_mpi.sh (release builds only).
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:?}
cd "$TMP" || exit 1
zcat "$ROOT/corpora/toy/train.src.gz" | head -n 1200 | gzip >s.gz
zcat "$ROOT/corpora/toy/train.tgt.gz" | head -n 1200 | gzip >t.gz
zcat "$ROOT/corpora/toy/valid.src.gz" | head -n 40 >vs
zcat "$ROOT/corpora/toy/valid.tgt.gz" | head -n 40 >vt
M=(--emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16 --threads 1 -q)
RUN=("$NMT" train --arch rnn --src s.gz --tgt t.gz "${M[@]}")

# the same bits, moments included, and the same training state but the
# stream's own keys (a run in memory has none) and the elapsed time
same_run() { # NAME A B
    local out
    if out=$(python3 "$ROOT/tests/st_diff.py" "$2/checkpoint.safetensors" \
             "$3/checkpoint.safetensors" --same) &&
       out=$(python3 - "$2/checkpoint.safetensors" "$3/checkpoint.safetensors" <<'PY'
import json, struct, sys
def meta(p):
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n])["__metadata__"]
a, b = meta(sys.argv[1]), meta(sys.argv[2])
skip = ("state.elapsed_s", "train.shuffle_buffer", "train.max_steps", "train.max_len")
bad = [k for k in sorted(set(a) | set(b))
       if k not in skip and not k.startswith("state.stream_") and a.get(k) != b.get(k)]
print(" ".join("%s %s/%s" % (k, a.get(k), b.get(k)) for k in bad))
sys.exit(1 if bad else 0)
PY
); then pass; else fail "$1: $out"; fi
}
stream_keys() { # NAME A B: the stream's keys agree too
    local x y
    x=$(head -c 20000 "$2/checkpoint.safetensors" | grep -ao '"state.stream_[a-z_]*": *"[^"]*"' | sort)
    y=$(head -c 20000 "$3/checkpoint.safetensors" | grep -ao '"state.stream_[a-z_]*": *"[^"]*"' | sort)
    [ -n "$x" ] && [ "$x" = "$y" ] && pass || fail "$1: stream keys '$x' against '$y'"
}

# --- refused ---------------------------------------------------------------
expect_fail "not a number" "shuffle-buffer.*not a whole number" "${RUN[@]}" --shuffle-buffer x --out r1
expect_fail "negative" "shuffle-buffer.*out of range" "${RUN[@]}" --shuffle-buffer -1 --out r2
expect_fail "standard input" "not from standard input" "$NMT" train --arch rnn --src - --tgt t.gz "${M[@]}" \
    --shuffle-buffer 100 --max-steps 1 --out r3 <s.gz
expect_fail "subword sampling" "subword-alpha.*shuffle-buffer" "${RUN[@]}" --subwords 60 \
    --subword-alpha 0.1 --shuffle-buffer 100 --max-steps 1 --out r4
expect_ok "a run to resume" "${RUN[@]}" --shuffle-buffer 100 --max-steps 2 --out r5
expect_fail "changed on --resume" "shuffle-buffer cannot be changed on --resume" \
    "$NMT" train -q --resume r5 --shuffle-buffer 50 --max-steps 4

# --- a buffer larger than the corpus: the in-memory run ------------------------
for opts in "" "--accumulate 2 --batch-tokens 200" "--subwords 60 --max-steps 30"; do
    read -ra o <<<"$opts"
    lim=(--epochs 2)
    case "$opts" in *max-steps*) lim=() ;; esac
    expect_ok "in memory [$opts]" "${RUN[@]}" "${lim[@]}" "${o[@]}" --out mem
    expect_ok "one block [$opts]" "${RUN[@]}" "${lim[@]}" "${o[@]}" --shuffle-buffer 5000 --out one
    same_run "a buffer larger than the corpus is the in-memory run [$opts]" mem one
    rm -rf mem one
done
# the corpus line: the counting pass keeps and skips what the reader does
"${RUN[@]}" --max-steps 0 --out c1 -v 2>c1.err >/dev/null
"${RUN[@]}" --max-steps 0 --shuffle-buffer 100 --out c2 -v 2>c2.err >/dev/null
l1=$(grep '^corpus:' c1.err)
l2=$(grep '^corpus:' c2.err)
[ -n "$l1" ] && [ "$l1" = "$l2" ] && pass || fail "corpus lines differ: '$l1' against '$l2'"

# --no-shuffle: blocks of a multiple of the batch size are the corpus's batches
expect_ok "no shuffle, in memory" "${RUN[@]}" --no-shuffle --epochs 1 --out ns-mem
expect_ok "no shuffle, blocks of 64" "${RUN[@]}" --no-shuffle --epochs 1 --shuffle-buffer 64 --out ns-64
same_run "--no-shuffle in blocks of 64 is the in-memory run" ns-mem ns-64

# the rows are sized by the longest pair read (stream_blocks.c), and a capacity
# changes no result: --max-len 200 on pairs that all fit 50 is --max-len 50
paste <(zcat s.gz) <(zcat t.gz) | awk -F '\t' 'split($1, a, " ") <= 50 && split($2, b, " ") <= 50' >fit.tsv
cut -f1 fit.tsv | gzip >fs.gz
cut -f2 fit.tsv | gzip >ft.gz
F=("$NMT" train --arch rnn --src fs.gz --tgt ft.gz "${M[@]}" --shuffle-buffer 300 --accumulate 2 --max-steps 30)
expect_ok "--max-len 50" "${F[@]}" --max-len 50 --out len50
expect_ok "--max-len 200" "${F[@]}" --max-len 200 --out len200
same_run "--max-len 200 where every pair fits 50" len50 len200

# --- exact resume ----------------------------------------------------------------
# blocks of 200 pairs (5 blocks an epoch), steps of 2 batches of up to 200
# target tokens, so that steps cross blocks; stops mid-block and mid-epoch
S=("${RUN[@]}" --shuffle-buffer 200 --accumulate 2 --batch-tokens 200 --epochs 2
   --valid-src vs --valid-tgt vt --valid-every 25 --report-every 10)
expect_ok "uninterrupted" "${S[@]}" --out full
epoch=$(head -c 20000 full/checkpoint.safetensors | grep -ao '"state.epoch": *"[0-9]*"' | grep -o '[0-9]*"$' | tr -d '"')
[ "$epoch" = 3 ] && pass || fail "two epochs should end in epoch 3, not '$epoch'"
expect_ok "stop at step 23" "${S[@]}" --max-steps 23 --out ext
expect_ok "resume to step 51" "$NMT" train -q --resume ext --max-steps 51
expect_ok "resume to the end" "$NMT" train -q --resume ext --max-steps 100000
if out=$(python3 "$ROOT/tests/same_run.py" full ext 23 51); then pass; else fail "stops at 23 and 51: $out"; fi
same_run "stops at 23 and 51, checkpoint" full ext
stream_keys "stops at 23 and 51, the stream's position" full ext

# kill -9 at random moments, checkpoints every 3 steps
K=("${S[@]}" --save-every 3)
expect_ok "uninterrupted, saving every 3 steps" "${K[@]}" --out kfull
kill_resume "$PWD/k" 3 "${K[@]}"
[ $kills -ge 1 ] && pass || fail "no kill landed"
same_run "kill -9 + resume against uninterrupted" kfull k
stream_keys "kill -9 + resume, the stream's position" kfull k
cmp -s <(cut -f1-6,9,10 kfull/log.tsv) <(cut -f1-6,9,10 k/log.tsv) && pass ||
    fail "kill -9 + resume: log.tsv differs in loss or validation columns"

finish
