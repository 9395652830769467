# Helpers for the tests of nmt serve (source after lib.sh).
# serve_start NAME ARGS...: starts "nmt serve --port 0 ARGS..." in the
# background, logging to $TMP/NAME.log, and waits for its "listening on"
# line; sets SERVE_PID and URL (http://127.0.0.1:PORT). Returns 1 if it did
# not start within 60 s (sanitized builds start slowly).
serve_start() {
    local name=$1
    shift
    "$NMT" serve --port 0 "$@" 2>"$TMP/$name.log" &
    SERVE_PID=$!
    URL=
    for _ in $(seq 1 600); do
        URL=$(sed -n 's|.*listening on \(http://[^/]*\)/.*|\1|p' "$TMP/$name.log")
        [ -n "$URL" ] && return 0
        kill -0 $SERVE_PID 2>/dev/null || break
        sleep 0.1
    done
    echo "nmt serve did not start: $(head -c 600 "$TMP/$name.log")" >&2
    return 1
}

# serve_stop: SIGTERM, then the exit status of the server (0 expected).
serve_stop() {
    kill -TERM $SERVE_PID 2>/dev/null
    wait $SERVE_PID
}

# post BODY [CURL ARGS...]: POST /translate; the body to $TMP/body, the
# status to stdout.
post() {
    local body=$1
    shift
    curl -s -o "$TMP/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary "$body" "$@" "$URL/translate"
}

# expect_status NAME CODE BODY: POST BODY answers CODE with a JSON error
# body {"error": ..., "status": CODE} when CODE is not 200.
expect_status() {
    local name=$1 code=$2 body=$3 got
    got=$(post "$body")
    if [ "$got" != "$code" ]; then
        fail "$name: status $got, expected $code: $(head -c 300 "$TMP/body")"; return
    fi
    if [ "$code" != 200 ] && ! "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["error"], str) and d["error"] and d["status"] == int(sys.argv[2])
' "$TMP/body" "$code" 2>/dev/null; then
        fail "$name: not a JSON error body: $(head -c 300 "$TMP/body")"; return
    fi
    pass
}
