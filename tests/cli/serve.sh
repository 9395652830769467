# nmt serve's JSON API, with curl: the options and their refusals; POST
# /translate gives nmt translate's translations for the same sentences and
# beam (one model, an ensemble; requests sent together, decoded in batches,
# give the same); n_best lists sorted, their first the translation;
# alignments with one row per target token and one column per source token,
# each row summing to 1; a prefix starts every translation; a Transformer's
# per-head attention has layers x heads matrices; GET / is the page, GET
# /info the models; SIGTERM stops it with exit 0.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
. "$(dirname "$0")/serve_lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy
M=$SRC/models/toy-attention.safetensors
cd "$TMP" || exit 1

# --- options ---------------------------------------------------------------------
expect_ok "help" "$NMT" serve --help
for opt in model host port threads batch max-body max-sentences max-sentence-bytes max-inflight \
           max-beam max-attention-cells max-connections timeout; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
expect_ok "nmt help serve" "$NMT" help serve
grep -q "Usage: nmt serve" "$TMP/out" && pass || fail "nmt help serve: $(head -c 200 "$TMP/out")"
"$NMT" --help | grep -q "serve" && pass || fail "nmt --help does not list serve"
expect_fail "no model" "--model is required" "$NMT" serve
expect_fail "port too large" "--port: 70000 is out of range" "$NMT" serve -m "$M" --port 70000
expect_fail "port word" "--port: 'http' is not a whole number" "$NMT" serve -m "$M" --port http
expect_fail "batch 0" "--batch: 0 is out of range" "$NMT" serve -m "$M" --batch 0
expect_fail "batch 65" "--batch: 65 is out of range" "$NMT" serve -m "$M" --batch 65
expect_fail "threads 0" "--threads: 0 is out of range" "$NMT" serve -m "$M" --threads 0
expect_fail "max-body junk" "--max-body: '1k' is not a whole number" "$NMT" serve -m "$M" --max-body 1k
expect_fail "timeout 0" "--timeout: 0 is out of range" "$NMT" serve -m "$M" --timeout 0
expect_fail "max-attention-cells 0" "--max-attention-cells: 0 is out of range" \
    "$NMT" serve -m "$M" --max-attention-cells 0
expect_fail "max-attention-cells 1e6" "--max-attention-cells: '1e6' is not a whole number" \
    "$NMT" serve -m "$M" --max-attention-cells 1e6
expect_fail "stray operand" "unexpected argument 'stray'" "$NMT" serve -m "$M" stray
expect_fail "missing model" "nope.safetensors" "$NMT" serve -m "$TMP/nope.safetensors" --port 0
# --host: a name that does not resolve is refused at once, before the
# models load (a missing model is not what it names), with exit 2 as every
# bad option; a port in use is refused before the load too (exit 1)
refused_first() { # NAME CODE PATTERN ARGS...: exit CODE, one line matching PATTERN
    local name=$1 code=$2 pattern=$3 rc
    shift 3
    "$NMT" serve "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc = "$code" ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -Eq -- "$pattern" "$TMP/err" && pass ||
        fail "$name: exit $rc: $(head -c 300 "$TMP/err")"
}
refused_first "host that does not resolve" 2 "--host: 'nmt-no-such-host.invalid' does not resolve" \
    -m "$TMP/nope.safetensors" --host nmt-no-such-host.invalid --port 0
refused_first "empty host" 2 "--host: '' does not resolve" -m "$M" --host "" --port 0

# --- --host localhost, and the address bound named in the URL ------------------------
if serve_start localhost -m "$M" --host localhost --threads 1; then
    case $URL in
        http://127.0.0.1:* | "http://[::1]:"*) pass ;;
        *) fail "--host localhost listens on $URL" ;;
    esac
    code=$(post '{"text": ["sko bap frug verd lairn"]}')
    [ "$code" = 200 ] && grep -q '"text":"be fatote dedila gifecha sho"' "$TMP/body" && pass ||
        fail "--host localhost: $code $(head -c 200 "$TMP/body")"
    refused_first "port in use" 1 "cannot listen on localhost port ${URL##*:}: Address already in use" \
        -m "$TMP/nope.safetensors" --host localhost --port "${URL##*:}"
    serve_stop && pass || fail "--host localhost: SIGTERM: exit $?"
else
    fail "--host localhost"
fi

# --- a second RNN and a Transformer: a few steps on the toy corpus ------------------
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/test.src.gz" | head -n 12 >in
expect_ok "train a Transformer" "$NMT" train --arch transformer --src s --tgt t --d-model 16 \
    --heads 2 --ff 32 --layers 2 --batch-size 16 --max-steps 40 --threads 1 -q --out tf
TF=$TMP/tf/checkpoint.safetensors
# the toy model's own vocabularies, so that it can join it in an ensemble
expect_ok "train a second RNN" "$NMT" train --init-from "$M" --src "$TOY/train.src.gz" \
    --tgt "$TOY/train.tgt.gz" --max-steps 5 --threads 1 -q --out rnn2
M2=$TMP/rnn2/checkpoint.safetensors

# JSON of the lines of a file: {"text": [...]} with more fields
request() { # FILE [EXTRA JSON FIELDS]
    "$PY" -c 'import json, sys
d = {"text": [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8")]}
d.update(json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})
print(json.dumps(d))' "$@"
}
# the translations of a response, one a line
texts() { "$PY" -c 'import json, sys
for t in json.load(open(sys.argv[1]))["translations"]: print(t["text"])' "$1"; }

# --- one RNN --------------------------------------------------------------------------
if serve_start rnn -m "$M" --threads 2 --batch 4; then
    pass
    for beam in 1 5; do
        "$NMT" translate -m "$M" -b $beam -q <in >want.$beam
        code=$(post "$(request in "{\"beam\": $beam}")")
        [ "$code" = 200 ] && pass || fail "beam $beam: status $code"
        texts "$TMP/body" >got.$beam
        cmp -s want.$beam got.$beam && pass ||
            fail "beam $beam: not nmt translate's translations: $(diff want.$beam got.$beam | head -4)"
    done
    # the same requests sent at once, one sentence each: decoded in batches, the same
    pids=()
    for k in $(seq 1 12); do
        sed -n "${k}p" in >one.$k
        curl -s -X POST --data-binary "$(request one.$k)" "$URL/translate" >par.$k &
        pids+=($!)
    done
    wait "${pids[@]}"
    for k in $(seq 1 12); do texts par.$k; done >got.par
    cmp -s want.5 got.par && pass || fail "concurrent requests: $(diff want.5 got.par | head -4)"

    # batching across requests: while both workers decode requests of
    # another search (beam 16), single-sentence requests wait, and a worker
    # decodes several of them in one batch (GET /stats counts such batches;
    # tried up to three times, since it depends on the requests' timing)
    zcat "$TOY/test.src.gz" | awk 'length > 250' | head -n 8 >long
    shared=0
    for try in 1 2 3; do
        pids=()
        for k in 1 2; do
            curl -s -o /dev/null -X POST --data-binary "$(request long '{"beam": 16}')" "$URL/translate" &
            pids+=($!)
        done
        sleep 0.05
        for k in $(seq 1 12); do
            curl -s -o /dev/null -X POST --data-binary "$(request one.$k)" "$URL/translate" &
            pids+=($!)
        done
        wait "${pids[@]}"
        shared=$(curl -s "$URL/stats" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["shared_batches"])')
        [ "$shared" -ge 1 ] && break
    done
    [ "$shared" -ge 1 ] && pass || fail "no batch held sentences of two requests: $(curl -s "$URL/stats")"
    curl -s "$URL/stats" | "$PY" -c 'import json, sys
d = json.load(sys.stdin)
assert d["in_flight"] == 0 and d["sentences"] > d["batches"] > 0, d' && pass || fail "GET /stats: $(curl -s "$URL/stats")"

    # n_best: sorted best first, the first is the translation
    code=$(post "$(request in '{"beam": 5, "n_best": 4}')")
    [ "$code" = 200 ] && pass || fail "n_best: status $code"
    "$PY" - "$TMP/body" <<'PYEOF' && pass || fail "n_best lists"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["beam"] == 5 and d["n_best"] == 4
for t in d["translations"]:
    nb = t["n_best"]
    assert len(nb) == 4, len(nb)
    s = [h["norm_score"] for h in nb]
    assert s == sorted(s, reverse=True), s
    assert nb[0]["text"] == t["text"] and nb[0]["score"] == t["score"]
    assert len({h["text"] for h in nb}) == 4
PYEOF

    # alignments: rows of the target tokens (</s> too), columns of the source
    code=$(post "$(request in '{"alignments": true}')")
    [ "$code" = 200 ] && pass || fail "alignments: status $code"
    "$PY" - "$TMP/body" in <<'PYEOF' && pass || fail "alignments"
import json, sys
d = json.load(open(sys.argv[1]))
lines = open(sys.argv[2], encoding="utf-8").read().split("\n")
for t, line in zip(d["translations"], lines):
    a = t["alignment"]
    assert a["source"] == line.split() + ["</s>"], (a["source"], line)
    assert a["target"] == t["text"].split() + ["</s>"], (a["target"], t["text"])
    att = a["attention"]
    assert len(att) == len(a["target"]) and all(len(r) == len(a["source"]) for r in att)
    assert all(abs(sum(r) - 1) < 1e-4 and min(r) >= 0 for r in att), [sum(r) for r in att]
    assert "heads" not in a
PYEOF
    # the same attention as nmt translate --alignments
    "$NMT" translate -m "$M" -q --alignments al.jsonl <in >/dev/null
    "$PY" - "$TMP/body" al.jsonl <<'PYEOF' && pass || fail "alignments differ from nmt translate's"
import json, sys
d = json.load(open(sys.argv[1]))
ref = [json.loads(l) for l in open(sys.argv[2])]
for t, r in zip(d["translations"], ref):
    a = t["alignment"]
    assert a["source"] == r["source"] and a["target"] == r["target"]
    assert all(abs(x - y) < 1e-5 for ra, rb in zip(a["attention"], r["attention"]) for x, y in zip(ra, rb))
PYEOF

    # a prefix starts the translation: one for all, and one per sentence
    code=$(post '{"text": ["sko bap frug verd lairn", "pu drut"], "prefix": "sho be"}')
    texts "$TMP/body" >pre
    [ "$code" = 200 ] && [ "$(grep -c '^sho be' pre)" = 2 ] && pass ||
        fail "prefix for all: $code $(cat pre)"
    code=$(post '{"text": ["sko bap frug verd lairn", "sko bap frug verd lairn"], "prefix": ["gifecha", null]}')
    texts "$TMP/body" >pre
    [ "$code" = 200 ] && [ "$(sed -n 1p pre | cut -d' ' -f1)" = gifecha ] &&
        [ "$(sed -n 2p pre)" = "be fatote dedila gifecha sho" ] && pass ||
        fail "prefix per sentence: $code $(cat pre)"

    # an empty list, an empty sentence, and a sentence of unknown words
    expect_status "no sentences" 200 '{"text": []}'
    grep -q '"translations":\[\]' "$TMP/body" && pass || fail "no sentences: $(head -c 200 "$TMP/body")"
    expect_status "empty sentence" 200 '{"text": [""], "alignments": true}'
    expect_status "unknown words" 200 '{"text": ["Grüße aus Köln 🙂"]}'
    expect_status "heads of an RNN" 400 '{"text": ["sko"], "alignments": true, "heads": true}'

    # the page and the description
    code=$(curl -s -D hdr -o page.html -w '%{http_code}' "$URL/")
    [ "$code" = 200 ] && grep -q "NmtHeatmap" page.html && grep -qi "content-security-policy" hdr &&
        grep -qi "content-type: text/html" hdr && pass || fail "GET /: $code"
    ! grep -q "@DATA@\|@INCLUDE" page.html && pass || fail "the page still has its markers"
    code=$(curl -s -o info.json -w '%{http_code}' "$URL/info")
    [ "$code" = 200 ] && "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["models"] == [{"name": "toy-attention.safetensors", "arch": "rnn"}], d["models"]
assert d["layers"] == 0 and d["attention"] is True and d["batch"] == 4 and d["workers"] == 2
assert d["limits"]["max_attention_cells"] == 250000, d["limits"]
assert abs(d["alpha"] - 1.2) < 1e-6, d["alpha"]  # a model without decode.alpha
assert "/" not in json.dumps(d["models"])' info.json && pass || fail "GET /info: $(cat info.json)"
    code=$(curl -s -o body -w '%{http_code}' "$URL/nope")
    [ "$code" = 404 ] && pass || fail "GET /nope: $code"
    code=$(curl -s -o body -w '%{http_code}' "$URL/translate")
    [ "$code" = 405 ] && pass || fail "GET /translate: $code"
    code=$(curl -s -o body -w '%{http_code}' -X DELETE "$URL/")
    [ "$code" = 405 ] && pass || fail "DELETE /: $code"

    serve_stop && pass || fail "SIGTERM: exit $?"
    grep -q "stopped" "$TMP/rnn.log" && pass || fail "no 'stopped' line: $(tail -c 300 "$TMP/rnn.log")"
else
    fail "serve one RNN"
fi

# --- --max-attention-cells: the attention an answer could hold, bounded before decoding ---
# The bound of a sentence of n words (serve.md): maps x (n + 1) source
# units x (2 n + 10 + 1) target units at the length limit. A limit of
# exactly one short sentence's bound takes that sentence, not two of them,
# nor the sentence with a limit one smaller; the refusal is a 413 that names
# the limit, and nothing is decoded (GET /stats counts no batch).
bound() { "$PY" -c 'import sys; n = len(sys.argv[2].split()); print(int(sys.argv[1]) * (n + 1) * (2 * n + 11))' "$@"; }
B=$(bound 1 "sko bap frug verd lairn")
for limit in $B $((B - 1)); do
    if serve_start "cells$limit" -m "$M" --threads 1 --max-attention-cells $limit; then
        one=$(post '{"text": ["sko bap frug verd lairn"], "alignments": true}')
        two=$(post '{"text": ["sko bap frug verd lairn", "sko bap frug verd lairn"], "alignments": true}')
        grep -q "limit of $limit (max_attention_cells" "$TMP/body" && pass ||
            fail "--max-attention-cells $limit: $(head -c 300 "$TMP/body")"
        plain=$(post '{"text": ["sko bap frug verd lairn", "sko bap frug verd lairn"]}')
        batches=$(curl -s "$URL/stats" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["batches"])')
        if [ $limit = $B ]; then want="200 413 200"; else want="413 413 200"; fi
        [ "$one $two $plain" = "$want" ] && pass ||
            fail "--max-attention-cells $limit (one sentence's bound is $B): $one $two $plain, expected $want"
        # decoded: the requests answered 200 alone (one batch each, --threads 1)
        [ "$batches" = "$(echo "$want" | tr ' ' '\n' | grep -c 200)" ] && pass ||
            fail "--max-attention-cells $limit: $batches batches decoded for answers $one $two $plain"
        serve_stop && pass || fail "--max-attention-cells $limit: SIGTERM: exit $?"
    else
        fail "serve --max-attention-cells $limit"
    fi
done

# --- an ensemble ------------------------------------------------------------------------
if serve_start ens -m "$M" -m "$M2" --threads 1; then
    "$NMT" translate -m "$M" -m "$M2" -q <in >want.ens
    code=$(post "$(request in '{"alignments": true}')")
    texts "$TMP/body" >got.ens
    [ "$code" = 200 ] && cmp -s want.ens got.ens && pass ||
        fail "ensemble: $code $(diff want.ens got.ens | head -4)"
    curl -s "$URL/info" | grep -q '"name":"checkpoint.safetensors"' && pass || fail "ensemble /info"
    serve_stop && pass || fail "ensemble: SIGTERM: exit $?"
else
    fail "serve an ensemble"
fi

# --- a Transformer: every layer's and head's attention ----------------------------------
if serve_start tf -m "$TF" --threads 2; then
    "$NMT" translate -m "$TF" -q <in >want.tf
    code=$(post "$(request in '{"alignments": true, "heads": true}')")
    texts "$TMP/body" >got.tf
    [ "$code" = 200 ] && cmp -s want.tf got.tf && pass ||
        fail "Transformer: $code $(diff want.tf got.tf | head -4)"
    curl -s "$URL/info" >info.json
    "$PY" - "$TMP/body" info.json <<'PYEOF' && pass || fail "Transformer heads"
import json, sys
d = json.load(open(sys.argv[1]))
info = json.load(open(sys.argv[2]))
assert info["layers"] == 2 and info["heads"] == 2, info
for t in d["translations"]:
    a = t["alignment"]
    ns, nt = len(a["source"]), len(a["target"])
    hs = a["heads"]
    assert len(hs) == 2 and all(len(l) == 2 for l in hs)
    for layer in hs:
        for m in layer:
            assert len(m) == nt and all(len(r) == ns for r in m)
            assert all(abs(sum(r) - 1) < 1e-4 for r in m)
    # the default map is a layer's mean of heads
    def close(m):
        return all(abs(x - y) < 1e-4 for r1, r2 in zip(m, a["attention"]) for x, y in zip(r1, r2))
    assert any(close([[sum(hs[l][h][i][j] for h in range(2)) / 2 for j in range(ns)] for i in range(nt)])
               for l in range(2)), "the default map is no layer's mean"
PYEOF
    # one sentence of 300 words with every head's attention: a request of
    # 1.4 kB that would be answered with megabytes (the model translates
    # it to the length limit) is refused at the default limit, before
    # decoding; without "heads" it is within the limit, and its answer
    # within the bound
    long300=$("$PY" -c 'print(" ".join(["sko bap frug verd lairn pu"] * 50))')
    before=$(curl -s "$URL/stats")
    code=$(post "{\"text\": [\"$long300\"], \"alignments\": true, \"heads\": true}")
    after=$(curl -s "$URL/stats")
    [ "$code" = 413 ] && grep -q "up to $(bound 5 "$long300") attention weights.*limit of 250000.*heads" "$TMP/body" &&
        pass || fail "300 words with heads: $code $(head -c 300 "$TMP/body")"
    [ "$before" = "$after" ] && pass || fail "300 words with heads: decoded before the refusal: $before $after"
    code=$(post "{\"text\": [\"$long300\"], \"alignments\": true}")
    [ "$code" = 200 ] && "$PY" - "$TMP/body" "$(bound 1 "$long300")" <<'PYEOF' && pass || fail "300 words without heads: $code $(head -c 300 "$TMP/body")"
import json, sys
a = json.load(open(sys.argv[1]))["translations"][0]["alignment"]
cells = len(a["source"]) * len(a["target"])
assert len(a["source"]) == 301 and 0 < cells <= int(sys.argv[2]), (len(a["source"]), len(a["target"]), sys.argv[2])
print("300 words: %d x %d attention weights, the bound %s" % (len(a["target"]), len(a["source"]), sys.argv[2]), file=sys.stderr)
PYEOF

    # an empty sentence has the shape of the others: layers x heads (empty) matrices
    code=$(post '{"text": ["", "sko bap frug", ""], "alignments": true, "heads": true}')
    [ "$code" = 200 ] && "$PY" - "$TMP/body" <<'PYEOF' && pass || fail "heads of an empty sentence: $code $(head -c 300 "$TMP/body")"
import json, sys
d = json.load(open(sys.argv[1]))
ts = d["translations"]
assert len(ts) == 3
for t in ts:
    a = t["alignment"]
    hs = a["heads"]
    assert len(hs) == 2 and all(len(l) == 2 for l in hs), hs
    assert all(len(m) == len(a["target"]) and all(len(r) == len(a["source"]) for r in m)
               for l in hs for m in l)
for k in (0, 2):
    assert ts[k]["alignment"]["source"] == [] and ts[k]["alignment"]["heads"] == [[[], []], [[], []]]
assert ts[1]["alignment"]["source"] == ["sko", "bap", "frug", "</s>"]
PYEOF
    serve_stop && pass || fail "Transformer: SIGTERM: exit $?"
else
    fail "serve a Transformer"
fi
finish
