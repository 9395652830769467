# The attention family on the command line: nmt train --attention
# bahdanau|dot|general|scaled-dot|none on a slice of the toy corpus, and what
# info, translate, align --gold (AER) and compare say of each kind; tied
# embeddings with label smoothing for the new scorers; an exact resume; dot
# over a bidirectional encoder and a mismatched --tied-embeddings refused
# when the run starts, and files whose attention does not fit their kind
# refused by every command that reads a model.
. "$(dirname "$0")/lib.sh"

ROOT=${NMT_SOURCE_ROOT:-$(dirname "$0")/../..}
TOY=$ROOT/corpora/toy
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

zcat "$TOY/train.src.gz" | head -n 400 >"$TMP/train.src"
zcat "$TOY/train.tgt.gz" | head -n 400 >"$TMP/train.tgt"
zcat "$TOY/valid.src.gz" | head -n 20 >"$TMP/valid.src"
zcat "$TOY/valid.tgt.gz" | head -n 20 >"$TMP/valid.tgt"
zcat "$TOY/test.src.gz" | head -n 20 >"$TMP/test.src"
zcat "$TOY/test.tgt.gz" | head -n 20 >"$TMP/test.tgt"
head -n 20 "$TOY/test.align" >"$TMP/test.align"

SMALL=(--src "$TMP/train.src" --tgt "$TMP/train.tgt" --valid-src "$TMP/valid.src"
       --valid-tgt "$TMP/valid.tgt" --cell gru --emb 16 --hidden 16 --att-dim 8 --out-dim 16
       --batch-size 32 --max-steps 20 --lr 0.01 --dropout 0 --seed 3 --threads 1 -q)

# set_meta IN OUT KEY=VALUE...: IN with those metadata values, the tensors
# (and so the crc32 of the data) unchanged.
set_meta() {
    "$PY" - "$@" <<'EOF'
import json, struct, sys
src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
raw = open(src, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
for p in pairs:
    k, v = p.split("=", 1)
    header["__metadata__"][k] = v
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(dst, "wb").write(struct.pack("<Q", len(h)) + h + raw[8 + n:])
EOF
}

# --- help and refusals when the run starts -----------------------------------
expect_ok "train --help" "$NMT" train --help
grep -q -- "--attention bahdanau|dot|general|scaled-dot|none" "$TMP/out" && pass ||
    fail "train --help does not list the five kinds"
for kind in "dot s . h_j" "general s . (U h_j)" "scaled-dot" "(W s) . (U h_j) / sqrt(att-dim)"; do
    grep -qF "$kind" "$TMP/out" && pass || fail "train --help does not explain '$kind'"
done
# refused before anything is read: the corpus does not even exist
expect_fail "dot over a bidirectional encoder" \
    "nmt train: attention dot scores s \. h_j, so it needs annotations h_j of the decoder state's size H = 16, and a bidirectional encoder's have 2H = 32 \(use a unidirectional encoder, or general or scaled-dot" \
    "$NMT" train --arch rnn --src "$TMP/nope.src" --tgt "$TMP/nope.tgt" --out "$TMP/refused" \
    --attention dot --hidden 16
"$NMT" train --arch rnn --src "$TMP/nope.src" --tgt "$TMP/nope.tgt" --out "$TMP/refused" \
    --attention dot 2>/dev/null
[ $? -eq 2 ] && pass || fail "dot over a bidirectional encoder: exit status is not 2"
[ ! -e "$TMP/refused" ] && pass || fail "a refused run left $TMP/refused"
for kind in general scaled-dot dot; do
    expect_fail "$kind with a mismatched --tied-embeddings" \
        "tied embeddings need out_dim \(16\) equal to emb \(8\)" \
        "$NMT" train --arch rnn "${SMALL[@]}" --attention "$kind" --unidirectional --tied-embeddings \
        --emb 8 --out "$TMP/refused"
done
expect_fail "unknown kind" "--attention: unknown value 'luong'" \
    "$NMT" train --arch rnn "${SMALL[@]}" --attention luong --out "$TMP/refused"
expect_fail "scaled_dot is not scaled-dot" "--attention: unknown value 'scaled_dot'" \
    "$NMT" train --arch rnn "${SMALL[@]}" --attention scaled_dot --out "$TMP/refused"

# --- every kind trains; info names it and lists its tensors ------------------
kinds=(bahdanau dot general scaled-dot none)
declare -A params
encoder_of() { [ "$1" = dot ] && echo --unidirectional || echo --bidirectional; }
for kind in "${kinds[@]}"; do
    expect_ok "train $kind" "$NMT" train --arch rnn "${SMALL[@]}" --attention "$kind" "$(encoder_of "$kind")" \
        --out "$TMP/runs/$kind"
    M=$TMP/runs/$kind/best.safetensors
    expect_ok "info $kind" "$NMT" info -v "$M"
    grep -Eq "^attention +$kind$" "$TMP/out" && pass || fail "info: attention is not $kind"
    # att_dim sizes bahdanau's and scaled-dot's tensors only
    case $kind in
        bahdanau | scaled-dot) grep -Eq "^att_dim +8$" "$TMP/out" && pass || fail "info $kind: att_dim" ;;
        *) grep -q "^att_dim" "$TMP/out" && fail "info $kind shows att_dim" || pass ;;
    esac
    # its attention tensors, in file order, with their shapes (H 16, A 8, D*H 32 or 16)
    got=$(awk '/^att\./ { match($0, /\[[^]]*\]/); shape = substr($0, RSTART, RLENGTH)
                          gsub(/ /, "", shape); printf "%s %s ", $1, shape }' "$TMP/out")
    case $kind in
        bahdanau) want="att.W [8,16] att.U [8,32] att.b [8] att.v [8] " ;;
        general) want="att.U [16,32] " ;;
        scaled-dot) want="att.W [8,16] att.U [8,32] " ;;
        *) want="" ;;
    esac
    [ "$got" = "$want" ] && pass || fail "info -v $kind: attention tensors '$got', expected '$want'"
    params[$kind]=$(awk '$1 == "parameters" { print $2 }' "$TMP/out")
    expect_ok "translate $kind" "$NMT" translate -m "$M" -i "$TMP/test.src" -o "$TMP/$kind.txt" \
        --beam 3 -q
    [ "$(wc -l <"$TMP/$kind.txt")" -eq 20 ] && pass || fail "translate $kind: not 20 lines"
done
# the parameters differ by exactly the kind's tensors
extra() { echo $(($1 - ${params[none]})); }
[ "$(extra "${params[bahdanau]}")" -eq $((8 * 16 + 8 * 32 + 8 + 8)) ] && pass ||
    fail "bahdanau has ${params[bahdanau]} parameters, none ${params[none]}"
[ "$(extra "${params[general]}")" -eq $((16 * 32)) ] && pass ||
    fail "general has ${params[general]} parameters, none ${params[none]}"
[ "$(extra "${params[scaled-dot]}")" -eq $((8 * 16 + 8 * 32)) ] && pass ||
    fail "scaled-dot has ${params[scaled-dot]} parameters, none ${params[none]}"

# --- AER against the gold links, for each kind with attention ----------------
for kind in bahdanau dot general scaled-dot; do
    expect_ok "align --gold $kind" "$NMT" align -m "$TMP/runs/$kind/best.safetensors" \
        --src "$TMP/test.src" --tgt "$TMP/test.tgt" --gold "$TMP/test.align"
    awk '$1 == "AER" && $2 >= 0 && $2 <= 1 && /\(20 pairs,/ { ok = 1 } END { exit !ok }' \
        "$TMP/out" && pass || fail "align --gold $kind: $(cat "$TMP/out")"
done
expect_fail "align none" "this model has no attention \(attention=none\)" \
    "$NMT" align -m "$TMP/runs/none/best.safetensors" --src "$TMP/test.src" \
    --tgt "$TMP/test.tgt" --gold "$TMP/test.align"

# --- compare: every run's kind in the table and the chart --------------------
runs=()
for kind in "${kinds[@]}"; do runs+=("$TMP/runs/$kind"); done
expect_ok "compare the five" "$NMT" compare "${runs[@]}" --src "$TMP/test.src" \
    --ref "$TMP/test.tgt" --beam 1 -o "$TMP/compare.svg" -q
grep -Eq "^model +gru/bahdanau +gru/dot +gru/general +gru/scaled-dot +gru/none$" "$TMP/out" &&
    pass || fail "compare: the model row does not name the kinds: $(grep '^model' "$TMP/out")"
for kind in "${kinds[@]}"; do
    grep -qF ">$kind (gru/$kind)<" "$TMP/compare.svg" && pass ||
        fail "compare's chart has no legend entry '$kind (gru/$kind)'"
done

# --- the new scorers with tied embeddings and label smoothing ----------------
for kind in dot general scaled-dot; do
    expect_ok "train $kind tied, label smoothing" "$NMT" train --arch rnn "${SMALL[@]}" --attention "$kind" \
        --unidirectional --tied-embeddings --label-smoothing 0.1 --out "$TMP/tied-$kind"
    expect_ok "info tied $kind" "$NMT" info -v "$TMP/tied-$kind/best.safetensors"
    grep -Eq "^tied +true" "$TMP/out" && grep -Eq "^attention +$kind$" "$TMP/out" && pass ||
        fail "tied $kind: info says $(grep -E '^(tied|attention)' "$TMP/out" | tr '\n' ' ')"
    grep -q "^out\.W " "$TMP/out" && fail "tied $kind has an out.W" || pass
    expect_ok "align tied $kind" "$NMT" align -m "$TMP/tied-$kind/best.safetensors" \
        --src "$TMP/test.src" --tgt "$TMP/test.tgt" --gold "$TMP/test.align"
done

# --- an interrupted scaled-dot run resumes to the same weights; --init-from --
"$NMT" train --arch rnn "${SMALL[@]}" --attention scaled-dot --max-steps 8 --out "$TMP/resumed" &&
    "$NMT" train --resume "$TMP/resumed" --max-steps 20 -q && pass || fail "scaled-dot resume"
cmp -s <(data_of "$TMP/runs/scaled-dot/checkpoint.safetensors") \
    <(data_of "$TMP/resumed/checkpoint.safetensors") && pass ||
    fail "scaled-dot: 8 steps + resume to 20 differ from 20 steps"
expect_ok "init-from general" "$NMT" train --init-from "$TMP/runs/general/best.safetensors" \
    --src "$TMP/train.src" --tgt "$TMP/train.tgt" --max-steps 2 -q --out "$TMP/from-general"
expect_ok "info init-from" "$NMT" info "$TMP/from-general/checkpoint.safetensors"
grep -Eq "^attention +general$" "$TMP/out" && pass || fail "--init-from did not keep general"
expect_fail "init-from with --attention" "--attention cannot be used with --init-from" \
    "$NMT" train --init-from "$TMP/runs/general/best.safetensors" --attention dot \
    --src "$TMP/train.src" --tgt "$TMP/train.tgt" --out "$TMP/refused"

# --- files whose attention does not fit their kind: refused, never a crash ---
# every command that reads a model; exit 1, the file and the reason named
refused_everywhere() {
    local name=$1 pattern=$2 file=$3
    expect_fail "info: $name" "$pattern" "$NMT" info "$file"
    expect_fail "translate: $name" "$pattern" "$NMT" translate -m "$file" -i "$TMP/test.src" -q
    expect_fail "score: $name" "$pattern" "$NMT" score -m "$file" --src "$TMP/test.src" \
        --tgt "$TMP/test.tgt"
    expect_fail "align: $name" "$pattern" "$NMT" align -m "$file" --src "$TMP/test.src" \
        --tgt "$TMP/test.tgt" --gold "$TMP/test.align"
    expect_fail "init-from: $name" "$pattern" "$NMT" train --init-from "$file" \
        --src "$TMP/train.src" --tgt "$TMP/train.tgt" --out "$TMP/refused"
}
set_meta "$TMP/runs/dot/best.safetensors" "$TMP/dot-bi.safetensors" bidirectional=true
refused_everywhere "dot claiming a bidirectional encoder" \
    "dot-bi\.safetensors: attention dot and bidirectional true do not go together: attention dot scores s \. h_j.*2H = 32" \
    "$TMP/dot-bi.safetensors"
set_meta "$TMP/runs/general/best.safetensors" "$TMP/general-as-bahdanau.safetensors" \
    attention=bahdanau
refused_everywhere "general's tensors called bahdanau" \
    "general-as-bahdanau\.safetensors: tensor 'att\.W' \[8, 16\] is missing" \
    "$TMP/general-as-bahdanau.safetensors"
set_meta "$TMP/runs/scaled-dot/best.safetensors" "$TMP/scaled-as-general.safetensors" \
    attention=general
refused_everywhere "scaled-dot's tensors called general" \
    "tensor 'att\.U' has shape \[8, 32\] but the settings \(cell gru, attention general, bidirectional.*need \[16, 32\]" \
    "$TMP/scaled-as-general.safetensors"
set_meta "$TMP/runs/bahdanau/best.safetensors" "$TMP/bahdanau-as-scaled.safetensors" \
    attention=scaled-dot
refused_everywhere "bahdanau's tensors called scaled-dot" \
    "tensor 'att\.b' is in the file but the settings \(attention scaled-dot, bidirectional\) have no use for it" \
    "$TMP/bahdanau-as-scaled.safetensors"
set_meta "$TMP/runs/none/best.safetensors" "$TMP/none-as-dot.safetensors" attention=dot \
    bidirectional=true
refused_everywhere "a bidirectional model without attention called dot" \
    "attention dot and bidirectional true do not go together" "$TMP/none-as-dot.safetensors"
# the unchanged copy loads: the refusals come from the changed key
set_meta "$TMP/runs/dot/best.safetensors" "$TMP/dot-same.safetensors" bidirectional=false
expect_ok "an unchanged rewrite loads" "$NMT" info "$TMP/dot-same.safetensors"

finish
