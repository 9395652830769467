# nmt align as a person inspects a test set, with the shipped toy model and
# the toy corpus's gold links: --line and its ranges, titles and files that
# carry the line number, gold links drawn in every picture and listed in
# JSON, -o names that would mislead refused, the terminal heatmap within
# $COLUMNS with the terminal's own background and a header per pair, the
# same default search as nmt translate, and the HTML page's data (its
# behaviour in a browser is tests/browser/explorer.sh).
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy
M=$SRC/models/toy-attention.safetensors
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

zcat "$TOY/test.src.gz" | head -n 40 >"$TMP/src"
zcat "$TOY/test.tgt.gz" | head -n 40 >"$TMP/tgt"
head -n 40 "$TOY/test.align" >"$TMP/gold"
A=("$NMT" align -m "$M" --threads 1)

# --- --line: one line, ranges, lists; refused forms ---------------------------------
expect_ok "--line 3" "${A[@]}" --src "$TMP/src" --line 3 --format json
"$PY" - "$TMP/out" "$TMP/src" 3 <<'EOF' && pass || fail "--line 3: $(head -c 200 "$TMP/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
src = open(sys.argv[2], encoding="utf-8").read().split("\n")
lines = [int(x) for x in sys.argv[3:]]
assert [r["line"] for r in rows] == lines, [r["line"] for r in rows]
for r, n in zip(rows, lines):
    assert r["source"] == src[n - 1].split() + ["</s>"], (n, r["source"])
EOF
expect_ok "--line list" "${A[@]}" --src "$TMP/src" --line 7,2-4,3 --format json
"$PY" - "$TMP/out" "$TMP/src" 2 3 4 7 <<'EOF' && pass || fail "--line 7,2-4,3: $(cut -c1-40 "$TMP/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
src = open(sys.argv[2], encoding="utf-8").read().split("\n")
lines = [int(x) for x in sys.argv[3:]]
assert [r["line"] for r in rows] == lines, [r["line"] for r in rows]
for r, n in zip(rows, lines):
    assert r["source"] == src[n - 1].split() + ["</s>"], (n, r["source"])
EOF
for bad in 0 5-2 x 3, 1-2-3 -4; do
    expect_fail "--line $bad" "--line: '$bad' is not a line number" "${A[@]}" --src "$TMP/src" --line "$bad"
done
expect_fail "--line past the end" "--line 39-41: line 41 is past the end \(the source has 40 lines\)" \
    "${A[@]}" --src "$TMP/src" --line 39-41

# --- pictures and headers carry the line number ---------------------------------------
expect_ok "svg of line 12" "${A[@]}" --src "$TMP/src" --line 12 -o "$TMP/l12.svg"
grep -q ">line 12, beam 5 translation</text>" "$TMP/l12.svg" && pass || fail "svg title lacks the line"
expect_ok "svg folder by line" "${A[@]}" --src "$TMP/src" --tgt "$TMP/tgt" --line 5,9 --format svg -o "$TMP/pics"
[ "$(ls "$TMP/pics")" = "$(printf 'line-0005.svg\nline-0009.svg')" ] && pass || fail "folder: $(ls "$TMP/pics")"
grep -q ">line 9, given target</text>" "$TMP/pics/line-0009.svg" && pass || fail "folder svg title"
expect_ok "text headers" "${A[@]}" --src "$TMP/src" --line 2-4 --format text --width 0
[ "$(grep -c '^line [0-9]*, beam 5 translation$' "$TMP/out")" -eq 3 ] && grep -q '^line 3, ' "$TMP/out" &&
    pass || fail "text: a header per pair: $(grep -n '^line' "$TMP/out")"

# --- -o names that would mislead --------------------------------------------------------
refused_out() { # NAME PATTERN ARGS...: refused, and nothing made
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/o"
    mkdir "$TMP/o"
    expect_fail "$name" "$pattern" "${A[@]}" "$@"
    [ -z "$(ls "$TMP/o")" ] && pass || fail "$name: made $(ls "$TMP/o")"
}
refused_out "three pairs into three.svg" \
    "3 pairs make 3 pictures, but -o .*three\.svg names one file: give -o FOLDER .*--line N" \
    --src "$TMP/src" --line 1-3 -o "$TMP/o/three.svg"
refused_out "three pairs into three.png" "names one file" --src "$TMP/src" --line 1-3 --format png -o "$TMP/o/three.png"
refused_out "gif" "-o .*out\.gif: unknown extension '\.gif': give --format FMT" --src "$TMP/src" --line 1 -o "$TMP/o/out.gif"
refused_out "no extension" "-o .*o/out: no extension to tell the format by" --src "$TMP/src" --line 1 -o "$TMP/o/out"
refused_out "format against extension" "--format svg does not match -o .*x\.png" \
    --src "$TMP/src" --line 1 --format svg -o "$TMP/o/x.png"
refused_out "two models outside html" "several models are shown side by side by --format html only" \
    -m "$M" --src "$TMP/src" --line 1 --format json -o "$TMP/o/x.json"
refused_out "--ref outside html" "--ref: the sentences' BLEU is shown by --format html only" \
    --src "$TMP/src" --ref "$TMP/tgt" -o "$TMP/o/x.json"
refused_out "--ref with --tgt" "--ref scores the model's own translations" \
    --src "$TMP/src" --tgt "$TMP/tgt" --ref "$TMP/tgt" -o "$TMP/o/x.html"
expect_ok "folder name with a dot and --format" "${A[@]}" --src "$TMP/src" --line 1-2 --format svg -o "$TMP/pics.d"
[ -f "$TMP/pics.d/line-0002.svg" ] && pass || fail "folder with a dot"

# --- gold links on every picture, in JSON -------------------------------------------------
expect_ok "svg with gold" "${A[@]}" --src "$TMP/src" --tgt "$TMP/tgt" --gold "$TMP/gold" --line 1,6 --format svg -o "$TMP/g"
expect_ok "json with gold" "${A[@]}" --src "$TMP/src" --tgt "$TMP/tgt" --gold "$TMP/gold" --line 1,6 --format json
cp "$TMP/out" "$TMP/g.json"
"$PY" - "$TMP" <<'EOF' && pass || fail "gold links in svg and json"
import json, os, sys, xml.etree.ElementTree as ET
tmp = sys.argv[1]
ns = "{http://www.w3.org/2000/svg}"
gold = open(os.path.join(tmp, "gold")).read().split("\n")
rows = [json.loads(l) for l in open(os.path.join(tmp, "g.json"), encoding="utf-8")]
assert [r["line"] for r in rows] == [1, 6]
for r in rows:
    want = sorted(tuple(map(int, l.split("-"))) for l in gold[r["line"] - 1].split())
    assert sorted(map(tuple, r["gold"])) == want, r["line"]
    root = ET.parse(os.path.join(tmp, "g", "line-%04d.svg" % r["line"])).getroot()
    groups = {g.get("class"): g for g in root.iter(ns + "g") if g.get("class")}
    boxes = groups["gold"].findall(ns + "rect")
    dots = groups["model"].findall(ns + "circle")
    assert len(boxes) == len(want), (len(boxes), len(want))
    assert len(dots) == len(r["target"]) - 1
    # each box sits on its cell: the cells are the rects with a <title>
    cells = [c for c in root.iter(ns + "rect") if c.find(ns + "title") is not None]
    ns_, x0, y0 = len(r["source"]), float(cells[0].get("x")), float(cells[0].get("y"))
    size = float(cells[0].get("width"))
    got = sorted((round((float(b.get("x")) - 2.5 - x0) / size), round((float(b.get("y")) - 2.5 - y0) / size))
                 for b in boxes)
    assert got == want, (got, want)
    texts = [t.text for t in root.iter(ns + "text")]
    assert "gold link" in texts
EOF
expect_ok "png with gold" "${A[@]}" --src "$TMP/src" --tgt "$TMP/tgt" --gold "$TMP/gold" --line 6 -o "$TMP/g6.png"
expect_ok "png without gold" "${A[@]}" --src "$TMP/src" --tgt "$TMP/tgt" --line 6 -o "$TMP/p6.png"
"$PY" - "$TMP/g6.png" "$TMP/p6.png" "$TMP/gold" <<'EOF' && pass || fail "gold links in the png"
import struct, sys, zlib
def pixels(path):
    data = open(path, "rb").read()
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        if kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    return w, h, [raw[y * (1 + 3 * w) + 1:(y + 1) * (1 + 3 * w)] for y in range(h)]
def amber(path):
    w, h, rows = pixels(path)
    return sum(row[3 * x:3 * x + 3] == bytes((240, 160, 0)) for row in rows for x in range(w))
links = len(open(sys.argv[3]).read().split("\n")[5].split())
# each in-range gold link outlines a cell: 24 x 24 less 18 x 18, plus the legend's box
assert amber(sys.argv[1]) == links * (24 * 24 - 18 * 18) + (16 * 16 - 10 * 10), (amber(sys.argv[1]), links)
assert amber(sys.argv[2]) == 0
EOF
expect_ok "text with gold" "${A[@]}" --src "$TMP/src" --tgt "$TMP/tgt" --gold "$TMP/gold" --line 6 --format text --width 0
want=$(sed -n 6p "$TMP/gold" | wc -w)
[ "$(grep -o '\[' "$TMP/out" | wc -l)" -eq $((want + 1)) ] && grep -q "\[\] gold link" "$TMP/out" &&
    pass || fail "text: $want gold links marked: $(grep -c '\[' "$TMP/out")"
grep -q "^AER " "$TMP/err" && pass || fail "text with gold: AER on stderr"

# --- the terminal heatmap: within $COLUMNS, default background for ~0 ----------------------
long=$(awk 'NF >= 47 { print NR; exit }' "$TMP/src")
for cols in 80 60 132; do
    COLUMNS=$cols expect_ok "COLUMNS=$cols" "${A[@]}" --src "$TMP/src" --line "$long" --format text --color always
    "$PY" - "$TMP/out" "$cols" <<'EOF' && pass || fail "COLUMNS=$cols: wider lines"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
widest = max(len(l) for l in plain.split("\n"))
assert widest <= int(sys.argv[2]), widest
# cells near 0 have no background: far fewer backgrounds than cells
cells = sum(l.count("│") for l in plain.split("\n") if "│" in l and not l.startswith(" "))
assert "\x1b[48;5;231m" not in text and "\x1b[48;2;255;255;255m" not in text
EOF
done
COLUMNS=80 expect_ok "COLUMNS=80 bands" "${A[@]}" --src "$TMP/src" --line "$long" --format text
grep -q "^source words 1-" "$TMP/out" && pass || fail "80 columns: no bands for $long's $(sed -n ${long}p "$TMP/src" | wc -w) words"
expect_ok "--width 0: no limit" "${A[@]}" --src "$TMP/src" --line "$long" --format text --width 0
grep -q "^source words" "$TMP/out" && fail "--width 0 wrapped" || pass
expect_fail "--width bad" "--width" "${A[@]}" --src "$TMP/src" --width -3

# --- one default search: align shows what translate translates ---------------------------
expect_ok "help: beam" "$NMT" align --help
grep -q "beam 5 and the model.s alpha, 1.2 for a" "$TMP/out" && grep -q "(default 5," "$TMP/out" && pass || fail "align help: the beam"
expect_ok "translate help" "$NMT" translate --help
grep -q "default 5, the same as" "$TMP/out" && grep -q "nmt align" "$TMP/out" && pass || fail "translate help: the beam"
for beam in "" 1; do
    expect_ok "translate $beam" "$NMT" translate -q -m "$M" --threads 1 -i "$TMP/src" ${beam:+-b $beam}
    cp "$TMP/out" "$TMP/translated"
    expect_ok "align $beam" "${A[@]}" --src "$TMP/src" --format json ${beam:+--beam $beam}
    "$PY" -c '
import json, sys
a = [" ".join(json.loads(l)["target"][:-1]) for l in open(sys.argv[1], encoding="utf-8")]
b = open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]
assert a == b, [(x, y) for x, y in zip(a, b) if x != y][:2]' "$TMP/out" "$TMP/translated" &&
        pass || fail "align and translate differ (beam ${beam:-default})"
done

# --- the HTML page's data ----------------------------------------------------------------
expect_ok "html" "${A[@]}" -m "$M" --src "$TMP/src" --gold "$TMP/gold" --ref "$TMP/tgt" --line 1-20 -o "$TMP/x.html"
grep -q "^.*toy-attention.safetensors: AER [0-9.]* .*BLEU [0-9.]*$" "$TMP/out" && pass || fail "html: scores: $(cat "$TMP/out")"
bleu=$(head -n 1 "$TMP/out" | sed 's/.*BLEU //')
expect_ok "json for html" "${A[@]}" --src "$TMP/src" --gold "$TMP/gold" --line 1-20 --format json
cp "$TMP/out" "$TMP/x.json"
head -n 20 "$TMP/tgt" >"$TMP/ref20"
"$PY" -c 'import json,sys
for l in open(sys.argv[1]): print(" ".join(json.loads(l)["target"][:-1]))' "$TMP/x.json" >"$TMP/hyp20"
expect_ok "bleu" "$NMT" bleu "$TMP/ref20" -i "$TMP/hyp20" -b
[ "$(cat "$TMP/out")" = "$bleu" ] && pass || fail "html's corpus BLEU $bleu, nmt bleu $(cat "$TMP/out")"
"$PY" - "$TMP/x.html" "$TMP/x.json" "$TMP/gold" <<'EOF' && pass || fail "html data"
import base64, json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html, "a network address"
assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html), "an external resource"
data = json.loads(re.search(r'<script type="application/json" id="nmt-data">(.*?)</script>', html, re.S).group(1))
rows = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
gold = open(sys.argv[3]).read().split("\n")
assert len(data["models"]) == 2 and data["gold"] and data["ref"]
assert [p["line"] for p in data["pairs"]] == list(range(1, 21))
for p, r in zip(data["pairs"], rows):
    assert p["gold"] == [int(x) for l in gold[p["line"] - 1].split() for x in l.split("-")]
    for m in p["m"]:
        assert m["s"] == r["source"] and m["t"] == r["target"]
        w = base64.b64decode(m["a"])
        att = [x for row in r["attention"] for x in row]
        assert len(w) == len(att)
        assert all(abs(b / 255 - x) <= 0.5 / 255 + 1e-6 for b, x in zip(w, att))
        assert m["hyp"] == " ".join(r["target"][:-1])
        assert 0 <= m["aer"] <= 1 and 0 <= m["bleu"] <= 100
        for i, j in enumerate(m["h"]):
            row = r["attention"][i][:-1]
            assert row[j] == max(row)
EOF
finish
