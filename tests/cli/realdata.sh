# Real language: two epochs of Multi30k De->En with nmt train --arch rnn's defaults
# (the recipe, its sizes and the initial weights; 2 threads, as the
# 30-minute run of docs/experiments/multi30k.md, so that on 2 cores it
# repeats that run's first 908 steps), then the attention of a sentence pair must be its alignment: the argmax of each content word's row is its translation. A
# gradient check proves one step; this proves that the defaults learn to
# align. Before the default init was every parameter uniform, the attention
# of this very pair put "the", "snow", "." and </s> on "zwei". A shortcut
# does not test the defaults: at sizes 128 the same two epochs leave the
# attention spread (largest weights 0.17-0.38, "dogs" on "Schnee.").
#
# Registered only in builds without sanitizers (it trains for minutes).
. "$(dirname "$0")/lib.sh"

M30K=${NMT_CORPORA:?}/multi30k
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
for f in train.de.gz train.en.gz val.de.gz val.en.gz; do
    [ -f "$M30K/$f" ] || { fail "$M30K/$f is missing (scripts/data/get-multi30k)"; finish; exit 1; }
done
# 500 validation pairs are plenty to pick the best of two epochs
zcat "$M30K/val.de.gz" | head -n 500 >"$TMP/val.de"
zcat "$M30K/val.en.gz" | head -n 500 >"$TMP/val.en"

expect_ok "train two epochs with the RNN's defaults" "$NMT" train --arch rnn -q \
    --src "$M30K/train.de.gz" --tgt "$M30K/train.en.gz" \
    --valid-src "$TMP/val.de" --valid-tgt "$TMP/val.en" --threads 2 --epochs 2 \
    --out "$TMP/run"
M=$TMP/run/best.safetensors

# raw text in, as a user types it; words (not pieces) are compared
echo "Zwei Hunde spielen im Schnee." >"$TMP/s.de"
echo "Two dogs play in the snow." >"$TMP/s.en"
echo "Ein Mann fährt Fahrrad auf der Straße." >>"$TMP/s.de"
echo "A man rides a bike on the street." >>"$TMP/s.en"
expect_ok "align" "$NMT" align -m "$M" --src "$TMP/s.de" --tgt "$TMP/s.en" --units words \
    --format json -o "$TMP/al.jsonl"
"$PY" - "$TMP/al.jsonl" <<'EOF' && pass || fail "the attention is not the alignment"
import json, sys
# content words of each pair and the source word each must attend to most
want = [{"Two": "Zwei", "dogs": "Hunde", "play": "spielen", "snow.": "Schnee."},
        {"man": "Mann", "rides": "fährt", "bike": "Fahrrad", "street.": "Straße."}]
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
assert len(rows) == 2, len(rows)
bad = []
for r, w in zip(rows, want):
    for t, row in zip(r["target"], r["attention"]):
        if t in w:
            k = max(range(len(row)), key=row.__getitem__)
            got = r["source"][k]
            print("%-8s -> %-8s %.2f" % (t, got, row[k]))
            if got != w[t]:
                bad.append("%s -> %s (%.2f), want %s" % (t, got, row[k], w[t]))
assert not bad, "; ".join(bad)
EOF
finish
