#!/usr/bin/env bash
# nmt translate --sample, on an RNN and a Transformer: a fixed seed gives the
# same samples twice, at 1 and 2 threads and at batch size 1 and 8; another
# seed gives others; temperature 1e-4 and --top-k 1 give the greedy output;
# --n-best N draws N samples listed best score first; the refusals name
# their option. --prefix FILE: every output starts with its line's prefix
# (greedy, beam, sampling, n-best; a word the model does not know included),
# an empty prefix line changes nothing, the greedy output's first words as
# prefix give the greedy output, and a line-count mismatch is refused with
# both counts.
. "$(dirname "$0")/lib.sh"

TOY=${NMT_SOURCE_ROOT:?}/corpora/toy
cd "$TMP" || exit 1
zcat "$TOY/train.src.gz" | head -n 300 >s
zcat "$TOY/train.tgt.gz" | head -n 300 >t
zcat "$TOY/test.src.gz" | head -n 12 >ts
expect_ok "train a small Transformer" "$NMT" train -q --arch transformer --src s --tgt t \
    --d-model 16 --heads 2 --ff 32 --layers 2 --batch-size 16 --max-steps 40 --threads 1 --out tf
expect_ok "train a small RNN" "$NMT" train --arch rnn -q --src s --tgt t --emb 8 --hidden 8 --att-dim 8 \
    --out-dim 8 --max-steps 40 --threads 1 --out rnn

# same_output NAME FILE CMD...: CMD succeeds and writes exactly FILE.
same_output() {
    local name=$1 want=$2
    shift 2
    if ! "$@" >"$TMP/got" 2>"$TMP/err"; then fail "$name: exit $?: $(head -c 300 "$TMP/err")"; return; fi
    if cmp -s "$want" "$TMP/got"; then pass; else fail "$name: output differs from $want"; fi
}

for arch in tf rnn; do
    M=$arch/checkpoint.safetensors
    T=("$NMT" translate -q -m $M -i ts)
    expect_ok "$arch: greedy" "${T[@]}" -b 1 --threads 1 -o greedy.$arch
    expect_ok "$arch: sample, seed 7" "${T[@]}" --sample --seed 7 --threads 1 -o s7.$arch
    same_output "$arch: seed 7 again" s7.$arch "${T[@]}" --sample --seed 7 --threads 1
    same_output "$arch: seed 7 at 2 threads" s7.$arch "${T[@]}" --sample --seed 7 --threads 2
    same_output "$arch: seed 7, batch size 1" s7.$arch "${T[@]}" --sample --seed 7 --batch-size 1
    same_output "$arch: seed 7, batch size 8" s7.$arch "${T[@]}" --sample --seed 7 --batch-size 8
    expect_ok "$arch: sample, seed 8" "${T[@]}" --sample --seed 8 --threads 1 -o s8.$arch
    if cmp -s s7.$arch s8.$arch; then fail "$arch: seeds 7 and 8 give the same samples"; else pass; fi
    same_output "$arch: temperature 1e-4 is greedy" greedy.$arch "${T[@]}" --sample --temperature 1e-4
    same_output "$arch: top-k 1 is greedy" greedy.$arch "${T[@]}" --sample --top-k 1 --seed 3
    same_output "$arch: top-p 1e-6 is greedy" greedy.$arch "${T[@]}" --sample --top-p 1e-6 --seed 3
    # n-best samples: 5 per line, numbered as the input, best score first
    expect_ok "$arch: 5 samples" "${T[@]}" --sample --n-best 5 --seed 1 -o nb.$arch
    awk -F' [|][|][|] ' '{ n[$1]++; if ($1 == prev && $3 + 0 > last + 0) bad = 1; prev = $1; last = $3 }
        END { for (i in n) if (n[i] != 5) bad = 1; if (length(n) != 12) bad = 1; exit bad }' nb.$arch &&
        pass || fail "$arch: n-best samples are not 5 a line, best score first: $(head -n 6 nb.$arch)"
    # the same samples in the same order; the scores' last digits may differ
    # with the batch size (OpenBLAS rounds a product's rows by their number:
    # batch_size.sh), as the beam's do
    cut -d'|' -f1-4 nb.$arch >nbt.$arch
    "${T[@]}" --sample --n-best 5 --seed 1 --batch-size 1 --threads 2 | cut -d'|' -f1-4 >nbt1.$arch
    cmp -s nbt.$arch nbt1.$arch && pass || fail "$arch: n-best samples differ at batch size 1"
    # a sample at temperature 1 is rarely the greedy output all the way
    "${T[@]}" --sample --n-best 20 --seed 2 --temperature 3 | cut -d'|' -f4 | sort -u | wc -l >n.$arch
    [ "$(cat n.$arch)" -gt 12 ] && pass || fail "$arch: 20 samples at temperature 3 are all alike"

    # prefixes: the greedy output's first two words on even lines (empty
    # lines stay unforced), a made-up word and a known one on odd lines
    awk 'NR % 2 { print $1, $2; next } { print "" }' greedy.$arch >p_greedy.$arch
    same_output "$arch: greedy with its own first words as prefix" greedy.$arch \
        "${T[@]}" -b 1 --prefix p_greedy.$arch
    awk 'NR % 2 { print $1, $2; next } { print "zzqq", $1 }' greedy.$arch >p.$arch
    gzip -c p.$arch >p.$arch.gz
    for o in "-b 1" "-b 4" "--sample --seed 5" "--sample --n-best 3 --seed 5 --temperature 2" \
        "-b 4 --n-best 2"; do
        if ! "${T[@]}" $o --prefix p.$arch.gz >pout.$arch 2>err; then
            fail "$arch: --prefix with $o: $(head -c 300 err)"; continue
        fi
        # n-best lines: 'i ||| text ||| score'; plain lines are numbered by awk
        awk -F' [|][|][|] ' -v nb="$(case $o in *n-best*) echo 1;; esac)" '
            NR == FNR { pre[NR - 1] = $0; next }
            { i = nb ? $1 : FNR - 1; text = nb ? $2 : $0
              if (substr(text, 1, length(pre[i])) != pre[i]) { print i ": " text; bad = 1 } }
            END { exit bad }' p.$arch pout.$arch >bad.$arch &&
            pass || fail "$arch: --prefix with $o: outputs without their prefix: $(head -n 3 bad.$arch)"
    done
done

# a prefix is text, written back exactly as given (but for the whitespace at
# its ends), whatever the model's units make of it: text that looks like the
# model's special tokens (a word model reads "</s>" as four tokens, which
# its detokenizer would join as "</s >"), markup, spaces around brackets,
# doubled spaces, quotes, capitals a lowercasing model would lower
expect_ok "train a small subword model (lowercase)" "$NMT" train --arch rnn -q --src s --tgt t --emb 8 \
    --hidden 8 --att-dim 8 --out-dim 8 --max-steps 20 --threads 1 --subwords 60 --lowercase \
    --out sw
printf '%s\n' '</s> be' '<unk> ofu' '<s>' '<pad> re' '<b> be </b>' 'be ( ofu ) re' \
    "\"be 're' ofu" 'be  re   ofu' "   be re	" 'Be RE Ofu' 'be , re .' '' >p_text
for arch in tf rnn sw; do
    for o in "-b 1" "-b 4 --n-best 2" "--sample --n-best 3 --seed 5"; do
        if ! "$NMT" translate -q -m $arch/checkpoint.safetensors -i ts $o --prefix p_text \
            >pout 2>err; then
            fail "$arch: --prefix with $o: $(head -c 300 err)"; continue
        fi
        awk -F' [|][|][|] ' -v nb="$(case $o in *n-best*) echo 1;; esac)" '
            NR == FNR { sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); pre[NR - 1] = $0; next }
            { i = nb ? $1 : FNR - 1; text = nb ? $2 : $0
              if (substr(text, 1, length(pre[i])) != pre[i]) { print i ": " text; bad = 1 } }
            END { exit bad }' p_text pout >bad &&
            pass || fail "$arch: --prefix with $o: not the prefix as written: $(head -n 3 bad)"
    done
done

T=("$NMT" translate -q -m tf/checkpoint.safetensors -i ts)
# a prefix longer than the line's length limit (2 x 3 words + 10) is kept
# whole, and the decoder goes on after it
head -n 1 ts | cut -d' ' -f1-3 >short
printf 'ofu %.0s' $(seq 40) >plong
echo >>plong
expect_ok "a prefix of 40 words" "${T[@]}" -i short --prefix plong -b 3
[ "$(cut -d' ' -f1-40 "$TMP/out")" = "$(sed 's/ $//' plong)" ] && pass ||
    fail "a prefix of 40 words is not kept whole: $(cat "$TMP/out")"
expect_fail "a prefix past --max-ratio 0's limit" "a prefix of 40 tokens is not in 0..9" \
    "${T[@]}" -i short --prefix plong --max-ratio 0
head -n 5 p.tf >p5
expect_fail "fewer prefixes than lines" "--prefix: p5 has 5 lines, the input 12" "${T[@]}" --prefix p5
(cat p.tf; echo extra) >p13
expect_fail "more prefixes than lines" "--prefix: p13 has 13 lines, the input 12" "${T[@]}" --prefix p13
# both files: counted before anything is translated, so standard output gets
# nothing (the translations of 12 lines, then the refusal, before) and -o
# leaves no file; gzip counts its lines
gzip -c p13 >p13.gz
for p in p5 p13 p13.gz; do
    rm -f never.txt
    expect_fail "$p: a count mismatch refused first" "--prefix: $p has (5|13) lines, the input 12" \
        "${T[@]}" --prefix $p
    [ ! -s "$TMP/out" ] && pass || fail "$p: a count mismatch wrote $(wc -l <"$TMP/out") lines first"
    expect_fail "$p: a count mismatch with -o" "--prefix: $p has" "${T[@]}" --prefix $p -o never.txt
    [ ! -e never.txt ] && pass || fail "$p: a count mismatch left -o's file"
done
# the input on standard input cannot be counted first: the translations go
# out as they are made, and the surplus prefix is found at the end (--help
# and docs/decoding.md say so)
"$NMT" translate -q -m tf/checkpoint.safetensors --prefix p13 <ts >piped 2>err
rc=$?
[ $rc -eq 1 ] && grep -q -- "--prefix: p13 has 13 lines, the input 12" err &&
    [ "$(wc -l <piped)" -eq 12 ] && pass ||
    fail "surplus prefixes for standard input: exit $rc, $(wc -l <piped) lines, $(cat err)"
expect_fail "a missing prefix file" "nope" "${T[@]}" --prefix nope
expect_fail "prefixes and input both on stdin" "--prefix: standard input is already the input" \
    "$NMT" translate -q -m tf/checkpoint.safetensors --prefix - <ts
expect_fail "temperature 0" "--temperature: 0 is not > 0" "${T[@]}" --sample --temperature 0
expect_fail "temperature -1" "--temperature: -1 is not > 0" "${T[@]}" --sample --temperature -1
expect_fail "top-k -1" "--top-k" "${T[@]}" --sample --top-k -1
expect_fail "top-p 0" "--top-p: 0 is not in \(0, 1\]" "${T[@]}" --sample --top-p 0
expect_fail "top-p 1.5" "--top-p: 1.5 is not in \(0, 1\]" "${T[@]}" --sample --top-p 1.5
expect_fail "top-p not a number" "--top-p: 'x' is not a finite number" "${T[@]}" --sample --top-p x
expect_fail "sample with a beam" "--sample: not with --beam 4" "${T[@]}" --sample -b 4
for o in "--top-k 2" "--top-p 0.5" "--temperature 2" "--seed 1"; do
    expect_fail "$o without --sample" "${o% *}: only with --sample" "${T[@]}" $o
done
expect_ok "help shows --sample" "$NMT" translate --help
grep -q -- "--top-p P" "$TMP/out" && pass || fail "--help does not show --top-p"

finish
