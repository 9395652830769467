# The hostile-input catalogue (issue 9) in one place, over nmt train, score,
# translate and info (and align for model files). Every refusal ends in
# exactly one line on stderr naming what is wrong, a non-zero exit that is not
# a signal, and no output left behind (no --out folder, no -o file, nothing
# on standard output). A 10 MB line is skipped by --max-len or refused; CRLF
# files are accepted and read as the LF ones. A checkpoint write that fails
# (file size limit, full disk, read-only folder) keeps the previous checkpoint
# byte for byte, valid, and ends the run with one clear message.
. "$(dirname "$0")/lib.sh"

# ---- helpers -----------------------------------------------------------------

# one_line NAME: the last command's stderr is one line (a usage error may add
# the hint "Try 'nmt CMD --help' ...").
one_line() {
    [ "$(grep -cv "^Try 'nmt [a-z]* --help'" "$TMP/err")" -eq 1 ] && pass ||
        fail "$1: not one line on stderr: $(head -c 600 "$TMP/err")"
}
# refused NAME PATTERN CMD...: fails with one line matching PATTERN, prints
# nothing on stdout, and leaves neither $TMP/out-dir nor $TMP/out.txt.
refused() {
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/out-dir" "$TMP/out.txt"
    expect_fail "$name" "$pattern" "$@"
    one_line "$name"
    [ ! -s "$TMP/out" ] && pass || fail "$name: printed on stdout: $(head -c 200 "$TMP/out")"
    [ ! -e "$TMP/out-dir" ] && pass || fail "$name: left the output folder: $(ls -A "$TMP/out-dir")"
    [ ! -e "$TMP/out.txt" ] && pass || fail "$name: left an output file"
}
# The data section of a model file (after the header: the tensors).
header_len() { od -An -tu8 -N8 "$1" | tr -d ' '; }
# flip_byte FILE OFFSET: replaces the byte at OFFSET by another value.
flip_byte() {
    local old
    old=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf %o $(((old + 1) % 256)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# no_temp_files DIR NAME: a failed write left no temporary file behind.
no_temp_files() {
    local extra
    extra=$(ls -A "$1" | grep -Ev '^(checkpoint\.safetensors|best\.safetensors|log\.tsv)$')
    [ -z "$extra" ] && pass || fail "$2: files left behind: $extra"
}

# ---- fixtures ----------------------------------------------------------------
SMALL=(--emb 8 --hidden 8 --att-dim 8 --out-dim 8 --batch-size 2 --seed 3 -q)
printf 'ein Hund läuft .\neine Katze schläft .\nzwei Hunde spielen im Park .\nein Mann liest ein Buch .\n' >"$TMP/de"
printf 'a dog runs .\na cat sleeps .\ntwo dogs play in the park .\na man reads a book .\n' >"$TMP/en"
expect_ok "fixture model" "$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" "${SMALL[@]}" --max-steps 2 \
    --save-every 1 --out "$TMP/run"
MODEL=$TMP/run/checkpoint.safetensors
cp "$MODEL" "$TMP/model.safetensors"
[ -s "$MODEL" ] && pass || fail "fixture model not written"

mkdir -p "$TMP/adir" "$TMP/nockpt"
: >"$TMP/empty"
printf 'a\nb\nc\n' >"$TMP/three"
printf 'a\nb\n' >"$TMP/two"
printf 'gut\nbad \xff\xfe here\n' >"$TMP/badutf8"
printf 'ok\nnul \000 here\n' >"$TMP/nul"
printf 'x\ny\n' >"$TMP/two.en"
for i in $(seq 1 400); do echo "line $i of a text that is long enough to compress into blocks $((i * i))"; done >"$TMP/long.txt"
gzip -c "$TMP/long.txt" >"$TMP/long.gz"
size=$(wc -c <"$TMP/long.gz")
head -c $((size / 2)) "$TMP/long.gz" >"$TMP/trunc.gz"
cp "$TMP/long.gz" "$TMP/corrupt.gz"
for off in $((size / 3)) $((size / 3 + 1)) $((size / 3 + 2)) $((size / 3 + 3)); do flip_byte "$TMP/corrupt.gz" $off; done
cp "$TMP/long.gz" "$TMP/badcrc.gz"
flip_byte "$TMP/badcrc.gz" $((size - 6)) # the CRC-32 in the gzip trailer
sed 's/^/x /' "$TMP/long.txt" >"$TMP/long.en"
: >"$TMP/afile"

# ---- bad corpora: train, score and translate --------------------------------
corpus_case() { # corpus_case NAME PATTERN SRC TGT
    local name=$1 pattern=$2 src=$3 tgt=$4
    refused "train: $name" "$pattern" "$NMT" train --arch rnn --src "$src" --tgt "$tgt" "${SMALL[@]}" --out "$TMP/out-dir"
    refused "score: $name" "$pattern" "$NMT" score -m "$MODEL" --src "$src" --tgt "$tgt"
    refused "train --valid-*: $name" "$pattern" "$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" \
        --valid-src "$src" --valid-tgt "$tgt" "${SMALL[@]}" --out "$TMP/out-dir"
}
corpus_case "missing file" "nope\\.txt: .*No such file" "$TMP/nope.txt" "$TMP/three"
corpus_case "directory as a file" "adir.*directory" "$TMP/adir" "$TMP/three"
corpus_case "empty corpus" "empty.*empty corpus" "$TMP/empty" "$TMP/empty"
corpus_case "differing line counts" "three:3: .*two.*same number of lines" "$TMP/three" "$TMP/two"
corpus_case "truncated gzip" "trunc\\.gz:[0-9]+: truncated gzip" "$TMP/trunc.gz" "$TMP/long.en"
corpus_case "corrupt gzip" "corrupt\\.gz:[0-9]+: corrupt gzip" "$TMP/corrupt.gz" "$TMP/long.en"
corpus_case "gzip crc mismatch" "badcrc\\.gz:[0-9]+: corrupt gzip.*(check|crc)" "$TMP/badcrc.gz" "$TMP/long.en"
corpus_case "invalid UTF-8" "badutf8:2: invalid UTF-8" "$TMP/badutf8" "$TMP/two.en"
corpus_case "NUL byte" "nul:2: NUL byte" "$TMP/nul" "$TMP/two.en"

trans_case() { # trans_case NAME PATTERN INPUT
    refused "translate: $1" "$2" "$NMT" translate -q -m "$MODEL" -i "$3" -o "$TMP/out.txt"
}
trans_case "missing file" "nope\\.txt: .*No such file" "$TMP/nope.txt"
trans_case "directory as a file" "adir.*directory" "$TMP/adir"
trans_case "truncated gzip" "trunc\\.gz:[0-9]+: truncated gzip" "$TMP/trunc.gz"
trans_case "corrupt gzip" "corrupt\\.gz:[0-9]+: corrupt gzip" "$TMP/corrupt.gz"
trans_case "invalid UTF-8" "badutf8:2: invalid UTF-8" "$TMP/badutf8"
trans_case "NUL byte" "nul:2: NUL byte" "$TMP/nul"
# from standard input too
rm -f "$TMP/out.txt"
expect_fail "translate: NUL byte on stdin" "<stdin>:2: NUL byte" \
    bash -c '"$1" translate -q -m "$2" -o "$3" <"$4"' - "$NMT" "$MODEL" "$TMP/out.txt" "$TMP/nul"
one_line "translate: NUL byte on stdin"
[ ! -e "$TMP/out.txt" ] && pass || fail "translate from stdin: left an output file"
# an empty input is no error: nothing to translate, an empty output
expect_ok "translate: empty input" "$NMT" translate -q -m "$MODEL" -i "$TMP/empty" -o "$TMP/out.txt"
[ -e "$TMP/out.txt" ] && [ ! -s "$TMP/out.txt" ] && pass || fail "translate of nothing: not an empty file"

# ---- a 10 MB line without a newline ------------------------------------------
# 2 million tokens on the last line of the source, no '\n' after it.
{ cat "$TMP/de"; head -c 10000000 /dev/zero | tr '\0' 'a' | sed 's/aaaaa/aaaa /g'; } >"$TMP/huge.de"
{ cat "$TMP/en"; printf 'a long one'; } >"$TMP/huge.en"
rm -rf "$TMP/huge-run"
expect_ok "train: 10 MB line skipped by --max-len" "$NMT" train --arch rnn --src "$TMP/huge.de" --tgt "$TMP/huge.en" \
    --emb 8 --hidden 8 --att-dim 8 --out-dim 8 --max-len 20 --max-steps 1 --out "$TMP/huge-run"
grep -q "1 skipped by --max-len 20" "$TMP/err" && pass || fail "10 MB line: skip not reported: $(cat "$TMP/err")"
[ -s "$TMP/huge-run/checkpoint.safetensors" ] && pass || fail "10 MB line: no checkpoint"
refused "train: 10 MB line as validation" "huge\\.de:5: .*2000000 tokens is too long" "$NMT" train --arch rnn \
    --src "$TMP/de" --tgt "$TMP/en" --valid-src "$TMP/huge.de" --valid-tgt "$TMP/huge.en" "${SMALL[@]}" \
    --out "$TMP/out-dir"
refused "score: 10 MB line" "huge\\.de:5: .*2000000 tokens is too long" "$NMT" score -m "$MODEL" \
    --src "$TMP/huge.de" --tgt "$TMP/huge.en"
refused "translate: 10 MB line" "huge\\.de: line 5: .*2000000 tokens is too long" "$NMT" translate -q \
    -m "$MODEL" -i "$TMP/huge.de" -o "$TMP/out.txt"
# a 10 MB line of a single word is one token: read, not refused
{ cat "$TMP/de"; head -c 10000000 /dev/zero | tr '\0' 'a'; } >"$TMP/word.de"
expect_ok "score: a 10 MB word" "$NMT" score -m "$MODEL" --src "$TMP/word.de" --tgt "$TMP/huge.en"
grep -Eq "^sentences +5$" "$TMP/out" && pass || fail "10 MB word: $(cat "$TMP/out")"

# ---- CRLF is accepted and reads as LF -----------------------------------------
sed 's/$/\r/' "$TMP/de" >"$TMP/crlf.de"
sed 's/$/\r/' "$TMP/en" >"$TMP/crlf.en"
expect_ok "score LF" "$NMT" score -m "$MODEL" --src "$TMP/de" --tgt "$TMP/en"
cp "$TMP/out" "$TMP/score-lf"
expect_ok "score CRLF" "$NMT" score -m "$MODEL" --src "$TMP/crlf.de" --tgt "$TMP/crlf.en"
cmp -s "$TMP/out" "$TMP/score-lf" && pass || fail "CRLF scores differ: $(cat "$TMP/out") vs $(cat "$TMP/score-lf")"
expect_ok "translate CRLF" "$NMT" translate -q -m "$MODEL" -i "$TMP/crlf.de" -o "$TMP/crlf.out"
expect_ok "translate LF" "$NMT" translate -q -m "$MODEL" -i "$TMP/de" -o "$TMP/lf.out"
cmp -s "$TMP/crlf.out" "$TMP/lf.out" && pass || fail "CRLF translations differ"
grep -q $'\r' "$TMP/crlf.out" && fail "a CR in the translations" || pass
rm -rf "$TMP/crlf-run" "$TMP/lf-run"
expect_ok "train CRLF" "$NMT" train --arch rnn --src "$TMP/crlf.de" --tgt "$TMP/crlf.en" "${SMALL[@]}" --max-steps 2 \
    --out "$TMP/crlf-run"
expect_ok "train LF" "$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" "${SMALL[@]}" --max-steps 2 --out "$TMP/lf-run"
n=$(header_len "$TMP/lf-run/checkpoint.safetensors")
cmp -s <(tail -c +$((9 + n)) "$TMP/lf-run/checkpoint.safetensors") \
    <(tail -c +$((9 + $(header_len "$TMP/crlf-run/checkpoint.safetensors"))) "$TMP/crlf-run/checkpoint.safetensors") &&
    pass || fail "CRLF training gave other weights than LF"

# ---- bad option values ---------------------------------------------------------
TRAIN=("$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" --out "$TMP/out-dir")
refused "train --emb 0" "--emb: '?0'? is out of range" "${TRAIN[@]}" --emb 0
refused "train --hidden -5" "--hidden: '?-5'? is out of range" "${TRAIN[@]}" --hidden -5
refused "train --batch-size abc" "--batch-size: 'abc' is not" "${TRAIN[@]}" --batch-size abc
refused "train --batch-size 0" "--batch-size: '?0'? is out of range" "${TRAIN[@]}" --batch-size 0
refused "train --att-dim 1.5" "--att-dim: '1\\.5' is not" "${TRAIN[@]}" --att-dim 1.5
refused "train --out-dim ''" "--out-dim: '' is not" "${TRAIN[@]}" --out-dim ''
refused "train --max-len 0" "--max-len: '?0'? is out of range" "${TRAIN[@]}" --max-len 0
refused "train --max-vocab -1" "--max-vocab: '?-1'? is out of range" "${TRAIN[@]}" --max-vocab -1
refused "train --epochs 12x" "--epochs: '12x' is not" "${TRAIN[@]}" --epochs 12x
refused "train --lr nan" "--lr: 'nan'" "${TRAIN[@]}" --lr nan
refused "train --lr -1" "--lr: '?-1'? is out of range" "${TRAIN[@]}" --lr -1
refused "train --dropout 1.5" "--dropout: '?1\\.5'? is out of range" "${TRAIN[@]}" --dropout 1.5
refused "train --threads 0" "--threads: '?0'? is out of range" "${TRAIN[@]}" --threads 0
refused "train --seed x" "--seed: 'x' is not" "${TRAIN[@]}" --seed x
refused "train --hidden 99999999999999999999" "--hidden: '?99999999999999999999'? is out of range" "${TRAIN[@]}" \
    --hidden 99999999999999999999
refused "train --cell tree" "--cell: unknown value 'tree'" "${TRAIN[@]}" --cell tree
refused "train --attention luong" "--attention: unknown value 'luong'" "${TRAIN[@]}" --attention luong
refused "train --optimizer rmsprop" "--optimizer: unknown value 'rmsprop'" "${TRAIN[@]}" --optimizer rmsprop
refused "train --subwords 3" "--subwords: 3 pieces are too few \\(more than 4, or 0 for words\\)" \
    "${TRAIN[@]}" --subwords 3
refused "train --subwords -1" "--subwords: '?-1'? is out of range" "${TRAIN[@]}" --subwords -1
refused "train --subwords 8k" "--subwords: '8k' is not" "${TRAIN[@]}" --subwords 8k
refused "train --subwords 99999999999" "--subwords: '?99999999999'? is out of range" "${TRAIN[@]}" \
    --subwords 99999999999
refused "train --subword-alpha nan" "--subword-alpha: 'nan'" "${TRAIN[@]}" --subwords 20 --subword-alpha nan
refused "train --subword-alpha -0.5" "--subword-alpha: '?-0\\.5'? is out of range" "${TRAIN[@]}" \
    --subwords 20 --subword-alpha -0.5
refused "train --spm missing" "--spm .*nope\\.model: No such file" "${TRAIN[@]}" --spm "$TMP/nope.model"
refused "train --spm a folder" "--spm .*adir: is a directory" "${TRAIN[@]}" --spm "$TMP/adir"
refused "train --spm empty" "--spm .*empty: not a SentencePiece model \\(0 bytes" "${TRAIN[@]}" --spm "$TMP/empty"
refused "train --spm a text" "--spm .*long\\.txt: not a SentencePiece model" "${TRAIN[@]}" --spm "$TMP/long.txt"
refused "train --spm a model file" "--spm .*model\\.safetensors: not a SentencePiece model" "${TRAIN[@]}" \
    --spm "$TMP/model.safetensors"
refused "train --subwords beyond the corpus" "SentencePiece cannot learn 5000 pieces: Vocabulary size too high" \
    "${TRAIN[@]}" --subwords 5000
# absurd sizes are refused before anything is allocated: without sanitizers
# and valgrind (which need the address space) under a 1 GB address space limit
absurd=(--emb 65536 --hidden 65536 --att-dim 65536 --out-dim 65536 --batch-size 65536)
if [ -z "${NMT_SANITIZED:-}" ] && [ -z "${NMT_VALGRIND:-}" ]; then
    refused "train: absurd sizes (1 GB limit)" "GiB" bash -c 'ulimit -v 1000000; exec "$@"' - "${TRAIN[@]}" "${absurd[@]}"
else
    refused "train: absurd sizes" "GiB" "${TRAIN[@]}" "${absurd[@]}"
fi
refused "score --batch-size 0" "--batch-size: '?0'? is out of range" "$NMT" score -m "$MODEL" \
    --src "$TMP/de" --tgt "$TMP/en" --batch-size 0
refused "score --batch-size -1" "--batch-size: '?-1'? is out of range" "$NMT" score -m "$MODEL" \
    --src "$TMP/de" --tgt "$TMP/en" --batch-size -1
refused "score --threads many" "--threads: 'many' is not" "$NMT" score -m "$MODEL" \
    --src "$TMP/de" --tgt "$TMP/en" --threads many
TRANSLATE=("$NMT" translate -q -m "$MODEL" -i "$TMP/de" -o "$TMP/out.txt")
refused "translate --beam 0" "--beam: '?0'? is out of range" "${TRANSLATE[@]}" --beam 0
refused "translate --beam -2" "--beam: '?-2'? is out of range" "${TRANSLATE[@]}" --beam -2
refused "translate --beam five" "--beam: 'five' is not" "${TRANSLATE[@]}" --beam five
refused "translate --n-best above the beam" "--n-best" "${TRANSLATE[@]}" --beam 2 --n-best 3
refused "translate --alpha -1" "--alpha: '?-1'? is out of range" "${TRANSLATE[@]}" --alpha -1
refused "translate --max-ratio inf" "--max-ratio: 'inf'" "${TRANSLATE[@]}" --max-ratio inf
# numbers that strtod takes but that are not what was written: one too near
# 0 for its type (it would be 0, or lose its digits) and one beyond a double
refused "translate --alpha 1e-400" "--alpha: 1e-400 is too small: write 0, or a number of at least" \
    "${TRANSLATE[@]}" --alpha 1e-400
refused "translate --alpha 1e-40 (below a float's least normal)" "--alpha: 1e-40 is too small" \
    "${TRANSLATE[@]}" --alpha 1e-40
refused "translate --max-ratio 1e400" "--max-ratio: 1e400 is out of range \\(0 to 1000\\)" \
    "${TRANSLATE[@]}" --max-ratio 1e400
refused "train --lr 1e-320" "--lr: 1e-320 is too small" "${TRAIN[@]}" --lr 1e-320
refused "train --dropout 1e-300" "--dropout: 1e-300 is too small" "${TRAIN[@]}" --dropout 1e-300
expect_ok "translate --alpha 0e-400 (a zero)" "${TRANSLATE[@]}" --alpha 0e-400
refused "translate --batch-size 0" "--batch-size: '?0'? is out of range" "${TRANSLATE[@]}" --batch-size 0
refused "translate: absurd beam x batch" "too many hypotheses" "${TRANSLATE[@]}" --beam 1000 --batch-size 4096
refused "translate without a model" "--model is required" "$NMT" translate -q -i "$TMP/de" -o "$TMP/out.txt"

# ---- outputs that cannot be written ----------------------------------------------
refused "train --out under a file" "afile/sub.*Not a directory" "$NMT" train --arch rnn --src "$TMP/de" \
    --tgt "$TMP/en" "${SMALL[@]}" --out "$TMP/afile/sub"
refused "train --out is a file" "afile.*not a folder" "$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" \
    "${SMALL[@]}" --out "$TMP/afile"
[ -f "$TMP/afile" ] && [ ! -s "$TMP/afile" ] && pass || fail "train --out FILE changed the file"
refused "translate -o under a file" "afile/x\\.txt: cannot write: Not a directory" "$NMT" translate -q \
    -m "$MODEL" -i "$TMP/de" -o "$TMP/afile/x.txt"
refused "translate --alignments under a file" "afile/a\\.json: cannot write" "$NMT" translate -q \
    -m "$MODEL" -i "$TMP/de" -o "$TMP/out.txt" --alignments "$TMP/afile/a.json"
refused "train --out holds a run" "already holds a run" "$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" \
    "${SMALL[@]}" --out "$TMP/run"

# ---- outputs that fail while being written ------------------------------------------
# past a file size limit (SIGXFSZ is ignored: the write fails, the program says
# so) and to a full device; a failed -o file is never made. 3000 lines pass the
# 1 KB limit even when the model ends every translation at once.
for i in $(seq 1 3000); do echo "ein Hund läuft ."; done >"$TMP/many.de"
sed 's/.*/a dog runs ./' "$TMP/many.de" >"$TMP/many.en"
limited() { bash -c 'ulimit -f 1; exec "$@"' - "$@"; }
refused "translate -o past a file size limit" "out\\.txt: write failed" limited "$NMT" translate -q \
    -m "$MODEL" -i "$TMP/many.de" -o "$TMP/out.txt"
refused "translate --alignments past a file size limit" "a\\.json: write failed" limited "$NMT" translate -q \
    -m "$MODEL" -i "$TMP/many.de" -o "$TMP/out.txt" --alignments "$TMP/a.json"
[ ! -e "$TMP/a.json" ] && pass || fail "a failed --alignments file was left"
to_full() { "$@" >/dev/full; }
refused "translate to a full device" "standard output: write failed" to_full "$NMT" translate -q \
    -m "$MODEL" -i "$TMP/many.de"
refused "score to a full device" "standard output: write failed" to_full "$NMT" score -m "$MODEL" \
    --src "$TMP/many.de" --tgt "$TMP/many.en"
refused "info to a full device" "standard output: write failed" to_full "$NMT" info -v "$MODEL"

# ---- --resume of a folder with no (good) checkpoint --------------------------------
refused "resume: no checkpoint" "nockpt: no checkpoint" "$NMT" train --resume "$TMP/nockpt"
refused "resume: missing folder" "nope-dir: no checkpoint" "$NMT" train --resume "$TMP/nope-dir"
refused "resume: a file" "afile: no checkpoint" "$NMT" train --resume "$TMP/afile"
[ "$(ls -A "$TMP/nockpt")" = "" ] && pass || fail "resume of an empty folder wrote into it"

# ---- hostile model files: info, score, translate, train --init-from and --resume -------
hsize=$(header_len "$TMP/model.safetensors")
fsize=$(wc -c <"$TMP/model.safetensors")
mkdir -p "$TMP/bad"
head -c $((fsize - 100)) "$TMP/model.safetensors" >"$TMP/bad/truncated.safetensors"
head -c 5 "$TMP/model.safetensors" >"$TMP/bad/stub.safetensors"
{ printf '\377\377\377\000\000\000\000\000'; tail -c +9 "$TMP/model.safetensors"; } >"$TMP/bad/beyond.safetensors"
cp "$TMP/model.safetensors" "$TMP/bad/malformed.safetensors"
printf '[' | dd of="$TMP/bad/malformed.safetensors" bs=1 seek=8 conv=notrunc status=none
# the settings say hidden 9, the tensors are of hidden 8 (the crc covers the data only)
{ head -c $((8 + hsize)) "$TMP/model.safetensors" | LC_ALL=C sed 's/"hidden":"8"/"hidden":"9"/'
  tail -c +$((9 + hsize)) "$TMP/model.safetensors"; } >"$TMP/bad/shapes.safetensors"
cmp -s "$TMP/bad/shapes.safetensors" "$TMP/model.safetensors" && fail "shapes case did not change the file" || pass
[ "$(wc -c <"$TMP/bad/shapes.safetensors")" = "$fsize" ] && pass || fail "shapes case changed the size"
cp "$TMP/model.safetensors" "$TMP/bad/crc.safetensors"
flip_byte "$TMP/bad/crc.safetensors" $((fsize - 1))
model_case() { # model_case NAME FILE PATTERN: PATTERN follows the file's name
    local name=$1 file=$2 pattern=$3 base
    base=$(basename "$file" | sed 's/\./\\./g')
    refused "info: $name" "$base: $pattern" "$NMT" info "$file"
    refused "score: $name" "$base: $pattern" "$NMT" score -m "$file" --src "$TMP/de" --tgt "$TMP/en"
    refused "translate: $name" "$base: $pattern" "$NMT" translate -q -m "$file" -i "$TMP/de" -o "$TMP/out.txt"
    refused "align: $name" "$base: $pattern" "$NMT" align -m "$file" --src "$TMP/de" --tgt "$TMP/en" \
        -o "$TMP/out.txt"
    refused "train --init-from: $name" "$base: $pattern" "$NMT" train --init-from "$file" --src "$TMP/de" \
        --tgt "$TMP/en" -q --out "$TMP/out-dir"
    [ -e "$file" ] || return 0 # a missing checkpoint is the --resume case above
    rm -rf "$TMP/resume-bad"
    mkdir -p "$TMP/resume-bad"
    cp "$file" "$TMP/resume-bad/checkpoint.safetensors"
    expect_fail "train --resume: $name" "checkpoint\\.safetensors: $pattern" "$NMT" train --resume "$TMP/resume-bad" -q
    one_line "train --resume: $name"
    cmp -s "$file" "$TMP/resume-bad/checkpoint.safetensors" && pass ||
        fail "train --resume: $name: the checkpoint was changed"
    [ "$(ls -A "$TMP/resume-bad")" = checkpoint.safetensors ] && pass ||
        fail "train --resume: $name: wrote $(ls -A "$TMP/resume-bad")"
}
model_case "missing model" "$TMP/bad/nope.safetensors" ".*No such file"
model_case "truncated model" "$TMP/bad/truncated.safetensors" ".*(outside the data|truncated)"
model_case "5-byte model" "$TMP/bad/stub.safetensors" "truncated"
model_case "header length beyond the file" "$TMP/bad/beyond.safetensors" ".*beyond the end of the file"
model_case "malformed header" "$TMP/bad/malformed.safetensors" "malformed header"
model_case "shapes that disagree" "$TMP/bad/shapes.safetensors" ".*has shape \\[32, 8\\] but the settings.*need \\[36, 8\\]"
model_case "crc mismatch" "$TMP/bad/crc.safetensors" "crc32 mismatch"
# settings in the metadata (not covered by the crc32) that the command line
# would refuse: a resume refuses them too
{ head -c $((8 + hsize)) "$TMP/model.safetensors" | LC_ALL=C sed 's/"train\.dropout_enc":"[0-9.]*"/"train.dropout_enc":"1"/'
  tail -c +$((9 + hsize)) "$TMP/model.safetensors"; } >"$TMP/bad/dropout.safetensors"
hl=$(( $(wc -c <"$TMP/bad/dropout.safetensors") - fsize + hsize ))
printf "$(printf '\\%03o' $((hl & 255)) $((hl >> 8 & 255)) 0 0 0 0 0 0)" |
    dd of="$TMP/bad/dropout.safetensors" bs=1 conv=notrunc status=none
rm -rf "$TMP/resume-bad" && mkdir -p "$TMP/resume-bad"
cp "$TMP/bad/dropout.safetensors" "$TMP/resume-bad/checkpoint.safetensors"
expect_fail "train --resume: dropout 1 in the checkpoint" "checkpoint: bad value '1' for 'train\\.dropout_enc'" \
    "$NMT" train --resume "$TMP/resume-bad" -q
one_line "train --resume: dropout 1 in the checkpoint"
cmp -s "$TMP/bad/dropout.safetensors" "$TMP/resume-bad/checkpoint.safetensors" && pass ||
    fail "train --resume: dropout 1: the checkpoint was changed"
# a subword model whose SentencePiece model is damaged: the crc fixed, so
# that the damage reaches the loader (damage_subwords FILE OUT HOW)
expect_ok "fixture subword model" "$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" "${SMALL[@]}" --max-steps 1 \
    --subwords 40 --out "$TMP/sw-run"
damage_subwords() {
    "${NMT_PYTHON:-python3}" - "$@" <<'PY'
import json, re, struct, sys, zlib
src, out, how = sys.argv[1:4]
raw = bytearray(open(src, "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
b, e = h["subwords"]["data_offsets"]
sw = 8 + n + b
if how == "garbage":
    raw[sw:8 + n + e] = bytes((i * 37) & 0xFF for i in range(e - b))
elif how == "piece":  # a piece renamed, same length: the vocabularies disagree
    i = sw + re.search(b"\xe2\x96\x81[a-z]", bytes(raw[sw:8 + n + e])).start()
    raw[i + 3] = ord("~")
crc = "%08x" % (zlib.crc32(bytes(raw[8 + n:])) & 0xFFFFFFFF)
old = ('"crc32":"%s"' % h["__metadata__"]["crc32"]).encode()
i = raw.index(old, 8)
raw[i:i + len(old)] = ('"crc32":"%s"' % crc).encode()
open(out, "wb").write(raw)
PY
}
damage_subwords "$TMP/sw-run/checkpoint.safetensors" "$TMP/bad/sw-garbage.safetensors" garbage && pass ||
    fail "damage: garbage"
damage_subwords "$TMP/sw-run/checkpoint.safetensors" "$TMP/bad/sw-piece.safetensors" piece && pass ||
    fail "damage: piece"
model_case "damaged subwords" "$TMP/bad/sw-garbage.safetensors" "tensor 'subwords': not a SentencePiece model"
model_case "subwords that disagree with the vocabularies" "$TMP/bad/sw-piece.safetensors" \
    "src_vocab token [0-9]+ is '.*' but the subword model's piece [0-9]+ is '.*' \\(they must be the same\\)"
# a flipped byte in the subwords tensor without a fixed crc: the crc catches it
cp "$TMP/sw-run/checkpoint.safetensors" "$TMP/bad/sw-flip.safetensors"
flip_byte "$TMP/bad/sw-flip.safetensors" $(($(wc -c <"$TMP/bad/sw-flip.safetensors") - 20))
model_case "flipped byte in the subwords" "$TMP/bad/sw-flip.safetensors" "crc32 mismatch"
# numbers that are not numbers, with the crc fixed (a file written with a NaN
# has the crc of its NaN): set_number FILE OUT TENSOR INDEX VALUE puts VALUE
# (a float: nan, inf, -inf, 3e38) at INDEX of TENSOR (-1: its last number;
# "*": every one; TENSOR "LAST": the file's last tensor)
set_number() {
    "${NMT_PYTHON:-python3}" - "$@" <<'PY'
import json, struct, sys, zlib
src, out, name, index, value = sys.argv[1:6]
raw = bytearray(open(src, "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
if name == "LAST":
    name = max((k for k in h if k != "__metadata__"), key=lambda k: h[k]["data_offsets"][0])
b, e = h[name]["data_offsets"]
count = (e - b) // 4
for i in (range(count) if index == "*" else [int(index) % count]):
    struct.pack_into("<f", raw, 8 + n + b + 4 * i, float(value))
crc = "%08x" % (zlib.crc32(bytes(raw[8 + n:])) & 0xFFFFFFFF)
old = ('"crc32":"%s"' % h["__metadata__"]["crc32"]).encode()
i = raw.index(old, 8)
raw[i:i + len(old)] = ('"crc32":"%s"' % crc).encode()
open(out, "wb").write(raw)
print(name)
PY
}
set_number "$MODEL" "$TMP/bad/nan.safetensors" att.v 0 nan >/dev/null && pass || fail "set_number nan"
model_case "a NaN in the first number of att.v" "$TMP/bad/nan.safetensors" \
    "tensor 'att\\.v' holds NaN at index 0: every number in a model file must be finite"
set_number "$MODEL" "$TMP/bad/inf.safetensors" out.b -1 inf >/dev/null && pass || fail "set_number inf"
model_case "+Inf in the last number of the last model tensor" "$TMP/bad/inf.safetensors" \
    "tensor 'out\\.b' holds \\+Inf at index [0-9]+: every number"
set_number "$MODEL" "$TMP/bad/emb.safetensors" src_emb 9 -inf >/dev/null && pass || fail "set_number -inf"
model_case "-Inf inside a matrix" "$TMP/bad/emb.safetensors" \
    "tensor 'src_emb' holds -Inf at index 9 \\(row 1, column 1\\)"
# in the checkpoint's last tensor, an optimizer moment: a resume (and info,
# which reads the whole file) refuses it; translating and scoring never read
# the moments, and go on
last=$(set_number "$MODEL" "$TMP/bad/moment.safetensors" LAST -1 nan)
case $last in adam.*) pass ;; *) fail "the checkpoint's last tensor is '$last', not a moment" ;; esac
lastre=$(printf '%s' "$last" | sed 's/\./\\./g')
refused "info: a NaN in a moment" "moment\\.safetensors: tensor '$lastre' holds NaN" "$NMT" info \
    "$TMP/bad/moment.safetensors"
rm -rf "$TMP/resume-bad" && mkdir -p "$TMP/resume-bad"
cp "$TMP/bad/moment.safetensors" "$TMP/resume-bad/checkpoint.safetensors"
expect_fail "train --resume: a NaN in a moment" \
    "checkpoint\\.safetensors: tensor '$lastre' holds NaN at index [0-9]+: every number" \
    "$NMT" train --resume "$TMP/resume-bad" -q
one_line "train --resume: a NaN in a moment"
[ "$(ls -A "$TMP/resume-bad")" = checkpoint.safetensors ] && pass ||
    fail "train --resume: a NaN in a moment: wrote $(ls -A "$TMP/resume-bad")"
expect_ok "translate: a NaN in a moment" "$NMT" translate -q -m "$TMP/bad/moment.safetensors" -i "$TMP/de"
expect_ok "score: a NaN in a moment" "$NMT" score -m "$TMP/bad/moment.safetensors" --src "$TMP/de" \
    --tgt "$TMP/en"
# finite numbers so large that the first product overflows (every output
# weight 3e38): the file loads, and each command that runs the model refuses
# it when the outputs are not finite, naming the model, rather than print a
# translation of NaN scores (a word over and over, or empty lines)
set_number "$MODEL" "$TMP/bad/huge.safetensors" tgt_emb '*' 3e38 >/dev/null && pass || fail "set_number 3e38"
expect_ok "info: weights of 3e38" "$NMT" info "$TMP/bad/huge.safetensors"
overflow="huge\\.safetensors: the (model's log-probabilities are|log-probability of line 1 of .*de is) not finite"
refused "translate: weights that overflow" "$overflow" "$NMT" translate -q -m "$TMP/bad/huge.safetensors" \
    -i "$TMP/de" -o "$TMP/out.txt"
refused "translate --beam 3 to stdout: weights that overflow" "$overflow" "$NMT" translate -q \
    -m "$TMP/bad/huge.safetensors" -i "$TMP/de" --beam 3
refused "score: weights that overflow" "$overflow" "$NMT" score -m "$TMP/bad/huge.safetensors" \
    --src "$TMP/de" --tgt "$TMP/en"
refused "score --per-sentence: weights that overflow" "$overflow" "$NMT" score --per-sentence \
    -m "$TMP/bad/huge.safetensors" --src "$TMP/de" --tgt "$TMP/en"
refused "align: weights that overflow" "$overflow" "$NMT" align -m "$TMP/bad/huge.safetensors" \
    --src "$TMP/de" --tgt "$TMP/en" -o "$TMP/out.txt"
refused "align, translating: weights that overflow" "$overflow" "$NMT" align \
    -m "$TMP/bad/huge.safetensors" --src "$TMP/de"
refused "info: a directory" "adir.*directory" "$NMT" info "$TMP/adir"
refused "score: a directory as model" "adir.*directory" "$NMT" score -m "$TMP/adir" --src "$TMP/de" --tgt "$TMP/en"
refused "translate: a corpus as model" "de: " "$NMT" translate -q -m "$TMP/de" -i "$TMP/de" -o "$TMP/out.txt"

# ---- a checkpoint write that fails -------------------------------------------------
# check_kept NAME DIR BEFORE: the checkpoint is byte-identical to BEFORE and loads.
check_kept() {
    cmp -s "$3" "$2/checkpoint.safetensors" && pass || fail "$1: the checkpoint changed"
    "$NMT" info "$2/checkpoint.safetensors" >/dev/null 2>&1 && pass || fail "$1: the kept checkpoint does not load"
    no_temp_files "$2" "$1"
}
# (a) a file size limit below the checkpoint's size: SIGXFSZ is ignored, so the
# write fails with EFBIG and the run ends with a message instead of a signal
cp -r "$TMP/run" "$TMP/fsize"
cp "$TMP/fsize/checkpoint.safetensors" "$TMP/fsize.before"
kb=$(($(wc -c <"$TMP/fsize.before") / 1024 / 2))
expect_fail "file size limit" "checkpoint\\.safetensors.*(File too large|too large).*is kept" \
    bash -c 'ulimit -f "$1"; shift; exec "$@"' - "$kb" "$NMT" train --resume "$TMP/fsize" --max-steps 4 -q
one_line "file size limit"
check_kept "file size limit" "$TMP/fsize" "$TMP/fsize.before"

# (b) a full disk and (c) a read-only folder need root: tests/cli/diskfull.sh

finish
