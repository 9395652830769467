#!/usr/bin/env bash
# A Transformer run stopped any way and resumed ends with the uninterrupted
# run's bits: kill -9 at random moments (resumed each time), a stop by
# --max-steps extended, SIGINT resumed. The model has dropout at every site
# (embeddings, residual, attention, feed-forward), label smoothing, a
# warm-up, two threads, snapshots and their average, so that every piece of
# state a resume must restore is in play: the weights, Adam's moments, the
# generator that draws the masks and orders the batches, the schedule.
# Also: one thread and two give the same bits (the pool splits work in
# fixed chunks, the masks are drawn per chunk); and the variants (--norm
# scale, --fixnorm) killed and resumed end as their uninterrupted runs.
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy

zcat "$TOY/train.src.gz" | head -n 800 >"$TMP/s"
zcat "$TOY/train.tgt.gz" | head -n 800 >"$TMP/t"
zcat "$TOY/valid.src.gz" | head -n 30 >"$TMP/vs"
zcat "$TOY/valid.tgt.gz" | head -n 30 >"$TMP/vt"
RUN=("$NMT" train -q --arch transformer --src "$TMP/s" --tgt "$TMP/t" --valid-src "$TMP/vs"
     --valid-tgt "$TMP/vt" --d-model 16 --heads 2 --ff 32 --layers 2 --batch-size 16
     --dropout 0.2 --label-smoothing 0.1 --warmup 20 --lr 3e-3 --threads 2 --seed 5)
LONG=(--max-steps 90 --valid-every 7 --save-every 5 --keep-snapshots 3 --average-snapshots)

same() { # NAME A B [STOP...]: run B, resumed after stops at the STOPs, ends as run A
    # did: every tensor and state of its checkpoint, best model, average and
    # snapshots, bit for bit, and log.tsv's rows (tests/same_run.py)
    local name=$1
    shift
    if out=$(python3 "$SRC/tests/same_run.py" "$@"); then pass; else fail "$name: $out"; fi
}

expect_ok "uninterrupted" "${RUN[@]}" "${LONG[@]}" --out "$TMP/long"
grep -q "^90	" "$TMP/long/log.tsv" && pass || fail "the run did not reach step 90"

# --- one thread gives the two threads' bits ---------------------------------------------------
expect_ok "one thread" "${RUN[@]}" "${LONG[@]}" --threads 1 --out "$TMP/one"
same "one thread against two" "$TMP/long" "$TMP/one"

# --- a stop by --max-steps, extended ------------------------------------------------------------
expect_ok "stop at 38" "${RUN[@]}" "${LONG[@]}" --max-steps 38 --out "$TMP/ext"
expect_ok "extend to 90" "$NMT" train -q --resume "$TMP/ext" --max-steps 90
same "--max-steps 38, then 90" "$TMP/long" "$TMP/ext" 38

# --- SIGINT, resumed ------------------------------------------------------------------------------
"${RUN[@]}" "${LONG[@]}" --out "$TMP/int" 2>/dev/null &
pid=$!
for _ in $(seq 1 500); do [ "$(wc -l 2>/dev/null <"$TMP/int/log.tsv" || echo 0)" -ge 3 ] && break; sleep 0.01; done
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
at=$(tail -n 1 "$TMP/int/log.tsv" | cut -f1)
if [ $rc = 130 ]; then
    pass
    expect_ok "resume after SIGINT" "$NMT" train -q --resume "$TMP/int"
else
    fail "SIGINT: exit $rc"
fi
same "SIGINT at step $at, resumed" "$TMP/long" "$TMP/int" "$at"

# --- kill -9 at random moments, resumed each time ----------------------------------------------------
kill_resume "$TMP/k" 4 "${RUN[@]}" "${LONG[@]}"
[ $kills -ge 1 ] && pass || fail "no kill landed: the run is too short for this test"
same "kill -9, resumed" "$TMP/long" "$TMP/k"

# --- the variants (ScaleNorm, FixNorm): kill -9 at random moments, resumed ----------------
for v in scale fixnorm; do
    case $v in
    scale) V=(--norm scale) key='"norm": *"scale"' ;;
    fixnorm) V=(--fixnorm) key='"fixnorm": *"true"' ;;
    esac
    expect_ok "$v: uninterrupted" "${RUN[@]}" "${V[@]}" "${LONG[@]}" --out "$TMP/$v-long"
    kill_resume "$TMP/$v-k" 4 "${RUN[@]}" "${V[@]}" "${LONG[@]}"
    [ $kills -ge 1 ] && pass || fail "$v: no kill landed"
    same "$v: kill -9, resumed" "$TMP/$v-long" "$TMP/$v-k"
    head -c 4096 "$TMP/$v-k/checkpoint.safetensors" | grep -Eq "$key" && pass ||
        fail "$v: the resumed run's checkpoint lost its key"
done

finish
