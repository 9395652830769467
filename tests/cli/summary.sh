# scripts/test's closing line (scripts/test-summary): skipped tests (exit 77,
# meson's SKIP) are counted apart, not as failures, and every result that is
# neither OK nor SKIP is a failure, summed over the logs of both passes.
. "$(dirname "$0")/lib.sh"
SUMMARY=${NMT_SOURCE_ROOT:?}/scripts/test-summary

row() { printf '{"name": "%s", "result": "%s", "duration": 0.1, "returncode": %s}\n' "$1" "$2" "$3"; }
{
    row a OK 0
    row b OK 0
    row diskfull SKIP 77
    row c FAIL 1
} >"$TMP/testlog.json"
{
    row a OK 0
    row diskfull SKIP 77
    row t TIMEOUT -15
    row e ERROR 99
} >"$TMP/testlog-asan.json"

out=$("$SUMMARY" "$TMP/testlog.json" "$TMP/testlog-asan.json")
[ "$out" = "3 passed, 3 failed, 2 skipped" ] && pass || fail "two passes: '$out'"
out=$("$SUMMARY" "$TMP/testlog.json")
[ "$out" = "2 passed, 1 failed, 1 skipped" ] && pass || fail "one pass: '$out'"
# a green run with skips reads as green
grep -v FAIL "$TMP/testlog.json" >"$TMP/green.json"
out=$("$SUMMARY" "$TMP/green.json")
[ "$out" = "2 passed, 0 failed, 1 skipped" ] && pass || fail "green run: '$out'"
# a pass that wrote no log (its build failed) adds nothing
out=$("$SUMMARY" "$TMP/missing.json" "$TMP/green.json")
[ "$out" = "2 passed, 0 failed, 1 skipped" ] && pass || fail "missing log: '$out'"
# meson's own log of this very build, if there is one, parses: its counts
# add up to its rows
if [ -n "${MESON_BUILD_ROOT:-}" ] && [ -f "$MESON_BUILD_ROOT/meson-logs/testlog.json" ]; then
    log=$MESON_BUILD_ROOT/meson-logs/testlog.json
    read -r p _ f _ s _ <<<"$("$SUMMARY" "$log")"
    [ $((p + f + s)) -eq "$(grep -c '"result":' "$log")" ] && pass || fail "meson's log: $p + $f + $s rows"
fi
finish
