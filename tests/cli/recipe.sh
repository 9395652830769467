# The training recipe's options from the command line: --tied-embeddings,
# --label-smoothing and the dropout sites (--dropout for all, --dropout-emb,
# --dropout-enc, --dropout-out for one each): help, refused values, what the
# files say, exact resume, and that log.tsv reports the plain loss.
. "$(dirname "$0")/lib.sh"

M30K=${NMT_CORPORA:?}/multi30k

header_of() { # the JSON header
    local n
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    head -c $((8 + n)) "$1" | tail -c "$n"
}
meta_of() { # meta_of FILE KEY: a metadata value
    header_of "$1" | grep -o "\"$2\": *\"[^\"]*\"" | sed 's/.*: *"\(.*\)"/\1/'
}

zcat "$M30K/train.de.gz" | head -n 300 >"$TMP/s.de"
zcat "$M30K/train.en.gz" | head -n 300 >"$TMP/s.en"
head -n 4 "$TMP/s.de" >"$TMP/four.de"
head -n 4 "$TMP/s.en" >"$TMP/four.en"
SMALL=(--emb 16 --hidden 16 --att-dim 16 --out-dim 16 --batch-size 16 --max-len 30 --threads 1)

# --- help and refused values ---------------------------------------------------
expect_ok "help" "$NMT" train --help
for opt in tied-embeddings label-smoothing dropout dropout-emb dropout-enc dropout-out; do
    grep -q -- "--$opt " "$TMP/out" && pass || fail "help lacks --$opt"
done
refused() { # refused NAME PATTERN ARGS...: one line on stderr, nothing written
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    expect_fail "$name" "$pattern" "$NMT" train --arch rnn --src "$TMP/s.de" --tgt "$TMP/s.en" "$@" \
        --out "$TMP/refused"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
refused "tied, out-dim not emb" "tied embeddings need out_dim \\(8\\) equal to emb \\(16\\)" \
    --tied-embeddings --emb 16 --out-dim 8
refused "tied and untied" "--tied-embeddings and --untied-embeddings: give one" \
    --tied-embeddings --untied-embeddings
refused "label smoothing 1" "--label-smoothing: must be below 1" --label-smoothing 1
refused "label smoothing word" "--label-smoothing: 'much'" --label-smoothing much
refused "negative label smoothing" "--label-smoothing" --label-smoothing -0.1
refused "dropout-enc 1.5" "--dropout-enc" --dropout-enc 1.5
refused "dropout-emb 1" "--dropout-emb: must be below 1" --dropout-emb 1
refused "dropout-out word" "--dropout-out: 'x'" --dropout-out x

# --- a tied run: the files say so ----------------------------------------------
RUN=("$NMT" train --arch rnn -q --src "$TMP/s.de" --tgt "$TMP/s.en" "${SMALL[@]}" --tied-embeddings
     --label-smoothing 0.1 --dropout 0.3 --dropout-enc 0.1 --seed 3)
expect_ok "tied run" "${RUN[@]}" --max-steps 12 --out "$TMP/tied"
CK="$TMP/tied/checkpoint.safetensors"
[ "$(meta_of "$CK" tied)" = true ] && pass || fail "tied run: metadata tied is '$(meta_of "$CK" tied)'"
header_of "$CK" | grep -q '"out\.W"' && fail "tied run: the file has out.W" || pass
header_of "$CK" | grep -q '"adam\.m\.tgt_emb"' && pass || fail "tied run: no moments of tgt_emb"
# --dropout sets every site, a site's own option overrides it
[ "$(meta_of "$CK" train.dropout_emb)" = 0.300000012 ] && pass ||
    fail "dropout_emb '$(meta_of "$CK" train.dropout_emb)'"
[ "$(meta_of "$CK" train.dropout_enc)" = 0.100000001 ] && pass ||
    fail "dropout_enc '$(meta_of "$CK" train.dropout_enc)'"
[ "$(meta_of "$CK" train.dropout_out)" = 0.300000012 ] && pass ||
    fail "dropout_out '$(meta_of "$CK" train.dropout_out)'"
[ "$(meta_of "$CK" train.label_smoothing)" = 0.100000001 ] && pass ||
    fail "label_smoothing '$(meta_of "$CK" train.label_smoothing)'"
[ "$(meta_of "$CK" train.tied_embeddings)" = 1 ] && pass || fail "train.tied_embeddings"
expect_ok "info" "$NMT" info "$CK"
grep -q "^tied  *true" "$TMP/out" && pass || fail "nmt info: $(grep tied "$TMP/out")"
# the defaults: dropout 0.3 at all three sites, label smoothing 0.1, tied
expect_ok "default run" "$NMT" train --arch rnn -q --src "$TMP/s.de" --tgt "$TMP/s.en" "${SMALL[@]}" \
    --max-steps 0 --out "$TMP/defaults"
D="$TMP/defaults/checkpoint.safetensors"
[ "$(meta_of "$D" train.dropout_emb) $(meta_of "$D" train.dropout_enc) $(meta_of "$D" train.dropout_out) $(meta_of "$D" train.label_smoothing) $(meta_of "$D" tied)" = \
  "0.300000012 0.300000012 0.300000012 0.100000001 true" ] && pass || fail "default rates: $(header_of "$D" | grep -o '"train\.[a-z_]*":"[^"]*"' | tr '\n' ' ')"
header_of "$D" | grep -q '"out\.W"' && fail "the default (tied) model has an out.W" || pass
# --untied-embeddings: a separate out.W, and no tied key
expect_ok "untied run" "$NMT" train --arch rnn -q --src "$TMP/s.de" --tgt "$TMP/s.en" "${SMALL[@]}" \
    --untied-embeddings --max-steps 0 --out "$TMP/untied"
D="$TMP/untied/checkpoint.safetensors"
[ -z "$(meta_of "$D" tied)" ] && pass || fail "an untied model has a tied key"
header_of "$D" | grep -q '"out\.W"' && pass || fail "an untied model lacks out.W"
expect_ok "info untied" "$NMT" info "$D"
grep -q "^tied  *false" "$TMP/out" && pass || fail "nmt info untied: $(grep tied "$TMP/out")"

# the deep output follows --emb; a different --out-dim unties
expect_ok "emb 12 run" "$NMT" train --arch rnn -q --src "$TMP/s.de" --tgt "$TMP/s.en" --emb 12 --hidden 16 \
    --att-dim 16 --batch-size 16 --threads 1 --max-steps 0 --out "$TMP/emb12"
D="$TMP/emb12/checkpoint.safetensors"
[ "$(meta_of "$D" out_dim) $(meta_of "$D" tied)" = "12 true" ] && pass ||
    fail "--emb 12 alone: out_dim $(meta_of "$D" out_dim), tied '$(meta_of "$D" tied)'"
expect_ok "out-dim 20 run" "$NMT" train --arch rnn -q --src "$TMP/s.de" --tgt "$TMP/s.en" "${SMALL[@]}" \
    --out-dim 20 --max-steps 0 --out "$TMP/out20"
D="$TMP/out20/checkpoint.safetensors"
[ "$(meta_of "$D" out_dim) $(meta_of "$D" tied)" = "20 " ] && pass ||
    fail "--out-dim 20: out_dim $(meta_of "$D" out_dim), tied '$(meta_of "$D" tied)'"

# --- translate, score and align read the tied matrix ------------------------------
expect_ok "translate tied" "$NMT" translate -m "$CK" -i "$TMP/four.de" -o "$TMP/four.hyp" -q
[ "$(wc -l <"$TMP/four.hyp")" -eq 4 ] && pass || fail "translate tied: $(wc -l <"$TMP/four.hyp") lines"
expect_ok "score tied" "$NMT" score -m "$CK" --src "$TMP/four.de" --tgt "$TMP/four.en"
grep -q "^perplexity" "$TMP/out" && pass || fail "score tied: $(cat "$TMP/out")"
expect_ok "align tied" "$NMT" align -m "$CK" --src "$TMP/four.de" --tgt "$TMP/four.en" --format tsv

# --- the architecture comes with --init-from; the settings stay with --resume ------
expect_fail "init-from with --tied-embeddings" "--tied-embeddings cannot be used with --init-from" \
    "$NMT" train --src "$TMP/s.de" --tgt "$TMP/s.en" --init-from "$CK" --tied-embeddings \
    --out "$TMP/x"
expect_ok "init-from a tied model" "$NMT" train -q --src "$TMP/s.de" --tgt "$TMP/s.en" \
    --init-from "$CK" --max-steps 2 --out "$TMP/from-tied"
[ "$(meta_of "$TMP/from-tied/checkpoint.safetensors" tied)" = true ] && pass ||
    fail "a run from a tied model is not tied"
for opt in "--label-smoothing 0.2" "--dropout-enc 0.2" "--dropout 0" "--tied-embeddings"; do
    # shellcheck disable=SC2086
    expect_fail "resume with $opt" "cannot be changed on --resume" "$NMT" train --resume "$TMP/tied" $opt
done

# --- exact resume with every site dropping and label smoothing -------------------
expect_ok "12 steps at once" "${RUN[@]}" --max-steps 12 --out "$TMP/once"
same_data "$TMP/tied/checkpoint.safetensors" "$TMP/once/checkpoint.safetensors" && pass ||
    fail "the same seed gave other weights"
expect_ok "5 steps" "${RUN[@]}" --max-steps 5 --out "$TMP/split"
expect_ok "resumed to 12" "$NMT" train -q --resume "$TMP/split" --max-steps 12
same_data "$TMP/once/checkpoint.safetensors" "$TMP/split/checkpoint.safetensors" && pass ||
    fail "5 steps + resume to 12 differs from 12 steps"
# and each site's rate matters: another enc rate, other weights
expect_ok "other enc rate" "${RUN[@]}" --dropout-enc 0.2 --max-steps 12 --out "$TMP/enc2"
same_data "$TMP/once/checkpoint.safetensors" "$TMP/enc2/checkpoint.safetensors" &&
    fail "--dropout-enc changed nothing" || pass

# --- log.tsv's loss is the plain -log p[y], whatever the smoothing ------------------
# One step with a learning rate too small to move a weight's float: the step's
# loss is the initial model's, which nmt score gives on the same four pairs
# (Adam's moments take the gradient, which the smoothing changes).
STEP=("$NMT" train --arch rnn -q --src "$TMP/four.de" --tgt "$TMP/four.en" "${SMALL[@]}" --batch-size 4
      --optimizer adam --lr 1e-20 --dropout 0 --max-steps 1 --report-every 1)
expect_ok "one smoothed step" "${STEP[@]}" --label-smoothing 0.5 --out "$TMP/ls"
expect_ok "one plain step" "${STEP[@]}" --out "$TMP/plain"
same_data "$TMP/ls/checkpoint.safetensors" "$TMP/plain/checkpoint.safetensors" &&
    fail "label smoothing changed no gradient" || pass
expect_ok "score the step's model" "$NMT" score -m "$TMP/ls/checkpoint.safetensors" \
    --src "$TMP/four.de" --tgt "$TMP/four.en"
score=$(awk '$1 == "loss" { print $2 }' "$TMP/out")
for run in ls plain; do
    logged=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "loss") c = i } NR == 2 { print $c }' \
        "$TMP/$run/log.tsv")
    awk -v a="$logged" -v b="$score" 'BEGIN { d = a - b; exit !(d < 6e-5 && d > -6e-5) }' && pass ||
        fail "$run: log.tsv loss $logged, nmt score $score"
done
finish
