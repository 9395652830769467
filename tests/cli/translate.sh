# nmt translate: one line out per line in (empty lines kept) for greedy and
# beam search, from a file, gzip or stdin; batching does not change the
# output; --n-best in Moses format; --alignments as JSON Lines matching the
# translation; --replace-unk puts the most attended source word in place of
# each <unk>; models without attention refused for both; bad options named.
. "$(dirname "$0")/lib.sh"

M30K=${NMT_CORPORA:?}/multi30k
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# --- models: a few steps on 1000 pairs, a tiny target vocabulary so that
# <unk> is common in the output ---------------------------------------------------
zcat "$M30K/train.de.gz" | head -n 1000 >"$TMP/train.de"
zcat "$M30K/train.en.gz" | head -n 1000 >"$TMP/train.en"
SMALL=(--cell gru --emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 32
       --max-len 40 --max-steps 40 --lr 0.01 --seed 3 --lowercase --max-vocab 40 -q)
expect_ok "train an attention model" "$NMT" train --arch rnn --src "$TMP/train.de" --tgt "$TMP/train.en" \
    "${SMALL[@]}" --out "$TMP/att"
expect_ok "train a no-attention model" "$NMT" train --arch rnn --src "$TMP/train.de" --tgt "$TMP/train.en" \
    "${SMALL[@]}" --attention none --out "$TMP/none"
M=$TMP/att/checkpoint.safetensors
MN=$TMP/none/checkpoint.safetensors

# Input: test sentences with an empty line, a blank one and a short one.
{
    zcat "$M30K/test_2016_flickr.de.gz" | head -n 4
    echo
    zcat "$M30K/test_2016_flickr.de.gz" | sed -n 5,8p
    echo "   "
    echo "Hund ."
    zcat "$M30K/test_2016_flickr.de.gz" | sed -n 9,12p
} >"$TMP/in.de"
N_IN=$(wc -l <"$TMP/in.de")
gzip -c "$TMP/in.de" >"$TMP/in.gz"
empty_lines() { awk '$0 ~ /^[ \t]*$/ { print NR }' "$1" | tr '\n' ' '; }
EMPTY_IN=$(empty_lines "$TMP/in.de")

# --- usage ------------------------------------------------------------------------
expect_ok "help" "$NMT" translate --help
for opt in model input output beam alpha max-ratio n-best replace-unk alignments batch-size threads; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
expect_ok "nmt help translate" "$NMT" help translate
expect_fail "no model" "--model is required" "$NMT" translate -i "$TMP/in.de"
expect_fail "beam 0" "--beam: 0 is out of range" "$NMT" translate -m "$M" --beam 0
expect_fail "beam word" "--beam: 'five' is not a whole number" "$NMT" translate -m "$M" --beam five
expect_fail "negative alpha" "--alpha: -1 is out of range" "$NMT" translate -m "$M" --alpha -1
expect_fail "bad max-ratio" "--max-ratio: '2x' is not" "$NMT" translate -m "$M" --max-ratio 2x
expect_fail "n-best over beam" "--n-best: 6 is more than the beam \(5\)" \
    "$NMT" translate -m "$M" --n-best 6
expect_fail "batch 0" "--batch-size: 0 is out of range" "$NMT" translate -m "$M" --batch-size 0
expect_fail "threads 0" "--threads: 0 is out of range" "$NMT" translate -m "$M" --threads 0
expect_fail "unknown option" "unrecognized option|--frobnicate" \
    "$NMT" translate -m "$M" --frobnicate
expect_fail "extra argument" "unexpected argument 'stray'" "$NMT" translate -m "$M" stray
expect_fail "missing input" "nope.de" "$NMT" translate -m "$M" -i "$TMP/nope.de"
expect_fail "missing model" "nope.safetensors" "$NMT" translate -m "$TMP/nope.safetensors" \
    -i "$TMP/in.de"
expect_fail "unwritable output" "cannot write" \
    "$NMT" translate -m "$M" -i "$TMP/in.de" -o "$TMP/no/such/dir/out"
expect_fail "replace-unk without attention" "--replace-unk needs a model with attention" \
    "$NMT" translate -m "$MN" -i "$TMP/in.de" --replace-unk
expect_fail "alignments without attention" "--alignments needs a model with attention" \
    "$NMT" translate -m "$MN" -i "$TMP/in.de" --alignments "$TMP/none.jsonl"

# --- one line out per line in ---------------------------------------------------------
for model in att none; do
    for beam in 1 5; do
        name="$model beam $beam"
        expect_ok "$name" "$NMT" translate -m "$TMP/$model/checkpoint.safetensors" \
            -i "$TMP/in.de" -b $beam
        cp "$TMP/out" "$TMP/$model.b$beam"
        [ "$(wc -l <"$TMP/out")" -eq "$N_IN" ] && pass || fail "$name: $(wc -l <"$TMP/out") lines for $N_IN"
        # each empty input line is an empty output line (a barely trained
        # model may also translate a sentence as nothing)
        for k in $EMPTY_IN; do
            [ -z "$(sed -n "${k}p" "$TMP/out")" ] && pass || fail "$name: line $k is not empty"
        done
        # the same from gzip, from stdin, to -o, one sentence per batch
        expect_ok "$name gzip" "$NMT" translate -m "$TMP/$model/checkpoint.safetensors" \
            -i "$TMP/in.gz" -b $beam
        cmp -s "$TMP/out" "$TMP/$model.b$beam" && pass || fail "$name: gzip input differs"
        "$NMT" translate -m "$TMP/$model/checkpoint.safetensors" -b $beam <"$TMP/in.de" \
            -o "$TMP/o.txt" --batch-size 1 2>"$TMP/err"
        cmp -s "$TMP/o.txt" "$TMP/$model.b$beam" && pass ||
            fail "$name: stdin, -o, batch size 1 differ: $(head -c 300 "$TMP/err")"
        # (but for the warning that much of the input is <unk>: --max-vocab 40)
        grep -qv "are unknown to the model (<unk>" "$TMP/err" &&
            fail "$name: stderr not empty off a terminal: $(head -c 300 "$TMP/err")" || pass
    done
done
[ "$(grep -c . "$TMP/att.b1")" -eq $((N_IN - 2)) ] && pass || fail "att greedy: an empty translation"

# --- n-best: "i ||| text ||| score", N per sentence, best first, first = 1-best ----
expect_ok "n-best" "$NMT" translate -m "$M" -i "$TMP/in.de" -b 5 --n-best 3
cp "$TMP/out" "$TMP/nbest"
"$PY" - "$TMP/nbest" "$TMP/att.b5" "$TMP/in.de" <<'EOF' && pass || fail "n-best format"
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "no final newline"
best = open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]
src = open(sys.argv[3], encoding="utf-8").read().split("\n")[:-1]
entries = {}
for line in lines[:-1]:
    m = re.fullmatch(r"(\d+) \|\|\| (.*) \|\|\| (-?\d+\.\d{6})", line)
    assert m, "bad line: %r" % line
    entries.setdefault(int(m.group(1)), []).append((m.group(2), float(m.group(3))))
assert sorted(entries) == list(range(len(src))), "sentence numbers %s" % sorted(entries)
order = [int(l.split(" ")[0]) for l in lines[:-1]]
assert order == sorted(order), "sentences out of order"
for i, s in enumerate(src):
    hyps = entries[i]
    if s.strip() == "":
        assert hyps == [("", 0.0)], "empty line %d: %r" % (i, hyps)
        continue
    assert len(hyps) == 3, "line %d has %d hypotheses" % (i, len(hyps))
    assert hyps[0][0] == best[i], "line %d: first %r, 1-best %r" % (i, hyps[0][0], best[i])
    # finished hypotheses best first, then those cut at the length limit
    # best first: at most two falling runs
    scores = [h[1] for h in hyps]
    rises = sum(1 for a, b in zip(scores, scores[1:]) if b > a)
    assert rises <= 1, "line %d scores %s" % (i, scores)
    assert all(x <= 0 for x in scores), scores
EOF

# --- alignments: a JSON line per input line, matching the translation ----------------
expect_ok "alignments" "$NMT" translate -m "$M" -i "$TMP/in.de" -b 5 --alignments "$TMP/al.jsonl"
cmp -s "$TMP/out" "$TMP/att.b5" && pass || fail "--alignments changed the translation"
"$PY" - "$TMP/al.jsonl" "$TMP/in.de" "$TMP/att.b5" <<'EOF' && pass || fail "alignments content"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
src = open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]
out = open(sys.argv[3], encoding="utf-8").read().split("\n")[:-1]
assert len(rows) == len(src), (len(rows), len(src))
for r, s, o in zip(rows, src, out):
    if s.strip() == "":
        assert r == {"source": [], "target": [], "attention": []}, r
        continue
    assert r["source"][-1] == "</s>" and len(r["source"]) >= 2, r["source"]
    # the tokens of this very line, lowercased (the model lowercases)
    assert "".join(r["source"][:-1]) == "".join(s.split()).lower(), (r["source"], s)
    assert len(r["attention"]) == len(r["target"]) >= 1
    for row in r["attention"]:
        assert len(row) == len(r["source"])
        assert abs(sum(row) - 1) < 1e-4, sum(row)
        assert min(row) >= 0
    words = [t for t in r["target"] if t != "</s>"]
    assert "".join(words) == o.replace(" ", ""), (words, o)
EOF

# --- replace-unk: each <unk> becomes the source word attended most ------------------
expect_ok "replace-unk" "$NMT" translate -m "$M" -i "$TMP/in.de" -b 5 --replace-unk \
    --alignments "$TMP/unk.jsonl"
cp "$TMP/out" "$TMP/unk.out"
n_unk=$(grep -o "<unk>" "$TMP/att.b5" | wc -l)
[ "$n_unk" -gt 0 ] && pass || fail "the test model produced no <unk> to replace"
grep -q "<unk>" "$TMP/unk.out" && fail "<unk> left after --replace-unk" || pass
"$PY" - "$TMP/al.jsonl" "$TMP/unk.jsonl" <<'EOF' && pass || fail "replace-unk words"
import json, sys
plain = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
repl = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert len(plain) == len(repl)
replaced = 0
for p, r in zip(plain, repl):
    assert p["source"] == r["source"] and p["attention"] == r["attention"]
    assert len(p["target"]) == len(r["target"])
    for i, (a, b) in enumerate(zip(p["target"], r["target"])):
        if a != "<unk>":
            assert a == b, (a, b)
            continue
        row = r["attention"][i][:-1]           # </s> is never copied
        j = row.index(max(row))                # the first of equal weights
        assert b == r["source"][j], (b, r["source"][j], row)
        replaced += 1
assert replaced > 0
EOF

# -v: one summary line on stderr, nothing added to the translations
expect_ok "translate -v" "$NMT" translate -m "$M" -i "$TMP/in.de" -o "$TMP/v.txt" -q -v --beam 1
n_in=$(wc -l <"$TMP/in.de")
grep -Eq "^nmt translate: $n_in sentences, model loaded in [0-9.]+ s, translated in [0-9.]+ s \([0-9.]+ sentences/s\)$" "$TMP/err" &&
    [ "$(wc -l <"$TMP/v.txt")" -eq "$n_in" ] && pass || fail "translate -v: $(cat "$TMP/err")"
finish
