#!/usr/bin/env bash
# Word dropout (--word-dropout, --word-dropout-src, --word-dropout-tgt) from
# the command line, on the RNN and the Transformer:
# - --help lists the options and says that --dropout above 0 sets none;
# - bad rates are refused by the strict parser (exit 2, one line, the
#   option named, no folder), and so is the option on --resume;
# - the batch log holds what the model read: the same batches and labels as
#   a run without it, its source and decoder input replaced by <unk> (id 1)
#   and by nothing else, at the rate asked for on each side; the labels
#   never; the decoder input (tgt_in) only with target word dropout;
# - --dropout 0 with --word-dropout keeps it, --dropout 0.5 alone sets none;
#   the checkpoint says train.word_dropout_src/_tgt only when above 0;
# - the same replacements at 1 and 2 threads (the same batch log);
# - a run killed with kill -9 at random moments and resumed ends with the
#   uninterrupted run's bits (RNN; Transformer; Transformer with a joint
#   vocabulary), dropout on at every site;
# - PyTorch's followers (torch_baseline.py train, torch_transformer.py
#   follow) replay a word dropout run from its batch log to nmt's losses.
. "$(dirname "$0")/lib.sh"

ROOT=${NMT_SOURCE_ROOT:?}
TOY=$ROOT/corpora/toy
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
TORCH=1
$PY -c 'import torch, numpy' 2>/dev/null || { TORCH=0; echo "no torch: the followers are skipped"; }

zcat "$TOY/train.src.gz" | head -n 600 >"$TMP/s"
zcat "$TOY/train.tgt.gz" | head -n 600 >"$TMP/t"
zcat "$TOY/valid.src.gz" | head -n 20 >"$TMP/vs"
zcat "$TOY/valid.tgt.gz" | head -n 20 >"$TMP/vt"
DATA=(--src "$TMP/s" --tgt "$TMP/t")
RNN=("$NMT" train --arch rnn -q "${DATA[@]}" --emb 16 --hidden 16 --att-dim 16 --batch-size 16
     --threads 1 --seed 3)
TF=("$NMT" train -q "${DATA[@]}" --arch transformer --d-model 16 --heads 2 --ff 32 --layers 1
    --batch-size 16 --threads 1 --seed 3)

# --- help: the options, and that --dropout above 0 sets no word dropout --------------------
expect_ok "help" "$NMT" train --help
for opt in word-dropout word-dropout-src word-dropout-tgt; do
    grep -q -- "--$opt X" "$TMP/out" && pass || fail "help lacks --$opt"
done
tr -s ' \n' ' ' <"$TMP/out" | grep -q "rate above 0 sets no word dropout" && pass ||
    fail "help does not say what --dropout does to word dropout"

# --- refusals: one line, exit 2, the option named, nothing made -------------------------
refused() { # refused NAME PATTERN ARGS...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] && pass || fail "$name: exit $rc, expected 2: $(cat "$TMP/err")"
    grep -Eq -- "$pattern" "$TMP/err" && pass || fail "$name: stderr does not match /$pattern/: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
refused "--word-dropout 1" "--word-dropout: must be below 1" \
    "${RNN[@]}" --word-dropout 1 --out "$TMP/refused"
refused "--word-dropout -0.1" "--word-dropout" "${RNN[@]}" --word-dropout -0.1 --out "$TMP/refused"
refused "--word-dropout-src 1.5" "--word-dropout-src" \
    "${TF[@]}" --word-dropout-src 1.5 --out "$TMP/refused"
refused "--word-dropout-tgt 0.3x" "--word-dropout-tgt" \
    "${TF[@]}" --word-dropout-tgt 0.3x --out "$TMP/refused"
refused "--word-dropout nan" "--word-dropout" "${RNN[@]}" --word-dropout nan --out "$TMP/refused"
expect_ok "a run to resume" "${RNN[@]}" --max-steps 2 --out "$TMP/two"
refused "--word-dropout on --resume" "--word-dropout cannot be changed on --resume" \
    "$NMT" train -q --resume "$TMP/two" --word-dropout 0.1

# --- the batch log: what the model read ----------------------------------------------------
# log_check PLAIN WORD P_SRC P_TGT: WORD's log holds PLAIN's batches and
# labels, its source and decoder input replaced by 1 alone, at the rates
check_logs() {
    $PY - "$@" <<'EOF'
import json, sys
plain, word = ([json.loads(l) for l in open(f)][1:] for f in sys.argv[1:3])
p_src, p_tgt = float(sys.argv[3]), float(sys.argv[4])
assert len(plain) == len(word) > 0, (len(plain), len(word))
n = {"src": [0, 0], "tgt_in": [0, 0]}
for a, b in zip(plain, word):
    assert a["step"] == b["step"] and a["lr"] == b["lr"]
    assert a["tgt"] == b["tgt"], "the labels differ at step %d" % a["step"]
    assert "tgt_in" not in a, "tgt_in in a log without target word dropout"
    assert ("tgt_in" in b) == (p_tgt > 0), "tgt_in is there without target word dropout, or not there with it"
    for side, was in (("src", a["src"]), ("tgt_in", a["tgt"])):
        got = b.get(side, was)
        assert [len(x) for x in got] == [len(x) for x in was]
        for x, y in zip(sum(was, []), sum(got, [])):
            assert x != 1, "an <unk> in the toy corpus's own words"
            assert y == x or y == 1, "%s: %d became %d" % (side, x, y)
            n[side][0] += 1
            n[side][1] += y != x
    assert all(1 not in t for t in b["tgt"]), "a label replaced"
for side, p in (("src", p_src), ("tgt_in", p_tgt)):
    share = n[side][1] / n[side][0]
    sd = (p * (1 - p) / n[side][0]) ** 0.5
    assert abs(share - p) <= 4 * sd + 1e-12, "%s: %.4f replaced, rate %g" % (side, share, p)
    print("%s: %d of %d replaced (rate %g)" % (side, n[side][1], n[side][0], p))
EOF
}
# meta KEY FILE: the metadata value of a checkpoint, or nothing
meta() { "$NMT" info -v "$2" | sed -n "s/^  $1 = //p"; }

for arch in rnn tf; do
    if [ $arch = rnn ]; then RUN=("${RNN[@]}"); else RUN=("${TF[@]}"); fi
    LOGGED=(--max-steps 20 --dropout 0)
    expect_ok "$arch: plain" "${RUN[@]}" "${LOGGED[@]}" --batch-log "$TMP/$arch.plain" \
        --out "$TMP/$arch.plain.run"
    expect_ok "$arch: word dropout 0.3" "${RUN[@]}" "${LOGGED[@]}" --word-dropout 0.3 \
        --batch-log "$TMP/$arch.word" --out "$TMP/$arch.word.run"
    if out=$(check_logs "$TMP/$arch.plain" "$TMP/$arch.word" 0.3 0.3 2>&1); then pass; else fail "$arch: word dropout 0.3: $out"; fi
    expect_ok "$arch: source side 0.25" "${RUN[@]}" "${LOGGED[@]}" --word-dropout-src 0.25 \
        --batch-log "$TMP/$arch.src" --out "$TMP/$arch.src.run"
    if out=$(check_logs "$TMP/$arch.plain" "$TMP/$arch.src" 0.25 0 2>&1); then pass; else fail "$arch: source side: $out"; fi
    expect_ok "$arch: both sides, the target's own" "${RUN[@]}" "${LOGGED[@]}" \
        --word-dropout 0.1 --word-dropout-tgt 0.4 --batch-log "$TMP/$arch.tgt" \
        --out "$TMP/$arch.tgt.run"
    if out=$(check_logs "$TMP/$arch.plain" "$TMP/$arch.tgt" 0.1 0.4 2>&1); then pass; else fail "$arch: target side: $out"; fi
    # --dropout 0.5 drops units, not words
    expect_ok "$arch: --dropout 0.5" "${RUN[@]}" --max-steps 20 --dropout 0.5 \
        --batch-log "$TMP/$arch.units" --out "$TMP/$arch.units.run"
    if out=$(check_logs "$TMP/$arch.plain" "$TMP/$arch.units" 0 0 2>&1); then pass; else fail "$arch: --dropout 0.5 set word dropout: $out"; fi
    # the checkpoint keeps the rates, only when above 0
    [ "$(meta train.word_dropout_src "$TMP/$arch.tgt.run/checkpoint.safetensors")" = 0.100000001 ] &&
        [ "$(meta train.word_dropout_tgt "$TMP/$arch.tgt.run/checkpoint.safetensors")" = 0.400000006 ] &&
        pass || fail "$arch: the checkpoint's word dropout rates"
    [ -z "$(meta train.word_dropout_tgt "$TMP/$arch.src.run/checkpoint.safetensors")" ] &&
        [ -z "$("$NMT" info -v "$TMP/$arch.units.run/checkpoint.safetensors" | grep word_dropout)" ] &&
        pass || fail "$arch: a word dropout key of a rate of 0"
    # the same replacements at any thread count
    expect_ok "$arch: two threads" "${RUN[@]}" "${LOGGED[@]}" --word-dropout 0.3 --threads 2 \
        --batch-log "$TMP/$arch.word2" --out "$TMP/$arch.word2.run"
    cmp -s "$TMP/$arch.word" "$TMP/$arch.word2" && pass || fail "$arch: 2 threads log other ids"
done

# --- kill -9 at random moments, resumed each time, ends as the uninterrupted run -----------
same() { # same NAME A B: tests/same_run.py
    local name=$1
    shift
    if out=$(python3 "$ROOT/tests/same_run.py" "$@"); then pass; else fail "$name: $out"; fi
}
VALID=(--valid-src "$TMP/vs" --valid-tgt "$TMP/vt" --valid-every 9 --save-every 4)
for kind in rnn tf joint; do
    case $kind in
        rnn) RUN=("${RNN[@]}" --dropout 0.2 --word-dropout 0.2) ;;
        tf) RUN=("${TF[@]}" --dropout 0.1 --word-dropout-src 0.1 --word-dropout-tgt 0.2) ;;
        joint) RUN=("${TF[@]}" --joint-vocab --dropout 0.1 --word-dropout 0.15) ;;
    esac
    RUN+=("${VALID[@]}" --max-steps 70 --threads 2)
    t0=$(date +%s%N)
    expect_ok "$kind: uninterrupted" "${RUN[@]}" --out "$TMP/$kind.long"
    # kills up to about half the run's own time apart (in tenths of a
    # second, 1 to 9), so that they land on a quiet machine as on a busy one
    tenths=$((($(date +%s%N) - t0) / 200000000))
    [ $tenths -ge 1 ] || tenths=1
    [ $tenths -le 9 ] || tenths=9
    kill_resume "$TMP/$kind.k" $tenths "${RUN[@]}"
    [ $kills -ge 1 ] && pass || fail "$kind: no kill landed: the run is too short for this test"
    same "$kind: kill -9, resumed" "$TMP/$kind.long" "$TMP/$kind.k"
done

# --- PyTorch's followers replay a word dropout run from its batch log -----------------------
if [ $TORCH = 1 ]; then
    for kind in rnn joint; do
        if [ $kind = rnn ]; then RUN=("${RNN[@]}"); else RUN=("${TF[@]}" --joint-vocab --warmup 5); fi
        expect_ok "$kind: initial model" "${RUN[@]}" --max-steps 0 --out "$TMP/$kind.init"
        expect_ok "$kind: word dropout run" "${RUN[@]}" --dropout 0 --word-dropout 0.3 \
            --max-steps 4 --report-every 1 --batch-log "$TMP/$kind.follow.jsonl" \
            --out "$TMP/$kind.follow"
    done
    $PY - "$ROOT/pytorch" "$TMP" >"$TMP/follow.out" 2>&1 <<'EOF' && pass || fail "$(cat "$TMP/follow.out")"
import contextlib, io, sys
sys.path.insert(0, sys.argv[1])
import torch_baseline as tb
import torch_transformer as tt
T = sys.argv[2]
rows = lambda f: [l.rstrip("\n").split("\t") for l in open(f)]
for kind, follow in (
        ("rnn", lambda a: tb.main(["train"] + a)),
        ("joint", lambda a: tt.main(["follow"] + a))):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        follow(["--init-from", T + "/%s.init/checkpoint.safetensors" % kind,
                "--batches", T + "/%s.follow.jsonl" % kind,
                "--recipe-from", T + "/%s.follow/checkpoint.safetensors" % kind,
                "--max-steps", "4", "--log", T + "/%s.torch.tsv" % kind])
    nmt = {int(r[0]): float(r[3]) for r in rows(T + "/%s.follow/log.tsv" % kind)[1:] if r[3]}
    mine = {int(r[0]): float(r[1]) for r in rows(T + "/%s.torch.tsv" % kind)[1:]}
    assert sorted(nmt) == sorted(mine) == [1, 2, 3, 4], (kind, nmt, mine)
    for s in nmt:  # log.tsv has 4 decimals
        assert abs(nmt[s] - mine[s]) <= 6e-5, (kind, s, nmt[s], mine[s])
    print("%s: losses nmt %s, PyTorch %s" % (kind, nmt, mine))
EOF
fi

finish
