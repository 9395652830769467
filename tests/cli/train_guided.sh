#!/usr/bin/env bash
# Guided alignment (nmt train --guided-links; docs/DESIGN.md, "Guided
# alignment") on the toy corpus's test pairs and their gold links:
# - its options parsed and refused (another architecture's, without links,
#   bad values, a layer or head the model has not, links files of other
#   lengths or with links outside their pairs, a streamed corpus, standard
#   input, --init-from a model without heads);
# - a weight of 0 trains the plain run's bits (words, and sampled pieces:
#   the pieces read with their words are the same pieces), a weight above 0
#   other bits;
# - the model files name the head (align_*), nmt info says so, --init-from
#   a plain model starts a guided round;
# - one thread and two the same bits; --accumulate and two processes (MPI)
#   the weights of one batch within rounding (MPI in the release pass);
# - kill -9 at random moments, resumed each time, ends with the
#   uninterrupted run's bits; a resume is refused other links, takes moved
#   ones;
# - PyTorch's follower (pytorch/torch_transformer.py follow) replays a
#   guided run from its batch log, which holds the gold rows, to nmt's
#   losses, and parts from them when told nothing of the guidance;
# - the guided head's hard links against the links it was trained toward:
#   AER far below the unguided run's same head, at the step that predicts
#   each word (nmt align) and at the step that reads it (its JSON rows).
. "$(dirname "$0")/lib.sh"

ROOT=${NMT_SOURCE_ROOT:?}
TOY=$ROOT/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/test.src.gz" | head -n 400 >s
zcat "$TOY/test.tgt.gz" | head -n 400 >t
head -n 400 "$TOY/test.align" >l
TINY=(train -q --arch transformer --src s --tgt t --d-model 16 --heads 2 --ff 32 --layers 2
      --batch-size 20 --threads 2 --seed 3)
meta() { # FILE KEY: the metadata value (empty when absent)
    python3 - "$1" "$2" <<'EOF'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
print(json.loads(b[8:8 + n]).get("__metadata__", {}).get(sys.argv[2], ""))
EOF
}

# --- options ---------------------------------------------------------------------------------
for o in "--guided-weight 0.1" "--guided-layer 1" "--guided-head 1" "--guided-step read"; do
    expect_fail "$o without links" "${o%% *} needs --guided-links FILE" "$NMT" "${TINY[@]}" \
        $o --max-steps 1 --out none
done
expect_fail "rnn" "--guided-links is an option of --arch transformer, not of --arch rnn" \
    "$NMT" train --arch rnn --src s --tgt t --guided-links l --out none
expect_fail "bad weight" "--guided-weight" "$NMT" "${TINY[@]}" --guided-links l \
    --guided-weight -1 --out none
expect_fail "bad step" "--guided-step: unknown value 'shifted'" "$NMT" "${TINY[@]}" --guided-links l \
    --guided-step shifted --out none
expect_fail "layer beyond" "--guided-layer 2: layer 2: the decoder has layers 0 to 1" \
    "$NMT" "${TINY[@]}" --guided-links l --guided-layer 2 --out none
expect_fail "head beyond" "--guided-head 2: head 2: the attention has heads 0 to 1" \
    "$NMT" "${TINY[@]}" --guided-links l --guided-head 2 --out none
head -n 399 l >short
expect_fail "a line short" "s:400: short ended after line 399 but this file goes on" \
    "$NMT" "${TINY[@]}" --guided-links short --out none
{ cat l; echo "0-0"; } >more
expect_fail "a line too many" "more:401: s ended after line 400" \
    "$NMT" "${TINY[@]}" --guided-links more --out none
sed '7s/$/ 99-0/' l >outside
expect_fail "a link outside" "outside:7: link '99-0' is outside its pair: the source line has" \
    "$NMT" "${TINY[@]}" --guided-links outside --out none
sed '3s/^/x-1 /' l >garbled
expect_fail "not a link" "garbled:3: 'x-1' is not a word link" "$NMT" "${TINY[@]}" \
    --guided-links garbled --out none
expect_fail "streamed" "--guided-links needs the training corpus read whole" "$NMT" \
    "${TINY[@]}" --guided-links l --shuffle-buffer 100 --out none
expect_fail "standard input" "give --src and --tgt as files, not -" "$NMT" train -q \
    --arch transformer --src - --tgt t --guided-links l --out none <s
expect_ok "an rnn" "$NMT" train -q --arch rnn --src s --tgt t --emb 8 --hidden 8 --att-dim 8 --max-steps 1 \
    --out rnn
expect_fail "--init-from an rnn" "has one attention map, without layers and heads" \
    "$NMT" train -q --init-from rnn/checkpoint.safetensors --src s --tgt t --guided-links l \
    --out none
[ ! -e none ] && pass || fail "a refused run made its folder"

# --- a weight of 0 is the plain run; above 0, another ----------------------------------------------
SHORT=(--max-steps 12 --dropout 0.1 --word-dropout 0.1)
expect_ok "plain" "$NMT" "${TINY[@]}" "${SHORT[@]}" --out plain
expect_ok "weight 0" "$NMT" "${TINY[@]}" "${SHORT[@]}" --guided-links l --guided-weight 0 --out w0
same_data plain/checkpoint.safetensors w0/checkpoint.safetensors && pass ||
    fail "weight 0 is not the plain run's bits"
head -n 20 s >vs
head -n 20 t >vt
expect_ok "weight 1" "$NMT" "${TINY[@]}" "${SHORT[@]}" --guided-links l --guided-weight 1 \
    --valid-src vs --valid-tgt vt --out w1
same_data plain/checkpoint.safetensors w1/checkpoint.safetensors &&
    fail "weight 1 trained the plain run's bits" || pass
# sampled pieces: read with their words, the same pieces every epoch
PIECES=(--subwords 80 --subword-alpha 0.5 --max-steps 45 --batch-size 40)
expect_ok "pieces, plain" "$NMT" "${TINY[@]}" "${PIECES[@]}" --out pp
expect_ok "pieces, weight 0" "$NMT" "${TINY[@]}" "${PIECES[@]}" --guided-links l \
    --guided-weight 0 --out pw0
same_data pp/checkpoint.safetensors pw0/checkpoint.safetensors && pass ||
    fail "sampled pieces with weight 0 are not the plain run's bits"

# --- the model files name the head ----------------------------------------------------------------------
for f in w1/checkpoint.safetensors w1/best.safetensors; do
    # the default layer, (2 - 1) / 2, head and step
    [ "$(meta $f align_layer)/$(meta $f align_head)/$(meta $f align_shift)" = "0/0/true" ] &&
        pass || fail "$f: align keys $(meta $f align_layer)/$(meta $f align_head)/$(meta $f align_shift)"
done
[ -z "$(meta plain/checkpoint.safetensors align_layer)" ] && pass ||
    fail "a plain run's file names a head"
"$NMT" info w1/best.safetensors | grep -q "^aligned head    layer 0 head 0, trained toward word links at the step that reads" &&
    pass || fail "nmt info: $("$NMT" info w1/best.safetensors | grep -i align)"
"$NMT" info plain/checkpoint.safetensors | grep -q "aligned" && fail "nmt info of a plain model" || pass
expect_ok "init from a plain model" "$NMT" train -q --init-from plain/checkpoint.safetensors \
    --src s --tgt t --guided-links l --guided-layer 0 --guided-head 1 --guided-step predict \
    --max-steps 3 --out second
f=second/checkpoint.safetensors
[ "$(meta $f align_layer)/$(meta $f align_head)/$(meta $f align_shift)" = "0/1/false" ] && pass ||
    fail "--init-from: align keys $(meta $f align_layer)/$(meta $f align_head)/$(meta $f align_shift)"

# --- threads, --accumulate, processes ----------------------------------------------------------------
G=(--guided-links l --guided-weight 0.5 --dropout 0 --label-smoothing 0.1 --no-shuffle)
expect_ok "one thread" "$NMT" "${TINY[@]}" "${G[@]}" --max-steps 6 --threads 1 --out th1
expect_ok "two threads" "$NMT" "${TINY[@]}" "${G[@]}" --max-steps 6 --threads 2 --out th2
same_data th1/checkpoint.safetensors th2/checkpoint.safetensors && pass ||
    fail "one thread and two trained other bits"
expect_ok "accumulate 2" "$NMT" "${TINY[@]}" "${G[@]}" --max-steps 6 --batch-size 10 \
    --accumulate 2 --out acc
if out=$(python3 "$ROOT/tests/st_diff.py" th1/checkpoint.safetensors acc/checkpoint.safetensors \
         1e-4 --except .b_k); then pass; else fail "--accumulate 2 against one batch: $out"; fi
# (not under the sanitizers, as tests/cli/mpi.sh: Open MPI's allocations are
# not ours to check)
if [ "${NMT_HAVE_MPI:-0}" = 1 ] && command -v mpirun >/dev/null && [ -z "${NMT_SANITIZED:-}" ] &&
   [ -z "${NMT_VALGRIND:-}" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
    expect_ok "two processes" mpirun --oversubscribe -np 2 "$NMT" "${TINY[@]}" "${G[@]}" \
        --max-steps 6 --threads 1 --out mpi
    if out=$(python3 "$ROOT/tests/st_diff.py" th1/checkpoint.safetensors \
             mpi/checkpoint.safetensors 1e-4 --except .b_k); then pass
    else fail "two processes against one: $out"; fi
fi

# --- kill -9, resumed; the links on resume ----------------------------------------------------------
# (the rsqrt schedule, whose lr does not hang on --max-steps: a run stopped
# at 20 and extended to 60 is the run of 60)
R=("$NMT" "${TINY[@]}" --guided-links l --guided-weight 0.5 --dropout 0.2 --word-dropout 0.1
   --max-steps 60 --save-every 4 --warmup 10)
expect_ok "uninterrupted" "${R[@]}" --out long
kill_resume k 3 "${R[@]}"
[ $kills -ge 1 ] && pass || fail "no kill landed"
if out=$(python3 "$ROOT/tests/same_run.py" long k); then pass; else fail "kill -9, resumed: $out"; fi
expect_ok "stop at 20" "${R[@]}" --max-steps 20 --out ext
sed '5s/ [^ ]*$//' l >other
expect_fail "other links" "not the data the run began on" "$NMT" train -q --resume ext \
    --max-steps 60 --guided-links other
mkdir moved && cp l moved/l && mv l l.away
expect_fail "links gone" "the guided alignment links file .* cannot be opened" "$NMT" train -q \
    --resume ext --max-steps 60
expect_ok "links moved" "$NMT" train -q --resume ext --max-steps 60 --guided-links moved/l
mv l.away l
if out=$(python3 "$ROOT/tests/same_run.py" long ext 20); then pass
else fail "stopped at 20, resumed with moved links: $out"; fi
expect_fail "links for a plain run" "the run in plain has no guided alignment" "$NMT" train -q \
    --resume plain --max-steps 20 --guided-links l

# --- PyTorch's follower replays a guided run from its batch log ----------------------------------
# (pytorch/torch_transformer.py follow: the log's gold rows, the
# checkpoint's head and weight; a follower told nothing of the guidance
# parts from nmt's losses after the first step)
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
if $PY -c 'import torch, numpy' 2>/dev/null; then
    F=("$NMT" "${TINY[@]}" --threads 1 --warmup 5 --dropout 0)
    expect_ok "initial model" "${F[@]}" --max-steps 0 --out f0
    expect_ok "guided, logged" "${F[@]}" --guided-links l --guided-weight 2 --guided-layer 0 \
        --guided-head 1 --max-steps 4 --report-every 1 --batch-log f.jsonl --out fg
    expect_ok "plain recipe" "${F[@]}" --max-steps 4 --out fp
    grep -q '"guide":\[\[\[' f.jsonl && pass || fail "the batch log has no gold rows"
    $PY - "$ROOT/pytorch" >follow.out 2>&1 <<'EOF' && pass || fail "$(cat follow.out)"
import contextlib, io, sys
sys.path.insert(0, sys.argv[1])
import torch_transformer as tt
rows = lambda f: [l.rstrip("\n").split("\t") for l in open(f)]
nmt = {int(r[0]): float(r[3]) for r in rows("fg/log.tsv")[1:] if r[3]}
for recipe, same in (("fg", True), ("fp", False)):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        tt.main(["follow", "--init-from", "f0/checkpoint.safetensors", "--batches", "f.jsonl",
                 "--recipe-from", recipe + "/checkpoint.safetensors", "--max-steps", "4",
                 "--log", recipe + ".torch.tsv"])
    mine = {int(r[0]): float(r[1]) for r in rows(recipe + ".torch.tsv")[1:]}
    assert sorted(nmt) == sorted(mine) == [1, 2, 3, 4], (recipe, nmt, mine)
    worst = max(abs(nmt[s] - mine[s]) for s in nmt)
    assert (worst <= 6e-5) == same, (recipe, nmt, mine)  # log.tsv has 4 decimals
    print("%s: losses nmt %s, PyTorch %s" % (recipe, nmt, mine))
EOF
else
    echo "no torch: the follower is skipped" >&2
fi

# --- the guided head moves toward the links ------------------------------------------------------
# (2 layers of 2 heads; layer 1's head 0 is guided, at the step that
# predicts each word: nmt align's hard links are that step's)
A=(--max-steps 300 --epochs 1000 --dropout 0 --d-model 32 --ff 64 --batch-size 40)
aer() { # MODEL [ALIGN OPTIONS]: AER of layer 1 head 0 against l
    "$NMT" align -m "$1" --src s --tgt t --gold l --layer 1 --head 0 "${@:2}" 2>/dev/null |
        sed -n 's/^AER \([0-9.]*\) .*/\1/p'
}
expect_ok "unguided" "$NMT" "${TINY[@]}" "${A[@]}" --out u
expect_ok "guided, predict" "$NMT" "${TINY[@]}" "${A[@]}" --guided-links l --guided-weight 1 \
    --guided-layer 1 --guided-step predict --out gp
a_u=$(aer u/checkpoint.safetensors) a_g=$(aer gp/checkpoint.safetensors)
echo "AER of layer 1 head 0 against the links: unguided $a_u, guided $a_g" >&2
python3 -c "import sys; u, g = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not g < 0.5 * u)" \
    "$a_u" "$a_g" && pass || fail "the guided head's AER $a_g is not far below the unguided $a_u"
# at the step that reads each word: target word j's row is row j + 1
expect_ok "guided, read" "$NMT" "${TINY[@]}" "${A[@]}" --guided-links l --guided-weight 1 \
    --guided-layer 1 --guided-step read --out gr
shifted_aer() { # MODEL: AER of layer 1 head 0's rows one step on
    "$NMT" align -m "$1" --src s --tgt t --layer 1 --head 0 --format json 2>/dev/null |
        python3 "$ROOT/scripts/experiments/guided_alignment_report.py" aer l --shift |
        sed -n 's/^AER \([0-9.]*\) .*/\1/p'
}
s_u=$(shifted_aer u/checkpoint.safetensors) s_g=$(shifted_aer gr/checkpoint.safetensors)
echo "AER one step on: unguided $s_u, guided (read) $s_g" >&2
python3 -c "import sys; u, g = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not g < 0.5 * u)" \
    "$s_u" "$s_g" && pass || fail "the shifted guided head's AER $s_g is not far below $s_u"
finish
