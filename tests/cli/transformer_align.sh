#!/usr/bin/env bash
# nmt align on a Transformer: --layer L --head T|mean chooses the
# cross-attention map; the default is the mean of heads of the middle
# decoder layer, L_d / 2 (layer 1 of 2 here; 2 of 4; 3 of 6; 0 of 1:
# docs/alignments.md);
# a layer's mean is the mean of its heads; every
# map's rows sum to 1; AER for any map; layers and heads out of range, a
# head that is not a number, and --layer on an RNN are refused by name;
# --per-head's table agrees with each map asked for alone.
. "$(dirname "$0")/lib.sh"

TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/test.src.gz" | head -n 4 >ts
zcat "$TOY/test.tgt.gz" | head -n 4 >tt
head -n 4 "$TOY/test.align" >ta
expect_ok "train a small Transformer" "$NMT" train -q --arch transformer --src s --tgt t \
    --d-model 16 --heads 2 --ff 32 --layers 2 --batch-size 16 --max-steps 40 --threads 1 --out tf
expect_ok "train a small RNN" "$NMT" train --arch rnn -q --src s --tgt t --emb 8 --hidden 8 --att-dim 8 \
    --out-dim 8 --max-steps 2 --threads 1 --out rnn
M=tf/checkpoint.safetensors
A=("$NMT" align -m $M --src ts --tgt tt --format tsv --threads 1)

"${A[@]}" >default.tsv 2>/dev/null
"${A[@]}" --layer 0 --head mean >l0mean.tsv 2>/dev/null
"${A[@]}" --layer 1 --head mean >l1mean.tsv 2>/dev/null
[ -s default.tsv ] && cmp -s default.tsv l1mean.tsv && pass ||
    fail "the default map is not layer 1's mean of heads"
"${A[@]}" --layer 0 >l0.tsv 2>/dev/null
cmp -s l0.tsv l0mean.tsv && pass || fail "--layer alone is not that layer's mean"
for map in "0 0" "0 1" "1 0" "1 1" "1 mean"; do
    set -- $map
    "${A[@]}" --layer "$1" --head "$2" >"l$1h$2.tsv" 2>/dev/null || fail "--layer $1 --head $2 failed"
done
cmp -s l0h0.tsv l0h1.tsv && fail "two heads of layer 0 give the same map" || pass
cmp -s l1hmean.tsv l0mean.tsv && fail "layer 1's mean is layer 0's" || pass

# rows of weights: each sums to 1; a layer's mean is the mean of its heads
python3 - l0h0.tsv l0h1.tsv l0mean.tsv l1h1.tsv <<'EOF' && pass || fail "the maps' numbers"
import sys
def rows(path):  # the weight rows of every pair (headers and blank lines out)
    out, head = [], True
    for line in open(path):
        if not line.strip():
            head = True
            continue
        if head:
            head = False
            continue
        out.append([float(x) for x in line.rstrip("\n").split("\t")[1:]])
    return out
h0, h1, mean, other = (rows(p) for p in sys.argv[1:5])
assert len(h0) == len(h1) == len(mean) == len(other) > 0, "rows differ in number"
for r in h0 + h1 + mean + other:
    assert abs(sum(r) - 1) < 1e-4, f"a row sums to {sum(r)}"
for a, b, m in zip(h0, h1, mean):
    for x, y, z in zip(a, b, m):
        assert abs((x + y) / 2 - z) < 2e-6, f"mean {z} of heads {x} and {y}"
EOF

# the default layer by depth: the rule, not just the 2-layer case above
for case in "1 0" "4 2" "6 3"; do
    set -- $case
    "$NMT" train -q --arch transformer --src s --tgt t --d-model 8 --heads 2 --ff 8 \
        --enc-layers 1 --dec-layers "$1" --batch-size 16 --max-steps 2 --threads 1 \
        --out "deep$1" 2>/dev/null || fail "train with $1 decoder layers"
    D=("$NMT" align -m "deep$1/checkpoint.safetensors" --src ts --tgt tt --format tsv --threads 1)
    "${D[@]}" >"deep$1.tsv" 2>/dev/null
    "${D[@]}" --layer "$2" --head mean >"deep$1.l$2.tsv" 2>/dev/null
    [ -s "deep$1.tsv" ] && cmp -s "deep$1.tsv" "deep$1.l$2.tsv" && pass ||
        fail "with $1 decoder layers the default map is not layer $2's mean"
    # and not the rule before it, the layer below the middle ((L_d - 1) / 2,
    # never 0 when there is another): the maps of 4 and 6 layers tell them apart
    if [ "$1" -gt 3 ]; then
        "${D[@]}" --layer $((($1 - 1) / 2)) --head mean >"deep$1.below.tsv" 2>/dev/null
        ! cmp -s "deep$1.tsv" "deep$1.below.tsv" && pass ||
            fail "with $1 decoder layers the default map equals layer $((($1 - 1) / 2))'s too"
    fi
done

# AER of any map, against the gold links
out=$("$NMT" align -m $M --src ts --tgt tt --gold ta --layer 1 --head 0 --threads 1 2>&1)
[[ $out == AER\ * ]] && pass || fail "AER of layer 1 head 0: $out"

# --per-head: every layer x head and each layer's mean in one table, each
# equal to the AER of that map asked for alone; '*' marks the map shown
"$NMT" align -m $M --src ts --tgt tt --gold ta --per-head --threads 1 >per.txt 2>&1 ||
    fail "--per-head failed: $(cat per.txt)"
for map in "0 0" "0 1" "0 mean" "1 0" "1 1" "1 mean"; do
    set -- $map
    "$NMT" align -m $M --src ts --tgt tt --gold ta --layer "$1" --head "$2" --threads 1 \
        >"aer$1$2.txt" 2>&1
done
python3 - per.txt aer00.txt aer01.txt aer0mean.txt aer10.txt aer11.txt aer1mean.txt <<'EOF' &&
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].startswith("AER "), lines[0]            # the shown map's scores first
i = next(k for k, l in enumerate(lines) if l.startswith("AER of every attention map"))
head, rows = lines[i + 1].split(), [l.split() for l in lines[i + 2:]]
assert head == ["head", "0", "head", "1", "mean"], head
assert [r[:2] for r in rows] == [["layer", "0"], ["layer", "1"]], rows
alone = [float(re.match(r"AER (\S+)", open(p).read()).group(1)) for p in sys.argv[2:]]
table = [float(x.rstrip("*")) for r in rows for x in r[2:]]
assert all(abs(a - b) < 5e-5 for a, b in zip(alone, table)), (alone, table)
marked = [x for r in rows for x in r[2:] if x.endswith("*")]
assert marked == [rows[1][4]], marked                   # the default: layer 1's mean
EOF
    pass || fail "--per-head's table: $(cat per.txt)"
# in translation mode too (the maps of the model's own translation), and an
# RNN's one map is one row
"$NMT" align -m $M --src ts --gold ta --beam 2 --per-head --threads 1 >per_tr.txt 2>&1 &&
    grep -q "^  layer 1 " per_tr.txt && pass || fail "--per-head on translations: $(cat per_tr.txt)"
"$NMT" align -m rnn/checkpoint.safetensors --src ts --tgt tt --gold ta --per-head --threads 1 \
    >per_rnn.txt 2>&1 && grep -Eq "^  attention +[0-9.]+\*$" per_rnn.txt && pass ||
    fail "--per-head on an RNN: $(cat per_rnn.txt)"
expect_fail "--per-head without gold" "--per-head compares every layer and head with the gold links" \
    "${A[@]}" --per-head

# refusals, each naming the model and what exists
expect_fail "a layer past the last" "tf/checkpoint.safetensors: --layer/--head: layer 2: the decoder has layers 0 to 1" \
    "${A[@]}" --layer 2
expect_fail "a head past the last" "--layer/--head: head 2: the attention has heads 0 to 1, or mean" \
    "${A[@]}" --layer 1 --head 2
expect_fail "a head that is not a number" "--head" "${A[@]}" --head first
expect_fail "--layer on an RNN" "rnn/checkpoint.safetensors: --layer/--head: this model has one attention map" \
    "$NMT" align -m rnn/checkpoint.safetensors --src ts --tgt tt --format tsv --layer 0

finish
