# The page of nmt serve (GET /) in a real browser: Debian's chromium,
# headless (tests/browser/chrome.py). The page types sentences into its own
# text box (#selftest;text=...), as a person would, and after its debounce
# and its request shows each translation and its heatmap: the translation
# is nmt translate's, the heatmap has a row per target token and a column
# per source token, its colours are not all the same and it marks the
# model's links; no console message, no error. For a Transformer, choosing
# another layer and head redraws the map in other colours.
. "$(dirname "$0")/../cli/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
. "$(dirname "$0")/../cli/serve_lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy
M=$SRC/models/toy-attention.safetensors
export PYTHONPATH=$SRC/tests/browser
cd "$TMP" || exit 1

zcat "$TOY/test.src.gz" | sed -n '2p;5p' >in
expect_ok "a small Transformer" "$NMT" train -q --arch transformer --src "$TOY/train.src.gz" \
    --tgt "$TOY/train.tgt.gz" --d-model 16 --heads 2 --ff 32 --layers 2 --batch-size 32 \
    --max-steps 40 --threads 1 --out tf
TF=$TMP/tf/checkpoint.safetensors

check_page() { # NAME MODEL
    local name=$1 model=$2
    "$NMT" translate -m "$model" -q <in >want.$name
    serve_start "$name" -m "$model" --threads 1 || { fail "$name: start"; return; }
    "$PY" - "$URL" in want.$name "$name" >"$name.out" 2>&1 <<'PYEOF'
import json, sys, urllib.parse
import chrome
url, lines, want = sys.argv[1], open(sys.argv[2]).read().split("\n")[:2], open(sys.argv[3]).read().split("\n")[:2]
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)
st, console, dom, seconds = chrome.served_selftest(url + "/#selftest;text=" + urllib.parse.quote("\n".join(lines)))
check(console == [], "console messages: %s" % console[:3])
check(st["errors"] == [], "errors in the page: %s" % st["errors"])
check(st["translations"] == want, "translations %s, nmt translate's %s" % (st["translations"], want))
check(len(st["maps"]) == 2, "%d heatmaps for 2 sentences" % len(st["maps"]))
for k, (m, line, hyp) in enumerate(zip(st["maps"], lines, want)):
    check(m["words"] == line.split() + ["</s>"], "map %d: source words %s" % (k, m["words"][:5]))
    # a row per target word and </s>, which a translation cut at the
    # length limit has not
    check(m["rows"] in (len(hyp.split()), len(hyp.split()) + 1) and m["cols"] == len(line.split()) + 1,
          "map %d: %d x %d" % (k, m["rows"], m["cols"]))
    check(m["cells"] == m["rows"] * m["cols"], "map %d: %d cells" % (k, m["cells"]))
    check(m["links"] >= m["rows"] - 1, "map %d: %d model links" % (k, m["links"]))
    check(len(set(m["colours"])) > 3, "map %d: %d colours" % (k, len(set(m["colours"]))))
check(("head_maps" in st) == (sys.argv[4] == "tf"), "layer and head chosen: %s" % list(st))
if "head_maps" in st:
    hm = st["head_maps"]
    check(len(hm) == 2 and all(a["cells"] == b["cells"] for a, b in zip(hm, st["maps"])), "head maps")
    check(any(a["colours"] != b["colours"] for a, b in zip(hm, st["maps"])),
          "layer 0 head 0 drew the same colours as the default map")
print("%s: %s, %.2f s for chromium" % (sys.argv[1], st["status"], seconds))
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PYEOF
    local rc=$?
    cat "$name.out"
    [ $rc -eq 0 ] && pass || fail "$name page in chromium: $(grep FAIL "$name.out" | head -5)"
    serve_stop && pass || fail "$name: exit status $?"
}
check_page rnn "$M"
check_page tf "$TF"
finish
