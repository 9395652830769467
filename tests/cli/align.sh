# nmt align: every format for the first five test2016 pairs of Multi30k, with
# a model trained briefly on Multi30k; rows sum to 1; pictures are valid;
# AER against gold; a no-attention model is refused.
. "$(dirname "$0")/lib.sh"

M30K=${NMT_CORPORA:?}/multi30k
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# --- models: a few training steps on the first 2000 pairs --------------------
zcat "$M30K/train.de.gz" | head -n 2000 >"$TMP/train.de"
zcat "$M30K/train.en.gz" | head -n 2000 >"$TMP/train.en"
zcat "$M30K/test_2016_flickr.de.gz" | head -n 5 >"$TMP/s5.de"
zcat "$M30K/test_2016_flickr.en.gz" | head -n 5 >"$TMP/s5.en"
SMALL=(--cell gru --emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 32
       --max-len 40 --max-steps 30 --lr 0.01 --seed 5 --lowercase -q)
expect_ok "train an attention model" "$NMT" train --arch rnn --src "$TMP/train.de" --tgt "$TMP/train.en" \
    "${SMALL[@]}" --out "$TMP/att"
expect_ok "train a no-attention model" "$NMT" train --arch rnn --src "$TMP/train.de" --tgt "$TMP/train.en" \
    "${SMALL[@]}" --attention none --out "$TMP/none"
M=$TMP/att/checkpoint.safetensors

# --- usage --------------------------------------------------------------------
expect_ok "help" "$NMT" align --help
for opt in model src tgt format output gold beam color; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
expect_fail "no model" "give -m" "$NMT" align --src "$TMP/s5.de"
expect_fail "bad format" "--format: unknown value 'gif'" "$NMT" align -m "$M" --format gif
expect_fail "bad beam" "--beam" "$NMT" align -m "$M" --beam 0 --src "$TMP/s5.de"
expect_fail "no attention" \
    "this model has no attention \(attention=none\): it has no alignments" \
    "$NMT" align -m "$TMP/none/checkpoint.safetensors" --src "$TMP/s5.de"
head -n 3 "$TMP/s5.en" >"$TMP/s3.en"
expect_fail "line counts differ" "has 5 lines but .*s3.en has 3" \
    "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s3.en" --format tsv
expect_fail "missing source" "nope.de" "$NMT" align -m "$M" --src "$TMP/nope.de" --format tsv

# --- the data formats, forced (--tgt) and the model's own translation ---------
for mode in forced beam; do
    args=(-m "$M" --src "$TMP/s5.de")
    [ $mode = forced ] && args+=(--tgt "$TMP/s5.en")
    expect_ok "$mode tsv" "$NMT" align "${args[@]}" --format tsv
    cp "$TMP/out" "$TMP/$mode.tsv"
    expect_ok "$mode json" "$NMT" align "${args[@]}" --format json
    cp "$TMP/out" "$TMP/$mode.json"
    expect_ok "$mode pharaoh" "$NMT" align "${args[@]}" --format pharaoh
    cp "$TMP/out" "$TMP/$mode.align"
    # Not a terminal: tsv is the default.
    expect_ok "$mode default" "$NMT" align "${args[@]}"
    cmp -s "$TMP/out" "$TMP/$mode.tsv" && pass || fail "$mode: default format is not tsv"

    # TSV: 5 blocks; header = "" + source tokens ending in </s>; each row a
    # target token and one weight per source token, summing to 1 (1e-4).
    awk -F'\t' -v name="$mode tsv" '
        BEGIN { block = 0; head = 1; bad = 0 }
        $0 == "" { block++; head = 1; next }
        head { n = NF; if ($1 != "" || $NF != "</s>") { print name ": bad header: " $0; bad = 1 }
               head = 0; last = ""; next }
        { if (NF != n) { print name ": row of " NF " cells, header " n; bad = 1 }
          s = 0; for (i = 2; i <= NF; i++) { if ($i < 0 || $i > 1) bad = 1; s += $i }
          if (s < 0.9999 || s > 1.0001) { print name ": row sums to " s; bad = 1 }
          last = $1 }
        END { if (block != 5) { print name ": " block " blocks"; bad = 1 } exit bad }' \
        "$TMP/$mode.tsv" && pass || fail "$mode tsv rows"

    # JSON Lines: 5 objects; attention is target x source; rows sum to 1;
    # both sides end in </s>; pharaoh links point at real words, one per
    # target word; the TSV holds the same numbers.
    "$PY" - "$TMP/$mode.json" "$TMP/$mode.align" "$TMP/$mode.tsv" >"$TMP/py.err" 2>&1 <<'EOF'
import json, sys
pairs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
links = open(sys.argv[2]).read().split("\n")[:-1]
blocks = open(sys.argv[3], encoding="utf-8").read().split("\n\n")[:-1]
assert len(pairs) == 5 and len(links) == 5 and len(blocks) == 5, (len(pairs), len(links), len(blocks))
for p, l, b in zip(pairs, links, blocks):
    src, tgt, att = p["source"], p["target"], p["attention"]
    assert src[-1] == "</s>" and tgt[-1] == "</s>"
    assert len(att) == len(tgt) and all(len(r) == len(src) for r in att)
    for r in att:
        assert abs(sum(r) - 1) < 1e-4, sum(r)
        assert min(r) >= 0
    hard = [tuple(map(int, x.split("-"))) for x in l.split()]
    assert len(hard) == len(tgt) - 1, (len(hard), len(tgt))
    for k, (i, j) in enumerate(hard):
        assert j == k and 0 <= i < len(src) - 1
        row = att[j][:-1]
        assert row[i] == max(row) and row.index(max(row)) == i
    rows = b.split("\n")
    assert rows[0].split("\t")[1:] == src
    for r, a in zip(rows[1:], att):
        cells = r.split("\t")
        assert all(abs(float(x) - y) < 1e-6 for x, y in zip(cells[1:], a))
EOF
    [ $? -eq 0 ] && pass || fail "$mode json/pharaoh/tsv: $(tail -3 "$TMP/py.err")"
done
# Forced pairs show the given target, tokenized and lowercased as the model's
# corpus was.
head -n 1 "$TMP/forced.json" | grep -q '"target": \["a", "man", "in", "an", "orange", "hat"' \
    && pass || fail "forced target tokens: $(head -c 300 "$TMP/forced.json")"

# The model's own translation (beam 5, as nmt translate), forced back through
# the decoder, gives the same attention: the search replays the translation's
# states.
"$PY" - "$TMP/beam.json" "$TMP/own.en" <<'EOF'
import json, sys
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for l in open(sys.argv[1], encoding="utf-8"):
        f.write(" ".join(json.loads(l)["target"][:-1]) + "\n")
EOF
expect_ok "own translation forced" "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/own.en" --format json
"$PY" - "$TMP/beam.json" "$TMP/out" >"$TMP/py.err" 2>&1 <<'EOF'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
b = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
compared = 0
for x, y in zip(a, b):
    if any(t.startswith("<") and t != "</s>" for t in x["target"]):
        continue  # <unk> would be re-tokenized as "<", "unk", ">"
    assert x["target"] == y["target"], (x["target"], y["target"])
    for r, s in zip(x["attention"], y["attention"]):
        assert all(abs(u - v) < 1e-6 for u, v in zip(r, s))
    compared += 1
assert compared > 0
EOF
[ $? -eq 0 ] && pass || fail "beam attention differs from its forced replay: $(tail -3 "$TMP/py.err")"

# Standard input gives the same as --src.
"$NMT" align -m "$M" --format pharaoh <"$TMP/s5.de" >"$TMP/stdin.align" 2>"$TMP/err"
cmp -s "$TMP/stdin.align" "$TMP/beam.align" && pass || fail "stdin differs from --src"

# --- the terminal heatmap -------------------------------------------------------
expect_ok "text" "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" --format text
grep -q "│e m m e o h , d e a . < $" "$TMP/out" && pass || fail "text: source header: $(head -3 "$TMP/out")"
grep -q "^orange *│" "$TMP/out" && pass || fail "text: target rows"
[ "$(grep -c "weight:" "$TMP/out")" -eq 5 ] && pass || fail "text: 5 legends"
grep -q $'\x1b' "$TMP/out" && fail "text: colour when not a terminal" || pass
expect_ok "text coloured" "$NMT" align -m "$M" --src "$TMP/s5.de" --format text --color always
grep -q $'\x1b\\[48;' "$TMP/out" && pass || fail "text: no colour with --color always"

# --- pictures -------------------------------------------------------------------
expect_fail "pictures need -o" "5 pairs make 5 pictures: give -o FOLDER" "$NMT" align -m "$M" --src "$TMP/s5.de" --format svg
for fmt in svg png; do
    expect_ok "$fmt folder" "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" \
        --format $fmt -o "$TMP/pics-$fmt"
    n=$(ls "$TMP/pics-$fmt" | grep -c "^line-000[1-5]\.$fmt$")
    [ "$n" -eq 5 ] && pass || fail "$fmt: $n files in the folder: $(ls "$TMP/pics-$fmt")"
done
head -n 1 "$TMP/s5.de" >"$TMP/s1.de"
head -n 1 "$TMP/s5.en" >"$TMP/s1.en"
expect_ok "one svg by its extension" "$NMT" align -m "$M" --src "$TMP/s1.de" --tgt "$TMP/s1.en" \
    -o "$TMP/one.svg"
expect_ok "one png by its extension" "$NMT" align -m "$M" --src "$TMP/s1.de" --tgt "$TMP/s1.en" \
    -o "$TMP/one.png"
"$PY" - "$TMP" >"$TMP/py.err" 2>&1 <<'EOF'
import json, struct, sys, zlib, xml.dom.minidom, os
tmp = sys.argv[1]
pairs = [json.loads(l) for l in open(os.path.join(tmp, "forced.json"), encoding="utf-8")]

def svg(path, pair):
    doc = xml.dom.minidom.parse(path)  # raises unless well-formed
    root = doc.documentElement
    assert root.tagName == "svg"
    w, h = float(root.getAttribute("width")), float(root.getAttribute("height"))
    assert root.getAttribute("viewBox") == "0 0 %g %g" % (w, h)
    texts = [t.firstChild.data for t in doc.getElementsByTagName("text") if t.firstChild]
    for word in pair["source"] + pair["target"]:
        assert word in texts, word
    cells = [r for r in doc.getElementsByTagName("rect") if r.getElementsByTagName("title")]
    assert len(cells) == len(pair["source"]) * len(pair["target"])
    assert {"0", "0.5", "1"} <= set(texts)
    return w, h

def png(path, pair):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(kind + body) == crc, kind
        chunks.append(kind)
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 2)
        if kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND"
    raw = zlib.decompress(idat)
    assert len(raw) == h * (1 + 3 * w), (len(raw), w, h)
    # The grid of 28-pixel cells fits inside.
    assert w > 28 * len(pair["source"]) and h > 28 * len(pair["target"])
    return w, h

for k, p in enumerate(pairs):
    svg(os.path.join(tmp, "pics-svg", "line-%04d.svg" % (k + 1)), p)
    png(os.path.join(tmp, "pics-png", "line-%04d.png" % (k + 1)), p)
svg(os.path.join(tmp, "one.svg"), pairs[0])
png(os.path.join(tmp, "one.png"), pairs[0])
EOF
[ $? -eq 0 ] && pass || fail "pictures: $(tail -3 "$TMP/py.err")"

# --- AER against gold ---------------------------------------------------------
# The model's own links as gold: AER 0. The same links moved to another
# source word (word 1 for word 0, else word 0: each target word has one model
# link, so none can match): AER 1.
expect_ok "gold = own links" "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" \
    --gold "$TMP/forced.align"
grep -q "^AER 0.0000  precision 1.0000  recall 1.0000  (5 pairs" "$TMP/out" \
    && pass || fail "AER with own links: $(cat "$TMP/out")"
[ ! -s "$TMP/err" ] && pass || fail "gold alone writes no alignments to stderr"
awk '{ for (k = 1; k <= NF; k++) { split($k, a, "-"); $k = (a[1] == 0 ? 1 : 0) "-" a[2] } print }' \
    "$TMP/forced.align" >"$TMP/shifted.align"
expect_ok "gold disjoint" "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" \
    --gold "$TMP/shifted.align"
grep -q "^AER 1.0000  precision 0.0000  recall 0.0000" "$TMP/out" \
    && pass || fail "AER disjoint: $(cat "$TMP/out")"
# Half the gold removed: precision falls, recall stays 1, AER as the formula says.
awk '{ n = int(NF / 2); line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? " " : "") $k; print line }' \
    "$TMP/forced.align" >"$TMP/half.align"
expect_ok "gold half" "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" --gold "$TMP/half.align"
A=$(wc -w <"$TMP/forced.align")
S=$(wc -w <"$TMP/half.align")
want=$(awk -v a="$A" -v s="$S" 'BEGIN { printf "AER %.4f  precision %.4f  recall 1.0000", 1 - 2 * s / (a + s), s / a }')
grep -q "^$want" "$TMP/out" && pass || fail "AER half: want '$want', got $(cat "$TMP/out")"
# With alignments on stdout, the scores go to stderr.
expect_ok "gold and pharaoh" "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" \
    --gold "$TMP/forced.align" --format pharaoh
cmp -s "$TMP/out" "$TMP/forced.align" && pass || fail "gold + pharaoh: stdout"
grep -q "^AER 0.0000" "$TMP/err" && pass || fail "gold + pharaoh: stderr"
# A gold link must name a word on each side of its pair (from 0; "</s>" is
# no word): one past either side, or 99-99, is refused naming the file, the
# line and the link, and nothing is written. Without --tgt the target is the
# model's own translation, which may be shorter than the sentence the gold
# was made for: only the source side is checked there, and a link past the
# translation counts as a gold link the model missed.
read -r ns nt < <("$PY" -c 'import json, sys
l = json.loads(open(sys.argv[1]).readlines()[1])
print(len(l["source"]) - 1, len(l["target"]) - 1)' "$TMP/forced.json")
gold_line2() { # gold_line2 FILE LINKS: LINKS on line 2 of 5
    printf '0-0\n%s\n0-0\n0-0\n0-0\n' "$2" >"$TMP/$1"
}
gold_line2 last.align "0-0 $((ns - 1))-$((nt - 1))"
expect_ok "gold links on the last words" "$NMT" align -m "$M" --src "$TMP/s5.de" \
    --tgt "$TMP/s5.en" --gold "$TMP/last.align"
for link in 99-99 "$ns-0" "0-$nt"; do
    gold_line2 outside.align "0-0 $link 1-1"
    rm -f "$TMP/outside.json"
    expect_fail "gold link $link outside line 2's pair of $ns and $nt words" \
        "^nmt align: .*outside.align, line 2: the link $link is outside the pair: its source has $ns words and its target $nt \(indices from 0\)$" \
        "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" --gold "$TMP/outside.align" \
        --format json -o "$TMP/outside.json"
    [ ! -e "$TMP/outside.json" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass ||
        fail "gold link $link refused, but left an output or said more: $(cat "$TMP/err")"
done
gold_line2 outside.align "$ns-0"
expect_fail "gold link past the source, translating" \
    "outside.align, line 2: the link $ns-0 is outside the pair: its source has $ns words \(indices from 0\)$" \
    "$NMT" align -m "$M" --src "$TMP/s5.de" --gold "$TMP/outside.align"
gold_line2 outside.align "0-99"
expect_ok "gold link past the translation" "$NMT" align -m "$M" --src "$TMP/s5.de" \
    --gold "$TMP/outside.align"
grep -q "(5 pairs, [0-9]* model links, 5 gold links" "$TMP/out" && pass ||
    fail "a gold link past the translation is not counted: $(cat "$TMP/out")"
printf '0-0\n1-x\n0-0\n0-0\n0-0\n' >"$TMP/bad.align"
expect_fail "bad gold" "bad.align, line 2: '1-x' is not an alignment link" \
    "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" --gold "$TMP/bad.align"
expect_fail "short gold" "has 5 lines but .*s3.en has 3" \
    "$NMT" align -m "$M" --src "$TMP/s5.de" --tgt "$TMP/s5.en" --gold "$TMP/s3.en"
finish
