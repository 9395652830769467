# nmt train from the command line: help, refused inputs, determinism, exact
# resume after kill -9 and SIGTERM, the NaN guard, validation and schedule.
. "$(dirname "$0")/lib.sh"

M30K=${NMT_CORPORA:?}/multi30k

meta_of() { # meta_of FILE KEY: a metadata value
    local n
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    head -c $((8 + n)) "$1" | tail -c "$n" | grep -o "\"$2\": *\"[^\"]*\"" | sed 's/.*: *"\(.*\)"/\1/'
}

# --- help lists every option ------------------------------------------------
expect_ok "help" "$NMT" train --help
for opt in src tgt valid-src valid-tgt out resume init-from cell attention bidirectional \
    unidirectional emb hidden att-dim out-dim batch-size optimizer lr clip dropout max-len \
    min-count max-vocab epochs max-steps seed threads no-shuffle lowercase valid-every \
    save-every report-every lr-decay patience early-stop quiet verbose; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
grep -q "adadelta" "$TMP/out" && pass || fail "help lacks adadelta"
grep -q -- "--init uniform|orthogonal|bahdanau" "$TMP/out" && pass || fail "help lacks --init"
grep -q -- "--init-scale" "$TMP/out" && pass || fail "help lacks --init-scale"
expect_ok "help via nmt help" "$NMT" help train
grep -q -- "--early-stop" "$TMP/out" && pass || fail "nmt help train"

# --- small corpora ------------------------------------------------------------
# A tiny made-up pair, and the first 400 Multi30k pairs for real training.
printf 'ein Hund läuft .\neine Katze schläft .\nzwei Hunde spielen im Park .\nein Mann liest\n' >"$TMP/tiny.de"
printf 'a dog runs .\na cat sleeps .\ntwo dogs play in the park .\na man reads\n' >"$TMP/tiny.en"
zcat "$M30K/train.de.gz" | head -n 400 | gzip >"$TMP/s.de.gz"
zcat "$M30K/train.en.gz" | head -n 400 | gzip >"$TMP/s.en.gz"
zcat "$M30K/val.de.gz" | head -n 30 >"$TMP/v.de"
zcat "$M30K/val.en.gz" | head -n 30 >"$TMP/v.en"
SMALL=(--emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16 --max-len 30)

# --- refused inputs: one line naming the file (and line), nothing written ------
refused() { # refused NAME PATTERN ARGS...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    expect_fail "$name" "$pattern" "$NMT" train --arch rnn "$@" --out "$TMP/refused"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
printf 'a\nb\nc\n' >"$TMP/three"
printf 'a\nb\n' >"$TMP/two"
: >"$TMP/empty"
printf 'gut\nbad \xff\xfe here\n' >"$TMP/badutf8"
printf 'ok\nnul \000 here\n' >"$TMP/nul"
printf 'x\ny\n' | gzip >"$TMP/ok2.gz"
head -c 20 "$TMP/s.de.gz" >"$TMP/trunc.gz"
mkdir -p "$TMP/adir"
refused "missing file" "nope\\.txt" --src "$TMP/nope.txt" --tgt "$TMP/three"
refused "directory" "adir" --src "$TMP/adir" --tgt "$TMP/three"
refused "empty corpus" "empty" --src "$TMP/empty" --tgt "$TMP/empty"
refused "line counts differ" "(three|two)" --src "$TMP/three" --tgt "$TMP/two"
refused "truncated gzip" "trunc\\.gz" --src "$TMP/trunc.gz" --tgt "$TMP/s.en.gz"
refused "invalid UTF-8" "badutf8:2" --src "$TMP/badutf8" --tgt "$TMP/ok2.gz"
refused "NUL byte" "nul:2" --src "$TMP/nul" --tgt "$TMP/ok2.gz"
refused "bad valid file" "v-missing" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" \
    --valid-src "$TMP/v-missing" --valid-tgt "$TMP/v.en"
refused "bad number" "--hidden: 'abc'" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --hidden abc
refused "zero size" "--emb" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --emb 0
refused "negative size" "--batch-size" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --batch-size -3
refused "absurd size" "GiB" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --hidden 65536 --emb 65536
refused "unknown cell" "--cell: unknown value 'tree'" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --cell tree
refused "unknown optimizer" "--optimizer" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --optimizer rmsprop
refused "dropout 1" "--dropout" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --dropout 1
refused "valid half" "--valid-src and --valid-tgt" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --valid-src "$TMP/v.de"
expect_fail "resume without checkpoint" "no checkpoint" "$NMT" train --resume "$TMP/adir"
expect_fail "missing --src" "--src and --tgt are required" "$NMT" train --arch rnn --out "$TMP/x"

# --- a run writes a model; an existing run is not overwritten ------------------
expect_ok "max-steps 0 writes the initial model" "$NMT" train --arch rnn -q --src "$TMP/tiny.de" \
    --tgt "$TMP/tiny.en" "${SMALL[@]}" --max-steps 0 --out "$TMP/init"
[ -s "$TMP/init/checkpoint.safetensors" ] && pass || fail "no checkpoint after --max-steps 0"
[ "$(meta_of "$TMP/init/checkpoint.safetensors" state.step)" = 0 ] && pass || fail "step 0"
expect_fail "out holds a run" "already holds a run" "$NMT" train --arch rnn --src "$TMP/tiny.de" \
    --tgt "$TMP/tiny.en" --out "$TMP/init"
expect_fail "init-from with --hidden" "--hidden cannot be used with --init-from" "$NMT" train \
    --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --init-from "$TMP/init/checkpoint.safetensors" \
    --hidden 8 --out "$TMP/x"
expect_fail "resume with --lr" "--lr cannot be changed on --resume" "$NMT" train \
    --resume "$TMP/init" --lr 0.1

# --- --init uniform (default) and --init bahdanau --------------------------------
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# stats FILE NAME: "max_abs rms n_zero" of one tensor, read from the file with
# the standard library only.
stats() {
    "$PY" - "$1" "$2" <<'EOF'
import json, math, struct, sys
with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    head = json.loads(f.read(n))
    lo, hi = head[sys.argv[2]]["data_offsets"]
    f.seek(8 + n + lo)
    x = struct.unpack("<%df" % ((hi - lo) // 4), f.read(hi - lo))
print("%g %g %d" % (max(abs(v) for v in x), math.sqrt(sum(v * v for v in x) / len(x)),
                    sum(v == 0 for v in x)))
EOF
}
# within X LO HI: LO <= X <= HI
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
# untied: out.W is one of the matrices whose init is checked
INIT=("$NMT" train --arch rnn -q --src "$TMP/s.de.gz" --tgt "$TMP/s.en.gz" "${SMALL[@]}" --untied-embeddings
      --max-steps 0)
expect_ok "init default" "${INIT[@]}" --out "$TMP/i-def"
expect_ok "init uniform 0.1" "${INIT[@]}" --init uniform --init-scale 0.1 --out "$TMP/i-u1"
expect_ok "init uniform 0.05" "${INIT[@]}" --init-scale 0.05 --out "$TMP/i-u05"
expect_ok "init bahdanau" "${INIT[@]}" --init bahdanau --out "$TMP/i-b"
expect_ok "init orthogonal" "${INIT[@]}" --init orthogonal --out "$TMP/i-o"
same_data "$TMP/i-def/checkpoint.safetensors" "$TMP/i-u1/checkpoint.safetensors" && pass ||
    fail "the default init is not --init uniform --init-scale 0.1"
# uniform in [-x, x]: the largest of thousands of draws is near x, the rms x/sqrt(3)
read -r mx rms zeros < <(stats "$TMP/i-def/checkpoint.safetensors" out.W)
within "$mx" 0.095 0.1 && within "$rms" 0.052 0.063 && pass ||
    fail "default out.W: max $mx rms $rms, expected uniform in [-0.1, 0.1]"
read -r mx rms zeros < <(stats "$TMP/i-u05/checkpoint.safetensors" out.W)
within "$mx" 0.0475 0.05 && within "$rms" 0.026 0.0315 && pass ||
    fail "--init-scale 0.05 out.W: max $mx rms $rms"
read -r mx rms zeros < <(stats "$TMP/i-def/checkpoint.safetensors" att.v)
[ "$zeros" = 0 ] && within "$mx" 0.01 0.1 && pass || fail "default att.v: max $mx zeros $zeros"
# the default draws the recurrent matrices and the biases uniformly too
for t in dec.W_hh dec.b enc.fwd.b; do
    read -r mx rms zeros < <(stats "$TMP/i-def/checkpoint.safetensors" $t)
    within "$mx" 0.08 0.1 && within "$rms" 0.045 0.07 && pass ||
        fail "default $t: max $mx rms $rms, expected uniform in [-0.1, 0.1]"
done
# orthogonal and the paper's: recurrent matrices orthogonal (rows of unit
# norm), biases 0 but the LSTM forget gate's 1 (a quarter of dec.b)
for d in i-o i-b; do
    read -r mx rms zeros < <(stats "$TMP/$d/checkpoint.safetensors" dec.W_hh)
    within "$rms" 0.24 0.26 && pass || fail "$d dec.W_hh rms $rms, expected 1/sqrt(16)"
    read -r mx rms zeros < <(stats "$TMP/$d/checkpoint.safetensors" dec.b)
    [ "$mx" = 1 ] && [ "$zeros" = 48 ] && pass || fail "$d dec.b: max $mx, $zeros zeros"
done
read -r mx rms zeros < <(stats "$TMP/i-o/checkpoint.safetensors" out.W)
within "$mx" 0.095 0.1 && pass || fail "orthogonal out.W: max $mx, expected uniform in [-0.1, 0.1]"
# the paper's: N(0, 0.01^2), attention N(0, 0.001^2), att.v 0
read -r mx rms zeros < <(stats "$TMP/i-b/checkpoint.safetensors" out.W)
within "$rms" 0.009 0.011 && pass || fail "bahdanau out.W rms $rms, expected 0.01"
read -r mx rms zeros < <(stats "$TMP/i-b/checkpoint.safetensors" att.U)
within "$rms" 0.0009 0.0011 && pass || fail "bahdanau att.U rms $rms, expected 0.001"
read -r mx rms zeros < <(stats "$TMP/i-b/checkpoint.safetensors" att.v)
[ "$mx" = 0 ] && pass || fail "bahdanau att.v is not 0 (max $mx)"
refused "unknown init" "--init: unknown value 'glorot'" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --init glorot
refused "init-scale with bahdanau" "--init-scale goes with --init uniform" --src "$TMP/tiny.de" \
    --tgt "$TMP/tiny.en" --init bahdanau --init-scale 0.1
refused "init-scale 0" "--init-scale" --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --init-scale 0
expect_fail "init with --init-from" "--init cannot be used with --init-from" "$NMT" train \
    --src "$TMP/tiny.de" --tgt "$TMP/tiny.en" --init-from "$TMP/init/checkpoint.safetensors" \
    --init bahdanau --out "$TMP/x"

# --- same seed and threads: the same weights -------------------------------------
RUN=("$NMT" train --arch rnn -q --src "$TMP/s.de.gz" --tgt "$TMP/s.en.gz" "${SMALL[@]}" --seed 7
     --dropout 0.3 --epochs 2 --threads 1)
expect_ok "run A" "${RUN[@]}" --out "$TMP/a"
expect_ok "run B" "${RUN[@]}" --out "$TMP/b"
same_data "$TMP/a/checkpoint.safetensors" "$TMP/b/checkpoint.safetensors" && pass ||
    fail "same seed gave different weights"
expect_ok "run C (other seed)" "${RUN[@]}" --seed 8 --out "$TMP/c"
same_data "$TMP/a/checkpoint.safetensors" "$TMP/c/checkpoint.safetensors" &&
    fail "another seed gave the same weights" || pass
steps=$(meta_of "$TMP/a/checkpoint.safetensors" state.step)
[ "$steps" -gt 20 ] && pass || fail "two epochs of 400 pairs took only '$steps' steps"
head -n 1 "$TMP/a/log.tsv" | grep -q "^step	epoch	lr	loss	ppl	grad_norm	tok_per_s	elapsed_s	valid_ppl	valid_bleu	average_of$" &&
    pass || fail "log.tsv header: $(head -n 1 "$TMP/a/log.tsv")"
[ "$(tail -n 1 "$TMP/a/log.tsv" | cut -f1)" = "$steps" ] && pass || fail "last log row is not the last step"

# --- SIGTERM saves and stops; --resume continues to the same weights ---------------
# The run is given 50 epochs so that it cannot end before the signal arrives;
# the signal is sent once the log shows two steps, and the resumed run is
# brought back to run A's two epochs.
"${RUN[@]}" --epochs 50 --report-every 1 --save-every 0 --out "$TMP/t" 2>"$TMP/err" &
pid=$!
for _ in $(seq 1 1000); do [ "$(wc -l <"$TMP/t/log.tsv" 2>/dev/null || echo 0)" -ge 3 ] && break; sleep 0.01; done
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && pass || fail "SIGTERM: exit $rc, expected 143 (did the signal arrive?)"
grep -q "interrupted at step" "$TMP/err" && pass || fail "SIGTERM message: $(cat "$TMP/err")"
at=$(meta_of "$TMP/t/checkpoint.safetensors" state.step)
[ -n "$at" ] && [ "$at" -gt 0 ] && [ "$at" -lt "$steps" ] && pass ||
    fail "SIGTERM: saved at step '$at', expected within run A's 1..$((steps - 1))"
expect_ok "resume after SIGTERM" "$NMT" train -q --resume "$TMP/t" --epochs 2
same_data "$TMP/a/checkpoint.safetensors" "$TMP/t/checkpoint.safetensors" && pass ||
    fail "SIGTERM + resume differs from the uninterrupted run"

# --- kill -9 at random moments, resumed each time: the same final weights ---------
# A longer run (6 epochs, checkpoints every 7 steps) so that kills land at
# all sorts of moments: mid-step, mid-validation, mid-checkpoint-write;
# reports by steps so that log.tsv has the same rows too.
KRUN=("${RUN[@]}" --epochs 6 --save-every 7 --report-every 5 --valid-src "$TMP/v.de" --valid-tgt "$TMP/v.en")
expect_ok "uninterrupted long run" "${KRUN[@]}" --out "$TMP/long"
ksteps=$(meta_of "$TMP/long/checkpoint.safetensors" state.step)
kill_resume "$TMP/k" 5 "${KRUN[@]}"
[ $kills -ge 1 ] && pass || fail "no kill landed: the run is too short for this test"
same_data "$TMP/long/checkpoint.safetensors" "$TMP/k/checkpoint.safetensors" && pass ||
    fail "kill -9 + resume differs from the uninterrupted run ($kills kills)"
same_data "$TMP/long/best.safetensors" "$TMP/k/best.safetensors" && pass ||
    fail "kill -9 + resume: best.safetensors differs"
[ "$(tail -n 1 "$TMP/k/log.tsv" | cut -f1)" = "$ksteps" ] && pass || fail "resumed log does not end at step $ksteps"
cmp -s <(cut -f1-6,9,10 "$TMP/long/log.tsv") <(cut -f1-6,9,10 "$TMP/k/log.tsv") && pass ||
    fail "resumed log.tsv differs from the uninterrupted one in loss or validation columns"
# a resumed log has no row twice (the default average's row shares the
# last step, and is told apart by its average_of)
[ "$(cut -f1,11 "$TMP/k/log.tsv" | sort | uniq -d | wc -l)" -eq 0 ] && pass || fail "log rows repeated"

# --- a checkpoint that cannot be written ends the run and keeps the old one ----------
expect_ok "run to extend" "$NMT" train --arch rnn -q --src "$TMP/s.de.gz" --tgt "$TMP/s.en.gz" "${SMALL[@]}" \
    --epochs 1 --out "$TMP/full"
cp "$TMP/full/checkpoint.safetensors" "$TMP/full.before"
size_kb=$(( $(stat -c %s "$TMP/full.before") / 1024 ))
expect_fail "file too large" "checkpoint.safetensors.*(too large|File too large).*step [0-9]+ is kept" \
    bash -c 'ulimit -f "$1"; shift; exec "$@"' - $((size_kb / 2)) "$NMT" train -q --resume "$TMP/full" --epochs 2
[ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "file too large: not one line: $(cat "$TMP/err")"
cmp -s "$TMP/full.before" "$TMP/full/checkpoint.safetensors" && pass ||
    fail "a failed write changed the checkpoint"
[ "$(ls "$TMP/full")" = "$(printf 'checkpoint.safetensors\nlog.tsv')" ] && pass ||
    fail "a failed write left files behind: $(ls "$TMP/full")"

# --- --resume with a larger --max-steps continues ------------------------------
expect_ok "resume for more steps" "$NMT" train -q --resume "$TMP/a" --epochs 3
[ "$(meta_of "$TMP/a/checkpoint.safetensors" state.step)" -gt "$steps" ] && pass ||
    fail "resume --epochs 3 took no step"

# --- the NaN guard ------------------------------------------------------------------
expect_fail "NaN guard" "(NaN|infinite).*diverged.*--lr.*--clip" "$NMT" train --arch rnn -q \
    --src "$TMP/s.de.gz" --tgt "$TMP/s.en.gz" "${SMALL[@]}" --optimizer sgd --lr 1e9 \
    --clip 0 --out "$TMP/nan"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "NaN guard: not one line"
expect_ok "NaN guard leaves a valid checkpoint" "$NMT" train -q --src "$TMP/tiny.de" \
    --tgt "$TMP/tiny.en" --init-from "$TMP/nan/checkpoint.safetensors" --max-steps 0 \
    --out "$TMP/nan-check"

# --- validation, best model, lr decay and early stop ----------------------------------
# With sgd and a learning rate of 1e-30 the weights cannot move, so validation
# never improves after the first: patience 1 halves the lr at every later
# validation, and early stop 3 ends the run at the 4th.
expect_ok "schedule" "$NMT" train --arch rnn --src "$TMP/s.de.gz" --tgt "$TMP/s.en.gz" "${SMALL[@]}" \
    --valid-src "$TMP/v.de" --valid-tgt "$TMP/v.en" --valid-every 1 --optimizer sgd \
    --lr 1e-30 --patience 1 --lr-decay 0.5 --early-stop 3 --out "$TMP/sched"
[ -s "$TMP/sched/best.safetensors" ] && pass || fail "no best.safetensors"
grep -q "early stop" "$TMP/err" && pass || fail "no early stop message: $(cat "$TMP/err")"
grep -q "best validation BLEU" "$TMP/err" && pass || fail "no summary"
[ "$(meta_of "$TMP/sched/checkpoint.safetensors" state.step)" = 4 ] && pass ||
    fail "early stop at step $(meta_of "$TMP/sched/checkpoint.safetensors" state.step), expected 4"
[ "$(meta_of "$TMP/sched/best.safetensors" best.step)" = 1 ] && pass || fail "best is not step 1"
# the run's own validations (not the default average's row at the end)
lrs=$(awk -F'\t' 'NR > 1 && $10 != "" && $11 == "" { printf "%s ", $3 }' "$TMP/sched/log.tsv")
[ "$lrs" = "1e-30 5e-31 2.5e-31 1.25e-31 " ] && pass || fail "lr schedule: '$lrs'"
[ "$(awk -F'\t' 'NR > 1 && $9 != "" && $11 == ""' "$TMP/sched/log.tsv" | wc -l)" -eq 4 ] && pass ||
    fail "validation rows in log.tsv"

finish
