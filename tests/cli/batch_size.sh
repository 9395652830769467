#!/usr/bin/env bash
# What --batch-size and --threads change in nmt translate's output: the
# rounding of OpenBLAS's products alone (docs/decoding.md, "Batch size,
# threads and rounding"). With OpenBLAS, on the shipped RNN and a small
# Transformer, greedy and beam n-best lists at batch sizes 7 and 32 (1 and
# 2 threads) have batch size 1's text and scores within 1e-4, and sampled
# n-best lists the same samples but where a draw fell within rounding of
# another token (at most 1 in 100 entries), with scores within 1e-4. With a
# BLAS that rounds every row alike, preloaded in OpenBLAS's place
# (naive_blas.c, the first argument), every batch size and thread count
# gives the same bytes, scores included: nothing of nmt's own depends on
# the batch. --help says what may differ.
. "$(dirname "$0")/lib.sh"

NAIVE_BLAS=$(realpath "${1:?usage: batch_size.sh NAIVE_BLAS.so}") # before the cd below
TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/test.src.gz" | head -n 300 >ts300
head -n 40 ts300 >ts40
expect_ok "train a small Transformer" "$NMT" train -q --arch transformer --src s --tgt t \
    --d-model 16 --heads 2 --ff 32 --layers 2 --batch-size 16 --max-steps 40 --threads 1 --out tf
expect_ok "train a small RNN" "$NMT" train --arch rnn -q --src s --tgt t --emb 8 --hidden 8 --att-dim 8 \
    --out-dim 8 --max-steps 40 --threads 1 --out rnn

# --- the promise ----------------------------------------------------------------
expect_ok "help" "$NMT" translate --help
tr -s ' \n' '  ' <"$TMP/out" >help.txt
grep -q "but for the rounding of the matrix products" help.txt &&
    grep -q "scores may differ in their last printed digits" help.txt && pass ||
    fail "translate --help does not say what --batch-size and --threads may change"

# --- OpenBLAS: the bound ------------------------------------------------------------
# within NAME A B: n-best lists A and B ('i ||| text ||| score') have the same
# entries but for at most MAX_TEXT in 100 whose text differs, and the
# scores of the others within 1e-4
within() {
    if awk -F' [|][|][|] ' -v name="$1" -v max_text="$4" '
        NR == FNR { text[FNR] = $1 "|" $2; score[FNR] = $3; n = FNR; next }
        { if (text[FNR] != $1 "|" $2) { other++; next }
          d = score[FNR] - $3; d = d < 0 ? -d : d; if (d > worst) worst = d }
        END { if (FNR != n) { print name ": " FNR " entries, not " n; exit 1 }
              printf "%s: %d of %d texts differ, scores within %.1e\n", name, other, n, worst \
                  >"/dev/stderr"
              if (other > max_text * n / 100) { print name ": " other " of " n " texts differ"; exit 1 }
              if (worst > 1e-4) { print name ": scores differ by " worst; exit 1 } }' \
        "$2" "$3" >why; then pass; else fail "$(cat why)"; fi
}
SHIPPED=$NMT_SOURCE_ROOT/models/toy-attention.safetensors
for m in "$SHIPPED" tf/checkpoint.safetensors; do
    for mode in "greedy:-b 1 --n-best 1:0" "beam:-b 4 --n-best 4:0" \
        "samples:--sample --n-best 4 --seed 3:1"; do
        IFS=: read -r name opts max_text <<<"$mode"
        # shellcheck disable=SC2086 # opts are words
        "$NMT" translate -q -m "$m" -i ts300 $opts --batch-size 1 --threads 1 >ref.txt
        for run in "7 2" "32 1"; do
            read -r bs th <<<"$run"
            # shellcheck disable=SC2086
            "$NMT" translate -q -m "$m" -i ts300 $opts --batch-size $bs --threads $th >got.txt
            within "${m##*/} $name, batch size $bs, $th threads" ref.txt got.txt "$max_text"
        done
    done
done

# --- a BLAS that rounds every row alike: the same bytes ---------------------------------
# (under ASan the preloaded library comes before ASan's runtime, which is
# then told not to mind)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
preloaded=0
for m in rnn tf; do
    for opts in "-b 1" "-b 4 --n-best 4" "--sample --n-best 3 --seed 5"; do
        # shellcheck disable=SC2086
        LD_PRELOAD=$NAIVE_BLAS "$NMT" translate -q -m $m/checkpoint.safetensors -i ts40 $opts \
            --batch-size 1 --threads 1 >ref.txt 2>err && [ ! -s err ] || fail "$m $opts: $(cat err)"
        # shellcheck disable=SC2086
        "$NMT" translate -q -m $m/checkpoint.safetensors -i ts40 $opts --batch-size 1 \
            --threads 1 >openblas.txt
        cmp -s ref.txt openblas.txt || preloaded=1
        for run in "7 2" "32 1" "3 2"; do
            read -r bs th <<<"$run"
            # shellcheck disable=SC2086
            LD_PRELOAD=$NAIVE_BLAS "$NMT" translate -q -m $m/checkpoint.safetensors -i ts40 \
                $opts --batch-size $bs --threads $th >got.txt 2>err
            cmp -s ref.txt got.txt && pass ||
                fail "$m $opts, a BLAS that rounds rows alike: batch size $bs, $th threads differ"
        done
    done
done
# the preloaded library did take OpenBLAS's place (its rounding shows)
[ $preloaded = 1 ] && pass || fail "the same output with and without $NAIVE_BLAS"
finish
