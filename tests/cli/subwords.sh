# Subwords from the command line: nmt train --subwords N / --spm FILE, the
# SentencePiece model stored in the model file (tensor "subwords"), every
# command taking and giving raw text with it, alignments per piece and per
# word, subword sampling that resumes exactly, and what is refused.
. "$(dirname "$0")/lib.sh"

ROOT=${NMT_SOURCE_ROOT:-$(dirname "$0")/../..}
PY=${NMT_PYTHON:-python3}
TOY=$ROOT/corpora/toy
M30K=${NMT_CORPORA:?}/multi30k


# header FILE EXPR: prints a Python expression over the file's parsed JSON
# header h and its data section's length d (standard library only)
header() {
    "$PY" - "$1" "$2" <<'EOF'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
d = len(raw) - 8 - n
print(eval(sys.argv[2]))
EOF
}

zcat "$TOY/train.src.gz" | head -n 2000 >"$TMP/t.src"
zcat "$TOY/train.tgt.gz" | head -n 2000 >"$TMP/t.tgt"
zcat "$TOY/valid.src.gz" | head -n 40 >"$TMP/v.src"
zcat "$TOY/valid.tgt.gz" | head -n 40 >"$TMP/v.tgt"
SMALL=(--emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16 --seed 3)

# --- help -------------------------------------------------------------------------
expect_ok "train help" "$NMT" train --help
for opt in subwords spm subword-alpha; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "train help lacks --$opt"
done
grep -q "spm_train, trained" "$TMP/out" && pass || fail "train help: how to make an --spm model"
expect_ok "align help" "$NMT" align --help
grep -q -- "--units U" "$TMP/out" && pass || fail "align help lacks --units"

# --- training with learned pieces -------------------------------------------------
expect_ok "train --subwords" "$NMT" train --arch rnn --src "$TMP/t.src" --tgt "$TMP/t.tgt" \
    --valid-src "$TMP/v.src" --valid-tgt "$TMP/v.tgt" --out "$TMP/run" --subwords 300 \
    "${SMALL[@]}" --max-steps 30 --valid-every 15 --report-every 15
grep -q "subwords: SentencePiece unigram model of 300 pieces, learned from both sides in" "$TMP/err" &&
    pass || fail "train says what it learned: $(head -3 "$TMP/err")"
grep -q "vocabularies 300 / 300 pieces" "$TMP/err" && pass || fail "vocabularies are the pieces"
grep -q "skipped by --max-len 100" "$TMP/err" && pass || fail "--max-len is 100 pieces by default"
# validated twice on raw text, the loss falling (and the default average of
# the two validations' models once more)
awk -F'\t' 'NR > 1 && $10 != "" && $11 == "" {n++} END {exit n != 2}' "$TMP/run/log.tsv" && pass ||
    fail "two validation rows: $(cat "$TMP/run/log.tsv")"
awk -F'\t' 'NR == 2 {a = $4} NR == 3 {b = $4} END {exit !(b < a)}' "$TMP/run/log.tsv" && pass ||
    fail "the loss falls: $(cat "$TMP/run/log.tsv")"

# the file: the pieces as both vocabularies, the SentencePiece model as the
# last tensor, U8 of one dimension
M=$TMP/run/checkpoint.safetensors
[ "$(header "$M" 'h["subwords"]["dtype"], len(h["subwords"]["shape"])')" = "('U8', 1)" ] && pass ||
    fail "subwords is a U8 vector"
[ "$(header "$M" 'h["subwords"]["data_offsets"][1] == d and h["subwords"]["shape"][0] == d - h["subwords"]["data_offsets"][0]')" = True ] &&
    pass || fail "subwords is the last tensor, its shape its bytes"
[ "$(header "$M" 'len(h["__metadata__"]["src_vocab"].split("\n")), h["__metadata__"]["src_vocab"] == h["__metadata__"]["tgt_vocab"]')" = "(300, True)" ] &&
    pass || fail "both vocabularies are the 300 pieces"
[ "$(header "$M" 'h["__metadata__"]["src_vocab"].split("\n")[:5]')" = "['<pad>', '<unk>', '<s>', '</s>', '▁']" ] ||
    [ "$(header "$M" 'h["__metadata__"]["src_vocab"].split("\n")[:4]')" = "['<pad>', '<unk>', '<s>', '</s>']" ] &&
    pass || fail "ids 0-3 are the specials"

# --- nmt info ---------------------------------------------------------------------
expect_ok "info" "$NMT" info "$M"
grep -Eq "^units +subwords: SentencePiece unigram, 300 pieces, normalization identity$" "$TMP/out" &&
    pass || fail "info shows the pieces: $(grep units "$TMP/out")"
grep -Eq "^src vocab +300$" "$TMP/out" && pass || fail "info: src vocab 300"
grep -Eq "^checkpoint +resumable, step 30, .* 40 optimizer tensors$" "$TMP/out" && pass ||
    fail "info: the subwords tensor is not an optimizer tensor: $(grep checkpoint "$TMP/out")"
expect_ok "info -v" "$NMT" info -v "$M"
grep -Eq "^subwords +\[[0-9]+\] U8 +\(the SentencePiece model\)$" "$TMP/out" && pass ||
    fail "info -v lists the subwords tensor"
grep -q "^extra tensor" "$TMP/out" && grep -q "^adam.m.src_emb" "$TMP/out" && pass ||
    fail "info -v still lists the optimizer tensors"

# --- nmt translate: raw text in and out -------------------------------------------
printf 'pu babslonk verd\n\nsko dud verd stifrool sko kon\n' >"$TMP/in"
expect_ok "translate" "$NMT" translate -m "$M" -i "$TMP/in" -o "$TMP/hyp"
[ "$(wc -l <"$TMP/hyp")" -eq 3 ] && pass || fail "translate: one line per line"
[ -z "$(sed -n 2p "$TMP/hyp")" ] && pass || fail "translate: an empty line stays empty"
! grep -q "▁" "$TMP/hyp" && pass || fail "translate: pieces decoded into text: $(cat "$TMP/hyp")"
expect_ok "translate --n-best" "$NMT" translate -m "$M" -i "$TMP/in" --beam 3 --n-best 2
[ "$(grep -c '^0 ||| ' "$TMP/out") $(grep -c '^1 ||| ' "$TMP/out") $(grep -c '^2 ||| ' "$TMP/out")" = "2 1 2" ] &&
    pass || fail "translate --n-best: $(cat "$TMP/out")"
! grep -q "▁" "$TMP/out" && pass || fail "translate --n-best: text"
printf 'pu ☃☃ verd\n' >"$TMP/unk.in"
expect_ok "translate --replace-unk --alignments" "$NMT" translate -m "$M" -i "$TMP/unk.in" \
    --replace-unk --alignments "$TMP/al.jsonl"
grep -q '"source": \["▁pu", "▁", "☃☃", "▁' "$TMP/al.jsonl" && pass ||
    fail "translate --alignments: the pieces, unknown text as itself: $(cut -c1-200 "$TMP/al.jsonl")"

# validation BLEU is greedy translation of the raw validation text, pieces
# decoded: nmt translate -b 1 and nmt bleu give the same number
expect_ok "translate valid" "$NMT" translate -m "$M" -b 1 -i "$TMP/v.src" -o "$TMP/v.hyp"
expect_ok "bleu valid" "$NMT" bleu "$TMP/v.tgt" -i "$TMP/v.hyp"
bleu=$(sed -n 's/^BLEU[^=]* = \([0-9.]*\) .*/\1/p' "$TMP/out")
logged=$(awk -F'\t' 'END {print $10}' "$TMP/run/log.tsv")
[ -n "$bleu" ] && [ "$bleu" = "$logged" ] && pass ||
    fail "validation BLEU $logged, translate + bleu $bleu"

# --- nmt score ---------------------------------------------------------------------
expect_ok "score" "$NMT" score -m "$M" --src "$TMP/v.src" --tgt "$TMP/v.tgt" --per-sentence
words=$(awk '{n += NF + 1} END {print n}' "$TMP/v.tgt")
awk -v w="$words" '$1 == "tokens" {t = $2} $1 == "loss" {l = $2}
    END {exit !(t >= w && l > 0 && l < 20)}' "$TMP/err" && pass ||
    fail "score counts pieces (at least the words): $(cat "$TMP/err")"

# --- nmt align: pieces, words, gold --------------------------------------------------
head -n 1 "$TMP/v.src" >"$TMP/one.src"
head -n 1 "$TMP/v.tgt" >"$TMP/one.tgt"
expect_ok "align pieces" "$NMT" align -m "$M" --src "$TMP/one.src" --tgt "$TMP/one.tgt" --format tsv
head -n 1 "$TMP/out" | grep -q "▁" && pass || fail "align shows pieces by default"
awk -F'\t' 'NR > 1 && NF > 1 {s = 0; for (i = 2; i <= NF; i++) s += $i; if (s < 0.999 || s > 1.001) bad++}
    END {exit bad > 0}' "$TMP/out" && pass || fail "align: piece rows sum to 1"
expect_ok "align words" "$NMT" align -m "$M" --src "$TMP/one.src" --tgt "$TMP/one.tgt" --format tsv \
    --units words
[ "$(head -n 1 "$TMP/out" | cut -f2- | tr '\t' ' ')" = "$(cat "$TMP/one.src") </s>" ] && pass ||
    fail "align --units words: the source words: $(head -n 1 "$TMP/out")"
[ "$(($(wc -l <"$TMP/out") - 2))" -eq "$(($(wc -w <"$TMP/one.tgt") + 1))" ] && pass ||
    fail "align --units words: a row per target word"
awk -F'\t' 'NR > 1 && NF > 1 {s = 0; for (i = 2; i <= NF; i++) s += $i; if (s < 0.999 || s > 1.001) bad++}
    END {exit bad > 0}' "$TMP/out" && pass || fail "align: word rows sum to 1"
expect_ok "align pharaoh" "$NMT" align -m "$M" --src "$TMP/one.src" --tgt "$TMP/one.tgt" --format pharaoh
ns=$(wc -w <"$TMP/one.src")
nt=$(wc -w <"$TMP/one.tgt")
tr ' ' '\n' <"$TMP/out" | awk -F- -v s="$ns" -v t="$nt" 'NF == 2 {n++; if ($1 >= s || $2 >= t) bad++}
    END {exit !(n == t && !bad)}' && pass || fail "pharaoh links words: $(cat "$TMP/out")"
zcat "$TOY/test.src.gz" | head -n 20 >"$TMP/g.src"
zcat "$TOY/test.tgt.gz" | head -n 20 >"$TMP/g.tgt"
head -n 20 "$TOY/test.align" >"$TMP/g.align"
expect_ok "align --gold" "$NMT" align -m "$M" --src "$TMP/g.src" --tgt "$TMP/g.tgt" --gold "$TMP/g.align"
gold_links=$(wc -w <"$TMP/g.align")
tgt_words=$(wc -w <"$TMP/g.tgt")
grep -Eq "^AER [0-9.]+ .*\(20 pairs, $tgt_words model links, $gold_links gold links" "$TMP/out" && pass ||
    fail "align --gold compares words: $(cat "$TMP/out")"
expect_fail "align --gold --units pieces" "cannot be used with --units pieces" \
    "$NMT" align -m "$M" --src "$TMP/g.src" --tgt "$TMP/g.tgt" --gold "$TMP/g.align" --units pieces
expect_fail "align --units bad" "--units" "$NMT" align -m "$M" --src "$TMP/one.src" --units letters
expect_ok "align own translation" "$NMT" align -m "$M" --src "$TMP/one.src" --format json --units words
grep -q '"source": \[' "$TMP/out" && pass || fail "align without --tgt"

# --- nmt compare ----------------------------------------------------------------------
expect_ok "compare" "$NMT" compare "$TMP/run" "$TMP/run" --src "$TMP/v.src" --ref "$TMP/v.tgt" --beam 1 -q
grep -q "^test BLEU (40)" "$TMP/out" && pass || fail "compare: $(head -c 300 "$TMP/out")"

# --- the same corpus gives the same pieces and the same run ------------------------------
for k in 1 2; do
    expect_ok "train again $k" "$NMT" train --arch rnn --src "$TMP/t.src" --tgt "$TMP/t.tgt" --out "$TMP/again$k" \
        --subwords 300 "${SMALL[@]}" --max-steps 3 -q
done
same_data "$TMP/again1/checkpoint.safetensors" "$TMP/again2/checkpoint.safetensors" && pass ||
    fail "the same corpus and seed give the same pieces and weights"

# --- subword sampling: different ids, and an exact resume across epochs -------------------
head -n 200 "$TMP/t.src" >"$TMP/s.src"
head -n 200 "$TMP/t.tgt" >"$TMP/s.tgt"
SAMPLE=(--src "$TMP/s.src" --tgt "$TMP/s.tgt" --spm "$TMP/s.model" "${SMALL[@]}" --save-every 0)
expect_ok "learn for sampling" "$NMT" train --arch rnn --src "$TMP/s.src" --tgt "$TMP/s.tgt" --out "$TMP/learn" \
    --subwords 200 --max-steps 0 -q
"$PY" - "$TMP/learn/checkpoint.safetensors" "$TMP/s.model" <<'EOF' && pass || fail "extract the model"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
b, e = json.loads(raw[8:8 + n])["subwords"]["data_offsets"]
open(sys.argv[2], "wb").write(raw[8 + n + b:8 + n + e])
EOF
expect_ok "sampled straight" "$NMT" train --arch rnn "${SAMPLE[@]}" --out "$TMP/straight" --subword-alpha 0.3 \
    --max-steps 30 --batch-log "$TMP/straight.jsonl" -q
expect_ok "not sampled" "$NMT" train --arch rnn "${SAMPLE[@]}" --out "$TMP/plain" --max-steps 30 \
    --batch-log "$TMP/plain.jsonl" -q
! cmp -s "$TMP/straight.jsonl" "$TMP/plain.jsonl" && pass || fail "sampling changes the pieces"
# 13 batches an epoch: stop in epoch 2, resume into epoch 3
expect_ok "sampled part 1" "$NMT" train --arch rnn "${SAMPLE[@]}" --out "$TMP/resumed" --subword-alpha 0.3 \
    --max-steps 17 -q
expect_ok "sampled part 2" "$NMT" train --resume "$TMP/resumed" --max-steps 30 -q
same_data "$TMP/straight/checkpoint.safetensors" "$TMP/resumed/checkpoint.safetensors" && pass ||
    fail "a resumed sampled run ends with the same weights"
expect_ok "info sampled" "$NMT" info -v "$TMP/resumed/checkpoint.safetensors"
grep -q "train.subword_alpha = 0.3" "$TMP/out" && pass || fail "the checkpoint keeps the alpha"

# --- --spm with a model made by spm_train -------------------------------------------------
if ! command -v spm_train >/dev/null; then
    fail "spm_train not found (Debian package sentencepiece; scripts/deps.sh installs it)"
else
    cat "$TMP/t.src" "$TMP/t.tgt" >"$TMP/both.txt"
    spm_train --input="$TMP/both.txt" --model_prefix="$TMP/nmtids" --vocab_size=250 --pad_id=0 \
        --unk_id=1 --bos_id=2 --eos_id=3 --minloglevel=2 >/dev/null 2>&1 && pass || fail "spm_train"
    expect_ok "train --spm" "$NMT" train --arch rnn --src "$TMP/t.src" --tgt "$TMP/t.tgt" --out "$TMP/spm" \
        --spm "$TMP/nmtids.model" "${SMALL[@]}" --max-steps 3
    grep -q "subwords: SentencePiece unigram model of 250 pieces$" "$TMP/err" && pass ||
        fail "train --spm: $(head -2 "$TMP/err")"
    expect_ok "info --spm model" "$NMT" info "$TMP/spm/checkpoint.safetensors"
    grep -Eq "^units +subwords: SentencePiece unigram, 250 pieces, normalization nmt_nfkc$" "$TMP/out" &&
        pass || fail "info: spm_train's normalization"
    # the stored model is spm_train's, byte for byte
    "$PY" - "$TMP/spm/checkpoint.safetensors" "$TMP/nmtids.model" <<'EOF' && pass || fail "stored as given"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
b, e = json.loads(raw[8:8 + n])["subwords"]["data_offsets"]
sys.exit(raw[8 + n + b:8 + n + e] != open(sys.argv[2], "rb").read())
EOF
    echo "pu babslonk verd" | "$NMT" translate -m "$TMP/spm/checkpoint.safetensors" >"$TMP/out" 2>"$TMP/err" &&
        [ "$(wc -l <"$TMP/out")" -eq 1 ] && pass || fail "translate with an spm_train model: $(cat "$TMP/err")"

    spm_train --input="$TMP/both.txt" --model_prefix="$TMP/default" --vocab_size=250 \
        --minloglevel=2 >/dev/null 2>&1 && pass || fail "spm_train defaults"
    expect_fail "--spm default ids" \
        "default.model: the SentencePiece model has <pad> <unk> <s> </s> at ids -1 0 1 2.*spm_train --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3" \
        "$NMT" train --arch rnn --src "$TMP/t.src" --tgt "$TMP/t.tgt" --out "$TMP/refused" --spm "$TMP/default.model"
    [ ! -e "$TMP/refused" ] && pass || fail "--spm default ids: nothing written"
    spm_train --input="$TMP/both.txt" --model_prefix="$TMP/bpe" --vocab_size=250 --model_type=bpe \
        --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3 --minloglevel=2 >/dev/null 2>&1 && pass || fail "spm_train bpe"
    expect_fail "--subword-alpha with bpe" "samples from a unigram model's segmentations; this SentencePiece model is bpe" \
        "$NMT" train --arch rnn --src "$TMP/t.src" --tgt "$TMP/t.tgt" --out "$TMP/refused" --spm "$TMP/bpe.model" \
        --subword-alpha 0.1
fi

# --- --init-from a subword model keeps its pieces -------------------------------------------
expect_ok "init-from" "$NMT" train --init-from "$TMP/run/best.safetensors" --src "$TMP/s.src" \
    --tgt "$TMP/s.tgt" --out "$TMP/init" --max-steps 2 -v
grep -q "subwords: SentencePiece unigram model of 300 pieces" "$TMP/err" && pass || fail "init-from: pieces"
grep -q "skipped by --max-len 100" "$TMP/err" && pass || fail "init-from: --max-len 100"
cmp -s <(header "$TMP/init/checkpoint.safetensors" 'h["__metadata__"]["src_vocab"]') \
    <(header "$M" 'h["__metadata__"]["src_vocab"]') && pass || fail "init-from: the same pieces"

# --- nmt average keeps the pieces, and refuses models of other pieces --------------------------
expect_ok "average" "$NMT" average "$TMP/again1/checkpoint.safetensors" "$TMP/run/checkpoint.safetensors" \
    -o "$TMP/avg.safetensors"
expect_ok "info average" "$NMT" info "$TMP/avg.safetensors"
grep -Eq "^units +subwords: SentencePiece unigram, 300 pieces" "$TMP/out" && pass || fail "average: pieces kept"
echo "pu babslonk verd" | "$NMT" translate -m "$TMP/avg.safetensors" >"$TMP/out" 2>"$TMP/err" &&
    ! grep -q "▁" "$TMP/out" && pass || fail "translate with an averaged subword model"
expect_ok "train other pieces" "$NMT" train --arch rnn --src "$TMP/t.src" --tgt "$TMP/t.tgt" --out "$TMP/other" \
    --subwords 250 "${SMALL[@]}" --max-steps 1 -q
expect_fail "average of other pieces" "differ in 'src_vocab'" "$NMT" average \
    "$TMP/run/checkpoint.safetensors" "$TMP/other/checkpoint.safetensors" -o "$TMP/avg2.safetensors"

# --- lowercase: pieces learned after lowercasing ---------------------------------------------
zcat "$M30K/train.de.gz" | head -n 300 >"$TMP/m.de"
zcat "$M30K/train.en.gz" | head -n 300 >"$TMP/m.en"
expect_ok "train --lowercase --subwords" "$NMT" train --arch rnn --src "$TMP/m.de" --tgt "$TMP/m.en" --out "$TMP/lc" \
    --subwords 400 --lowercase "${SMALL[@]}" --max-steps 2 -q
[ "$(header "$TMP/lc/checkpoint.safetensors" 'any(c.isupper() for c in h["__metadata__"]["src_vocab"])')" = False ] &&
    pass || fail "lowercased pieces have no capitals"
echo "Ein MANN" | "$NMT" translate -m "$TMP/lc/checkpoint.safetensors" >"$TMP/out" 2>"$TMP/err" &&
    ! grep -q '[A-Z]' "$TMP/out" && pass || fail "a lowercasing subword model writes lowercase"

# --- refused --------------------------------------------------------------------------------
refused() { # refused NAME PATTERN ARGS...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    expect_fail "$name" "$pattern" "$NMT" train --src "$TMP/s.src" --tgt "$TMP/s.tgt" "$@" --out "$TMP/refused"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
refused "--subwords and --spm" "give one" --subwords 100 --spm "$TMP/s.model"
refused "--subwords --min-count" "--min-count does not apply to subwords" --subwords 100 --min-count 2
refused "--spm --max-vocab" "--max-vocab does not apply to subwords" --spm "$TMP/s.model" --max-vocab 50
refused "--subword-alpha alone" "--subword-alpha samples subwords: give --subwords N or --spm FILE" \
    --subword-alpha 0.2
refused "--subwords too many" "--subwords 100000: SentencePiece cannot learn 100000 pieces: Vocabulary size too high \(100000\)\. Please set it to a value <= [0-9]+\." \
    --subwords 100000
refused "--subwords 4" "--subwords: 4 pieces are too few \\(more than 4, or 0 for words\\)" --subwords 4
refused "--subwords -1" "--subwords: -1 is out of range" --subwords -1
refused "--subwords abc" "--subwords: 'abc'" --subwords abc
refused "--subword-alpha -1" "--subword-alpha: -1 is out of range" --subwords 100 --subword-alpha -1
refused "--spm missing" "--spm .*nope.model: No such file" --spm "$TMP/nope.model"
refused "--spm text" "not a SentencePiece model" --spm "$TMP/s.src"
refused "--spm folder" "--spm .*: is a directory, not a SentencePiece model" --spm "$TMP"
refused "--init-from --subwords" "--subwords cannot be used with --init-from" \
    --init-from "$TMP/run/best.safetensors" --subwords 100
refused "--init-from --spm" "--spm cannot be used with --init-from" \
    --init-from "$TMP/run/best.safetensors" --spm "$TMP/s.model"
expect_fail "--resume --subwords" "--subwords cannot be changed on --resume" \
    "$NMT" train --resume "$TMP/run" --subwords 100

# a damaged SentencePiece model inside a model file (its crc fixed, so that
# the damage reaches the loader)
"$PY" - "$M" "$TMP/damaged.safetensors" <<'EOF' && pass || fail "damage the subwords tensor"
import json, struct, sys, zlib
raw = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
b, e = h["subwords"]["data_offsets"]
raw[8 + n + b:8 + n + e] = b"\xff" * (e - b)
crc = "%08x" % (zlib.crc32(bytes(raw[8 + n:])) & 0xFFFFFFFF)
old = ('"crc32":"%s"' % h["__metadata__"]["crc32"]).encode()
i = raw.index(old, 8)
raw[i:i + len(old)] = ('"crc32":"%s"' % crc).encode()
open(sys.argv[2], "wb").write(raw)
EOF
expect_fail "info damaged subwords" "damaged.safetensors: tensor 'subwords': not a SentencePiece model" \
    "$NMT" info "$TMP/damaged.safetensors"
echo "pu" >"$TMP/pu"
expect_fail "translate damaged subwords" "damaged.safetensors: tensor 'subwords'" \
    "$NMT" translate -m "$TMP/damaged.safetensors" -i "$TMP/pu"

# --- the default units: subwords when a side has more than 8000 distinct words -------
# Multi30k (19209 German words) learns 8000 pieces without being asked; the
# toy corpus (227 words), --subwords 0 and --min-count keep words
M30=(--src "$M30K/train.de.gz" --tgt "$M30K/train.en.gz" "${SMALL[@]}" --max-steps 0 --threads 1)
expect_ok "multi30k with default units" "$NMT" train --arch rnn "${M30[@]}" --out "$TMP/auto"
grep -q "^subwords: SentencePiece unigram model of 8000 pieces.*(the default: a side has 19209 distinct words; --subwords 0 for words)" "$TMP/err" &&
    pass || fail "multi30k default units: $(head -2 "$TMP/err")"
[ "$(header "$TMP/auto/checkpoint.safetensors" '"subwords" in h, h["__metadata__"]["train.max_len"]')" = "(True, '100')" ] &&
    pass || fail "multi30k default units: no subwords tensor or max_len not 100"
expect_ok "multi30k --subwords 0" "$NMT" train --arch rnn "${M30[@]}" --subwords 0 --out "$TMP/words0"
expect_ok "multi30k --min-count 1" "$NMT" train --arch rnn "${M30[@]}" --min-count 1 --out "$TMP/words1"
for d in words0 words1; do
    [ "$(header "$TMP/$d/checkpoint.safetensors" '"subwords" in h, h["__metadata__"]["train.max_len"]')" = "(False, '50')" ] &&
        pass || fail "$d: a subwords tensor, or max_len not 50"
    grep -q "^subwords" "$TMP/err" && fail "$d: $(head -1 "$TMP/err")" || pass
done
expect_ok "toy with default units" "$NMT" train --arch rnn --src "$TMP/t.src" --tgt "$TMP/t.tgt" "${SMALL[@]}" \
    --max-steps 0 --out "$TMP/toyauto"
[ "$(header "$TMP/toyauto/checkpoint.safetensors" '"subwords" in h')" = False ] && pass ||
    fail "toy default units: subwords"

finish
