# scripts/bench/bench-serve --quick with the shipped toy model: the server starts
# and stops for each batch size, every request is answered, and the figures
# make sense together (requests/s from the count and the time, p50 <= p99).
. "$(dirname "$0")/lib.sh"
SRC=${NMT_SOURCE_ROOT:?}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
expect_ok "bench-serve --quick" "$PY" "$SRC/scripts/bench/bench-serve" --quick --nmt "$NMT" \
    -m "$SRC/models/toy-attention.safetensors" --json "$TMP/bench.json"
cat "$TMP/out"
"$PY" - "$TMP/bench.json" <<'PYEOF' && pass || fail "bench.json: $(head -c 600 "$TMP/bench.json")"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert [(x["batch"], x["clients"]) for x in r] == [(8, 1), (8, 8), (1, 1), (1, 8)], r
for x in r:
    assert x["ok"] == x["requests"] == 24 and x["errors"] == 0, x
    assert 0 < x["p50_ms"] <= x["p99_ms"] <= x["max_ms"], x
    assert abs(x["requests_per_s"] - x["ok"] / x["seconds"]) < 1e-6 * x["requests_per_s"] + 1e-9, x
assert len(d["load_before"]) == 3 and d["commit"]
PYEOF
grep -q "p99 ms" "$TMP/out" && pass || fail "no table printed"
finish
