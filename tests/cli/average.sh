# nmt average: the mean of known files equals numpy's, checkpoints give their
# model's weights only, one file is a copy, and files of different models or
# broken files are refused naming both files and what differs.
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
write() { "$PY" "$SRC/tests/interop.py" write "$@" >/dev/null; }

# --- help ------------------------------------------------------------------------
expect_ok "help" "$NMT" average --help
for opt in output quiet help; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
expect_ok "nmt help average" "$NMT" help average
grep -q "element-wise mean" "$TMP/out" && pass || fail "nmt help average"
"$NMT" --help | grep -q "average" && pass || fail "nmt --help does not list average"

# --- the mean of three files, against numpy ------------------------------------------
write "$TMP/a.safetensors" --seed 1
write "$TMP/b.safetensors" --seed 2
write "$TMP/c.safetensors" --seed 3
expect_ok "average of three" "$NMT" average "$TMP/a.safetensors" "$TMP/b.safetensors" \
    "$TMP/c.safetensors" -o "$TMP/abc.safetensors"
grep -q "abc.safetensors: the mean of 3 files" "$TMP/err" && pass || fail "summary: $(cat "$TMP/err")"
[ ! -s "$TMP/out" ] && pass || fail "average wrote to stdout"
expect_ok "quiet" "$NMT" average -q "$TMP/a.safetensors" "$TMP/b.safetensors" -o "$TMP/ab.safetensors"
[ ! -s "$TMP/err" ] && pass || fail "-q printed: $(cat "$TMP/err")"
expect_ok "one file" "$NMT" average "$TMP/b.safetensors" -o "$TMP/b1.safetensors"

# Every tensor equal, bit for bit, to numpy's mean in float64 rounded to
# float32; the metadata the model's; one file's copy exact.
"$PY" - "$SRC/tests" "$TMP" <<'EOF' && pass || fail "numpy mean"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from interop import read_safetensors
d = sys.argv[2]
files = [read_safetensors("%s/%s.safetensors" % (d, k)) for k in "abc"]
for out, parts in (("abc", files), ("ab", files[:2]), ("b1", files[1:2])):
    _, arrays, meta, _ = read_safetensors("%s/%s.safetensors" % (d, out))
    assert set(arrays) == set(files[0][1]), out
    for name, got in arrays.items():
        want = np.mean(np.stack([p[1][name].astype(np.float64) for p in parts]), axis=0)
        want = want.astype(np.float32)
        assert got.tobytes() == want.tobytes(), (out, name, np.abs(got - want).max())
    assert meta["src_vocab"] == files[0][2]["src_vocab"], out
    assert meta["hidden"] == files[0][2]["hidden"], out
    if out == "b1":
        for name, got in arrays.items():
            assert got.tobytes() == files[1][1][name].tobytes(), name
EOF
expect_ok "the average loads" "$NMT" info "$TMP/abc.safetensors"
grep -q "parameters      1178" "$TMP/out" && pass || fail "info of the average: $(cat "$TMP/out")"

# --- checkpoints: only the model's weights ----------------------------------------------
printf 'ein haus\nein haus ein haus\n' >"$TMP/s.txt"
printf 'a house\na house a house\n' >"$TMP/t.txt"
TRAIN=("$NMT" train --arch rnn -q --src "$TMP/s.txt" --tgt "$TMP/t.txt" --emb 4 --hidden 4 --att-dim 4
       --out-dim 4 --threads 1)
expect_ok "checkpoint 1" "${TRAIN[@]}" --max-steps 1 --out "$TMP/r1"
expect_ok "checkpoint 2" "${TRAIN[@]}" --max-steps 3 --seed 2 --out "$TMP/r2"
expect_ok "average of checkpoints" "$NMT" average "$TMP/r1/checkpoint.safetensors" \
    "$TMP/r2/checkpoint.safetensors" -o "$TMP/ck.safetensors"
expect_ok "info of the average" "$NMT" info -v "$TMP/ck.safetensors"
grep -q "adam" "$TMP/out" && fail "the average holds optimizer state" || pass
grep -q "resumable" "$TMP/out" && fail "the average claims to be a checkpoint" || pass
"$PY" - "$SRC/tests" "$TMP" <<'EOF' && pass || fail "checkpoint mean"
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from interop import read_safetensors
d = sys.argv[2]
_, a, _, _ = read_safetensors(d + "/r1/checkpoint.safetensors")
_, b, _, _ = read_safetensors(d + "/r2/checkpoint.safetensors")
_, m, meta, _ = read_safetensors(d + "/ck.safetensors")
assert not any(k.startswith("adam") for k in m) and any(k.startswith("adam") for k in a)
assert not any(k.startswith(("train.", "state.")) for k in meta)
for k, v in m.items():
    want = ((a[k].astype(np.float64) + b[k]) / 2).astype(np.float32)
    assert v.tobytes() == want.tobytes(), k
    assert not np.array_equal(a[k], b[k]) or k.endswith(".b"), k
EOF
echo "ein haus" | "$NMT" translate -m "$TMP/ck.safetensors" -b 1 >/dev/null 2>&1 && pass ||
    fail "translate with the average"

# --- files of different models are refused, naming both and what differs ----------------
refused() { # refused NAME PATTERN FILE...: refused, one line, no output file
    local name=$1 pattern=$2
    shift 2
    rm -f "$TMP/bad.safetensors"
    expect_fail "$name" "$pattern" "$NMT" average "$@" -o "$TMP/bad.safetensors"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/bad.safetensors" ] && pass || fail "$name: an output was written"
}
write "$TMP/h7.safetensors" --hidden 7
write "$TMP/uni.safetensors" --unidirectional
write "$TMP/gru.safetensors" --cell lstm
write "$TMP/none.safetensors" --attention none
write "$TMP/voc.safetensors" --tgt-tokens "a home"
write "$TMP/voc3.safetensors" --tgt-tokens "a house now"
write "$TMP/cased.safetensors" --cased
write "$TMP/flag.safetensors" --set-meta future_setting=yes
BOTH="a\\.safetensors and .*\\.safetensors differ in"
refused "hidden differs" "$BOTH 'hidden' \\('6' and '7'\\)" "$TMP/a.safetensors" "$TMP/h7.safetensors"
refused "direction differs" "$BOTH 'bidirectional'" "$TMP/a.safetensors" "$TMP/uni.safetensors"
refused "cell differs" "$BOTH 'cell' \\('gru' and 'lstm'\\)" "$TMP/a.safetensors" "$TMP/gru.safetensors"
refused "attention differs" "$BOTH 'attention'" "$TMP/a.safetensors" "$TMP/none.safetensors"
refused "vocabulary differs" "$BOTH 'tgt_vocab' \\(entry 5 is 'house' and 'home'\\)" \
    "$TMP/a.safetensors" "$TMP/voc.safetensors"
refused "vocabulary longer" "$BOTH 'tgt_vocab' \\(6 and 7 entries\\)" "$TMP/a.safetensors" \
    "$TMP/voc3.safetensors"
refused "lowercase differs" "$BOTH 'lowercase'" "$TMP/a.safetensors" "$TMP/cased.safetensors"
refused "unknown setting" "$BOTH 'future_setting' \\(absent and 'yes'\\)" "$TMP/a.safetensors" \
    "$TMP/flag.safetensors"
refused "third file differs" "a\\.safetensors and .*h7\\.safetensors differ" "$TMP/a.safetensors" \
    "$TMP/b.safetensors" "$TMP/h7.safetensors"

# --- hostile inputs and usage ------------------------------------------------------------
printf 'not a model' >"$TMP/junk.safetensors"
head -c 300 "$TMP/a.safetensors" >"$TMP/cut.safetensors"
write "$TMP/nan.safetensors"
"$PY" - "$TMP/nan.safetensors" <<'EOF'
import json, struct, sys, zlib
raw = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
b = head["dec.b"]["data_offsets"][0]
raw[8 + n + b:8 + n + b + 4] = struct.pack("<f", float("nan"))
head["__metadata__"]["crc32"] = format(zlib.crc32(bytes(raw[8 + n:])) & 0xFFFFFFFF, "08x")
text = json.dumps(head).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(text)) + text + bytes(raw[8 + n:]))
EOF
refused "missing file" "nope\\.safetensors" "$TMP/a.safetensors" "$TMP/nope.safetensors"
refused "not a model" "junk\\.safetensors" "$TMP/a.safetensors" "$TMP/junk.safetensors"
refused "cut file" "cut\\.safetensors" "$TMP/cut.safetensors" "$TMP/a.safetensors"
refused "a folder" "is a directory" "$TMP/a.safetensors" "$TMP"
refused "NaN weight" "nan\\.safetensors: tensor 'dec\\.b' holds NaN" "$TMP/a.safetensors" \
    "$TMP/nan.safetensors"
expect_fail "no files" "no model files given" "$NMT" average -o "$TMP/x.safetensors"
expect_fail "no -o" "-o FILE is required" "$NMT" average "$TMP/a.safetensors"
expect_fail "unknown option" "unrecognized option|Try 'nmt average --help'" "$NMT" average \
    --bogus "$TMP/a.safetensors" -o "$TMP/x.safetensors"
expect_fail "unwritable output" "nodir/x\\.safetensors" "$NMT" average "$TMP/a.safetensors" \
    -o "$TMP/nodir/x.safetensors"
[ ! -e "$TMP/x.safetensors" ] && pass || fail "a refused average wrote its output"
# the output may be one of the inputs: every input is read before it is written
cp "$TMP/a.safetensors" "$TMP/a2.safetensors"
expect_ok "output over an input" "$NMT" average "$TMP/a2.safetensors" "$TMP/b.safetensors" \
    -o "$TMP/a2.safetensors"
same_data "$TMP/a2.safetensors" "$TMP/ab.safetensors" && pass || fail "output over an input differs"

finish
