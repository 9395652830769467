# SIGINT and SIGTERM wherever the kernel delivers them. A process-wide
# signal goes to any thread that does not block it, and OpenBLAS starts its
# threads when the library loads, before main, so a mask set in main never
# reaches them. tgkill (tests/tgkill.c) aims a signal at one thread, as
# the kernel may: a signal on any one thread of nmt serve (OpenBLAS's,
# libmicrohttpd's, a worker's) starts the same clean stop as one on the
# main thread (the requests in flight answered 200, exit 0); signals on
# every thread at once, and a second SIGTERM with kill, stop it at once
# (exit 0, every request in flight answered, 503 for what was not yet
# decoded); a SIGTERM on any one thread of nmt train stops it at a step
# with its checkpoint written (exit 143), and the run resumes from it.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
. "$(dirname "$0")/serve_lib.sh"

TGKILL=${NMT_TGKILL:?NMT_TGKILL is not set}
SRC=${NMT_SOURCE_ROOT:?}
M=$SRC/models/toy-attention.safetensors
cd "$TMP" || exit 1

# threads PID: the process's thread ids that a process-wide SIGTERM may
# be handed to, the main thread's first: those that do not block it
# (SigBlk, bit 15). A sanitizer's own thread blocks every signal (and a
# signal aimed at it would wait there for ever); nmt's threads block none.
threads() {
    local t
    for t in $(ls "/proc/$1/task" | sort -n); do
        [ $((0x$(sed -n 's/^SigBlk:\s*//p' "/proc/$1/task/$t/status" 2>/dev/null || echo 0) & 0x4000)) = 0 ] &&
            echo "$t"
    done
}

# --- nmt serve ----------------------------------------------------------------------
# Two requests that keep both workers busy for a while (about 0.5 s each in
# a release build): 100 sentences of 200 words at beam 16.
"$PY" -c 'import json; print(json.dumps({"text": [" ".join(["sko bap frug verd lairn"] * 40)] * 100, "beam": 16}))' >heavy

# start_busy NAME: a server with both heavy requests accepted (GET /stats
# counts them in flight); their statuses go to NAME.code.1 and .2
start_busy() {
    local name=$1 n k
    serve_start "$name" -m "$M" --threads 2 || return 1
    for k in 1 2; do
        curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @heavy "$URL/translate" \
            >"$name.code.$k" &
        CURLS[$k]=$!
    done
    for _ in $(seq 1 600); do
        n=$(curl -s "$URL/stats" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["in_flight"])')
        [ "$n" = 2 ] && return 0
        sleep 0.05
    done
    echo "$name: the requests were never in flight" >&2
    return 1
}

# finish_busy NAME: waits for the clients and the server (at most WAIT
# seconds); sets RC (the server's exit status: 137 when it had to be
# killed) and CODES (the clients' statuses)
WAIT=20
[ -n "${NMT_SANITIZED:-}" ] && WAIT=60
finish_busy() {
    local name=$1
    for _ in $(seq 1 $((WAIT * 10))); do kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVE_PID" 2>/dev/null && echo "$name: still running after $WAIT s" >&2
    wait "${CURLS[1]}" "${CURLS[2]}"
    wait "$SERVE_PID"
    RC=$?
    CODES="$(cat "$name.code.1") $(cat "$name.code.2")"
}

# One SIGTERM on each thread but the main one, a server for each: a clean
# stop that answers both requests
start_busy probe || { fail "serve: start"; finish; exit 1; }
mapfile -t TIDS < <(threads "$SERVE_PID")
kill -TERM "$SERVE_PID"
finish_busy probe
echo "nmt serve has ${#TIDS[@]} threads" >&2
[ "${#TIDS[@]}" -ge 4 ] && pass || fail "only ${#TIDS[@]} threads: ${TIDS[*]}"
for k in $(seq 1 $((${#TIDS[@]} - 1))); do
    start_busy "one$k" || { fail "serve: start $k"; continue; }
    mapfile -t tids < <(threads "$SERVE_PID")
    "$TGKILL" 15 "$SERVE_PID" "${tids[$k]}"
    finish_busy "one$k"
    [ "$RC" = 0 ] && [ "$CODES" = "200 200" ] && pass ||
        fail "SIGTERM on thread $k of ${#tids[@]}: exit $RC, answers $CODES: $(tail -c 300 "one$k.log")"
    grep -q "SIGTERM: answering the requests in flight" "one$k.log" && grep -q "stopped" "one$k.log" &&
        pass || fail "SIGTERM on thread $k: $(tail -c 300 "one$k.log")"
done

# both_answered NAME WHAT: exit 0, both requests answered 200 or 503, and
# at least one 503 (the second signal did not wait for their decoding)
both_answered() {
    local name=$1 what=$2
    [ "$RC" = 0 ] && pass || fail "$what: exit $RC: $(tail -c 300 "$name.log")"
    case $CODES in
        "200 503" | "503 200" | "503 503") pass ;;
        *) fail "$what: answers $CODES (200 or 503 each, a 503 at least)" ;;
    esac
    grep -q "AddressSanitizer\|runtime error\|ThreadSanitizer" "$name.log" &&
        fail "$what: sanitizer: $(grep -m3 -A3 'ERROR\|runtime error\|WARNING' "$name.log")" || pass
}

# SIGTERM on every thread at once: the first starts the stop, the others
# are second signals
start_busy all || fail "serve: start (all threads)"
mapfile -t tids < <(threads "$SERVE_PID")
"$TGKILL" 15 "$SERVE_PID" "${tids[@]}"
finish_busy all
both_answered all "SIGTERM on all ${#tids[@]} threads"

# SIGTERM, then SIGINT and SIGTERM again with kill, as a user would
for second in INT TERM; do
    start_busy "twice$second" || fail "serve: start (twice)"
    kill -TERM "$SERVE_PID"
    sleep 0.1
    kill "-$second" "$SERVE_PID"
    finish_busy "twice$second"
    both_answered "twice$second" "SIGTERM then SIG$second"
done

# --- nmt train ------------------------------------------------------------------------
zcat "$SRC/corpora/toy/train.src.gz" | head -n 400 >s
zcat "$SRC/corpora/toy/train.tgt.gz" | head -n 400 >t
RUN=("$NMT" train --arch rnn --src s --tgt t --emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16
     --threads 2 --report-every 1 --save-every 0 --seed 7)

# step_of FILE: the checkpoint's step (its metadata's state.step)
step_of() {
    local n
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    head -c $((8 + n)) "$1" | tail -c "$n" | grep -o '"state.step": *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/'
}

# train_until_running DIR: a run in the background (TRAIN_PID) that cannot
# end by itself before the test stops it, once its log shows two steps
train_until_running() {
    "${RUN[@]}" --max-steps 1000000 --out "$1" 2>"$1.err" &
    TRAIN_PID=$!
    for _ in $(seq 1 3000); do
        [ "$(wc -l 2>/dev/null <"$1/log.tsv" || echo 0)" -ge 3 ] && return 0
        kill -0 $TRAIN_PID 2>/dev/null || break
        sleep 0.01
    done
    echo "$1: training did not start: $(cat "$1.err")" >&2
    return 1
}

train_until_running probe || fail "train: start"
mapfile -t TIDS < <(threads "$TRAIN_PID")
kill -TERM "$TRAIN_PID"
wait "$TRAIN_PID"
echo "nmt train --threads 2 has ${#TIDS[@]} threads" >&2
[ "${#TIDS[@]}" -ge 2 ] && pass || fail "train: only ${#TIDS[@]} threads"
for k in $(seq 0 $((${#TIDS[@]} - 1))); do
    train_until_running "run$k" || { fail "train: start $k"; continue; }
    mapfile -t tids < <(threads "$TRAIN_PID")
    "$TGKILL" 15 "$TRAIN_PID" "${tids[$k]}"
    wait "$TRAIN_PID"
    rc=$?
    at=$(sed -n 's/.*interrupted at step \([0-9]*\).*/\1/p' "run$k.err")
    [ "$rc" = 143 ] && [ -n "$at" ] && [ "$(step_of "run$k/checkpoint.safetensors")" = "$at" ] &&
        pass || fail "train: SIGTERM on thread $k: exit $rc, step '$at': $(tail -c 300 "run$k.err")"
    expect_ok "train: resume after SIGTERM on thread $k" "$NMT" train -q --resume "run$k" \
        --max-steps $((at + 3))
    [ "$(step_of "run$k/checkpoint.safetensors")" = $((at + 3)) ] && pass ||
        fail "train: resumed to step $(step_of "run$k/checkpoint.safetensors"), not $((at + 3))"
done
# every thread at once: one stop, not a death by the second signal
train_until_running every || fail "train: start (all threads)"
mapfile -t tids < <(threads "$TRAIN_PID")
"$TGKILL" 15 "$TRAIN_PID" "${tids[@]}"
wait "$TRAIN_PID"
rc=$?
[ "$rc" = 143 ] && grep -q "interrupted at step" every.err && pass ||
    fail "train: SIGTERM on all ${#tids[@]} threads: exit $rc: $(tail -c 300 every.err)"
finish
