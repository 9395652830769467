#!/usr/bin/env bash
# scripts/bench/bench-transformer at its tiny size, with the default
# configuration's norms (ScaleNorm and FixNorm): nmt's Transformer and
# PyTorch's (pytorch/torch_transformer.py) train from the same weights on
# the same batches and follow each other to float rounding (the 4 decimals
# of nmt's log.tsv), both translate, and bench-transformer.json holds every
# figure the table promises, with values that make sense together.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CORPUS=${NMT_CORPORA:-$ROOT/../shared/corpora}/multi30k
PY=/usr/bin/python3
[ -x $PY ] || PY=python3

expect_ok "scripts/bench/bench-transformer --tiny" "$ROOT/scripts/bench/bench-transformer" --tiny \
    --nmt "$NMT_BIN" --corpus "$CORPUS" --json "$TMP/bt.json"
grep -q "^training: nmt .* steps/s, PyTorch" "$TMP/out" && pass || fail "no training line: $(cat "$TMP/out")"
$PY - "$TMP/bt.json" <<'PYEOF' && pass || fail "bench-transformer.json is incomplete or inconsistent: $(cat "$TMP/bt.json")"
import json, math, sys
R = json.load(open(sys.argv[1]))
pos = lambda x: isinstance(x, (int, float)) and math.isfinite(x) and x > 0
assert pos(R["sgemm_gflops"])
t = R["train"]
for k in ("nmt_steps_per_s", "torch_steps_per_s", "gflop_per_step", "nmt_peak_rss_mb",
          "torch_peak_rss_mb"):
    assert pos(t[k]), k
assert abs(t["nmt_gflops"] - t["gflop_per_step"] * t["nmt_steps_per_s"]) < 1e-6 * t["nmt_gflops"]
assert abs(t["torch_gflops"] - t["gflop_per_step"] * t["torch_steps_per_s"]) < 1e-6 * t["torch_gflops"]
# the default configuration's model: ScaleNorm and FixNorm, which torch's
# layers must follow too
assert R["config_name"] == "defaults (tiny)", R["config_name"]
assert R["norm"] == "scale" and R["fixnorm"] is True, (R["norm"], R["fixnorm"])
assert "--norm scale --fixnorm" in R["config"], R["config"]
# the same model from the same weights on the same batches: the same losses,
# to the rounding of nmt's 4 decimals (5e-5 of a loss near 7) and float's
assert len(R["first_losses"]) >= 3
for a, b in R["first_losses"]:
    assert abs(a - b) < 1e-4 * abs(b), (a, b)
for beam in ("beam1", "beam5"):
    v = R["translate"][beam]
    for k in ("nmt_sentences_per_s", "torch_sentences_per_s", "nmt_peak_rss_mb", "torch_peak_rss_mb"):
        assert pos(v[k]), (beam, k)
PYEOF

finish
