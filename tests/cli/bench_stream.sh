#!/usr/bin/env bash
# scripts/bench/bench-stream --quick: makes its tiny synthetic corpora, trains
# streamed and in memory, and prints the table of peak RSS and steps/s with
# a row per run; bench-stream.json holds the same runs.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:?}
expect_ok "bench-stream --quick" python3 "$ROOT/scripts/bench/bench-stream" --quick --nmt "$NMT" \
    --dir "$TMP/b"
cp "$TMP/out" "$TMP/table"
[ "$(grep -c '^| [0-9]' "$TMP/table")" = 3 ] && pass || fail "the table has not 3 rows: $(cat "$TMP/table")"
grep -q '^| 5000 | streamed, --shuffle-buffer 500 |' "$TMP/table" && pass ||
    fail "no streamed row of 5000 pairs: $(cat "$TMP/table")"
grep -q '^| 2000 | in memory |' "$TMP/table" && pass || fail "no in-memory row: $(cat "$TMP/table")"
python3 - "$TMP/b/bench-stream.json" <<'PY' && pass || fail "bench-stream.json: $(cat "$TMP/b/bench-stream.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 3
for r in runs:
    assert r["steps"] == 40 and r["peak_rss_mb"] > 1 and r["steps_per_s"] > 0, r
PY
# the generator: N pairs, the same lines for the same N and seed
expect_ok "make-synthetic-corpus" python3 "$ROOT/scripts/data/make-synthetic-corpus" 3000 "$TMP/g"
[ "$(zcat "$TMP/g/train.src.gz" | wc -l)" = 3000 ] && [ "$(zcat "$TMP/g/train.tgt.gz" | wc -l)" = 3000 ] &&
    pass || fail "make-synthetic-corpus 3000 did not write 3000 pairs"
expect_ok "make-synthetic-corpus again" python3 "$ROOT/scripts/data/make-synthetic-corpus" 3000 "$TMP/g2"
cmp -s "$TMP/g/train.src.gz" "$TMP/g2/train.src.gz" && cmp -s "$TMP/g/train.tgt.gz" "$TMP/g2/train.tgt.gz" &&
    pass || fail "make-synthetic-corpus wrote other bytes the second time"
finish
