#!/usr/bin/env bash
# scripts/bench/bench-default at its tiny size: the speed rounds (this build
# against itself as the "old" one, so that no second build is made), the
# user's run with only the data options and --max-time, its translation and
# BLEU, and the memory it held against what it needed; bench-default.json
# holds every figure the table promises, with values that agree.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CORPUS=${NMT_CORPORA:-$ROOT/../shared/corpora}/multi30k
PY=/usr/bin/python3
[ -x $PY ] || PY=python3

expect_ok "scripts/bench/bench-default --tiny" "$ROOT/scripts/bench/bench-default" --tiny \
    --nmt "$NMT_BIN" --old-nmt "$NMT_BIN" --no-torch --no-profile --corpus "$CORPUS" \
    --json "$TMP/bd.json"
grep -q "^training tokens/s (median of 1 rounds): " "$TMP/out" && pass || fail "no speed line: $(cat "$TMP/out")"
grep -q "minutes of nmt train (data options only): [0-9]* steps; test2016 BLEU [0-9.]*" "$TMP/out" \
    && pass || fail "no line of the user's run: $(cat "$TMP/out")"
$PY - "$TMP/bd.json" <<'PYEOF' && pass || fail "bench-default.json is incomplete or inconsistent: $(cat "$TMP/bd.json")"
import json, math, sys
R = json.load(open(sys.argv[1]))
pos = lambda x: isinstance(x, (int, float)) and math.isfinite(x) and x > 0
assert pos(R["sgemm_gflops"])
s = R["speed"]
assert pos(s["old_tok_per_s"]) and pos(s["new_tok_per_s"])
assert abs(s["ratio"] - s["new_tok_per_s"] / s["old_tok_per_s"]) < 1e-9
assert len(s["ratios"]) == 1 and pos(s["ratios"][0])
u = R["user"]
assert u["steps"] > 0 and pos(u["peak_rss_mb"]) and u["test_bleu"] is not None
# the memory line: weights and activations add up to the need, and the
# process held at least what it needed
assert pos(u["weights_mb"]) and pos(u["activations_mb"])
assert abs(u["weights_mb"] + u["activations_mb"] - u["need_mb"]) <= 1, u
assert u["peak_rss_mb"] >= u["need_mb"], u
assert "BLEU" in u["bleu_line"]
assert "torch" not in R and "profile_new" not in R
PYEOF

finish
