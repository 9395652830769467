#!/usr/bin/env bash
# nmt train --resume of a run with nothing left to do changes no file: a run
# that reached its --max-steps (resumed plainly, and with that --max-steps
# given again), its --epochs, its --max-time, or that early stopping ended,
# in memory and streamed (--shuffle-buffer); each with validation, best
# model, log.tsv and snapshots averaged. Every file of the run folder keeps
# its bytes and its modification time, no file comes or goes, and stderr
# says there was nothing to do and which limit to raise. A resume that
# trains on (a larger --max-steps) rewrites the checkpoint, so the
# comparison can tell.
. "$(dirname "$0")/lib.sh"

TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/valid.src.gz" | head -n 30 >vs
zcat "$TOY/valid.tgt.gz" | head -n 30 >vt

C=(train --arch rnn -q --src s --tgt t --valid-src vs --valid-tgt vt --emb 8 --hidden 8 --att-dim 8
   --out-dim 8 --batch-size 16 --threads 1 --valid-every 4 --keep-snapshots 2
   --average-snapshots)
expect_ok "a run to --max-steps 10" "$NMT" "${C[@]}" --max-steps 10 --out steps
expect_ok "a run of --epochs 1" "$NMT" "${C[@]}" --epochs 1 --out epochs
expect_ok "a run of --max-time 1s" "$NMT" "${C[@]}" --max-time 1s --out timed
# with an lr of 1e-30 nothing improves after the first validation
expect_ok "a run early stopping ends" "$NMT" "${C[@]}" --optimizer sgd --lr 1e-30 --patience 1 \
    --valid-every 1 --early-stop 2 --out early
expect_ok "a streamed run to --max-steps 9" "$NMT" "${C[@]}" --shuffle-buffer 64 --max-steps 9 \
    --out streamed

# every file of a folder: name, size, modification time (ns) and contents
files_of() {
    (cd "$1" && find . -type f -printf '%P %s %T@\n' | sort && find . -type f -exec md5sum {} + | sort)
}

# untouched NAME DIR PATTERN [OPTION...]: a --resume of DIR exits 0, says
# PATTERN on stderr, and leaves every file of DIR as it was
untouched() {
    local name=$1 dir=$2 pattern=$3
    shift 3
    files_of "$dir" >before
    sleep 0.05 # a rewrite now would have another time
    "$NMT" train --resume "$dir" "$@" >out 2>err
    local rc=$?
    [ $rc -eq 0 ] && pass || fail "$name: exit $rc: $(cat err)"
    grep -Eq -- "$pattern" err && pass || fail "$name: stderr does not match /$pattern/: $(cat err)"
    files_of "$dir" >after
    cmp -s before after && pass || fail "$name: files changed: $(diff before after | head -n 8)"
}

untouched "--max-steps reached" steps \
    "the run in steps is at its --max-steps 10: nothing to do.*a larger --max-steps"
untouched "--max-steps 10 given again" steps "nothing to do" --max-steps 10
untouched "--epochs done" epochs \
    "the run in epochs has trained its --epochs 1 .*: nothing to do.*a larger --epochs"
untouched "--max-time used" timed \
    "the run in timed has used its --max-time 1.0s \(.*\): nothing to do.*a larger --max-time"
untouched "early-stopped" early \
    "ended by early stopping at step 3 .*nothing to do.*--early-stop 0"
untouched "streamed, --max-steps reached" streamed "at its --max-steps 9: nothing to do"
grep -q "no file was changed" err && pass || fail "the note does not say no file changed: $(cat err)"

# the comparison sees a resume that trains on
files_of steps >before
sleep 0.05
expect_ok "a resume that trains on" "$NMT" train -q --resume steps --max-steps 11
files_of steps >after
grep -q "checkpoint.safetensors" <(diff before after) && pass ||
    fail "a resume to step 11 left the checkpoint as it was"
finish
