#!/usr/bin/env bash
# nmt align's links (docs/alignments.md, "Which step, which words"):
# - --shift: every format shows each target unit's row from the step that
#   reads it (the forced pass's next row), "</s>"'s all on the source
#   "</s>"; pharaoh and --gold read their links there, as the guided
#   report's --shift reads the unshifted JSON; --per-head's table shifts
#   every map; an RNN is refused, by name;
# - --eos-unaligned and --min-weight drop links (pharaoh, --gold, the
#   pictures' dots) exactly where the weights say;
# - a guided model aligns with its trained head at its step by default,
#   and --layer/--head/--no-shift override it;
# - --threads N: the same bytes for any N, and those of the pairs one at a
#   time (the old path, which --format json takes).
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

ROOT=${NMT_SOURCE_ROOT:?}
TOY=$ROOT/corpora/toy
REPORT=$ROOT/scripts/experiments/guided_alignment_report.py
cd "$TMP" || exit 1
zcat "$TOY/test.src.gz" | head -n 200 >s
zcat "$TOY/test.tgt.gz" | head -n 200 >t
head -n 200 "$TOY/test.align" >l
head -n 20 s >s20
head -n 20 t >t20
head -n 20 l >l20
RNN=$ROOT/models/toy-attention.safetensors
TINY=(train -q --arch transformer --src s --tgt t --d-model 16 --heads 2 --ff 32 --layers 2
      --batch-size 20 --threads 2 --seed 3 --max-steps 60 --dropout 0)
expect_ok "train a small Transformer" "$NMT" "${TINY[@]}" --out tf
expect_ok "train a guided one" "$NMT" "${TINY[@]}" --guided-links l --guided-weight 1 \
    --guided-layer 1 --guided-head 1 --guided-step read --out gr
TF=tf/checkpoint.safetensors
GR=gr/checkpoint.safetensors
aer() { sed -n 's/^AER \([0-9.]*\) .*/\1/p'; }

# --- --shift -----------------------------------------------------------------------------------
A=("$NMT" align -m $TF --src s20 --tgt t20 --threads 1)
"${A[@]}" --format json >plain.json 2>/dev/null
"${A[@]}" --format json --shift >shift.json 2>/dev/null
python3 - plain.json shift.json <<'PY' && pass || fail "--shift's rows are not the next step's"
import json, sys
plain = [json.loads(x) for x in open(sys.argv[1])]
shift = [json.loads(x) for x in open(sys.argv[2])]
assert len(plain) == len(shift) == 20
for p, s in zip(plain, shift):
    P, S = p["attention"], s["attention"]
    assert p["target"] == s["target"] and len(P) == len(S)
    assert S[:-1] == P[1:], "row i is not row i + 1"
    n = len(P[0])
    assert S[-1] == [0.0] * (n - 1) + [1.0], "</s>'s row is not on the source </s>"
PY
"${A[@]}" --format tsv --shift >shift.tsv 2>/dev/null
"${A[@]}" --format tsv >plain.tsv 2>/dev/null
cmp -s shift.tsv plain.tsv && fail "--shift leaves the TSV as it was" || pass
# pharaoh --shift: the report's links from the unshifted rows one on
"${A[@]}" --format pharaoh --shift >shift.align 2>/dev/null
python3 - plain.json shift.align "$REPORT" <<'PY' && pass || fail "--shift's pharaoh links"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("r", sys.argv[3])
r = importlib.util.module_from_spec(spec); spec.loader.exec_module(r)
rows = [json.loads(x) for x in open(sys.argv[1])]
got = [set(tuple(int(v) for v in l.split("-")) for l in line.split()) for line in open(sys.argv[2])]
assert len(got) == len(rows)
for m, g in zip(rows, got):
    assert r.hard_links(m["source"], m["target"], m["attention"], 1) == g, (m["target"], g)
PY
a_shift=$("${A[@]}" --gold l20 --shift 2>/dev/null | aer)
a_report=$(python3 "$REPORT" aer l20 --shift <plain.json | aer)
[ -n "$a_shift" ] && [ "$a_shift" = "$a_report" ] && pass ||
    fail "--gold --shift AER $a_shift, the report's on the rows one on $a_report"
a_plain=$("${A[@]}" --gold l20 2>/dev/null | aer)
a_plain_report=$(python3 "$REPORT" aer l20 <plain.json | aer)
[ "$a_plain" = "$a_plain_report" ] && pass || fail "--gold AER $a_plain, the report's $a_plain_report"
# --per-head --shift: the map shown has the AER of the scores line
"${A[@]}" --gold l20 --shift --per-head >ph.txt 2>/dev/null
grep -q "^AER $a_shift " ph.txt && grep -Eq "$a_shift\*" ph.txt && pass ||
    fail "--per-head --shift: $(cat ph.txt)"
"${A[@]}" --gold l20 --per-head >ph0.txt 2>/dev/null
cmp -s ph.txt ph0.txt && fail "--per-head's table is the same with --shift" || pass
# without --tgt: the model's translation is shifted too
"$NMT" align -m $TF --src s20 --format json --beam 1 --threads 1 >tr.json 2>/dev/null
"$NMT" align -m $TF --src s20 --format json --beam 1 --threads 1 --shift >trs.json 2>/dev/null
python3 - tr.json trs.json <<'PY' && pass || fail "--shift without --tgt"
import json, sys
a = [json.loads(x)["attention"] for x in open(sys.argv[1])]
b = [json.loads(x)["attention"] for x in open(sys.argv[2])]
assert len(a) == len(b) == 20 and all(y[:-1] == x[1:] for x, y in zip(a, b))
PY
expect_fail "--shift on an RNN" "--shift: this model's attention at a step is computed from the state before" \
    "$NMT" align -m "$RNN" --src s20 --tgt t20 --shift --format pharaoh
expect_fail "--min-weight out of range" "--min-weight" "$NMT" align -m "$TF" --src s20 --tgt t20 \
    --min-weight 1.5 --format pharaoh

# --- unaligned words ---------------------------------------------------------------------------
"${A[@]}" --format pharaoh >all.align 2>/dev/null
"${A[@]}" --format pharaoh --eos-unaligned >eos.align 2>/dev/null
"${A[@]}" --format pharaoh --min-weight 0.3 >mw.align 2>/dev/null
python3 - plain.json all.align eos.align mw.align <<'PY' && pass || fail "--eos-unaligned, --min-weight"
import json, sys
rows = [json.loads(x) for x in open(sys.argv[1])]
def links(path):
    return [[tuple(int(v) for v in l.split("-")) for l in line.split()] for line in open(path)]
every, eos, mw = (links(p) for p in sys.argv[2:5])
dropped_eos = dropped_mw = 0
for m, a, e, w in zip(rows, every, eos, mw):
    att = m["attention"]
    want_e = [(j, i) for j, i in a if not att[i][-1] > att[i][j]]
    want_w = [(j, i) for j, i in a if not att[i][j] < 0.3]
    assert e == want_e, (e, want_e)
    assert w == want_w, (w, want_w)
    dropped_eos += len(a) - len(e)
    dropped_mw += len(a) - len(w)
assert dropped_mw > 0, "--min-weight 0.3 dropped nothing: the test says nothing"
print("dropped: eos", dropped_eos, "min-weight", dropped_mw, file=sys.stderr)
PY
n_all=$("${A[@]}" --gold l20 2>/dev/null | sed -n 's/.*pairs, \([0-9]*\) model links.*/\1/p')
n_mw=$("${A[@]}" --gold l20 --min-weight 0.3 2>/dev/null | sed -n 's/.*pairs, \([0-9]*\) model links.*/\1/p')
[ "$n_mw" = "$(wc -w <mw.align | tr -d ' ')" ] && [ "$n_mw" -lt "$n_all" ] && pass ||
    fail "--gold --min-weight counts $n_mw model links, pharaoh $(wc -w <mw.align), all $n_all"
"${A[@]}" --line 2 --gold l20 -o all.svg >/dev/null 2>&1
"${A[@]}" --line 2 --gold l20 --min-weight 1 -o none.svg >/dev/null 2>&1
# the dots of the class "model" group (the legend has one dot of its own)
dots() { sed -n '/<g class="model"/,/<\/g>/p' "$1" | grep -c '<circle'; }
[ "$(dots all.svg)" -gt 0 ] && [ "$(dots none.svg)" = 0 ] && pass ||
    fail "the picture's dots: $(dots all.svg), under --min-weight 1: $(dots none.svg)"

# --- a guided model's head by default ----------------------------------------------------------
"$NMT" info $GR | grep -q "^aligned head    layer 1 head 1, .*nmt align's default map and step" &&
    pass || fail "nmt info: $("$NMT" info $GR | grep aligned)"
G=("$NMT" align -m $GR --src s20 --tgt t20 --threads 1 --format json)
"${G[@]}" >g.default.json 2>/dev/null
"${G[@]}" --layer 1 --head 1 --shift >g.l1h1s.json 2>/dev/null
"${G[@]}" --layer 1 --head 1 >g.l1h1.json 2>/dev/null
"${G[@]}" --no-shift >g.noshift.json 2>/dev/null
"$NMT" align -m $TF --src s20 --tgt t20 --threads 1 --format json >tf.default.json 2>/dev/null
"$NMT" align -m $TF --src s20 --tgt t20 --threads 1 --format json --layer 1 >tf.l1.json 2>/dev/null
[ -s g.default.json ] && cmp -s g.default.json g.l1h1s.json && pass ||
    fail "a guided model's default is not its head at the step that reads"
[ -s g.l1h1.json ] && cmp -s g.noshift.json g.l1h1.json && pass || fail "--no-shift is not the head at the predicting step"
[ -s tf.default.json ] && cmp -s tf.default.json tf.l1.json && pass || fail "an unguided model's default moved"

# --- --threads ---------------------------------------------------------------------------------
P=("$NMT" align -m $TF --src s --tgt t --format pharaoh --shift --eos-unaligned)
"${P[@]}" --threads 1 >th1.align 2>/dev/null
"${P[@]}" --threads 2 >th2.align 2>/dev/null
"${P[@]}" --threads 3 >th3.align 2>/dev/null
[ "$(wc -l <th1.align)" = 200 ] && cmp -s th1.align th2.align && cmp -s th1.align th3.align &&
    pass || fail "--threads 1, 2 and 3 give other links"
# the one-pair path (json, pairs one at a time) read by the same rules
"$NMT" align -m $TF --src s --tgt t --format json --shift --threads 1 >th.json 2>/dev/null
python3 - th.json th1.align <<'PY' && pass || fail "the threaded links are not the one-pair path's"
import json, sys
rows = [json.loads(x) for x in open(sys.argv[1])]
got = [line.split() for line in open(sys.argv[2])]
assert len(rows) == len(got) == 200
for m, g in zip(rows, got):
    att, want = m["attention"], []
    for i, row in enumerate(att[:-1]):
        real = row[:-1]
        if not real:
            continue
        j = real.index(max(real))
        if not row[-1] > row[j]:
            want.append("%d-%d" % (j, i))
    assert g == want, (g, want)
PY
# --batch-size: pairs through one training forward; the same bytes for any
# --threads, and the one-pair path's links but where two weights of the
# row (as the one-pair path's JSON has them) are within 1e-4
"${P[@]}" --threads 1 --batch-size 8 >b1.align 2>/dev/null
"${P[@]}" --threads 2 --batch-size 8 >b2.align 2>/dev/null
[ "$(wc -l <b1.align)" = 200 ] && cmp -s b1.align b2.align && pass ||
    fail "--batch-size 8 with 1 and 2 threads"
"${P[@]}" --threads 2 --batch-size 64 >b64.align 2>/dev/null
python3 - th.json th1.align b1.align b64.align <<'PY' && pass || fail "--batch-size's links beyond the tolerance"
import json, sys
rows = [json.loads(x)["attention"] for x in open(sys.argv[1])]
def links(path):
    return [dict((int(l.split("-")[1]), int(l.split("-")[0])) for l in line.split())
            for line in open(path)]
one = links(sys.argv[2])
moved = 0
for path in sys.argv[3:]:
    for att, a, b in zip(rows, one, links(path)):
        for i in set(a) | set(b):
            if a.get(i) == b.get(i):
                continue
            moved += 1
            r = att[i]  # (shifted) row i: a near-tie between the two choices
            x = r[a[i]] if i in a else r[-1]
            y = r[b[i]] if i in b else r[-1]
            assert abs(x - y) < 1e-4, (i, a.get(i), b.get(i), x, y)
print("links moved by batching:", moved, file=sys.stderr)
PY
"$NMT" align -m "$RNN" --src s20 --tgt t20 --format pharaoh --batch-size 8 >rb.align 2>/dev/null
"$NMT" align -m "$RNN" --src s20 --tgt t20 --format pharaoh >r1.align 2>/dev/null
[ -s r1.align ] && cmp -s rb.align r1.align && pass || fail "an RNN's --batch-size is not pair by pair"
expect_fail "--batch-size 0" "--batch-size" "$NMT" align -m "$TF" --src s20 --tgt t20 --batch-size 0 \
    --format pharaoh
expect_fail "--batch-size 513" "--batch-size" "$NMT" align -m "$TF" --src s20 --tgt t20 \
    --batch-size 513 --format pharaoh
g1=$("$NMT" align -m $TF --src s --tgt t --gold l --threads 1 2>&1)
g2=$("$NMT" align -m $TF --src s --tgt t --gold l --threads 2 2>&1)
[ -n "$g1" ] && [ "$g1" = "$g2" ] && pass || fail "--gold with 1 and 2 threads: $g1 / $g2"
# --- nmt serve's links: nmt align's path ------------------------------------------------------
if command -v curl >/dev/null 2>&1; then
    . "$HERE/serve_lib.sh"
    PY=python3
    head -n 8 s >s8
    if serve_start links -m $GR --threads 1; then
        body=$(python3 -c 'import json, sys
print(json.dumps({"text": [l.rstrip("\n") for l in open(sys.argv[1])], "alignments": True}))' s8)
        code=$(post "$body")
        [ "$code" = 200 ] && pass || fail "serve: status $code"
        python3 - "$TMP/body" served.tgt served.align <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as t, open(sys.argv[3], "w") as a:
    for tr in d["translations"]:
        t.write(tr["text"] + "\n")
        a.write(tr["alignment"]["links"] + "\n")
PY
        "$NMT" align -m $GR --src s8 --tgt served.tgt --format pharaoh >aligned.align 2>/dev/null
        [ "$(wc -l <served.align)" = 8 ] && [ -n "$(tr -d ' \n' <served.align)" ] &&
            cmp -s served.align aligned.align && pass ||
            fail "serve's links are not nmt align --tgt's: $(head -2 served.align) / $(head -2 aligned.align)"
        serve_stop || fail "serve did not stop cleanly"
    else
        fail "serve did not start"
    fi
else
    echo "no curl: serve's links are not checked" >&2
fi
finish
