# nmt train's options of the third round: the architecture and the
# Transformer's sizes and dropouts (refused where they do not fit), --init
# xavier, --dropout 0 over every site, and the --warmup schedule (its lr
# column, its checkpoint, an exact resume in the middle of it).
. "$(dirname "$0")/lib.sh"

TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
meta_of() { # meta_of FILE KEY: a metadata value
    local n
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    head -c $((8 + n)) "$1" | tail -c "$n" | grep -o "\"$2\": *\"[^\"]*\"" | sed 's/.*: *"\(.*\)"/\1/'
}

zcat "$TOY/train.src.gz" | head -n 300 >"$TMP/s.src"
zcat "$TOY/train.tgt.gz" | head -n 300 >"$TMP/s.tgt"
DATA=(--src "$TMP/s.src" --tgt "$TMP/s.tgt")
SMALL=(--emb 8 --hidden 8 --att-dim 8 --batch-size 16 --threads 1 --subwords 0 -q)

# --- help ----------------------------------------------------------------------
expect_ok "help" "$NMT" train --help
for opt in arch d-model heads ff layers enc-layers dec-layers dropout-residual dropout-att \
    dropout-ff warmup lr-schedule norm fixnorm no-fixnorm; do
    grep -q -- "--$opt" "$TMP/out" && pass || fail "help lacks --$opt"
done
grep -q -- "--init uniform|orthogonal|bahdanau|xavier" "$TMP/out" && pass || fail "help lacks --init xavier"
grep -q -- "--arch rnn|transformer" "$TMP/out" && pass || fail "help lacks --arch rnn|transformer"
# the sizes help gives as the Transformer's defaults are the ones a model
# trained without them records (help is text, so it can fall behind)
help_default() { # help_default OPTION: the N of "(default N" on OPTION's lines
    sed -n "/^  --$1 /,/^  --/p" "$TMP/out" | tr '\n' ' ' | grep -o '(default [0-9]*' | head -n 1 |
        grep -o '[0-9]*$'
}
cp "$TMP/out" "$TMP/help"
# no --arch: the Transformer, as help says (the architecture that won on
# Multi30k, docs/experiments/transformer-search.md)
grep -q -- "--arch rnn|transformer the architecture (default transformer)" "$TMP/help" &&
    pass || fail "help does not give the transformer as the default architecture"
expect_ok "a model of the default architecture and sizes" "$NMT" train "${DATA[@]}" \
    --subwords 0 --threads 1 --max-steps 0 -q --out "$TMP/tf-defaults"
"$NMT" info "$TMP/tf-defaults/checkpoint.safetensors" >"$TMP/info"
[ "$(awk '$1 == "arch" { print $2 }' "$TMP/info")" = transformer ] && pass ||
    fail "no --arch did not train a transformer: $(head -n 4 "$TMP/info")"
for pair in d-model:d_model heads:heads ff:ff layers:enc_layers layers:dec_layers; do
    opt=${pair%%:*} key=${pair#*:}
    cp "$TMP/help" "$TMP/out"
    want=$(help_default "$opt")
    got=$(awk -v k="$key" '$1 == k { print $2 }' "$TMP/info")
    [ -n "$want" ] && [ "$want" = "$got" ] && pass ||
        fail "help says --$opt defaults to '$want', a default model has $key '$got'"
done

# --- the Transformer's dropout by --max-time: 0.1, and 0.2 from an hour on
# (docs/training.md), said at the start; a rate given wins, site by site
rule_run() { # rule_run NAME ARGS...: a run of no steps, its stderr in $TMP/rule.err
    rm -rf "$TMP/rule"
    expect_ok "$1" "$NMT" train "${DATA[@]}" --subwords 0 --threads 1 --max-steps 0 \
        --out "$TMP/rule" "${@:2}"
    cp "$TMP/err" "$TMP/rule.err"
}
rule_meta() { meta_of "$TMP/rule/checkpoint.safetensors" "train.dropout_$1"; }
rule_run "a short Transformer" --arch transformer --max-time 59m
[ "$(rule_meta residual)" = 0.100000001 ] && pass || fail "59 minutes: dropout $(rule_meta residual), not 0.1"
grep -q "^dropout: 0.1 at every site .*under 60 minutes of --max-time (0.2 from there on" \
    "$TMP/rule.err" && pass || fail "the short run does not state the rule: $(cat "$TMP/rule.err")"
# and its schedule: the line under an hour, 1/sqrt(step) after 300 steps from
# an hour on (said at the start), the line again when asked for
rule_schedule() { echo "$(meta_of "$TMP/rule/checkpoint.safetensors" train.lr_schedule)/$(meta_of "$TMP/rule/checkpoint.safetensors" train.warmup)"; }
[ "$(rule_schedule)" = linear/2000 ] && pass || fail "59 minutes: schedule/warm-up $(rule_schedule), not linear/2000"
rule_run "a long Transformer" --arch transformer --max-time 1h --dropout-att 0.05
for site in emb residual ff; do
    [ "$(rule_meta $site)" = 0.200000003 ] && pass || fail "1 hour: dropout-$site $(rule_meta $site), not 0.2"
done
[ "$(rule_meta att)" = 0.0500000007 ] && pass || fail "--dropout-att lost to the rule: $(rule_meta att)"
grep -q "^dropout: 0.2 at every site not given its own.*at least 60 minutes of --max-time (0.1 below" \
    "$TMP/rule.err" && pass || fail "the long run does not state the rule: $(cat "$TMP/rule.err")"
[ "$(rule_schedule)" = /300 ] && pass || fail "1 hour: schedule/warm-up $(rule_schedule), not rsqrt's /300"
grep -q "^lr: a warm-up to 0.004 over 300 steps, then lr \* sqrt(warm-up / step), the transformer's schedule for runs given at least 60 minutes of --max-time (a line to 0 below" \
    "$TMP/rule.err" && pass || fail "the long run does not state its schedule: $(cat "$TMP/rule.err")"
rule_run "a long Transformer given the line" --arch transformer --max-time 2h --lr-schedule linear
[ "$(rule_schedule)" = linear/2000 ] && pass || fail "--lr-schedule linear lost to the rule: $(rule_schedule)"
rule_run "a long Transformer with --dropout" --arch transformer --max-time 2h --dropout 0.3
[ "$(rule_meta residual)" = 0.300000012 ] && pass || fail "--dropout lost to the rule: $(rule_meta residual)"
grep -q "^dropout:" "$TMP/rule.err" && fail "a rule stated where --dropout chose" || pass
rule_run "a long Transformer, every site its own" --arch transformer --max-time 2h \
    --dropout-emb 0.1 --dropout-residual 0.1 --dropout-att 0.1 --dropout-ff 0.1
[ "$(rule_meta residual)" = 0.100000001 ] && pass || fail "a site's own rate lost to the rule"
grep -q "^dropout:" "$TMP/rule.err" && fail "a rule stated where every site chose its own" || pass
rule_run "a long RNN" --arch rnn --max-time 2h --emb 8 --hidden 8 --att-dim 8 --batch-size 16
[ "$(rule_meta emb)" = 0.300000012 ] && pass || fail "the RNN's dropout changed with --max-time: $(rule_meta emb)"
grep -q "^dropout:" "$TMP/rule.err" && fail "the RNN states a rule it does not have" || pass

# --- the Transformer's subword sampling: alpha 0.5 with any --max-time where
# the pieces are a unigram model's and the corpus is read whole, said at the
# start; the best pieces for the RNN, for a streamed corpus, and when
# --subword-alpha is given (docs/training.md)
samp_run() { # samp_run NAME ARGS...: a run of no steps on 100 pieces, as rule_run
    rm -rf "$TMP/rule"
    expect_ok "$1" "$NMT" train "${DATA[@]}" --subwords 100 --threads 1 --max-steps 0 \
        --out "$TMP/rule" "${@:2}"
    cp "$TMP/err" "$TMP/rule.err"
}
samp_alpha() { meta_of "$TMP/rule/checkpoint.safetensors" train.subword_alpha; }
samp_run "sampling: a Transformer without --max-time"
[ "$(samp_alpha)" = 0.5 ] && pass || fail "no --max-time: subword alpha $(samp_alpha), not 0.5"
grep -q "^subwords: .*; sampled every epoch (alpha 0.5, the transformer's default; --subword-alpha 0 keeps the best pieces)" \
    "$TMP/rule.err" && pass || fail "the sampling default is not stated: $(cat "$TMP/rule.err")"
samp_run "sampling: 59 minutes" --max-time 59m
[ "$(samp_alpha)" = 0.5 ] && pass || fail "59 minutes: subword alpha $(samp_alpha), not 0.5"
samp_run "sampling: two hours" --max-time 2h
[ "$(samp_alpha)" = 0.5 ] && pass || fail "2 hours: subword alpha $(samp_alpha), not 0.5"
grep -q "^subwords: .*; sampled every epoch (alpha 0.5, the transformer's default;" \
    "$TMP/rule.err" && pass || fail "2 hours: the sampling default is not stated: $(cat "$TMP/rule.err")"
samp_run "sampling: --subword-alpha 0" --subword-alpha 0
[ "$(samp_alpha)" = 0 ] && pass || fail "--subword-alpha 0 lost to the default: $(samp_alpha)"
samp_run "sampling: --subword-alpha 0.2" --subword-alpha 0.2
[ "$(samp_alpha)" = 0.200000003 ] && pass || fail "--subword-alpha 0.2 lost to the default: $(samp_alpha)"
grep -q "(alpha 0.2)" "$TMP/rule.err" && pass || fail "a given alpha is called the default: $(cat "$TMP/rule.err")"
samp_run "sampling: the RNN" --arch rnn --emb 8 --hidden 8 --att-dim 8 --batch-size 16
[ "$(samp_alpha)" = 0 ] && pass || fail "the RNN samples its pieces: $(samp_alpha)"
samp_run "sampling: a streamed corpus" --shuffle-buffer 100 --epochs 1
[ "$(samp_alpha)" = 0 ] && pass || fail "a streamed corpus samples its pieces: $(samp_alpha)"
rule_run "sampling: words" --arch transformer
[ "$(samp_alpha)" = 0 ] && pass || fail "words are sampled: $(samp_alpha)"
# the default's sampling resumes exactly: a run stopped in its second epoch
# (9 batches an epoch) and resumed into its third ends with the weights of
# the run never stopped (rsqrt: a schedule that does not need the run's end)
TINY_TF=(--d-model 16 --heads 2 --ff 32 --layers 1 --batch-size 16 --save-every 0
    --lr-schedule rsqrt -q)
expect_ok "sampled by default, straight" "$NMT" train "${DATA[@]}" --subwords 100 --threads 1 \
    "${TINY_TF[@]}" --max-steps 24 --out "$TMP/samp-straight"
expect_ok "sampled by default, part 1" "$NMT" train "${DATA[@]}" --subwords 100 --threads 1 \
    "${TINY_TF[@]}" --max-steps 13 --out "$TMP/samp-resumed"
expect_ok "sampled by default, part 2" "$NMT" train --resume "$TMP/samp-resumed" --max-steps 24 -q
[ "$(meta_of "$TMP/samp-resumed/checkpoint.safetensors" train.subword_alpha)" = 0.5 ] && pass ||
    fail "the resumed run lost its sampling"
same_data "$TMP/samp-straight/checkpoint.safetensors" "$TMP/samp-resumed/checkpoint.safetensors" &&
    pass || fail "a resumed run sampled by default ends with other weights"
rm -rf "$TMP/samp-plain"
expect_ok "not sampled" "$NMT" train "${DATA[@]}" --subwords 100 --threads 1 "${TINY_TF[@]}" \
    --max-steps 24 --subword-alpha 0 --out "$TMP/samp-plain"
! same_data "$TMP/samp-straight/checkpoint.safetensors" "$TMP/samp-plain/checkpoint.safetensors" &&
    pass || fail "the default's sampling changes nothing"

# --- options that do not fit the architecture: one line, exit 2, nothing made -----
refused() { # refused NAME PATTERN ARGS...
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/refused"
    "$NMT" train "${DATA[@]}" "$@" --out "$TMP/refused" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] && pass || fail "$name: exit $rc, expected 2 (usage): $(cat "$TMP/err")"
    grep -Eq -- "$pattern" "$TMP/err" && pass || fail "$name: stderr does not match /$pattern/: $(cat "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "$name: not one line: $(cat "$TMP/err")"
    [ ! -e "$TMP/refused" ] && pass || fail "$name: output folder created"
}
refused "RNN option with the Transformer" "--cell is an option of --arch rnn, not of --arch transformer" \
    --arch transformer --cell gru
refused "RNN size with the Transformer" "--hidden is an option of --arch rnn" --arch transformer --hidden 8
refused "RNN dropout with the Transformer" "--dropout-enc is an option of --arch rnn" \
    --arch transformer --dropout-enc 0.1
refused "Transformer size with the RNN" "--d-model is an option of --arch transformer, not of --arch rnn$" \
    --arch rnn --d-model 64
refused "RNN size with no --arch" "--hidden is an option of --arch rnn, not of --arch transformer \\(the default\\)" \
    --hidden 64
refused "Transformer layers with the RNN" "--layers is an option of --arch transformer, not of --arch rnn$" \
    --arch rnn --layers 2
refused "Transformer dropout with the RNN" "--dropout-att is an option of --arch transformer" \
    --arch rnn --dropout-att 0.1
refused "heads that do not divide" "5 heads do not divide d_model 64" \
    --arch transformer --d-model 64 --heads 5
refused "ScaleNorm with the RNN" "--norm is an option of --arch transformer, not of --arch rnn$" \
    --arch rnn --norm scale
refused "RNN cell with no --arch" "--cell is an option of --arch rnn, not of --arch transformer \\(the default\\)" \
    --cell gru
refused "FixNorm with the RNN" "--fixnorm is an option of --arch transformer, not of --arch rnn$" \
    --arch rnn --fixnorm
refused "unknown norm" "--norm: unknown value 'batch'" --arch transformer --norm batch
refused "xavier for the RNN" "--init xavier is not a scheme of --arch rnn" --arch rnn --init xavier
refused "bahdanau for the Transformer" "--init bahdanau is not a scheme of --arch transformer" \
    --arch transformer --init bahdanau
refused "init-scale with xavier" "--init-scale goes with --init uniform or orthogonal, not --init xavier" \
    --arch transformer --init-scale 0.1
refused "unknown architecture" "--arch: unknown value 'cnn'" --arch cnn
refused "unknown init" "--init: unknown value 'glorot'" --init glorot
refused "zero heads" "--heads" --arch transformer --heads 0
refused "zero layers" "--enc-layers" --arch transformer --enc-layers 0
refused "warmup with lr-decay" "--lr-decay does not go with --warmup" --warmup 100 --lr-decay 0.5
refused "warmup with patience" "--patience does not go with --warmup" --warmup 100 --patience 2
refused "negative warmup" "--warmup" --warmup -1
refused "linear of a stream without an end" "--lr-schedule linear decays to 0 at the run.s end: a streamed corpus .*needs --max-steps or --max-time" \
    --lr-schedule linear --shuffle-buffer 100
refused "linear with patience" "--patience does not go with --lr-schedule linear" \
    --lr-schedule linear --max-steps 5 --patience 2
refused "rsqrt with lr-decay" "--lr-decay does not go with --lr-schedule rsqrt" \
    --lr-schedule rsqrt --lr-decay 0.5
refused "plateau with a warmup" "--warmup does not go with --lr-schedule plateau" \
    --lr-schedule plateau --warmup 10
refused "unknown schedule" "--lr-schedule: 'cosine' is none of plateau, rsqrt, linear" \
    --lr-schedule cosine --max-steps 5
refused "decay-from without linear" "--decay-from needs --lr-schedule linear" --arch rnn \
    --decay-from 0.5 --max-steps 5
refused "decay-from with a warm-up alone (rsqrt)" "--decay-from needs --lr-schedule linear" \
    --warmup 100 --decay-from 0.5 --max-steps 5
refused "warmup-share of an RNN's plateaus" "--warmup-share needs --lr-schedule linear" \
    --arch rnn --warmup-share 0.5 --max-steps 5
refused "warmup-share of rsqrt" "--warmup-share needs --lr-schedule linear" \
    --lr-schedule rsqrt --warmup-share 0.5 --max-steps 5
refused "warmup-share of 1" "--warmup-share: must be below 1" --lr-schedule linear \
    --max-steps 5 --warmup-share 1
refused "negative warmup-share" "--warmup-share" --max-steps 5 --warmup-share -0.1
refused "decay-from of 1" "--decay-from: must be below 1" --lr-schedule linear --max-steps 5 \
    --decay-from 1
refused "negative decay-from" "--decay-from" --lr-schedule linear --max-steps 5 --decay-from -0.1

# --- the Transformer: made where this build has it, else refused by name ----------
rm -rf "$TMP/tf"
"$NMT" train "${DATA[@]}" --arch transformer --d-model 16 --heads 2 --ff 32 --layers 1 \
    --batch-size 16 --threads 1 --subwords 0 -q --max-steps 2 --out "$TMP/tf" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ]; then
    [ "$(meta_of "$TMP/tf/checkpoint.safetensors" arch)" = transformer ] && pass ||
        fail "--arch transformer wrote no Transformer"
    [ "$(meta_of "$TMP/tf/checkpoint.safetensors" train.dropout_residual)" = 0.100000001 ] && pass ||
        fail "the Transformer's checkpoint lacks its dropouts"
else
    [ $rc -eq 1 ] && grep -q "architecture transformer is not in this build of nmt" "$TMP/err" &&
        pass || fail "--arch transformer: exit $rc: $(cat "$TMP/err")"
    [ ! -e "$TMP/tf" ] && pass || fail "--arch transformer: a folder was made"
fi

# --- the Transformer's batches: 2048 target tokens of at most 256 pairs at a
# peak lr of 4e-3, unless a batch size is given (docs/training.md) ----------
batch_of() { # batch_of NAME ARGS...: got="size tokens lr" of a run of no steps
    rm -rf "$TMP/b"
    expect_ok "$1" "$NMT" train "${DATA[@]}" --subwords 0 --threads 1 --max-steps 0 -q \
        --out "$TMP/b" "${@:2}"
    local f=$TMP/b/checkpoint.safetensors
    got="$(meta_of "$f" train.batch_size) $(meta_of "$f" train.batch_tokens) $(meta_of "$f" train.lr)"
}
batch_of "the default batches"
[ "$got" = "256 2048 0.0040000000000000001" ] && pass || fail "default batches: '$got'"
batch_of "batches of sentences asked for" --batch-size 32
[ "$got" = "32  0.0040000000000000001" ] && pass || fail "--batch-size 32 alone: '$got'"
batch_of "other token batches" --batch-tokens 500
[ "$got" = "256 500 0.0040000000000000001" ] && pass || fail "--batch-tokens 500 alone: '$got'"
batch_of "both given" --batch-tokens 500 --batch-size 40 --lr 1e-3
[ "$got" = "40 500 0.001" ] && pass || fail "both batch options and --lr: '$got'"
batch_of "the RNN's batches" --arch rnn --emb 8 --hidden 8 --att-dim 8
[ "$got" = "64  0.001" ] && pass || fail "the RNN's default batches: '$got'"
# a resumed run keeps its checkpoint's batches
rm -rf "$TMP/b"
expect_ok "batches to resume" "$NMT" train "${DATA[@]}" --subwords 0 --threads 1 --max-steps 1 -q \
    --d-model 16 --heads 2 --ff 32 --layers 1 --batch-tokens 300 --out "$TMP/b"
expect_ok "resumed" "$NMT" train --resume "$TMP/b" --max-steps 2 -q
[ "$(meta_of "$TMP/b/checkpoint.safetensors" train.batch_tokens)" = 300 ] && pass ||
    fail "the resumed run lost its --batch-tokens"

# --- --init-from: the file's architecture; its dropouts; --dropout 0 ---------------
expect_ok "a model to start from" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --max-steps 0 --out "$TMP/m"
M=$TMP/m/checkpoint.safetensors
for opt in "--arch rnn" "--d-model 8" "--layers 2" "--heads 2"; do
    expect_fail "init-from with $opt" "${opt%% *} cannot be used with --init-from" \
        "$NMT" train "${DATA[@]}" --init-from "$M" $opt --out "$TMP/x"
done
expect_fail "init-from an RNN with a Transformer dropout" \
    "--dropout-att: the model of .*m/checkpoint.safetensors is of --arch rnn, which has no such dropout \\(its own: --dropout-emb, --dropout-enc, --dropout-out\\)" \
    "$NMT" train "${DATA[@]}" --init-from "$M" --dropout-att 0.1 --out "$TMP/x"
[ ! -e "$TMP/x" ] && pass || fail "a refused --init-from made its folder"
# the reference check's command line
expect_ok "the reference check's command line" "$NMT" train --init-from "$M" "${DATA[@]}" \
    --out "$TMP/ref" --optimizer sgd --lr 1000 --clip 0 --dropout 0 --label-smoothing 0.1 \
    --warmup 0 --no-shuffle --batch-size 300 --max-steps 1 --max-len 100 --threads 1
C=$TMP/ref/checkpoint.safetensors
for site in emb enc out; do
    [ "$(meta_of "$C" train.dropout_$site)" = 0 ] && pass || fail "--dropout 0 left dropout_$site on"
done
[ -z "$(meta_of "$C" train.warmup)" ] && pass || fail "--warmup 0 wrote train.warmup"
[ "$(awk -F'\t' 'NR == 2 { print $1, $3 }' "$TMP/ref/log.tsv")" = "1 1000" ] && pass ||
    fail "--warmup 0: step 1's lr is not --lr: $(sed -n 2p "$TMP/ref/log.tsv")"

# --- --warmup: the lr column is the schedule, with every optimizer ------------------
# lr(n) = lr * n / W up to n = W, then lr * sqrt(W / n); log.tsv writes %.6g
expected_lrs() { # expected_lrs LR W STEPS
    awk -v lr="$1" -v w="$2" -v n="$3" 'BEGIN {
        for (s = 1; s <= n; s++) printf "%d %.6g\n", s, (s <= w ? lr * s / w : lr * sqrt(w / s)) }'
}
for opt in sgd adam adadelta; do
    expect_ok "warmup with $opt" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer $opt \
        --lr 0.5 --warmup 4 --max-steps 12 --report-every 1 --out "$TMP/w-$opt"
    got=$(awk -F'\t' 'NR > 1 { print $1, $3 }' "$TMP/w-$opt/log.tsv")
    [ "$got" = "$(expected_lrs 0.5 4 12)" ] && pass ||
        fail "warmup with $opt: lr column $(echo $got | tr '\n' ' ')"
done
C=$TMP/w-adam/checkpoint.safetensors
[ "$(meta_of "$C" train.warmup)" = 4 ] && pass || fail "train.warmup not in the checkpoint"
[ "$(meta_of "$C" train.patience)" = 0 ] && pass || fail "a warmup run decays on plateaus"
# the step's lr reaches the optimizer: a run that stays in warm-up moves
# its weights otherwise than one at the peak lr
expect_ok "no warmup" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer sgd --lr 0.5 \
    --max-steps 12 --out "$TMP/w-none"
same_data "$TMP/w-sgd/checkpoint.safetensors" "$TMP/w-none/checkpoint.safetensors" &&
    fail "--warmup changed nothing in the weights" || pass

# train_killed NAME ROWS DIR ARGS...: nmt train ARGS --out DIR, killed with
# kill -9 once its log.tsv has ROWS lines (or never, if the run is done by
# then: a comparison with the uninterrupted run holds either way, and the
# note on stderr says which)
train_killed() {
    local name=$1 rows=$2 dir=$3 pid
    shift 3
    rm -rf "$dir"
    "$NMT" train --arch rnn "$@" --out "$dir" 2>/dev/null &
    pid=$!
    for _ in $(seq 1 2000); do
        [ "$(wc -l <"$dir/log.tsv" 2>/dev/null || echo 0)" -ge "$rows" ] && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.01
    done
    if kill -9 $pid 2>/dev/null; then
        echo "$name kill -9 landed at $(($(wc -l <"$dir/log.tsv") - 1)) logged steps" >&2
    fi
    wait $pid 2>/dev/null
}

# --- --lr-schedule: the lr column of each ------------------------------------------
# linear: lr * n / W up to n = W, then lr while p = (n - 1) / max-steps is at
# most F (--decay-from, 0 unless given), then lr * (1 - p) / (1 - F)
expected_linear() { # expected_linear LR W STEPS [F]
    awk -v lr="$1" -v w="$2" -v n="$3" -v f="${4:-0}" 'BEGIN {
        for (s = 1; s <= n; s++) {
            p = (s - 1) / n
            printf "%d %.6g\n", s, (s <= w ? lr * s / w : (p <= f ? lr : lr * (1 - p) / (1 - f)))
        } }'
}
lr_column() { awk -F'\t' 'NR > 1 { print $1, $3 }' "$1/log.tsv"; }
# a warm-up bounded by a share S of the run: while n <= W and p < S the lr
# is lr * max(n / W, p / S), then the line (p = (n - 1) / max-steps)
expected_share() { # expected_share LR W S STEPS
    awk -v lr="$1" -v w="$2" -v S="$3" -v n="$4" 'BEGIN {
        for (s = 1; s <= n; s++) {
            p = (s - 1) / n
            a = lr * s / w; b = lr * p / S
            printf "%d %.6g\n", s, (s <= w && p < S ? (b > a ? b : a) : lr * (1 - p)) } }'
}
expect_ok "linear with a warmup" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer sgd \
    --lr 0.5 --lr-schedule linear --warmup 3 --max-steps 12 --report-every 1 --out "$TMP/lin"
[ "$(lr_column "$TMP/lin")" = "$(expected_linear 0.5 3 12)" ] && pass ||
    fail "linear: lr column $(lr_column "$TMP/lin" | tr '\n' ' ')"
C=$TMP/lin/checkpoint.safetensors
[ "$(meta_of "$C" train.lr_schedule)" = linear ] && pass || fail "train.lr_schedule not in the checkpoint"
[ "$(meta_of "$C" train.patience)" = 0 ] && pass || fail "a linear run decays on plateaus"
expect_ok "linear of an RNN: no warm-up" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer sgd \
    --lr 0.5 --lr-schedule linear --max-steps 12 --report-every 1 --out "$TMP/lin0"
[ "$(lr_column "$TMP/lin0")" = "$(expected_linear 0.5 0 12)" ] && pass ||
    fail "linear without warm-up: lr column $(lr_column "$TMP/lin0" | tr '\n' ' ')"
same_data "$TMP/lin0/checkpoint.safetensors" "$TMP/w-none/checkpoint.safetensors" &&
    fail "--lr-schedule linear changed nothing in the weights" || pass
expect_ok "linear from half the run" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer sgd \
    --lr 0.5 --lr-schedule linear --warmup 2 --decay-from 0.5 --max-steps 12 --report-every 1 \
    --out "$TMP/linh"
[ "$(lr_column "$TMP/linh")" = "$(expected_linear 0.5 2 12 0.5)" ] && pass ||
    fail "linear from half the run: lr column $(lr_column "$TMP/linh" | tr '\n' ' ')"
[ "$(meta_of "$TMP/linh/checkpoint.safetensors" train.decay_from)" = 0.5 ] && pass ||
    fail "train.decay_from not in the checkpoint"
expect_ok "rsqrt of an RNN: the Transformer's warm-up" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" \
    --optimizer sgd --lr 0.5 --lr-schedule rsqrt --max-steps 3 --report-every 1 --out "$TMP/rsq"
[ "$(meta_of "$TMP/rsq/checkpoint.safetensors" train.warmup)" = 300 ] && pass ||
    fail "rsqrt of an RNN: warm-up $(meta_of "$TMP/rsq/checkpoint.safetensors" train.warmup)"
expect_ok "plateau of a Transformer" "$NMT" train "${DATA[@]}" --arch transformer --d-model 16 \
    --heads 2 --ff 32 --layers 1 --batch-size 16 --threads 1 --subwords 0 -q --lr-schedule plateau \
    --max-steps 3 --report-every 1 --out "$TMP/plat"
if [ -e "$TMP/plat/checkpoint.safetensors" ]; then
    C=$TMP/plat/checkpoint.safetensors
    [ -z "$(meta_of "$C" train.warmup)" ] && [ "$(meta_of "$C" train.patience)" = 2 ] && pass ||
        fail "plateau of a Transformer: warmup '$(meta_of "$C" train.warmup)' patience '$(meta_of "$C" train.patience)'"
fi
# the Transformer's own schedule, given nothing: a warm-up to 4e-3 over
# 2000 steps or the run's first quarter, then the line; said before the
# first step. rsqrt by name is the old default's 300 steps.
TFS=(--arch transformer --d-model 16 --heads 2 --ff 32 --layers 1 --batch-size 16 --threads 1
     --subwords 0 --max-steps 12 --report-every 1)
expect_ok "the Transformer's default schedule" "$NMT" train "${DATA[@]}" "${TFS[@]}" --out "$TMP/tfl"
if [ -e "$TMP/tfl/checkpoint.safetensors" ]; then
    C=$TMP/tfl/checkpoint.safetensors
    [ "$(meta_of "$C" train.lr_schedule)" = linear ] && [ "$(meta_of "$C" train.warmup)" = 2000 ] &&
        [ "$(meta_of "$C" train.warmup_share)" = 0.25 ] && [ "$(meta_of "$C" train.patience)" = 0 ] &&
        pass || fail "the Transformer's default schedule: $(meta_of "$C" train.lr_schedule) warmup $(meta_of "$C" train.warmup) share $(meta_of "$C" train.warmup_share)"
    [ "$(lr_column "$TMP/tfl")" = "$(expected_share 0.004 2000 0.25 12)" ] && pass ||
        fail "the Transformer's default schedule: lr column $(lr_column "$TMP/tfl" | tr '\n' ' ')"
    grep -q "^lr: a warm-up to 0.004 over 2000 steps or the first 25 % of the run, whichever ends first, then a line from 0.004 down to 0 at the run's end (the nearest of 12 steps, 10 epochs; docs/training.md)$" \
        "$TMP/err" && pass || fail "the default schedule not said: $(grep '^lr:' "$TMP/err")"
    expect_ok "rsqrt of a Transformer" "$NMT" train "${DATA[@]}" "${TFS[@]}" --lr-schedule rsqrt \
        --out "$TMP/tfr"
    C=$TMP/tfr/checkpoint.safetensors
    [ "$(meta_of "$C" train.warmup)" = 300 ] && [ -z "$(meta_of "$C" train.lr_schedule)" ] &&
        [ -z "$(meta_of "$C" train.warmup_share)" ] && pass ||
        fail "rsqrt of a Transformer: warmup $(meta_of "$C" train.warmup) schedule '$(meta_of "$C" train.lr_schedule)'"
    # a streamed corpus without a step or time limit: no end for the line,
    # so rsqrt, and the reason said
    TFE=("${TFS[@]/--max-steps/--epochs}")
    expect_ok "a stream's Transformer without an end" "$NMT" train "${DATA[@]}" "${TFE[@]/12/1}" \
        --shuffle-buffer 100 --out "$TMP/tfs"
    C=$TMP/tfs/checkpoint.safetensors
    [ "$(meta_of "$C" train.warmup)" = 300 ] && [ -z "$(meta_of "$C" train.lr_schedule)" ] &&
        grep -q "^lr: a warm-up to 0.004 over 300 steps, then lr \* sqrt(warm-up / step), not the transformer's line to 0: a streamed corpus without --max-steps or --max-time gives the line no end" "$TMP/err" &&
        pass || fail "a stream's Transformer without an end: warmup $(meta_of "$C" train.warmup) schedule '$(meta_of "$C" train.lr_schedule)' $(grep '^lr:' "$TMP/err")"
fi
# by the clock: it falls and ends near 0 (the last step starts within a
# step's time of the limit)
expect_ok "linear by the clock" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer sgd \
    --lr 0.5 --lr-schedule linear --max-time 3s --report-every 1 --out "$TMP/lint"
awk -F'\t' 'NR > 1 { if (NR > 2 && $3 > prev) bad = 1; prev = $3; n++ }
    END { exit !(n >= 5 && !bad && prev < 0.1) }' "$TMP/lint/log.tsv" && pass ||
    fail "linear by the clock: lr $(awk -F'\t' 'NR > 1 { print $3 }' "$TMP/lint/log.tsv" | tr '\n' ' ')"
# kill -9 in the middle of a linear decay, then resume: the uninterrupted run's bits
L=(--optimizer adam --lr 0.01 --lr-schedule linear --warmup 5 --dropout 0.2 --seed 5 --save-every 2
   --report-every 1 --max-steps 40)
expect_ok "linear, uninterrupted" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" "${L[@]}" --out "$TMP/lu"
train_killed linear 8 "$TMP/lk" "${DATA[@]}" "${SMALL[@]}" "${L[@]}"
expect_ok "linear, resumed after kill -9" "$NMT" train -q --resume "$TMP/lk"
same_data "$TMP/lu/checkpoint.safetensors" "$TMP/lk/checkpoint.safetensors" && pass ||
    fail "kill -9 in a linear decay + resume differs from the uninterrupted run"
# a warm-up of 8 steps in a run of 12, bounded by its first quarter: the
# share's slope from step 2, the line from step 4 (p = 3/12)
expect_ok "linear, warm-up bounded by a share" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" \
    --optimizer sgd --lr 0.5 --lr-schedule linear --warmup 8 --warmup-share 0.25 --max-steps 12 \
    --report-every 1 --out "$TMP/lins"
[ "$(lr_column "$TMP/lins")" = "$(expected_share 0.5 8 0.25 12)" ] && pass ||
    fail "linear with a share: lr column $(lr_column "$TMP/lins" | tr '\n' ' ')"
[ "$(meta_of "$TMP/lins/checkpoint.safetensors" train.warmup_share)" = 0.25 ] && pass ||
    fail "train.warmup_share not in the checkpoint"
# an explicit line's warm-up takes a quarter unless told; --warmup-share 0
# is the steps' ramp alone (the expected column above without the share)
[ "$(meta_of "$TMP/lin/checkpoint.safetensors" train.warmup_share)" = 0.25 ] && pass ||
    fail "a linear warm-up without --warmup-share: share $(meta_of "$TMP/lin/checkpoint.safetensors" train.warmup_share)"
expect_ok "linear, share 0" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer sgd \
    --lr 0.5 --lr-schedule linear --warmup 8 --warmup-share 0 --max-steps 12 --report-every 1 \
    --out "$TMP/lins0"
[ "$(lr_column "$TMP/lins0")" = "$(expected_linear 0.5 8 12)" ] &&
    [ -z "$(meta_of "$TMP/lins0/checkpoint.safetensors" train.warmup_share)" ] && pass ||
    fail "--warmup-share 0: lr column $(lr_column "$TMP/lins0" | tr '\n' ' ')"
# killed in a warm-up that the share ends (30 steps' ramp, ended at step 11
# of 40), then resumed: the uninterrupted run's bits
expect_ok "linear, share-bounded warm-up, uninterrupted" "$NMT" train --arch rnn "${DATA[@]}" \
    "${SMALL[@]}" "${L[@]}" --warmup 30 --warmup-share 0.25 --out "$TMP/lsu"
train_killed "linear, share-bounded warm-up" 8 "$TMP/lsk" "${DATA[@]}" "${SMALL[@]}" "${L[@]}" \
    --warmup 30 --warmup-share 0.25
expect_ok "linear, share-bounded warm-up, resumed after kill -9" "$NMT" train -q --resume "$TMP/lsk"
same_data "$TMP/lsu/checkpoint.safetensors" "$TMP/lsk/checkpoint.safetensors" && pass ||
    fail "kill -9 in a share-bounded warm-up + resume differs from the uninterrupted run"
# ... and in a line that starts late, killed while the lr is still held
expect_ok "linear from 0.6, uninterrupted" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" "${L[@]}" \
    --decay-from 0.6 --out "$TMP/lhu"
train_killed "linear from 0.6" 8 "$TMP/lhk" "${DATA[@]}" "${SMALL[@]}" "${L[@]}" --decay-from 0.6
expect_ok "linear from 0.6, resumed after kill -9" "$NMT" train -q --resume "$TMP/lhk"
same_data "$TMP/lhu/checkpoint.safetensors" "$TMP/lhk/checkpoint.safetensors" && pass ||
    fail "kill -9 in a linear decay from 0.6 + resume differs from the uninterrupted run"
same_data "$TMP/lhu/checkpoint.safetensors" "$TMP/lu/checkpoint.safetensors" &&
    fail "--decay-from 0.6 changed nothing in the weights" || pass
# without --max-steps or --max-time the epochs place the end: step n's
# p is (e - 1 + b / B_e) / E, its first batch b of epoch e's B_e batches
# (counted from the log, so epochs of unequal batches are judged each by
# its own), E the epoch limit
expected_by_epochs() { # expected_by_epochs LR EPOCHS LOG
    awk -F'\t' -v lr="$1" -v E="$2" 'NR > 1 { s[NR] = $1; e[NR] = $2; n[$2]++; last = NR }
        END { for (r = 2; r <= last; r++) {
            b = (e[r] == e[r - 1]) ? b + 1 : 0
            printf "%d %.6g\n", s[r], lr * (1 - ((e[r] - 1) + b / n[e[r]]) / E) } }' "$3"
}
expect_ok "linear by epochs" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" --optimizer sgd \
    --lr 0.5 --lr-schedule linear --epochs 3 --batch-tokens 200 --report-every 1 --out "$TMP/line"
[ "$(lr_column "$TMP/line")" = "$(expected_by_epochs 0.5 3 "$TMP/line/log.tsv")" ] &&
    [ "$(awk -F'\t' 'END { print $2 }' "$TMP/line/log.tsv")" = 3 ] && pass ||
    fail "linear by epochs: lr column $(lr_column "$TMP/line" | tr '\n' ' ')"
# ... and the default 10 epochs, killed and resumed: the uninterrupted bits
LE=(--optimizer adam --lr 0.01 --lr-schedule linear --warmup 5 --dropout 0.2 --seed 5 --save-every 2
    --report-every 1 --batch-size 64)
expect_ok "linear by epochs, uninterrupted" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" "${LE[@]}" \
    --out "$TMP/leu"
train_killed "linear by epochs" 12 "$TMP/lek" "${DATA[@]}" "${SMALL[@]}" "${LE[@]}"
expect_ok "linear by epochs, resumed after kill -9" "$NMT" train -q --resume "$TMP/lek"
same_data "$TMP/leu/checkpoint.safetensors" "$TMP/lek/checkpoint.safetensors" && pass ||
    fail "kill -9 in a linear decay by epochs + resume differs from the uninterrupted run"
[ "$(awk -F'\t' 'END { print $2 }' "$TMP/leu/log.tsv")" = 10 ] &&
    awk -F'\t' 'NR > 1 { l = $3 } END { exit !(l > 0 && l < 0.001) }' "$TMP/leu/log.tsv" && pass ||
    fail "linear by the default epochs: did not end in epoch 10 near lr 0"

# --- resume in the middle of warm-up: exact -----------------------------------------
# A run stopped at step 6 of a 60-step warm-up and extended to 40, and one
# killed anywhere and resumed, end as the uninterrupted run does.
W=(--optimizer adam --lr 0.01 --warmup 60 --dropout 0.2 --seed 5 --save-every 2 --report-every 1)
expect_ok "uninterrupted" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" "${W[@]}" --max-steps 40 --out "$TMP/u"
expect_ok "stopped at 6" "$NMT" train --arch rnn "${DATA[@]}" "${SMALL[@]}" "${W[@]}" --max-steps 6 --out "$TMP/r"
expect_ok "extended to 40" "$NMT" train -q --resume "$TMP/r" --max-steps 40
same_data "$TMP/u/checkpoint.safetensors" "$TMP/r/checkpoint.safetensors" && pass ||
    fail "a run resumed in warm-up differs from the uninterrupted one"
cmp -s <(cut -f1-6 "$TMP/u/log.tsv") <(cut -f1-6 "$TMP/r/log.tsv") && pass ||
    fail "the resumed log.tsv differs in step, lr or loss"
# kill -9 once the log shows three steps
train_killed warmup 4 "$TMP/k" "${DATA[@]}" "${SMALL[@]}" "${W[@]}" --max-steps 40
expect_ok "resume after kill -9" "$NMT" train -q --resume "$TMP/k"
same_data "$TMP/u/checkpoint.safetensors" "$TMP/k/checkpoint.safetensors" && pass ||
    fail "kill -9 in warm-up + resume differs from the uninterrupted run"
[ "$(meta_of "$TMP/k/checkpoint.safetensors" state.step)" = 40 ] && pass || fail "the resumed run did not reach step 40"

finish
