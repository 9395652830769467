#!/usr/bin/env bash
# Ensembles: nmt translate -m A -m B and nmt align --ensemble. A model with
# itself translates as the model alone (beam, n-best scores, samples); an
# RNN + Transformer ensemble translates (its n-best list sorted, its first
# entry its beam output; a seed gives the same samples twice; temperature
# 1e-4 is its greedy output; every --prefix output starts with its prefix;
# --alignments rows are distributions); models that read other units are
# refused naming both files and what differs; align --ensemble shows one map
# per model of the ensemble's own translation.
. "$(dirname "$0")/lib.sh"

TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/test.src.gz" | head -n 8 >ts
# the same corpus with another source vocabulary (one line less), and cased
# differently
head -n 299 s >s2
head -n 299 t >t2
RNN=(--emb 8 --hidden 8 --att-dim 8 --out-dim 8 --max-steps 40 --threads 1 -q)
expect_ok "train an RNN" "$NMT" train --arch rnn --src s --tgt t "${RNN[@]}" --out rnn
expect_ok "train a Transformer" "$NMT" train --arch transformer --src s --tgt t --d-model 16 \
    --heads 2 --ff 32 --layers 2 --batch-size 16 --max-steps 40 --threads 1 -q --out tf
# models that are only refused need no training
expect_ok "make an RNN without attention" "$NMT" train --arch rnn --src s --tgt t "${RNN[@]}" \
    --attention none --max-steps 0 --out none
expect_ok "make an RNN of other lines" "$NMT" train --arch rnn --src s2 --tgt t2 "${RNN[@]}" --max-steps 0 \
    --out other
expect_ok "make a lowercasing RNN" "$NMT" train --arch rnn --src s --tgt t "${RNN[@]}" --lowercase \
    --max-steps 0 --out lc
expect_ok "make a subword model" "$NMT" train --arch rnn --src s --tgt t "${RNN[@]}" --subwords 60 \
    --max-steps 0 --out sw
R=rnn/checkpoint.safetensors F=tf/checkpoint.safetensors

# same_output NAME FILE CMD...: CMD succeeds and writes exactly FILE.
same_output() {
    local name=$1 want=$2
    shift 2
    if ! "$@" >"$TMP/got" 2>"$TMP/err"; then fail "$name: exit $?: $(head -c 300 "$TMP/err")"; return; fi
    if cmp -s "$want" "$TMP/got"; then pass; else fail "$name: output differs from $want"; fi
}

# --- a model with itself is the model ---------------------------------------
for M in $R $F; do
    for o in "-b 1" "-b 4 --n-best 3" "--sample --n-best 2 --seed 3"; do
        "$NMT" translate -q -m $M -i ts $o >alone
        same_output "$M twice, $o" alone "$NMT" translate -q -m $M -m $M -i ts $o
    done
done

# --- an RNN and a Transformer -------------------------------------------------
E=("$NMT" translate -q -m $R -m $F -i ts)
expect_ok "ensemble beam" "${E[@]}" -b 4 -o beam
expect_ok "ensemble n-best" "${E[@]}" -b 4 --n-best 4 -o nbest
[ "$(wc -l <beam)" = 8 ] && pass || fail "ensemble: $(wc -l <beam) lines for 8"
# the first entry of each line is its beam output; scores fall within a line
awk -F' [|][|][|] ' 'NR == FNR { beam[NR - 1] = $0; next }
    $1 != prev { if ($2 != beam[$1]) { print "line " $1 ": " $2 " / " beam[$1]; bad = 1 } }
    $1 == prev && $3 + 0 > last + 0 { print "line " $1 " not sorted"; bad = 1 }
    { prev = $1; last = $3 } END { exit bad }' beam nbest >bad &&
    pass || fail "ensemble n-best: $(head -n 2 bad)"
"$NMT" translate -q -m $R -i ts -b 4 >rnn.beam
"$NMT" translate -q -m $F -i ts -b 4 >tf.beam
if cmp -s beam rnn.beam && cmp -s beam tf.beam; then
    fail "the ensemble translates as each model alone"
else pass; fi
expect_ok "ensemble samples" "${E[@]}" --sample --n-best 3 --seed 7 -o s7
same_output "ensemble samples, seed 7 again" s7 "${E[@]}" --sample --n-best 3 --seed 7
expect_ok "ensemble greedy" "${E[@]}" -b 1 -o greedy
same_output "ensemble, temperature 1e-4 is greedy" greedy "${E[@]}" --sample --temperature 1e-4
awk 'NR % 2 { print $1, $2; next } { print "zzqq" }' greedy >p
for o in "-b 1" "-b 4 --n-best 2" "--sample --n-best 2 --seed 1"; do
    if ! "${E[@]}" $o --prefix p >pout 2>err; then fail "prefix $o: $(head -c 300 err)"; continue; fi
    awk -F' [|][|][|] ' -v nb="$(case $o in *n-best*) echo 1;; esac)" '
        NR == FNR { pre[NR - 1] = $0; next }
        { i = nb ? $1 : FNR - 1; text = nb ? $2 : $0
          if (substr(text, 1, length(pre[i])) != pre[i]) { print i ": " text; bad = 1 } }
        END { exit bad }' p pout >bad && pass || fail "prefix $o: $(head -n 2 bad)"
done
expect_ok "ensemble alignments" "${E[@]}" --alignments al.json --replace-unk -o /dev/null
python3 - al.json <<'EOF' && pass || fail "ensemble alignments are not distributions"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 8
for r in rows:
    assert len(r["attention"]) == len(r["target"])
    for row in r["attention"]:
        assert len(row) == len(r["source"]) and abs(sum(row) - 1) < 1e-4
EOF

# --- what must match ------------------------------------------------------------
expect_fail "another source vocabulary" \
    "rnn/checkpoint.safetensors and other/checkpoint.safetensors have different source vocabularies" \
    "$NMT" translate -q -m $R -m other/checkpoint.safetensors -i ts
expect_fail "another lowercase setting" \
    "lc/checkpoint.safetensors lowercases its input, rnn/checkpoint.safetensors does not" \
    "$NMT" translate -q -m $R -m lc/checkpoint.safetensors -i ts
expect_fail "words and pieces" \
    "sw/checkpoint.safetensors reads SentencePiece pieces, tf/checkpoint.safetensors words" \
    "$NMT" translate -q -m $F -m sw/checkpoint.safetensors -i ts
expect_fail "alignments need attention in every model" \
    "--alignments needs attention in every model of the ensemble \(model 2" \
    "$NMT" translate -q -m $R -m none/checkpoint.safetensors -i ts --alignments x.json

# --- nmt align --ensemble -------------------------------------------------------
expect_ok "align --ensemble json" "$NMT" align -m $R -m $F --ensemble -b 4 --src ts --format json
python3 - "$TMP/out" beam $R $F <<'EOF' && pass || fail "align --ensemble: not one map per model of the ensemble's translation"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
beam = open(sys.argv[2]).read().split("\n")
models = sys.argv[3:]
assert len(rows) == 2 * 8, len(rows)
seen = {}
for r in rows:
    seen.setdefault(r["line"], []).append(r["model"])
    # the toy corpus's words detokenize as they are: the target is the
    # ensemble's beam output, then </s>
    assert r["target"] == beam[r["line"] - 1].split() + ["</s>"], (r["target"], beam[r["line"] - 1])
    for row in r["attention"]:
        assert abs(sum(row) - 1) < 1e-4
assert all(v == models for v in seen.values()) and len(seen) == 8
by = {(r["line"], r["model"]): r["attention"] for r in rows}
assert any(by[(l, models[0])] != by[(l, models[1])] for l in seen)
EOF
expect_ok "align --ensemble text" "$NMT" align -m $R -m $F --ensemble --src ts --line 2 \
    --format text --color never --width 0
[ "$(grep -c "^line 2, ensemble's beam 5 translation, attention of" "$TMP/out")" = 2 ] && pass ||
    fail "align --ensemble text: not one heading per model: $(grep '^line' "$TMP/out")"
expect_fail "align --ensemble with --tgt" "cannot be used with --tgt" \
    "$NMT" align -m $R -m $F --ensemble --src ts --tgt ts
expect_fail "align --ensemble as tsv" "--format text, json or html, not tsv" \
    "$NMT" align -m $R -m $F --ensemble --src ts --format tsv
expect_fail "align --ensemble of other units" "different source vocabularies" \
    "$NMT" align -m $R -m other/checkpoint.safetensors --ensemble --src ts --format json
expect_ok "translate --help" "$NMT" translate --help
grep -q "Ensembles: with -m given more than once" "$TMP/out" && pass || fail "translate --help: no ensembles"
expect_ok "align --help" "$NMT" align --help
grep -q -- "--ensemble " "$TMP/out" && pass || fail "align --help: no --ensemble"

finish
