# nmt compare: two tiny runs (attention and none) trained with validation on a
# few Multi30k lines; the table's figures are checked against their sources
# (nmt translate + nmt bleu, nmt bleu --by-length, nmt info, log.tsv); the SVG
# is well-formed XML with a line per run; a run without validation falls back
# to its checkpoint with a note; refusals.
. "$(dirname "$0")/lib.sh"

M30K=${NMT_CORPORA:?}/multi30k
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

zcat "$M30K/train.de.gz" | head -n 60 >"$TMP/train.de"
zcat "$M30K/train.en.gz" | head -n 60 >"$TMP/train.en"
head -n 20 "$TMP/train.de" >"$TMP/valid.de"
head -n 20 "$TMP/train.en" >"$TMP/valid.en"
# the test set: training lines (so that the tiny models score above 0) and
# a few long ones for more length buckets
{ head -n 60 "$TMP/train.de"; zcat "$M30K/val.de.gz" | awk 'NF > 20' | head -n 5; } >"$TMP/test.de"
paste <(zcat "$M30K/val.de.gz") <(zcat "$M30K/val.en.gz") | awk -F'\t' '{ n = split($1, w, " ") } n > 20' |
    head -n 5 | cut -f2 >"$TMP/long.en"
{ head -n 60 "$TMP/train.en"; cat "$TMP/long.en"; } >"$TMP/test.en"
[ "$(wc -l <"$TMP/test.de")" -eq 65 ] && [ "$(wc -l <"$TMP/test.en")" -eq 65 ] && pass ||
    fail "test set: $(wc -l <"$TMP/test.de") and $(wc -l <"$TMP/test.en") lines"

SMALL=(--cell gru --emb 24 --hidden 24 --att-dim 24 --out-dim 24 --batch-size 30
       --max-steps 150 --lr 0.03 --dropout 0 --epochs 1000 --patience 0 --seed 2 --lowercase -q
       --valid-src "$TMP/valid.de" --valid-tgt "$TMP/valid.en")
expect_ok "train att" "$NMT" train --arch rnn --src "$TMP/train.de" --tgt "$TMP/train.en" "${SMALL[@]}" \
    --out "$TMP/runs/att"
expect_ok "train none" "$NMT" train --arch rnn --src "$TMP/train.de" --tgt "$TMP/train.en" "${SMALL[@]}" \
    --attention none --out "$TMP/runs/none"
expect_ok "train without validation" "$NMT" train --arch rnn --src "$TMP/train.de" --tgt "$TMP/train.en" \
    --cell gru --emb 8 --hidden 8 --att-dim 8 --out-dim 8 --max-steps 3 -q --lowercase \
    --out "$TMP/runs/noval"
[ -f "$TMP/runs/att/best.safetensors" ] && [ -f "$TMP/runs/none/best.safetensors" ] && pass ||
    fail "no best.safetensors after validation"

# --- refusals -------------------------------------------------------------------------
expect_ok "help" "$NMT" compare --help
for opt in src ref output beam threads; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
expect_fail "no runs" "no run folders" "$NMT" compare --src "$TMP/test.de" --ref "$TMP/test.en"
expect_fail "no --src" "--src is required" "$NMT" compare "$TMP/runs/att" --ref "$TMP/test.en"
expect_fail "no --ref" "--ref is required" "$NMT" compare "$TMP/runs/att" --src "$TMP/test.de"
head -n 10 "$TMP/test.en" >"$TMP/short.en"
expect_fail "line counts" "--src has 65 lines but --ref has 10" \
    "$NMT" compare "$TMP/runs/att" --src "$TMP/test.de" --ref "$TMP/short.en"
expect_fail "not a run" "nowhere: neither best.safetensors nor checkpoint.safetensors" \
    "$NMT" compare "$TMP/runs/att" "$TMP/nowhere" --src "$TMP/test.de" --ref "$TMP/test.en"
expect_fail "bad beam" "--beam: 'x' is not a whole number" \
    "$NMT" compare "$TMP/runs/att" --src "$TMP/test.de" --ref "$TMP/test.en" --beam x

# --- the table --------------------------------------------------------------------------
expect_ok "compare" "$NMT" compare "$TMP/runs/att" "$TMP/runs/none/" --src "$TMP/test.de" \
    --ref "$TMP/test.en" -o "$TMP/report.svg" --beam 3
cp "$TMP/out" "$TMP/table"
[ -s "$TMP/err" ] && fail "stderr not empty: $(head -c 300 "$TMP/err")" || pass

# the figures each row should hold, from the tools they summarise
for run in att none; do
    best=$TMP/runs/$run/best.safetensors
    "$NMT" translate -m "$best" -i "$TMP/test.de" -b 3 >"$TMP/$run.hyp" &&
        "$NMT" bleu "$TMP/test.en" -i "$TMP/$run.hyp" --lc -b >"$TMP/$run.bleu" &&
        "$NMT" bleu -m chrf "$TMP/test.en" -i "$TMP/$run.hyp" --lc -b >"$TMP/$run.chrf" &&
        "$NMT" bleu "$TMP/test.en" -i "$TMP/$run.hyp" --lc --by-length --src "$TMP/test.de" \
            >"$TMP/$run.bylen" &&
        "$NMT" info "$best" >"$TMP/$run.info" && pass || fail "$run: reference figures"
done
"$PY" - "$TMP/table" "$TMP/runs" <<'EOF' && pass || fail "table figures"
import statistics, sys
table, runs = sys.argv[1], sys.argv[2]
lines = open(table, encoding="utf-8").read().split("\n")
rows = {}
for l in lines:
    cells = l.split()
    if not cells:
        continue
    # labels are words up to the first cell of figures; the runs are the
    # last two cells
    rows[" ".join(cells[:-2])] = cells[-2:]
def row(label):
    assert label in rows, "no row %r in %s" % (label, list(rows))
    return rows[label]
assert row("run") == ["att", "none"], row("run")
assert row("model") == ["gru/bahdanau", "gru/none"], row("model")
assert row("model file") == ["best", "best"]
for k, run in enumerate(["att", "none"]):
    info = dict(l.split(None, 1) for l in open("%s/../%s.info" % (runs, run)) if " " in l.strip())
    assert row("parameters")[k] == info["parameters"].strip(), (row("parameters"), info["parameters"])
    log = [l.rstrip("\n").split("\t") for l in open("%s/%s/log.tsv" % (runs, run))]
    head, body = log[0], log[1:]
    col = {name: i for i, name in enumerate(head)}
    assert row("steps")[k] == body[-1][col["step"]]
    # an average's row (the default) has no training columns
    tok = statistics.median(float(r[col["tok_per_s"]]) for r in body if r[col["tok_per_s"]] != "")
    assert row("tok/s (median)")[k] == "%.0f" % tok, (row("tok/s (median)"), tok)
    valid = [r for r in body if r[col["valid_bleu"]] != ""]
    assert valid, "no validation rows"
    best = max(valid, key=lambda r: (float(r[col["valid_bleu"]]), -float(r[col["valid_ppl"]])))
    assert row("valid ppl (best row)")[k] == "%.2f" % float(best[col["valid_ppl"]])
    assert row("valid BLEU (best row)")[k] == "%.2f" % float(best[col["valid_bleu"]])
    bleu = open("%s/../%s.bleu" % (runs, run)).read().strip()
    assert row("test BLEU (65)")[k] == bleu, (row("test BLEU (65)"), bleu)
    chrf = open("%s/../%s.chrf" % (runs, run)).read().strip()
    assert row("test chrF2 (65)")[k] == chrf, (row("test chrF2 (65)"), chrf)
    bylen = [l.split() for l in open("%s/../%s.bylen" % (runs, run))]
    buckets = [c for c in bylen if c and c[0][0].isdigit() and "-" in c[0] or c and c[0] == "51+"]
    assert len(buckets) == 6, buckets
    total = 0
    for label, count, score in buckets:
        assert row("%s (%s)" % (label, count))[k] == score, (label, row("%s (%s)" % (label, count)), score)
        total += int(count)
    assert total == 65
assert any(l.startswith("BLEU: nrefs:1|case:lc|") for l in lines), "no signature line"
assert "chrF2: nrefs:1|case:lc|eff:yes|nc:6|nw:0|space:no|version:2.6.0" in lines, "no chrF signature line"
# the runs learnt something (so the BLEU figures above are not all zeros)
assert max(float(x) for x in row("test BLEU (65)")) > 0.5, row("test BLEU (65)")
assert min(float(x) for x in row("test chrF2 (65)")) > 1, row("test chrF2 (65)")
EOF
grep -q "^  21-30 ([1-9]" "$TMP/table" && pass || fail "the long sentences are not in a bucket"

# --- the chart --------------------------------------------------------------------------
"$PY" - "$TMP/report.svg" <<'EOF' && pass || fail "SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
assert float(root.get("width")) > 0 and float(root.get("height")) > 0
texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
for want in ["BLEU by source sentence length", "att (gru/bahdanau)", "none (gru/none)"]:
    assert any(want in t for t in texts), "no text %r in %s" % (want, texts)
assert any("length" in t for t in texts) and any("BLEU" in t for t in texts)
lines = [e for e in root.iter() if e.tag in (ns + "polyline", ns + "path")]
assert len(lines) >= 2, "%d lines" % len(lines)
EOF

# --- a run without validation: its checkpoint, with a note --------------------------------
expect_ok "fallback" "$NMT" compare "$TMP/runs/noval" "$TMP/runs/att" --src "$TMP/test.de" \
    --ref "$TMP/test.en" --beam 1
grep -q "noval has no best.safetensors .*using checkpoint.safetensors" "$TMP/err" && pass ||
    fail "no note: $(head -c 300 "$TMP/err")"
grep -Eq "^model file +checkpoint +best$" "$TMP/out" && pass || fail "model file row: $(grep '^model file' "$TMP/out")"
grep -Eq "^valid ppl \(best row\) +- +[0-9]" "$TMP/out" && pass || fail "no dash for a run without validation"

# --- model files and folders alike, labels that tell runs apart, - for the unknown --------
# (issue 17: a folder without log.tsv, a model file, two runs of one folder
# name and an empty log each failed or showed nan)
mkdir -p "$TMP/other" "$TMP/bare" "$TMP/empty"
cp -r "$TMP/runs/att" "$TMP/other/att"
cp "$TMP/runs/none/best.safetensors" "$TMP/bare/" # a run folder with no log.tsv
cp "$TMP/runs/none/best.safetensors" "$TMP/lone.safetensors" # a model file outside a run
cp "$TMP/runs/att/best.safetensors" "$TMP/runs/att/checkpoint.safetensors" "$TMP/empty/"
head -n 1 "$TMP/runs/att/log.tsv" >"$TMP/empty/log.tsv" # the header only
expect_ok "same folder names" "$NMT" compare "$TMP/runs/att" "$TMP/other/att" --src "$TMP/test.de" \
    --ref "$TMP/test.en" --beam 1 -q
grep -Eq "^run +runs/att +other/att$" "$TMP/out" && pass || fail "labels: $(grep '^run ' "$TMP/out")"
expect_ok "the same run twice" "$NMT" compare "$TMP/runs/att" "$TMP/runs/att/" --src "$TMP/test.de" \
    --ref "$TMP/test.en" --beam 1 -q
grep -Eq "^run +att +att#2$" "$TMP/out" && pass || fail "one run twice: $(grep '^run ' "$TMP/out")"
expect_ok "files and folders" "$NMT" compare "$TMP/runs/att/best.safetensors" "$TMP/lone.safetensors" \
    "$TMP/bare" "$TMP/empty" --src "$TMP/test.de" --ref "$TMP/test.en" --beam 1 -q
cp "$TMP/out" "$TMP/mixed"
grep -Eq "^run +best +lone +bare +empty$" "$TMP/mixed" && pass || fail "labels: $(grep '^run ' "$TMP/mixed")"
grep -Eq "^model file +best +lone +best +best$" "$TMP/mixed" && pass ||
    fail "model file row: $(grep '^model file' "$TMP/mixed")"
# the model file in a run folder has its run's log; the others know nothing of training
att_steps=$(tail -n 1 "$TMP/runs/att/log.tsv" | cut -f1)
grep -Eq "^steps +$att_steps +- +- +-$" "$TMP/mixed" && pass || fail "steps row: $(grep '^steps' "$TMP/mixed")"
grep -Eq "^training time +[0-9.]+s +- +- +-$" "$TMP/mixed" && pass ||
    fail "training time row: $(grep '^training time' "$TMP/mixed")"
grep -Eq "^valid BLEU \(best row\) +[0-9.]+ +- +- +-$" "$TMP/mixed" && pass ||
    fail "valid BLEU row: $(grep '^valid BLEU' "$TMP/mixed")"
grep -qi "nan" "$TMP/mixed" && fail "nan in the table: $(grep -i nan "$TMP/mixed")" || pass
# the figures of one model are the same however it is named
bleu_of() { grep "^test BLEU" "$1" | awk '{ print $(NF - '"$2"') }'; }
[ "$(bleu_of "$TMP/mixed" 1)" = "$(bleu_of "$TMP/mixed" 2)" ] && pass ||
    fail "lone and bare (the same model) differ: $(grep '^test BLEU' "$TMP/mixed")"
grep -q "bare has no log.tsv" "$TMP/err" && pass || fail "no note for a folder without log.tsv: $(cat "$TMP/err")"
expect_fail "not a model file" "test\.de: .*nor a model file|test\.de" "$NMT" compare "$TMP/test.de" \
    --src "$TMP/test.de" --ref "$TMP/test.en"

finish
