# Helpers for the command-line tests. Source it; $NMT_BIN is the program.
set -u
NMT=${NMT_BIN:?NMT_BIN is not set}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The kernel nmt would choose, set for every run as a user's script would
# (scripts/deps.sh): on a CPU where OpenBLAS falls back, nmt otherwise runs
# itself again and says so in a line on stderr before each command's own
# output, which checks of "one line of stderr" would count. The re-execution
# itself is tests/cli/blas.sh's, which unsets the variable.
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/deps.sh"
nmt_same_kernel "$NMT"
# Under the valgrind test setup every run of nmt goes through valgrind.
if [ -n "${NMT_VALGRIND:-}" ]; then
    printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$NMT_VALGRIND" "$NMT" >"$TMP/nmt-valgrind"
    chmod +x "$TMP/nmt-valgrind"
    NMT="$TMP/nmt-valgrind"
fi
n_pass=0
n_fail=0

pass() { n_pass=$((n_pass + 1)); }
fail() { n_fail=$((n_fail + 1)); echo "FAIL: $*" >&2; }

# expect_fail NAME PATTERN CMD...: CMD exits non-zero (not by a signal) and its
# stderr matches the extended regex PATTERN.
expect_fail() {
    local name=$1 pattern=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ $rc -eq 0 ]; then fail "$name: exit 0, expected failure"; return; fi
    if [ $rc -ge 128 ]; then fail "$name: killed by signal $((rc - 128))"; return; fi
    if ! grep -Eq -- "$pattern" "$TMP/err"; then
        fail "$name: stderr does not match /$pattern/: $(head -c 400 "$TMP/err")"; return
    fi
    pass
}

# expect_ok NAME CMD...: CMD exits 0.
expect_ok() {
    local name=$1
    shift
    if "$@" >"$TMP/out" 2>"$TMP/err"; then pass; else fail "$name: exit $?: $(head -c 400 "$TMP/err")"; fi
}

# kill_resume DIR TENTHS CMD...: runs CMD --out DIR (an nmt train), kills it
# with kill -9 eight times at random moments (up to TENTHS tenths of a
# second apart) and resumes it each time (or starts it anew when no
# checkpoint was written yet), then lets the last resume finish, resuming
# once more if it failed. Sets kills to the number of kills that landed.
kill_resume() {
    local dir=$1 tenths=$2 pid
    shift 2
    kills=0
    rm -rf "$dir"
    "$@" --out "$dir" 2>/dev/null &
    pid=$!
    for _ in $(seq 1 8); do
        sleep "0.$((RANDOM % tenths))$((RANDOM % 10))"
        if kill -9 $pid 2>/dev/null; then kills=$((kills + 1)); fi
        wait $pid 2>/dev/null
        if [ -e "$dir/checkpoint.safetensors" ]; then
            "$NMT" train -q --resume "$dir" 2>/dev/null &
        else
            rm -rf "$dir"
            "$@" --out "$dir" 2>/dev/null &
        fi
        pid=$!
    done
    wait $pid || expect_ok "final resume" "$NMT" train -q --resume "$dir"
    echo "kill -9: $kills kills landed" >&2
}

# data_of FILE: the data section of a safetensors file (every tensor, not the
# header, whose metadata holds paths and times); same_data A B: whether two
# files hold the same tensors, bit for bit
data_of() {
    local n
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    tail -c +$((9 + n)) "$1"
}
same_data() { cmp -s <(data_of "$1") <(data_of "$2"); }

finish() {
    echo "$n_pass passed, $n_fail failed"
    [ $n_fail -eq 0 ]
}
