#!/usr/bin/env bash
# The Transformer's variants (docs/DESIGN.md, "The Transformer"): --norm
# scale (ScaleNorm) and --fixnorm (FixNorm), each alone, both, tied and
# untied. Both are the defaults: a run without either option writes the
# same files as one with --norm scale --fixnorm, and --norm layer
# --no-fixnorm is the plain model. Each trains a few steps on the toy
# corpus, writes its metadata key (and a plain run none: its file has
# exactly the plain keys), shows it in nmt info
# (-v: ScaleNorm's gains of shape [1], no norm bias), translates alone and
# in an ensemble with itself, scores as the training's loss says, aligns,
# and averages its snapshots into a model of the same kind; nmt average
# refuses to mix a variant with the plain model; --init-from takes the
# variant from the file.
. "$(dirname "$0")/lib.sh"

TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/valid.src.gz" | head -n 20 >vs
zcat "$TOY/valid.tgt.gz" | head -n 20 >vt
zcat "$TOY/test.src.gz" | head -n 4 >ts
zcat "$TOY/test.tgt.gz" | head -n 4 >tt
TRAIN=("$NMT" train -q --arch transformer --src s --tgt t --valid-src vs --valid-tgt vt
       --d-model 16 --heads 2 --ff 32 --layers 2 --batch-size 16 --max-steps 12
       --valid-every 4 --keep-snapshots 2 --threads 1 --subwords 0)

keys_of() { # keys_of FILE: the metadata keys without a dot (the model's), sorted
    python3 - "$1" <<'EOF'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
meta = json.loads(b[8:8 + n]).get("__metadata__", {})
print(" ".join(sorted(k for k in meta if "." not in k)))
EOF
}
meta_of() { # meta_of FILE KEY: a metadata value (empty when absent)
    python3 - "$1" "$2" <<'EOF'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
print(json.loads(b[8:8 + n]).get("__metadata__", {}).get(sys.argv[2], ""))
EOF
}

# --- the plain model: exactly the plain keys; the defaults are both variants ----------
PLAIN="arch crc32 d_model dec_layers enc_layers ff format heads lowercase src_vocab tgt_vocab tied"
expect_ok "plain" "${TRAIN[@]}" --norm layer --no-fixnorm --out plain
[ "$(keys_of plain/checkpoint.safetensors)" = "$PLAIN" ] && pass ||
    fail "a plain model's keys: $(keys_of plain/checkpoint.safetensors)"
expect_ok "the defaults" "${TRAIN[@]}" --out default
for v in scale fixnorm both both-untied; do
    case $v in
    scale) opts=(--norm scale --no-fixnorm) ;;
    fixnorm) opts=(--norm layer --fixnorm) ;;
    both) opts=(--norm scale --fixnorm) ;;
    both-untied) opts=(--norm scale --fixnorm --untied-embeddings) ;;
    esac
    expect_ok "$v: train" "${TRAIN[@]}" "${opts[@]}" --out $v
done
for f in checkpoint best snapshot-8 snapshot-12; do
    same_data default/$f.safetensors both/$f.safetensors && pass ||
        fail "the defaults: $f differs from --norm scale --fixnorm's"
    [ "$(keys_of default/$f.safetensors)" = "$(keys_of both/$f.safetensors)" ] && pass ||
        fail "the defaults: $f's keys differ from --norm scale --fixnorm's"
    same_data default/$f.safetensors plain/$f.safetensors && fail "the defaults: $f is plain" || pass
done

# --- each variant ------------------------------------------------------------------------------
for v in scale fixnorm both both-untied; do
    M=$v/checkpoint.safetensors
    want_norm=; want_fix=
    [ $v != fixnorm ] && want_norm=scale
    [ $v != scale ] && want_fix=true
    [ "$(meta_of $M norm)" = "$want_norm" ] && pass || fail "$v: norm is '$(meta_of $M norm)'"
    [ "$(meta_of $M fixnorm)" = "$want_fix" ] && pass || fail "$v: fixnorm is '$(meta_of $M fixnorm)'"
    # nmt info, and -v's tensors
    "$NMT" info $M >info 2>&1 || fail "$v: info failed"
    if [ -n "$want_norm" ]; then grep -Eq "^norm +scale$" info && pass || fail "$v: info lacks norm scale"
    else grep -q "^norm" info && fail "$v: info shows a norm" || pass; fi
    if [ -n "$want_fix" ]; then grep -Eq "^fixnorm +true$" info && pass || fail "$v: info lacks fixnorm true"
    else grep -q "^fixnorm" info && fail "$v: info shows fixnorm" || pass; fi
    "$NMT" info -v $M >infov 2>&1 || fail "$v: info -v failed"
    if [ -n "$want_norm" ]; then
        grep -Eq "dec\.1\.ln3\.g .*\[1\]" infov && pass || fail "$v: info -v: dec.1.ln3.g is not [1]"
        grep -Eq "ln[0-9]?\.b " infov && fail "$v: info -v lists a norm's bias" || pass
    else
        grep -Eq "dec\.1\.ln3\.g .*\[16\]" infov && pass || fail "$v: info -v: dec.1.ln3.g is not [16]"
    fi
    # translate, alone and as an ensemble of itself (the same words)
    "$NMT" translate -q -m $M -i ts --threads 1 >tr 2>err || fail "$v: translate: $(cat err)"
    [ "$(wc -l <tr)" -eq 4 ] && pass || fail "$v: $(wc -l <tr) translations of 4 lines"
    "$NMT" translate -q -m $M -m $M -i ts --threads 1 >tr2 2>err || fail "$v: ensemble: $(cat err)"
    cmp -s tr tr2 && pass || fail "$v: an ensemble of the model with itself translates otherwise"
    # score: a held-out set's loss, finite and positive
    "$NMT" score -m $M --src vs --tgt vt --threads 1 >sc 2>err || fail "$v: score: $(cat err)"
    awk '$1 == "loss" && $2 > 0 && $2 < 100 { ok = 1 } END { exit !ok }' sc && pass ||
        fail "$v: score: $(cat sc)"
    # align: every map's rows sum to 1
    "$NMT" align -m $M --src ts --tgt tt --format tsv --threads 1 >al 2>err ||
        fail "$v: align: $(cat err)"
    python3 - al <<'EOF' && pass || fail "$v: align's rows"
import sys
rows, head = [], True
for line in open(sys.argv[1]):
    if not line.strip():
        head = True
        continue
    if head:
        head = False
        continue
    rows.append([float(x) for x in line.rstrip("\n").split("\t")[1:]])
assert rows and all(abs(sum(r) - 1) < 1e-4 for r in rows)
EOF
    # average the run's two snapshots: a model of the same kind
    expect_ok "$v: average" "$NMT" average $v/snapshot-8.safetensors $v/snapshot-12.safetensors \
        -o $v/avg.safetensors
    [ "$(meta_of $v/avg.safetensors norm)/$(meta_of $v/avg.safetensors fixnorm)" = \
      "$want_norm/$want_fix" ] && pass || fail "$v: the average lost the variant's keys"
    expect_ok "$v: translate the average" "$NMT" translate -q -m $v/avg.safetensors -i ts --threads 1
done

# --- averaging refuses to mix a variant with the plain model ---------------------------------
expect_fail "average scale with plain" "differ in 'norm'" "$NMT" average \
    plain/checkpoint.safetensors scale/checkpoint.safetensors -o mixed.safetensors
expect_fail "average fixnorm with plain" "differ in 'fixnorm'" "$NMT" average \
    plain/checkpoint.safetensors fixnorm/checkpoint.safetensors -o mixed.safetensors
[ ! -e mixed.safetensors ] && pass || fail "a refused average wrote its output"

# --- --init-from takes the variant from the file; the options themselves are refused ----------
expect_ok "init from both" "$NMT" train -q --init-from both/checkpoint.safetensors --src s --tgt t \
    --max-steps 2 --threads 1 --out from
[ "$(meta_of from/checkpoint.safetensors norm)/$(meta_of from/checkpoint.safetensors fixnorm)" = \
  "scale/true" ] && pass || fail "--init-from lost the variant"
expect_fail "--norm with --init-from" "--norm cannot be used with --init-from" "$NMT" train \
    --init-from both/checkpoint.safetensors --src s --tgt t --norm layer --out from2
expect_fail "--fixnorm on --resume" "--fixnorm cannot be changed on --resume" "$NMT" train \
    --resume both --fixnorm
expect_fail "--no-fixnorm on --resume" "--no-fixnorm cannot be changed on --resume" "$NMT" train \
    --resume both --no-fixnorm
expect_fail "--no-fixnorm with the RNN" "--no-fixnorm is an option of --arch transformer" \
    "$NMT" train --arch rnn --src s --tgt t --no-fixnorm --out rnn

finish
