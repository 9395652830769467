#!/usr/bin/env bash
# nmt train --resume extends a run, whatever stopped it, to what the run
# never stopped would have made: --max-steps, --max-time, a signal (then
# --max-steps) and --epochs, each against the uninterrupted run (weights and
# optimizer state bit for bit, the loop's state, best.safetensors, the
# snapshots and their average, the log's rows). The validation at a stop
# between scheduled validations is reported and may become
# best.safetensors, but counts for nothing else (no snapshot, no lr decay,
# no patience or early-stop count). A run that early stopping ended stays
# ended on a plain --resume, and goes on with --early-stop 0 or a larger one.
. "$(dirname "$0")/lib.sh"

TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/valid.src.gz" | head -n 30 >vs
zcat "$TOY/valid.tgt.gz" | head -n 30 >vt

meta_of() { # meta_of FILE KEY: a metadata value
    "$PY" - "$1" "$2" <<'EOF'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    print(json.loads(f.read(n))["__metadata__"].get(sys.argv[2], ""))
EOF
}

same_run() { # same_run NAME U E [STEP...]
    local name=$1
    shift
    if out=$("$PY" "$NMT_SOURCE_ROOT/tests/same_run.py" "$@"); then pass; else fail "$name: $out"; fi
}

# GRU, SGD at a high lr, lr halved at every validation that is no
# improvement: whether a stop's validation counted shows in the weights
C=(train --arch rnn -q --src s --tgt t --valid-src vs --valid-tgt vt --emb 16 --hidden 16 --att-dim 16
   --out-dim 16 --batch-size 16 --threads 1 --cell gru --optimizer sgd --lr 3 --patience 1
   --best-metric ppl --valid-every 7 --report-every 6 --keep-snapshots 3 --average-snapshots)
expect_ok "uninterrupted" "$NMT" "${C[@]}" --epochs 4 --out full
end=$(meta_of full/checkpoint.safetensors state.step)
[ "$end" = 64 ] && pass || fail "4 epochs are $end steps, not 16 each"

# --- --max-steps, then more ------------------------------------------------------------
for at in 20 40; do
    expect_ok "stop at $at" "$NMT" "${C[@]}" --epochs 4 --max-steps $at --out steps-$at
    # the stop's validation is reported, and its model is the best so far
    # (the run still improves): it is best.safetensors; but it takes no
    # snapshot
    [ "$(awk -F'\t' -v at=$at '$1 == at && $11 == "" { print ($9 != "") }' steps-$at/log.tsv)" = 1 ] &&
        pass || fail "no validation row at the stop at $at: $(cat steps-$at/log.tsv)"
    [ "$(meta_of steps-$at/best.safetensors best.step)" = $at ] && pass ||
        fail "best.safetensors of a run stopped at $at: step $(meta_of steps-$at/best.safetensors best.step)"
    [ ! -e steps-$at/snapshot-$at.safetensors ] && pass || fail "a snapshot of the stop at $at"
    expect_ok "extend from $at" "$NMT" train -q --resume steps-$at --max-steps 1000
    same_run "--max-steps $at, then --resume --max-steps 1000" full steps-$at $at
done

# --- --epochs, then more ---------------------------------------------------------------
expect_ok "2 epochs" "$NMT" "${C[@]}" --epochs 2 --out epochs
expect_ok "extend to 4 epochs" "$NMT" train -q --resume epochs --epochs 4
same_run "--epochs 2, then --resume --epochs 4" full epochs 32

# --- a signal, then --max-steps, then the rest -----------------------------------------------
# --epochs 50 so that the run cannot end before the signal; SIGINT once the log
# shows two rows; then a --max-steps stop off the schedule, and the rest
"$NMT" "${C[@]}" --epochs 50 --out sig 2>sig.err &
pid=$!
for _ in $(seq 1 1000); do [ "$(wc -l 2>/dev/null <sig/log.tsv || echo 0)" -ge 3 ] && break; sleep 0.01; done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && pass || fail "SIGINT: exit $rc, expected 130: $(cat sig.err)"
at=$(meta_of sig/checkpoint.safetensors state.step)
# the next of the stops above past the signal's step (a validation there
# that counted changes the weights, as checked above), or one off the
# schedule if the signal came late
next=$((at + 9))
while [ $((next % 7)) -eq 0 ] || [ $((next % 16)) -eq 0 ]; do next=$((next + 1)); done
for s in 40 20; do [ "$s" -gt "$at" ] && next=$s; done
if [ "$next" -lt "$end" ]; then
    expect_ok "resume to $next" "$NMT" train -q --resume sig --epochs 4 --max-steps $next
    expect_ok "resume to the end" "$NMT" train -q --resume sig --max-steps 1000
    same_run "SIGINT at $at, --max-steps $next, the rest" full sig "$at" "$next"
else
    fail "SIGINT arrived at step $at, past the uninterrupted run's $end steps"
fi

# --- --max-time, then more -----------------------------------------------------------------
# The stop's step depends on the machine's speed, so nothing may be
# scheduled near it: no --valid-every, and epochs of 1229 steps (2457 pairs
# fit --max-len, 2 a batch), far more than a second's worth (a validation
# or a checkpoint there would slow that step and draw the stop to it). The
# run is then extended by 20 steps (a --max-steps stop, off the schedule
# too). With an lr too small to move a weight (1e-30) every validation
# scores the same, so a stop's validation that counted would make the next
# one no improvement, and --patience 1 would halve the lr. --max-time
# without --epochs: the time alone limits.
zcat "$TOY/train.src.gz" | head -n 3000 >s3000
zcat "$TOY/train.tgt.gz" | head -n 3000 >t3000
M=(train --arch rnn -q --src s3000 --tgt t3000 --valid-src vs --valid-tgt vt --emb 16 --hidden 16
   --att-dim 16 --out-dim 16 --batch-size 2 --threads 1 --optimizer sgd --lr 1e-30
   --patience 1 --report-every 10)
expect_ok "--max-time 1s" "$NMT" "${M[@]}" --max-time 1s --out time
at=$(meta_of time/checkpoint.safetensors state.step)
[ "$(meta_of time/checkpoint.safetensors state.last_valid_step)" = "$at" ] && pass ||
    fail "--max-time: no validation at the stop (step $at)"
to=$((at + 20))
expect_ok "extend the --max-time run" "$NMT" train -q --resume time --max-time 0 --max-steps $to
expect_ok "uninterrupted to $to" "$NMT" "${M[@]}" --max-time 1h --max-steps $to --out time-full
same_run "--max-time 1s (step $at), then --resume --max-steps $to" time-full time "$at"
echo "--max-time 1s stopped at step $at" >&2

# --- early stopping ends a run for good -----------------------------------------------------
# with an lr of 1e-30 nothing improves after the first validation: early stop
# 2 ends the run at step 3
ES=(train --arch rnn -q --src s --tgt t --valid-src vs --valid-tgt vt --emb 16 --hidden 16 --att-dim 16
    --out-dim 16 --batch-size 16 --threads 1 --optimizer sgd --lr 1e-30 --patience 1
    --valid-every 1 --early-stop 2)
expect_ok "early stop" "$NMT" "${ES[@]}" --out early
[ "$(meta_of early/checkpoint.safetensors state.step)" = 3 ] && pass ||
    fail "early stop at step $(meta_of early/checkpoint.safetensors state.step), expected 3"
[ "$(meta_of early/checkpoint.safetensors state.early_stopped)" = 1 ] && pass ||
    fail "the checkpoint does not say the run stopped early"
cp early/best.safetensors best.before
cp early/log.tsv log.before
plain_resume() { # plain_resume NAME DIR: nothing done, and said so
    "$NMT" train --resume "$2" >out 2>err
    local rc=$?
    [ $rc -eq 0 ] && pass || fail "$1: exit $rc: $(cat err)"
    grep -q "ended by early stopping at step 3 .*nothing to do.*--early-stop 0" err && pass ||
        fail "$1: no word of the early stop: $(cat err)"
    [ "$(meta_of "$2/checkpoint.safetensors" state.step)" = 3 ] && pass ||
        fail "$1: trained on to step $(meta_of "$2/checkpoint.safetensors" state.step)"
    cmp -s best.before "$2/best.safetensors" && pass || fail "$1: best.safetensors rewritten"
    cmp -s log.before "$2/log.tsv" && pass || fail "$1: log.tsv changed"
}
plain_resume "plain resume of an early-stopped run" early
# a checkpoint from before the flag was saved: known by its counter
cp -r early old
"$PY" - old/checkpoint.safetensors <<'EOF'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
del h["__metadata__"]["state.early_stopped"]
j = json.dumps(h).encode()
j += b" " * (-len(j) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(j)) + j + b[8 + n:])
EOF
[ "$(meta_of old/checkpoint.safetensors state.early_stopped)" = "" ] && pass || fail "the flag is still there"
plain_resume "plain resume of an early-stopped run of an older checkpoint" old
cp early/checkpoint.safetensors ckpt.before
expect_fail "a smaller --early-stop" "--early-stop 1: .*ended by early stopping after 2 validations.*above 2.*nothing was changed" \
    "$NMT" train --resume early --early-stop 1
cmp -s ckpt.before early/checkpoint.safetensors && pass || fail "a refused --early-stop changed the checkpoint"
# on purpose: a larger --early-stop allows that many validations without
# improvement in all (stops at 5), --early-stop 0 none
cp -r early early4
expect_ok "resume with --early-stop 4" "$NMT" train --resume early4 --early-stop 4
[ "$(meta_of early4/checkpoint.safetensors state.step)" = 5 ] && pass ||
    fail "--early-stop 4: stopped at step $(meta_of early4/checkpoint.safetensors state.step), expected 5"
grep -q "early stop: no improvement in 4 validations" err && pass || fail "--early-stop 4: $(cat err)"
expect_ok "resume with --early-stop 0" "$NMT" train -q --resume early --early-stop 0 --max-steps 9
[ "$(meta_of early/checkpoint.safetensors state.step)" = 9 ] &&
    [ "$(meta_of early/checkpoint.safetensors state.early_stopped)" = 0 ] && pass ||
    fail "--early-stop 0: at step $(meta_of early/checkpoint.safetensors state.step)"

finish
