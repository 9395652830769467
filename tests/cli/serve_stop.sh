# nmt serve stopped by SIGTERM (or SIGINT), once or twice, again and again
# under load: /stats and translations as fast as the clients go
# (tests/cli/serve_stop.py says what each run checks). The shutdown once
# freed the request queue while libmicrohttpd's thread still answered from
# it (a hang, or a use after free, in about 1 run of 50 here), and a second
# signal landing on an OpenBLAS thread killed the server (1 run in 13): a
# release build makes 240 runs (about 30 s), a sanitized one 200 (30 to
# 50 s; AddressSanitizer reports a use after free when one happens).
# NMT_STOP_RUNS sets the count.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

M=${NMT_SOURCE_ROOT:?}/models/toy-attention.safetensors
runs=240
timeout=10
if [ -n "${NMT_SANITIZED:-}" ]; then
    runs=200
    timeout=60
fi
runs=${NMT_STOP_RUNS:-$runs}
if "$PY" "$(dirname "$0")/serve_stop.py" "$NMT" "$M" "$runs" "$timeout" "$TMP"; then
    pass
else
    fail "nmt serve did not stop cleanly every time (above)"
fi
finish
