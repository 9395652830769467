# Transformer model files that lie, each with a valid crc32: heads that do
# not divide d_model, a layer's tensors missing, a tensor of the wrong
# shape, an unknown arch, an RNN setting in a Transformer's metadata, a layer
# the settings have no use for, a size out of range, a NaN; and for the
# variants, a norm or fixnorm value that is none, a ScaleNorm file with a
# layer norm's [d] gain or with a norm's bias. Each is refused
# by every command that reads a model (info, score, translate, align,
# train --init-from and --resume) with one line that names the file and the
# problem, and nothing left behind. A well-formed file, written here from
# the design's names alone, is read by every one of them.
. "$(dirname "$0")/lib.sh"

one_line() {
    [ "$(grep -cv "^Try 'nmt [a-z]* --help'" "$TMP/err")" -eq 1 ] && pass ||
        fail "$1: not one line on stderr: $(head -c 600 "$TMP/err")"
}
refused() { # refused NAME PATTERN CMD...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/out-dir" "$TMP/out.txt"
    expect_fail "$name" "$pattern" "$@"
    one_line "$name"
    [ ! -s "$TMP/out" ] && pass || fail "$name: printed on stdout: $(head -c 200 "$TMP/out")"
    [ ! -e "$TMP/out-dir" ] && pass || fail "$name: left the output folder"
    [ ! -e "$TMP/out.txt" ] && pass || fail "$name: left an output file"
}
printf 'ein Hund läuft .\neine Katze schläft .\n' >"$TMP/de"
printf 'a dog runs .\na cat sleeps .\n' >"$TMP/en"

# write NAME [CHANGE...]: a 2+2-layer model (d 8, 2 heads, ff 12) as
# $TMP/NAME.safetensors, after changes: key=value sets a metadata value
# (key= drops it), -TENSOR_PREFIX drops tensors, TENSOR:ROWS,COLS reshapes one,
# +TENSOR:ROWS adds one, TENSOR@nan puts a NaN in it, scale-gains makes every
# norm ScaleNorm's (gain [1], no bias)
write() {
    "${NMT_PYTHON:-python3}" - "$TMP" "$@" <<'PY'
import json, struct, sys, zlib
import random
tmp, name, changes = sys.argv[1], sys.argv[2], sys.argv[3:]
d, h, F, Le, Ld = 8, 2, 12, 2, 2
src = ["<pad>", "<unk>", "<s>", "</s>", "ein", "Hund", "läuft", "."]
tgt = ["<pad>", "<unk>", "<s>", "</s>", "a", "dog", "runs", "."]
shapes = [("src_emb", [len(src), d]), ("tgt_emb", [len(tgt), d])]
def layer(p, dec):
    t = []
    for ln in (["ln1", "ln2", "ln3"] if dec else ["ln1", "ln2"]):
        t += [(p + ln + ".g", [d]), (p + ln + ".b", [d])]
    for a in (["self", "cross"] if dec else ["self"]):
        t += [(p + a + "." + w, [d, d]) for w in ("W_q", "W_k", "W_v", "W_o")]
        t += [(p + a + "." + b, [d]) for b in ("b_q", "b_k", "b_v", "b_o")]
    return t + [(p + "ff.W_1", [F, d]), (p + "ff.b_1", [F]), (p + "ff.W_2", [d, F]),
                (p + "ff.b_2", [d])]
for l in range(Le):
    shapes += layer("enc.%d." % l, False)
shapes += [("enc.ln.g", [d]), ("enc.ln.b", [d])]
for l in range(Ld):
    shapes += layer("dec.%d." % l, True)
shapes += [("dec.ln.g", [d]), ("dec.ln.b", [d]), ("out.W", [len(tgt), d]), ("out.b", [len(tgt)])]
meta = {"format": "nmt-1", "arch": "transformer", "d_model": str(d), "heads": str(h),
        "ff": str(F), "enc_layers": str(Le), "dec_layers": str(Ld), "lowercase": "false",
        "src_vocab": "\n".join(src), "tgt_vocab": "\n".join(tgt)}
nan = set()
for c in changes:
    if "=" in c:
        k, v = c.split("=", 1)
        if v:
            meta[k] = v
        else:
            meta.pop(k, None)
    elif c.startswith("-"):
        shapes = [(n, s) for n, s in shapes if not n.startswith(c[1:])]
    elif c.startswith("+"):
        n, r = c[1:].split(":")
        shapes.append((n, [int(r)]))
    elif c == "scale-gains":
        norm = lambda n: n.split(".")[-2:-1] in (["ln"], ["ln1"], ["ln2"], ["ln3"])
        shapes = [(n, [1] if norm(n) else s) for n, s in shapes
                  if not (norm(n) and n.endswith(".b"))]
    elif "@nan" in c:
        nan.add(c.split("@")[0])
    else:
        n, s = c.split(":")
        shapes = [(m, [int(x) for x in s.split(",")] if m == n else sh) for m, sh in shapes]
rng = random.Random(1)
header, blobs, at = {}, [], 0
for n, s in shapes:
    count = 1
    for x in s:
        count *= x
    vals = [1.0 if n.endswith(".g") else rng.uniform(-0.3, 0.3) for _ in range(count)]
    if n in nan:
        vals[count // 2] = float("nan")
    b = struct.pack("<%df" % count, *vals)
    header[n] = {"dtype": "F32", "shape": s, "data_offsets": [at, at + len(b)]}
    blobs.append(b)
    at += len(b)
data = b"".join(blobs)
meta["crc32"] = "%08x" % zlib.crc32(data)
header["__metadata__"] = meta
hb = json.dumps(header).encode()
open("%s/%s.safetensors" % (tmp, name), "wb").write(struct.pack("<Q", len(hb)) + hb + data)
PY
}

lies() { # lies NAME PATTERN: every command refuses $TMP/NAME.safetensors
    local name=$1 pattern=$2 file=$TMP/$1.safetensors
    refused "info: $name" "$name\\.safetensors: $pattern" "$NMT" info "$file"
    refused "score: $name" "$name\\.safetensors: $pattern" "$NMT" score -m "$file" --src "$TMP/de" \
        --tgt "$TMP/en"
    refused "translate: $name" "$name\\.safetensors: $pattern" "$NMT" translate -q -m "$file" \
        -i "$TMP/de" -o "$TMP/out.txt"
    refused "align: $name" "$name\\.safetensors: $pattern" "$NMT" align -m "$file" --src "$TMP/de" \
        --tgt "$TMP/en" -o "$TMP/out.txt"
    refused "train --init-from: $name" "$name\\.safetensors: $pattern" "$NMT" train \
        --init-from "$file" --src "$TMP/de" --tgt "$TMP/en" -q --out "$TMP/out-dir"
    rm -rf "$TMP/resume" && mkdir "$TMP/resume" && cp "$file" "$TMP/resume/checkpoint.safetensors"
    expect_fail "train --resume: $name" "checkpoint\\.safetensors: $pattern" "$NMT" train \
        --resume "$TMP/resume" -q
    one_line "train --resume: $name"
}

# the well-formed file: every command reads it
write good
expect_ok "info: a well-formed Transformer" "$NMT" info "$TMP/good.safetensors"
grep -q '^arch *transformer$' "$TMP/out" && grep -q '^heads *2$' "$TMP/out" && pass ||
    fail "info does not show the Transformer's settings: $(cat "$TMP/out")"
expect_ok "score: a well-formed Transformer" "$NMT" score -m "$TMP/good.safetensors" --src "$TMP/de" \
    --tgt "$TMP/en"
expect_ok "translate: a well-formed Transformer" "$NMT" translate -q -m "$TMP/good.safetensors" \
    -i "$TMP/de"
expect_ok "align: a well-formed Transformer" "$NMT" align -m "$TMP/good.safetensors" --src "$TMP/de" \
    --tgt "$TMP/en" --format tsv

write heads heads=3
lies heads "heads 3 do not divide d_model 8"
write missing -dec.1.
lies missing "tensor 'dec\\.1\\.ln1\\.g' \\[8\\] is missing"
write shape enc.0.ff.W_1:12,9
lies shape "tensor 'enc\\.0\\.ff\\.W_1' has shape \\[12, 9\\] but the settings \\(arch transformer, d_model 8, heads 2, ff 12, 2 \\+ 2 layers.*\\) need \\[12, 8\\]"
write arch arch=lstm2
lies arch "unknown arch 'lstm2' \\(expected rnn or transformer\\)"
write noarch arch=
lies noarch "'d_model' is a setting of the transformer, but the file's arch is rnn \\(the arch of a file with no 'arch' key\\)"
write rnnkey cell=gru
lies rnnkey "'cell' is a setting of the rnn, but the file's arch is transformer"
write extra +enc.2.ln1.g:8
lies extra "tensor 'enc\\.2\\.ln1\\.g' is in the file but the settings \\(arch transformer, 2 \\+ 2 layers\\) have no use for it"
write rnntensor +att.v:8
lies rnntensor "tensor 'att\\.v' is in the file but the settings .* have no use for it"
write layers dec_layers=65
lies layers "dec_layers is '65' \\(expected a whole number from 1 to 64\\)"
write nan dec.1.cross.W_v@nan
lies nan "tensor 'dec\\.1\\.cross\\.W_v' holds NaN at index 32 \\(row 4, column 0\\)"
# the variants: a well-formed ScaleNorm + FixNorm file is read by all
write scalegood norm=scale fixnorm=true scale-gains
expect_ok "info: ScaleNorm and FixNorm" "$NMT" info "$TMP/scalegood.safetensors"
grep -Eq '^norm +scale$' "$TMP/out" && grep -Eq '^fixnorm +true$' "$TMP/out" && pass ||
    fail "info does not show the variants: $(cat "$TMP/out")"
expect_ok "score: ScaleNorm and FixNorm" "$NMT" score -m "$TMP/scalegood.safetensors" \
    --src "$TMP/de" --tgt "$TMP/en"
expect_ok "translate: ScaleNorm and FixNorm" "$NMT" translate -q -m "$TMP/scalegood.safetensors" \
    -i "$TMP/de"
write badnorm norm=batch
lies badnorm "norm is 'batch' \\(expected layer or scale\\)"
write badfix fixnorm=yes
lies badfix "fixnorm is 'yes' \\(expected true or false\\)"
write scalewide norm=scale
lies scalewide "tensor 'enc\\.0\\.ln1\\.g' has shape \\[8\\] but the settings \\(.*norm scale\\) need \\[1\\]"
write scalebias norm=scale scale-gains +dec.1.ln3.b:8
lies scalebias "tensor 'dec\\.1\\.ln3\\.b' is in the file but the settings \\(arch transformer, 2 \\+ 2 layers, norm scale\\) have no use for it"
write tiedw tied=true
lies tiedw "tied is true \\(the output matrix is tgt_emb\\) but the file has an 'out\\.W'"
finish
