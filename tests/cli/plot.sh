# nmt plot: the SVG of two toy runs and two foreign logs, parsed as XML: six
# panels, one polyline per run and panel (where the run has data), round
# ticks (1-2-5 on the log axis of perplexity), a legend naming the runs; and
# refused inputs.
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

expect_ok "help" "$NMT" plot --help
for opt in output title help; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
"$NMT" --help | grep -q "plot" && pass || fail "nmt --help does not list plot"

# --- two short runs, one of them with averaged snapshots --------------------------
zcat "$TOY/valid.src.gz" | head -n 40 >"$TMP/v.src"
zcat "$TOY/valid.tgt.gz" | head -n 40 >"$TMP/v.tgt"
RUN=("$NMT" train --arch rnn -q --src "$TOY/train.src.gz" --tgt "$TOY/train.tgt.gz" --valid-src "$TMP/v.src"
     --valid-tgt "$TMP/v.tgt" --emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16
     --threads 1 --max-steps 40 --valid-every 10 --report-every 5)
expect_ok "run gru" "${RUN[@]}" --cell gru --keep-snapshots 2 --average-snapshots --out "$TMP/runs/gru"
expect_ok "run rnn" "${RUN[@]}" --cell rnn --keep-snapshots 0 --out "$TMP/runs/rnn"
# a PyTorch log (pytorch/torch_baseline.py train --log): step, loss, grad_norm
printf 'step\tloss\tgrad_norm\n1\t5.6\t1.0\n10\t5.1\t0.9\n20\t4.7\t0.8\n30\t4.5\t0.7\n' >"$TMP/torch.tsv"
# a log.tsv-compatible file: nmt's columns, empty where unknown
printf 'step\tepoch\tlr\tloss\tppl\tgrad_norm\ttok_per_s\telapsed_s\tvalid_ppl\tvalid_bleu\n' >"$TMP/other.tsv"
printf '10\t\t\t5.2\t\t\t\t1.5\t150\t\n20\t\t\t4.8\t\t\t\t3.0\t110\t0.5\n' >>"$TMP/other.tsv"

expect_ok "plot" "$NMT" plot "$TMP/runs/gru" "$TMP/runs/rnn/" "$TMP/torch.tsv" "$TMP/other.tsv" \
    -o "$TMP/curves.svg" --title "toy <runs>"
[ ! -s "$TMP/out" ] && [ ! -s "$TMP/err" ] && pass || fail "plot printed something"
# (runs, panel) -> polylines: gru and rnn have every panel; torch only
# training loss against steps (no elapsed time); other.tsv all but BLEU
# against... it has BLEU at one step: a polyline of one point.
"$PY" - "$TMP/curves.svg" <<'EOF' && pass || fail "SVG structure"
import math, sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
texts = [t.text for t in root.iter(ns + "text")]
assert "toy <runs>" in texts, "title"
# each nmt run named with the settings that differ between the two (from
# their checkpoints), the foreign logs by name alone
for name in ("gru (cell=gru, keep_snapshots=2, average_snapshots=1)",
             "rnn (cell=rnn, keep_snapshots=0, average_snapshots=0)",
             "torch", "other", "validation of averaged snapshots"):
    assert texts.count(name) == 1, "legend: %s %d %s" % (name, texts.count(name), texts[-8:])
titles = ["training loss", "validation perplexity", "validation BLEU"]
# walk the children in order: a panel starts at its bold title
panels, cur = [], None
for el in root:
    if el.tag == ns + "text" and el.get("font-weight") == "bold" and el.text in titles:
        cur = {"title": el.text, "ticks": None, "lines": {}, "marks": 0}
        panels.append(cur)
    elif cur is not None and el.tag == ns + "g" and el.get("font-size") == "12" and cur["ticks"] is None:
        cur["ticks"] = el
    elif cur is not None and el.tag == ns + "g" and el.get("clip-path"):
        run = len(cur["lines"])
        cur["lines"][run] = len(el.findall(ns + "polyline"))
        cur["marks"] += len(el.findall(ns + "rect"))
assert [p["title"] for p in panels] == titles * 2, [p["title"] for p in panels]
clips = [c.get("id") for c in root.iter(ns + "clipPath")]
assert clips == ["plot%d" % k for k in range(6)], clips
# runs: gru, rnn, torch, other
want = {
    0: [1, 1, 1, 1], 1: [1, 1, 0, 1], 2: [1, 1, 0, 1],   # against steps
    3: [1, 1, 0, 1], 4: [1, 1, 0, 1], 5: [1, 1, 0, 1],   # against time
}
for k, p in enumerate(panels):
    got = [p["lines"][i] for i in range(4)]
    assert got == want[k], (k, p["title"], got)
# the average of gru's snapshots: one mark in each validation panel
assert [p["marks"] for p in panels] == [0, 1, 1, 0, 1, 1], [p["marks"] for p in panels]

def round_value(v):
    if v == 0:
        return True
    m = abs(v) / 10 ** math.floor(math.log10(abs(v)) + 1e-12)
    return any(abs(m - r) < 1e-9 for r in (1, 2, 5, 10))

for k, p in enumerate(panels):
    xs = [float(t.text) for t in p["ticks"].findall(ns + "text") if t.get("text-anchor") == "middle"]
    ys = [float(t.text) for t in p["ticks"].findall(ns + "text") if t.get("text-anchor") == "end"]
    assert len(xs) >= 3 and len(ys) >= 3, (k, xs, ys)
    assert len(p["ticks"].findall(ns + "line")) == len(xs) + len(ys), k
    for axis in (xs, ys):
        assert axis == sorted(axis) or axis == sorted(axis, reverse=True), axis
    steps = {round(b - a, 9) for a, b in zip(xs, xs[1:])}
    assert len(steps) == 1 and round_value(steps.pop()), (k, xs)
    if p["title"] == "validation perplexity":   # log scale: 1-2-5 values
        assert all(round_value(v) for v in ys), (k, ys)
        assert ys[0] > 0, ys
    else:
        steps = {round(b - a, 9) for a, b in zip(ys, ys[1:])}
        assert len(steps) == 1 and round_value(steps.pop()), (k, ys)
# bottom row: elapsed seconds (the runs are short)
assert texts.count("elapsed time (seconds)") == 3 and texts.count("step") == 3
EOF

# a run named twice is told apart by its path
mkdir -p "$TMP/x/run" "$TMP/y/run"
cp "$TMP/torch.tsv" "$TMP/x/run/log.tsv"
cp "$TMP/torch.tsv" "$TMP/y/run/log.tsv"
# a setting stored to the last digit of its double (lr 0.003 is
# "0.0030000000000000001" in the checkpoint) shows as a person writes it
expect_ok "run lr3" "${RUN[@]}" --cell rnn --lr 0.003 --keep-snapshots 0 --out "$TMP/runs/lr3"
expect_ok "plot lr" "$NMT" plot "$TMP/runs/rnn" "$TMP/runs/lr3" -o "$TMP/lr.svg"
grep -q ">lr3 (lr=0.003)<" "$TMP/lr.svg" && grep -q ">rnn (lr=0.001)<" "$TMP/lr.svg" && pass ||
    fail "legend of lr: $(grep -o '>[a-z0-9]* (lr=[^<]*<' "$TMP/lr.svg" | tr '\n' ' ')"
expect_ok "same names" "$NMT" plot "$TMP/x/run" "$TMP/y/run/log.tsv" "$TMP/torch.tsv" -o "$TMP/two.svg"
grep -q ">$TMP/x/run</text>" "$TMP/two.svg" && grep -q ">$TMP/y/run/log.tsv</text>" "$TMP/two.svg" &&
    grep -q ">torch</text>" "$TMP/two.svg" && pass || fail "same-named runs not told apart"

# --- refused ---------------------------------------------------------------------------
refused() { # refused NAME PATTERN ARGS...: one line, nothing written
    local name=$1 pattern=$2
    shift 2
    rm -f "$TMP/bad.svg"
    expect_fail "$name" "$pattern" "$NMT" plot "$@"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/bad.svg" ] && pass || fail "$name: wrote an SVG"
}
mkdir -p "$TMP/empty-run"
printf 'epoch\tloss\n1\t2\n' >"$TMP/nostep.tsv"
printf 'step\tloss\n1\t2\n2\tlots\n' >"$TMP/word.tsv"
refused "missing run" "nope" "$TMP/nope" -o "$TMP/bad.svg"
refused "folder without log.tsv" "empty-run/log\\.tsv" "$TMP/empty-run" -o "$TMP/bad.svg"
refused "no step column" "nostep\\.tsv:1: the header names no 'step'" "$TMP/nostep.tsv" -o "$TMP/bad.svg"
refused "not a number" "word\\.tsv:3: column 'loss': 'lots'" "$TMP/word.tsv" -o "$TMP/bad.svg"
expect_fail "no runs" "no runs given" "$NMT" plot -o "$TMP/bad.svg"
expect_fail "no -o" "-o FILE\\.svg is required" "$NMT" plot "$TMP/torch.tsv"
refused "unwritable" "nodir/bad\\.svg" "$TMP/torch.tsv" -o "$TMP/nodir/bad.svg"
expect_fail "unknown option" "Try 'nmt plot --help'" "$NMT" plot --bogus "$TMP/torch.tsv" -o "$TMP/x.svg"
ls "$TMP" | grep -q "tmp" && fail "a temporary file was left: $(ls "$TMP")" || pass

finish
