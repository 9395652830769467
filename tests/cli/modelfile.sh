# nmt info and nmt score: what they print, and how they refuse bad model
# files and bad options. Model files are written by tests/interop.py's
# standard-library writer (no nmt code), so the expected figures below come
# from the design, not from nmt's own output.
. "$(dirname "$0")/lib.sh"

ROOT=${NMT_SOURCE_ROOT:-$(dirname "$0")/../..}
PY=${NMT_PYTHON:-python3}
write_model() { "$PY" "$ROOT/tests/interop.py" write "$@" >"$TMP/params" || fail "interop.py write $*"; }
# flip_byte FILE OFFSET: replaces the byte at OFFSET by another value.
flip_byte() {
    local old
    old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf %o $(((old + 1) % 256)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# near NAME FILE KEY WANT TOL: the value on FILE's "KEY  value" line is WANT +- TOL.
near() {
    awk -v k="$3" -v w="$4" -v t="$5" '$1 == k {v = $2; found = 1}
        END {exit !(found && (v - w) ^ 2 <= t ^ 2)}' "$2" && pass ||
        fail "$1: $3 is $(grep "^$3" "$2"), expected $4"
}

# ---- nmt info -------------------------------------------------------------
write_model "$TMP/m.safetensors" --cell lstm --attention bahdanau --emb 5 --hidden 6 --att-dim 4 \
    --out-dim 3 --src-tokens "ein haus zwei" --tgt-tokens "a house"
expect_ok "info" "$NMT" info "$TMP/m.safetensors"
grep -Eq "^cell +lstm$" "$TMP/out" && pass || fail "info shows the cell"
grep -Eq "^attention +bahdanau$" "$TMP/out" && pass || fail "info shows the attention"
grep -Eq "^encoder +bidirectional$" "$TMP/out" && pass || fail "info shows the encoder"
grep -Eq "^src vocab +7$" "$TMP/out" && pass || fail "info shows the source vocabulary size"
grep -Eq "^tgt vocab +6$" "$TMP/out" && pass || fail "info shows the target vocabulary size"
grep -Eq "^parameters +$(cat "$TMP/params")$" "$TMP/out" && pass || fail "info parameter count"
grep -Eq "^file .*\($(wc -c <"$TMP/m.safetensors") bytes\)$" "$TMP/out" && pass || fail "info file size"
grep -Eq "^checkpoint +no" "$TMP/out" && pass || fail "info: a model is not a checkpoint"
expect_ok "info -v" "$NMT" info -v "$TMP/m.safetensors"
# 21 tensors for a bidirectional model with attention; their sizes add up
n=$(grep -Ec '^(src_emb|tgt_emb|enc|dec|att|out)[._a-zA-Z]* +\[' "$TMP/out")
[ "$n" -eq 21 ] && pass || fail "info -v lists $n tensors, expected 21"
sum=$(awk '/^(src_emb|tgt_emb|enc|dec|att|out)[._a-zA-Z]* +\[/ {s += $NF} END {print s}' "$TMP/out")
[ "$sum" = "$(cat "$TMP/params")" ] && pass || fail "info -v sizes add up to $sum"
expect_ok "info --help" "$NMT" info --help
grep -q "Usage: nmt info" "$TMP/out" && pass || fail "info --help on stdout"
expect_ok "help info" "$NMT" help info

# a checkpoint nmt wrote: resumable, with its step and the Adam moments
printf 'ein haus\nhaus\n' >"$TMP/t.src"
printf 'a house\nhouse\n' >"$TMP/t.tgt"
expect_ok "train for a checkpoint" "$NMT" train --init-from "$TMP/m.safetensors" --src "$TMP/t.src" \
    --tgt "$TMP/t.tgt" --out "$TMP/run" --optimizer adam --batch-size 1 --max-steps 3 -q
expect_ok "info checkpoint" "$NMT" info "$TMP/run/checkpoint.safetensors"
grep -Eq "^checkpoint +resumable, step 3, epoch 2, 42 optimizer tensors$" "$TMP/out" && pass ||
    fail "info checkpoint: $(grep checkpoint "$TMP/out")"
grep -Eq "^parameters +$(cat "$TMP/params")$" "$TMP/out" && pass || fail "checkpoint parameter count"

write_model "$TMP/uni.safetensors" --cell rnn --attention none --unidirectional --cased
expect_ok "info uni" "$NMT" info "$TMP/uni.safetensors"
grep -Eq "^encoder +unidirectional$" "$TMP/out" && pass || fail "info: unidirectional"
grep -Eq "^lowercase +false$" "$TMP/out" && pass || fail "info: lowercase false"
grep -q "^att_dim" "$TMP/out" && fail "info shows att_dim without attention" || pass

# without a file: what nmt runs on (tests/cli/blas.sh checks its lines)
expect_ok "info no file" "$NMT" info
grep -q "^kernel " "$TMP/out" && pass || fail "info without a file: no kernel line: $(cat "$TMP/out")"
expect_fail "info two files" "expects one model file \(or none\), not 2" "$NMT" info a b
expect_fail "info bad option" "Try 'nmt info --help'" "$NMT" info --frobnicate x
expect_fail "info missing" "nope.safetensors: No such file" "$NMT" info "$TMP/nope.safetensors"
expect_fail "info directory" "is a directory" "$NMT" info "$TMP"

# ---- hostile model files ------------------------------------------------------
size=$(wc -c <"$TMP/m.safetensors")
head -c 5 "$TMP/m.safetensors" >"$TMP/bad"
expect_fail "truncated to 5 bytes" "truncated: 5 bytes" "$NMT" info "$TMP/bad"
head -c 200 "$TMP/m.safetensors" >"$TMP/bad"
expect_fail "truncated in the header" "beyond the end of the file \(200 bytes\)" "$NMT" info "$TMP/bad"
head -c $((size - 4)) "$TMP/m.safetensors" >"$TMP/bad"
expect_fail "truncated in the data" "outside the data section" "$NMT" info "$TMP/bad"
printf '\377\377\377\377\377\377\377\177{}' >"$TMP/bad"
expect_fail "absurd header length" "header length 9223372036854775807 is absurd" "$NMT" info "$TMP/bad"
printf '\010\000\000\000\000\000\000\000{"a":[1}' >"$TMP/bad"
expect_fail "malformed header" "malformed header at byte 7" "$NMT" info "$TMP/bad"
printf '\002\000\000\000\000\000\000\000{}' >"$TMP/bad"
expect_fail "not a model" "not an nmt model" "$NMT" info "$TMP/bad"
# one data byte changed: the crc catches it
cp "$TMP/m.safetensors" "$TMP/bad"
flip_byte "$TMP/bad" $((size - 2))
expect_fail "crc mismatch" "crc32 mismatch" "$NMT" info "$TMP/bad"
# settings that disagree with the shapes, a missing tensor, unknown names
write_model "$TMP/bad" --cell lstm --set-meta hidden=7
expect_fail "shape vs settings" "tensor 'enc.fwd.W_ih' has shape \[24, 5\] but .* need \[28, 5\]" "$NMT" info "$TMP/bad"
write_model "$TMP/bad" --cell gru --set-meta cell=lstm
expect_fail "cell vs shapes" "tensor 'enc.fwd.W_ih' has shape \[18, 5\]" "$NMT" info "$TMP/bad"
write_model "$TMP/bad" --drop att.U
expect_fail "missing tensor" "tensor 'att.U' \[4, 12\] is missing" "$NMT" info "$TMP/bad"
write_model "$TMP/bad" --set-meta cell=transformer
expect_fail "unknown cell" "unknown cell 'transformer'" "$NMT" info "$TMP/bad"
write_model "$TMP/bad" --set-meta attention=luong
expect_fail "unknown attention" "unknown attention 'luong'" "$NMT" info "$TMP/bad"
write_model "$TMP/bad" --set-meta crc32=
expect_fail "no crc" "lacks 'crc32'" "$NMT" info "$TMP/bad"
write_model "$TMP/bad" --set-meta format=nmt-9
expect_fail "other format" "format 'nmt-9' is not supported" "$NMT" info "$TMP/bad"

# ---- nmt score ------------------------------------------------------------------
# All weights zero: p is uniform, so every target token (and </s>) costs
# ln(Vt) and the perplexity is Vt, whatever the sentence.
printf 'ein Haus\nzwei Haus und\nHaus\n' >"$TMP/c.src"
printf 'a house\nthe House is\nhouse\n' >"$TMP/c.tgt"
write_model "$TMP/zero.safetensors" --init zero --tgt-tokens "a house is"   # Vt = 7
expect_ok "score" "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src" --tgt "$TMP/c.tgt"
want_loss=$(awk 'BEGIN {printf "%.9f", log(7)}')
near "score" "$TMP/out" loss "$want_loss" 1e-5
near "score" "$TMP/out" perplexity 7 1e-3
# "the" is <unk>, "House" lowercased (the model's setting): 6 words + 3 </s>
grep -Eq "^tokens +9$" "$TMP/out" && pass || fail "score tokens: $(grep tokens "$TMP/out")"
grep -Eq "^sentences +3$" "$TMP/out" && pass || fail "score sentences"
expect_ok "score per sentence" "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src" \
    --tgt "$TMP/c.tgt" --per-sentence --batch-size 2
awk -F'\t' -v l="$(awk 'BEGIN {print log(7)}')" 'BEGIN {n = 0}
    {n++; want = (n == 1 ? 3 : n == 2 ? 4 : 2); if ($2 != want || ($1 - want * l) ^ 2 > 1e-10) bad = 1}
    END {exit (n != 3 || bad)}' "$TMP/out" && pass || fail "per-sentence lines: $(cat "$TMP/out")"
near "per-sentence summary on stderr" "$TMP/err" loss "$want_loss" 1e-5
# gzip input works the same
gzip -c "$TMP/c.tgt" >"$TMP/c.tgt.gz"
expect_ok "score gzip" "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src" --tgt "$TMP/c.tgt.gz"
near "score gzip" "$TMP/out" loss "$want_loss" 1e-5

expect_fail "score no model" "--model is required" "$NMT" score --src "$TMP/c.src" --tgt "$TMP/c.tgt"
expect_fail "score no tgt" "--tgt is required" "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src"
expect_fail "score batch 0" "--batch-size: 0 is out of range" \
    "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src" --tgt "$TMP/c.tgt" --batch-size 0
expect_fail "score batch junk" "--batch-size: '8x' is not a whole number" \
    "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src" --tgt "$TMP/c.tgt" --batch-size 8x
expect_fail "score threads" "--threads: -2 is out of range" \
    "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src" --tgt "$TMP/c.tgt" --threads -2
expect_fail "score extra arg" "unexpected argument 'x'" \
    "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/c.src" --tgt "$TMP/c.tgt" x
cp "$TMP/m.safetensors" "$TMP/bad"
flip_byte "$TMP/bad" $((size - 2))
expect_fail "score corrupt model" "crc32 mismatch" \
    "$NMT" score -m "$TMP/bad" --src "$TMP/c.src" --tgt "$TMP/c.tgt"
printf 'one\ntwo\n' >"$TMP/two.src"
expect_fail "score line counts differ" "c.tgt|two.src" \
    "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/two.src" --tgt "$TMP/c.tgt"
expect_fail "score missing corpus" "nope.src" \
    "$NMT" score -m "$TMP/zero.safetensors" --src "$TMP/nope.src" --tgt "$TMP/c.tgt"
expect_ok "score --help" "$NMT" score --help
grep -q "Usage: nmt score" "$TMP/out" && pass || fail "score --help on stdout"
finish
