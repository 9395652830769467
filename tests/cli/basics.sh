# The program's top level: help, version, unknown commands.
. "$(dirname "$0")/lib.sh"

expect_ok "help" "$NMT" --help
grep -q "translate" "$TMP/out" && pass || fail "help lists commands"
expect_ok "version" "$NMT" --version
expect_fail "no command" "Usage" "$NMT"
expect_fail "unknown command" "unknown command 'frobnicate'" "$NMT" frobnicate
expect_fail "help of unknown" "unknown command" "$NMT" help frobnicate
finish
