# scripts/experiments/attention-zoo end to end in its --quick mode (a few steps of each
# kind on both corpora, 100 test sentences): it runs, and its table holds a
# column per kind (the five RNN attentions and the Transformer) and the
# figures of the tools it summarises (nmt info's parameters, nmt align
# --gold's AER, the best map of --per-head, the runs' log.tsv); bad options
# are refused; --kinds trains the kinds asked for, as the whole zoo does.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
M30K=${NMT_CORPORA:?}/multi30k
ZOO=$ROOT/scripts/experiments/attention-zoo
OUT=$TMP/zoo

expect_fail "unknown option" "attention-zoo: unknown option '--fast'" "$ZOO" --fast
expect_fail "bad --jobs" "--jobs: '0' is not a positive whole number" "$ZOO" --jobs 0
expect_fail "--nmt without a value" "--nmt needs a value" "$ZOO" --nmt
expect_fail "both parts alone" "--toy-only and --multi30k-only: give one" "$ZOO" --toy-only --multi30k-only
expect_ok "help" "$ZOO" --help
grep -q "^Writes DIR" "$TMP/out" && grep -q -- "--quick" "$TMP/out" && pass || fail "--help on stdout"

expect_ok "attention-zoo --quick" "$ZOO" --quick --nmt "$NMT" --corpus "$M30K" --out "$OUT" --jobs 2
T=$OUT/zoo.txt
[ -s "$T" ] && cmp -s <(sed -n '/^attention zoo/,$p' "$TMP/out" | sed '$d' | sed '$d') "$T" && pass ||
    fail "zoo.txt is not the table the script printed"
grep -q "^QUICK MODE" "$T" && pass || fail "a quick table says so"
grep -Eq "^commit [0-9a-f]+" "$T" && pass || fail "the table names its commit"

# each corpus: a column per kind, every row with five cells
for part in "toy corpus" "Multi30k De->En"; do
    awk -v part="$part" '
        index($0, part) == 1 { on = 1; next }
        on && /^(BLEU|chrF2): / { exit }
        on && $1 == "run" { run = $2 " " $3 " " $4 " " $5 " " $6 " " $7 }
        on && $1 == "model" && $2 != "file" { model = $2 " " $3 " " $4 " " $5 " " $6 " " $7 " " $8 }
        on && /^steps\/s/ { steps = NF - 2 }
        on && /^parameters/ { params = NF - 1 }
        END {
            ok = run == "bahdanau dot general scaled-dot none transformer" &&
                 model == "gru/bahdanau gru/dot gru/general gru/scaled-dot gru/none transformer 4+4" &&
                 steps == 6 && params == 6
            exit !ok
        }' "$T" && pass || fail "$part: the table lacks a column per kind"
done

# the figures, from the tools themselves
toy_block() { awk '/^toy corpus/ { on = 1 } on && /^BLEU: / { exit } on' "$T"; }
m30k_block() { awk '/^Multi30k De->En/ { on = 1 } on && /^BLEU: / { exit } on' "$T"; }
col=2
for kind in bahdanau dot general scaled-dot none transformer; do
    expect_ok "info $kind" "$NMT" info "$OUT/toy/$kind/best.safetensors"
    want=$(awk '$1 == "parameters" { print $2 }' "$TMP/out")
    got=$(toy_block | awk -v c=$col '$1 == "parameters" { print $c }')
    [ "$got" = "$want" ] && pass || fail "toy $kind: parameters $got, nmt info says $want"
    got=$(toy_block | awk -v c=$((col + 3)) '/^AER against the gold/ { print $c }')
    if [ $kind = none ]; then
        [ "$got" = "-" ] && pass || fail "none has an AER: $got"
    else
        expect_ok "align --gold $kind" "$NMT" align -m "$OUT/toy/$kind/best.safetensors" \
            --src "$OUT/toy/data/test.src" --tgt "$OUT/toy/data/test.tgt" \
            --gold "$OUT/toy/data/test.align"
        want=$(awk '$1 == "AER" { print $2 }' "$TMP/out")
        [ -n "$want" ] && [ "$got" = "$want" ] && pass || fail "toy $kind: AER $got, nmt align says $want"
        # the best map: the least AER of --per-head's table, and that map
        # asked for alone gives it
        best=$(toy_block | awk -v c=$((col + 4)) '/^AER of the best map/ { print $c }')
        name=$(toy_block | awk -v c=$((col + 1)) '/^  which map/ { print $c }')
        least=$(awk '/^  (layer|attention) / { for (i = ($1 == "layer" ? 3 : 2); i <= NF; i++) {
                        a = $i; sub(/\*$/, "", a); if (m == "" || a + 0 < m + 0) m = a } }
                     END { print m }' "$OUT/toy/per-head-$kind.txt")
        [ -n "$best" ] && [ "$best" = "$least" ] && pass ||
            fail "toy $kind: best map's AER $best, the least of --per-head's table $least"
        if [ $kind = transformer ]; then
            [[ $name =~ ^L([0-9]+)(H([0-9]+)|mean)$ ]] || fail "transformer: best map '$name'"
            expect_ok "align the best map" "$NMT" align -m "$OUT/toy/$kind/best.safetensors" \
                --src "$OUT/toy/data/test.src" --tgt "$OUT/toy/data/test.tgt" \
                --gold "$OUT/toy/data/test.align" --layer "${BASH_REMATCH[1]}" \
                --head "${BASH_REMATCH[3]:-mean}"
            want=$(awk '$1 == "AER" { print $2 }' "$TMP/out")
            [ "$best" = "$want" ] && pass || fail "transformer: best map $name's AER $best, alone $want"
        else
            [ "$name" = attention ] && pass || fail "$kind: best map '$name'"
        fi
    fi
    # 30 steps, and a training rate where log.tsv has rows without validation
    for block in toy_block m30k_block; do
        got=$($block | awk -v c=$col '$1 == "steps" && NF == 7 { print $c }')
        [ "$got" = 30 ] && pass || fail "$block $kind: steps $got"
        got=$($block | awk -v c=$((col + 1)) '/^steps\/s/ { print $c }')
        awk -v x="$got" 'BEGIN { exit !(x > 0) }' && pass || fail "$block $kind: steps/s '$got'"
    done
    col=$((col + 1))
done
for kind in bahdanau dot general scaled-dot transformer; do
    grep -q '<svg' "$OUT/toy/alignment-$kind.svg" && pass || fail "no alignment picture for $kind"
done
[ ! -e "$OUT/toy/alignment-none.svg" ] && pass || fail "a picture for the model without attention"
for part in toy multi30k; do
    grep -q '<svg' "$OUT/$part/bleu-by-length.svg" && pass || fail "$part: no BLEU chart"
done

# --kinds: some of the kinds, in the zoo's order, each at the whole zoo's
# settings (one thread and one seed: the very model the whole zoo trained)
expect_fail "unknown kind" "attention-zoo: --kinds: 'luong' is none of bahdanau dot" "$ZOO" \
    --kinds bahdanau,luong
expect_ok "--kinds transformer,dot" "$ZOO" --quick --toy-only --kinds transformer,dot --nmt "$NMT" \
    --out "$TMP/zk" --jobs 2
[ "$(awk '$1 == "run" { print $2, $3, NF }' "$TMP/zk/zoo.txt")" = "dot transformer 3" ] && pass ||
    fail "--kinds: columns $(awk '$1 == "run"' "$TMP/zk/zoo.txt")"
[ ! -e "$TMP/zk/toy/bahdanau" ] && pass || fail "--kinds trained a kind not asked for"
for kind in dot transformer; do
    same_data "$TMP/zk/toy/$kind/best.safetensors" "$OUT/toy/$kind/best.safetensors" && pass ||
        fail "--kinds: $kind is not the model the whole zoo trained"
done
finish
