#!/usr/bin/env bash
# --joint-vocab (a Transformer with one vocabulary and one embedding table)
# from the command line:
# - on the toy corpus's words: the file says joint_vocab = true, has no
#   src_emb, writes src_vocab and tgt_vocab equal, and its list is the union
#   of the two sides' words (those of a run with two vocabularies); nmt info
#   shows it with one size; a corpus streamed in blocks (--shuffle-buffer)
#   has the same list;
# - the model translates (greedy and beam), scores, aligns (rows that sum
#   to 1), decodes in an ensemble with itself as alone, is served by nmt
#   serve as nmt translate translates, and its snapshots average into a
#   joint model; averaging it with a model of two vocabularies is refused;
# - --init-from keeps it (and refuses --joint-vocab given again), --resume
#   keeps it;
# - with ScaleNorm and FixNorm: its keys and theirs, and it translates;
# - on subwords (--subwords 60): the pieces, one table, raw text in and out;
# - refused with exit 2, one line and no folder: with the RNN (saying why)
#   and with --init-from.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

ROOT=${NMT_SOURCE_ROOT:?}
TOY=$ROOT/corpora/toy
PY=/usr/bin/python3
[ -x $PY ] || PY=python3

zcat "$TOY/train.src.gz" | head -n 600 >"$TMP/s"
zcat "$TOY/train.tgt.gz" | head -n 600 >"$TMP/t"
zcat "$TOY/valid.src.gz" | head -n 20 >"$TMP/vs"
zcat "$TOY/valid.tgt.gz" | head -n 20 >"$TMP/vt"
DATA=(--src "$TMP/s" --tgt "$TMP/t" --valid-src "$TMP/vs" --valid-tgt "$TMP/vt")
TF=("$NMT" train -q "${DATA[@]}" --arch transformer --d-model 16 --heads 2 --ff 32 --layers 2
    --batch-size 16 --threads 1 --seed 4)

# header FILE: the safetensors header's JSON (tensors and __metadata__)
header() { $PY -c 'import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]
print(f.read(n).decode())' "$1"; }

expect_ok "help" "$NMT" train --help
grep -q -- "--joint-vocab  " "$TMP/out" && pass || fail "help lacks --joint-vocab"

# --- words ---------------------------------------------------------------------------------------
expect_ok "joint run" "${TF[@]}" --joint-vocab --max-steps 40 --valid-every 10 --out "$TMP/joint"
expect_ok "two vocabularies" "${TF[@]}" --max-steps 0 --out "$TMP/two"
J=$TMP/joint/checkpoint.safetensors
header "$J" >"$TMP/j.json"
header "$TMP/two/checkpoint.safetensors" >"$TMP/two.json"
$PY - "$TMP/j.json" "$TMP/two.json" <<'EOF' && pass || fail "the joint file: $(cat "$TMP/py.err")"
import json, sys
j, two = (json.load(open(f)) for f in sys.argv[1:3])
m, t = j["__metadata__"], two["__metadata__"]
assert m["joint_vocab"] == "true" and "joint_vocab" not in t
assert "src_emb" not in j and "src_emb" in two
assert m["src_vocab"] == m["tgt_vocab"], "two lists"
words = m["src_vocab"].split("\n")
union = set(t["src_vocab"].split("\n")) | set(t["tgt_vocab"].split("\n"))
assert len(words) == len(set(words)) == len(union) and set(words) == union, "not the union"
assert j["tgt_emb"]["shape"][0] == len(words)
assert len(words) > max(len(t["src_vocab"].split("\n")), len(t["tgt_vocab"].split("\n")))
EOF
"$NMT" info "$J" >"$TMP/info" 2>&1
V=$(sed -n 's/^vocab  *\([0-9]*\) (source and target)$/\1/p' "$TMP/info")
grep -q "^joint vocab  *true" "$TMP/info" && [ -n "$V" ] && ! grep -q "^src vocab" "$TMP/info" &&
    pass || fail "nmt info: $(cat "$TMP/info")"
[ "$V" = "$($PY -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["__metadata__"]["src_vocab"].split("\n")))' "$TMP/j.json")" ] &&
    pass || fail "nmt info's vocabulary size $V"
"$NMT" info "$TMP/two/checkpoint.safetensors" >"$TMP/info2"
! grep -q "joint" "$TMP/info2" && grep -q "^src vocab" "$TMP/info2" && pass ||
    fail "nmt info of two vocabularies: $(cat "$TMP/info2")"
# a streamed corpus counts the same list
expect_ok "streamed" "${TF[@]}" --joint-vocab --shuffle-buffer 200 --max-steps 0 \
    --out "$TMP/streamed"
header "$TMP/streamed/checkpoint.safetensors" >"$TMP/st.json"
$PY -c 'import json, sys
a, b = (json.load(open(f))["__metadata__"] for f in sys.argv[1:3])
assert a["src_vocab"] == b["src_vocab"] and b["joint_vocab"] == "true"' "$TMP/j.json" \
    "$TMP/st.json" && pass || fail "a streamed corpus's joint vocabulary differs"

# --- the commands that read a model ---------------------------------------------------------------
expect_ok "translate" "$NMT" translate -m "$J" -b 1 -q -i "$TMP/vs" -o "$TMP/greedy"
[ "$(wc -l <"$TMP/greedy")" = 20 ] && [ -s "$TMP/greedy" ] && pass || fail "20 translations"
expect_ok "translate, beam 4" "$NMT" translate -m "$J" -b 4 -q -i "$TMP/vs" -o "$TMP/beam"
[ "$(wc -l <"$TMP/beam")" = 20 ] && pass || fail "20 beam translations"
expect_ok "an ensemble of the model with itself" "$NMT" translate -m "$J" -m "$J" -b 1 -q \
    -i "$TMP/vs" -o "$TMP/ens"
cmp -s "$TMP/greedy" "$TMP/ens" && pass || fail "the ensemble of the model with itself differs"
expect_ok "score" "$NMT" score -m "$J" --src "$TMP/vs" --tgt "$TMP/vt"
grep -Eq "^loss +[0-9.]+$" "$TMP/out" && pass || fail "score: $(cat "$TMP/out")"
expect_ok "align" "$NMT" align -m "$J" --src "$TMP/vs" --tgt "$TMP/vt" --format json -o "$TMP/al.json"
$PY -c 'import json, sys
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    for row in d["attention"]:
        assert abs(sum(row) - 1) < 1e-3, sum(row)
    n += 1
assert n == 20, n' "$TMP/al.json" 2>"$TMP/py.err" && pass || fail "align: $(head -c 300 "$TMP/py.err")"
if command -v curl >/dev/null && serve_start joint -m "$J" --threads 1; then
    pass
    body=$($PY -c 'import json, sys
print(json.dumps({"text": [l.rstrip("\n") for l in open(sys.argv[1])], "beam": 1}))' "$TMP/vs")
    code=$(post "$body")
    [ "$code" = 200 ] && pass || fail "serve: status $code"
    $PY -c 'import json, sys
for t in json.load(open(sys.argv[1]))["translations"]: print(t["text"])' "$TMP/body" >"$TMP/served"
    cmp -s "$TMP/greedy" "$TMP/served" && pass || fail "serve: not nmt translate's translations"
    serve_stop && pass || fail "serve: exit status"
else
    echo "no curl or no nmt serve: the server's part is skipped"
fi
# averaging: the snapshots of the joint run; and not with two vocabularies
ls "$TMP"/joint/snapshot-*.safetensors >"$TMP/snaps"
[ "$(wc -l <"$TMP/snaps")" -ge 2 ] && pass || fail "the joint run kept no snapshots to average"
expect_ok "average" "$NMT" average $(cat "$TMP/snaps") -o "$TMP/avg.safetensors"
"$NMT" info "$TMP/avg.safetensors" | grep -q "^joint vocab  *true" && pass || fail "the average is not joint"
expect_ok "the average translates" "$NMT" translate -m "$TMP/avg.safetensors" -q -i "$TMP/vs"
# the same model with two vocabularies of the one list: src_emb a copy of
# tgt_emb, no joint_vocab key (a plain Transformer, which loads as one and
# translates as the joint model does)
$PY - "$TMP/joint/best.safetensors" "$TMP/plain.safetensors" <<'PYEOF' && pass || fail "plain copy"
import json, struct, sys, zlib
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
data = b[8 + n:]
meta = h.pop("__metadata__")
del meta["joint_vocab"]
s, e = h["tgt_emb"]["data_offsets"]
h["src_emb"] = {"dtype": "F32", "shape": h["tgt_emb"]["shape"],
                "data_offsets": [len(data), len(data) + e - s]}
data += data[s:e]
meta["crc32"] = "%08x" % zlib.crc32(data)
h["__metadata__"] = meta
j = json.dumps(h).encode()
j += b" " * (-len(j) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(j)) + j + data)
PYEOF
expect_ok "the plain copy translates" "$NMT" translate -m "$TMP/plain.safetensors" -b 1 -q \
    -i "$TMP/vs" -o "$TMP/plain.out"
"$NMT" translate -m "$TMP/joint/best.safetensors" -b 1 -q -i "$TMP/vs" -o "$TMP/best.out"
cmp -s "$TMP/plain.out" "$TMP/best.out" && pass || fail "the plain copy translates otherwise"
"$NMT" info "$TMP/plain.safetensors" | grep -q "^src vocab" && pass ||
    fail "the plain copy is not a plain model"
expect_fail "average joint and not" "differ in 'joint_vocab'" "$NMT" average \
    "$TMP/joint/best.safetensors" "$TMP/plain.safetensors" -o "$TMP/mixed.safetensors"
[ ! -e "$TMP/mixed.safetensors" ] && pass || fail "a mixed average was written"

# --- --init-from and --resume keep it --------------------------------------------------------------
expect_ok "--init-from a joint model" "$NMT" train -q --src "$TMP/s" --tgt "$TMP/t" \
    --init-from "$TMP/joint/best.safetensors" --max-steps 3 --threads 1 --out "$TMP/init"
"$NMT" info "$TMP/init/checkpoint.safetensors" | grep -q "^joint vocab  *true" && pass ||
    fail "--init-from lost the joint vocabulary"
expect_ok "--resume" "$NMT" train -q --resume "$TMP/init" --max-steps 5
"$NMT" info "$TMP/init/checkpoint.safetensors" | grep -q "^joint vocab  *true" && pass ||
    fail "--resume lost the joint vocabulary"

# --- with the other variants: ScaleNorm and FixNorm ------------------------------------------------
expect_ok "joint, ScaleNorm, FixNorm" "${TF[@]}" --joint-vocab --norm scale --fixnorm --max-steps 10 \
    --out "$TMP/variants"
header "$TMP/variants/checkpoint.safetensors" >"$TMP/v.json"
$PY -c 'import json, sys
h = json.load(open(sys.argv[1])); m = h["__metadata__"]
assert m["joint_vocab"] == "true" and m["norm"] == "scale" and m["fixnorm"] == "true"
assert "src_emb" not in h' "$TMP/v.json" && pass || fail "joint with the variants: its keys"
expect_ok "joint with the variants translates" "$NMT" translate -m \
    "$TMP/variants/checkpoint.safetensors" -q -i "$TMP/vs" -o "$TMP/v.out"
[ "$(wc -l <"$TMP/v.out")" = 20 ] && pass || fail "joint with the variants: 20 translations"

# --- subwords ---------------------------------------------------------------------------------------
expect_ok "joint subwords" "${TF[@]}" --joint-vocab --subwords 60 --max-steps 10 --out "$TMP/sw"
"$NMT" info "$TMP/sw/checkpoint.safetensors" >"$TMP/info"
grep -q "^joint vocab  *true" "$TMP/info" && grep -q "^units  *subwords: SentencePiece unigram, 60 pieces" "$TMP/info" &&
    grep -q "^vocab  *60 (source and target)" "$TMP/info" && pass ||
    fail "subwords: nmt info: $(cat "$TMP/info")"
expect_ok "subwords translate raw text" "$NMT" translate -m "$TMP/sw/checkpoint.safetensors" -q \
    -i "$TMP/vs" -o "$TMP/swout"
[ "$(wc -l <"$TMP/swout")" = 20 ] && pass || fail "subwords: 20 translations"
expect_ok "subwords align by words" "$NMT" align -m "$TMP/sw/checkpoint.safetensors" \
    --src "$TMP/vs" --tgt "$TMP/vt" --units words --format pharaoh -o "$TMP/sw.al"

# --- refusals ---------------------------------------------------------------------------------------
refused() { # refused NAME PATTERN ARGS...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    "$@" --out "$TMP/refused" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] && pass || fail "$name: exit $rc, expected 2: $(cat "$TMP/err")"
    grep -Eq -- "$pattern" "$TMP/err" && pass || fail "$name: stderr does not match /$pattern/: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
refused "--arch rnn" "--joint-vocab is an option of --arch transformer, not of --arch rnn$" \
    "$NMT" train "${DATA[@]}" --arch rnn --joint-vocab
refused "--init-from" "--joint-vocab cannot be used with --init-from" \
    "$NMT" train "${DATA[@]}" --init-from "$TMP/two/checkpoint.safetensors" --joint-vocab

finish
