# nmt bleu: sacreBLEU's published examples, 240 random cases from Multi30k
# scored by sacreBLEU itself (tests/bleu_expected.tsv), the output forms and
# the refusals.
. "$(dirname "$0")/lib.sh"
SRC=${NMT_SOURCE_ROOT:?NMT_SOURCE_ROOT is not set}
PY=${NMT_PYTHON:-python3}

# --- sacreBLEU's README example: two reference sets -----------------------
printf '%s\n' 'The dog bit the man.' 'It was not unexpected.' 'The man bit him first.' >"$TMP/ref1"
printf '%s\n' 'The dog had bit the man.' 'No one was surprised.' 'The man had bitten the dog.' >"$TMP/ref2"
printf '%s\n' 'The dog bit the man.' "It wasn't surprising." 'The man had just bitten him.' >"$TMP/hyp"
printf '\n\n\n' >"$TMP/empty3"
readme_line='BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)'

# expect_out NAME EXPECTED CMD...: CMD succeeds and prints exactly EXPECTED.
expect_out() {
    local name=$1 want=$2
    shift 2
    if ! "$@" >"$TMP/out" 2>"$TMP/err"; then fail "$name: exit $?: $(head -c 300 "$TMP/err")"; return; fi
    if [ "$(cat "$TMP/out")" = "$want" ]; then pass; else
        fail "$name: got '$(head -c 300 "$TMP/out")', want '$want'"; fi
}

expect_out "readme, -i" "$readme_line" "$NMT" bleu "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp"
expect_out "readme, stdin" "$readme_line" sh -c '"$0" bleu "$1" "$2" <"$3"' "$NMT" "$TMP/ref1" "$TMP/ref2" "$TMP/hyp"
expect_out "readme, tokenize none" 49.19 "$NMT" bleu -t none -b "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp"
expect_out "readme, smooth none" 48.53 "$NMT" bleu --smooth none -b "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp"
expect_out "perfect match" 100.00 "$NMT" bleu -b "$TMP/ref1" -i "$TMP/ref1"
expect_out "empty hypotheses" 0.00 "$NMT" bleu -b "$TMP/ref1" "$TMP/ref2" -i "$TMP/empty3"
expect_out "short signature" \
    'BLEU|#:2|c:mixed|e:no|tok:13a|s:floor[0.10]|v:2.6.0 = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)' \
    "$NMT" bleu --short --smooth floor "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp"
gzip -c "$TMP/ref2" >"$TMP/ref2.gz"
expect_out "gzip reference" 48.53 "$NMT" bleu -b "$TMP/ref1" "$TMP/ref2.gz" -i "$TMP/hyp"

# JSON: sacreBLEU's fields, the score rounded to the width then printed as a
# Python float (48.5 at -w 1, its command line's default).
if "$NMT" bleu --json -w 1 "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp" >"$TMP/json" 2>"$TMP/err" &&
    "$PY" - "$TMP/json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["name", "score", "signature", "verbose_score", "nrefs", "case", "eff",
                   "tok", "smooth", "version"], list(d)
assert d["name"] == "BLEU" and d["score"] == 48.5 and d["nrefs"] == "2" and d["tok"] == "13a"
assert d["verbose_score"].startswith("82.4/50.0/45.5/37.5 (BP = 0.943"), d["verbose_score"]
assert d["signature"].startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.")
EOF
then pass; else fail "json: $(head -c 400 "$TMP/json") $(head -c 200 "$TMP/err")"; fi

expect_out "json score only" 48.53 "$NMT" bleu --json -b "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp"
if "$NMT" bleu --json --by-length "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp" >"$TMP/json" 2>"$TMP/err" &&
    "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); b = d["by_length"]
assert [x["sentences"] for x in b] == [3, 0, 0, 0, 0, 0] and b[0]["score"] == 48.53 and b[1]["score"] is None' "$TMP/json"
then pass; else fail "json by-length: $(head -c 400 "$TMP/json")"; fi

# --- 240 random cases: the numbers sacreBLEU gave for the same inputs -----
cases=$TMP/cases
if ! "$PY" "$SRC/tests/bleu_cases.py" generate "$cases" 2>"$TMP/err"; then
    fail "bleu_cases.py generate: $(head -c 400 "$TMP/err")"
fi
checked=0
prev_case=
tab=$'\t'
while IFS= read -r row; do
    case $row in '#'*|'') continue ;; esac
    # Fields split by hand: read would merge the empty args field away.
    id=${row%%"$tab"*}; row=${row#*"$tab"}
    args=${row%%"$tab"*}; row=${row#*"$tab"}
    score=${row%%"$tab"*}; row=${row#*"$tab"}
    stats=${row%%"$tab"*}; line=${row#*"$tab"}
    dir=${id%%:*}
    refs=("$cases/$dir/ref1")
    [ -f "$cases/$dir/ref2" ] && refs+=("$cases/$dir/ref2")
    read -r -a opts <<<"$args"
    if [ "$id" = "$dir" ]; then  # a corpus case: one row
        got_line=$("$NMT" bleu "${opts[@]}" -i "$cases/$dir/hyp" "${refs[@]}" 2>&1)
        got_score=$("$NMT" bleu "${opts[@]}" -w 6 -b -i "$cases/$dir/hyp" "${refs[@]}" 2>&1)
        got_stats=$("$NMT" bleu "${opts[@]}" --stats -i "$cases/$dir/hyp" "${refs[@]}" 2>&1)
    else  # a sentence case: row k is line k of the output
        k=${id#*:}
        if [ "$dir" != "$prev_case" ]; then
            "$NMT" bleu "${opts[@]}" -i "$cases/$dir/hyp" "${refs[@]}" >"$TMP/s_line" 2>&1
            "$NMT" bleu "${opts[@]}" -w 6 -b -i "$cases/$dir/hyp" "${refs[@]}" >"$TMP/s_score" 2>&1
            "$NMT" bleu "${opts[@]}" --stats -i "$cases/$dir/hyp" "${refs[@]}" >"$TMP/s_stats" 2>&1
            prev_case=$dir
        fi
        got_line=$(sed -n "${k}p" "$TMP/s_line")
        got_score=$(sed -n "${k}p" "$TMP/s_score")
        got_stats=$(sed -n "${k}p" "$TMP/s_stats")
    fi
    checked=$((checked + 1))
    if [ "$got_stats" != "$stats" ]; then fail "$id ($args): stats '$got_stats', sacreBLEU '$stats'"; continue; fi
    if ! awk -v a="$got_score" -v b="$score" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a ~ /^[0-9.]+$/ && d < 0.005) }'; then
        fail "$id ($args): score '$got_score', sacreBLEU $score"; continue
    fi
    if [ "$got_line" != "$line" ]; then fail "$id ($args): line '$got_line', sacreBLEU '$line'"; continue; fi
    pass
done <"$SRC/tests/bleu_expected.tsv"
# The table must not have been cut short: 220 corpus cases and 20 sentence cases.
n_rows=$(grep -cv '^#' "$SRC/tests/bleu_expected.tsv")
if [ "$checked" -eq "$n_rows" ] && [ "$n_rows" -ge 240 ]; then pass; else fail "checked $checked of $n_rows rows"; fi

# --- --sentence, --by-length -------------------------------------------------
"$NMT" bleu --sentence "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp" >"$TMP/out" 2>"$TMP/err"
if [ "$(wc -l <"$TMP/out")" -eq 3 ] && head -1 "$TMP/out" | grep -q '|eff:yes|.* = 100.00 '; then pass; else
    fail "sentence: $(head -c 300 "$TMP/out")"; fi

# Lengths 3, 3, 12, 25, 55 words: buckets 1-10 (2), 11-20 (1), 21-30 (1), 51+ (1).
words() { local i s=; for ((i = 1; i <= $1; i++)); do s="$s w$i"; done; echo "${s# }"; }
{ words 3; words 3; words 12; words 25; words 55; } >"$TMP/len_ref"
{ words 3; echo "x y z"; words 12; words 25; words 55; } >"$TMP/len_hyp"
if "$NMT" bleu --by-length "$TMP/len_ref" -i "$TMP/len_hyp" >"$TMP/out" 2>"$TMP/err"; then
    table=$(awk 'NF == 3 && $1 ~ /^[0-9]/ {print $1, $2, $3}' "$TMP/out" | tr '\n' ';')
    # 1-10: one sentence right, one all wrong (6 words, 3 right: no 4-gram) = 0
    if [ "$table" = "1-10 2 0.00;11-20 1 100.00;21-30 1 100.00;31-40 0 -;41-50 0 -;51+ 1 100.00;" ]; then pass; else
        fail "by-length table: $table"; fi
else fail "by-length: $(head -c 300 "$TMP/err")"; fi
# With --src the source's lengths decide: all five sources have 1 word.
yes src | head -5 >"$TMP/len_src"
if "$NMT" bleu --by-length --src "$TMP/len_src" "$TMP/len_ref" -i "$TMP/len_hyp" >"$TMP/out" 2>&1 &&
    grep -Eq '^1-10 +5 ' "$TMP/out"; then pass; else fail "by-length --src: $(head -c 300 "$TMP/out")"; fi

# --- nmt bleu REF HYP: the second file is the hypothesis when stdin is empty ----
"$NMT" bleu "$TMP/ref1" -i "$TMP/hyp" >"$TMP/want" 2>/dev/null
if "$NMT" bleu "$TMP/ref1" "$TMP/hyp" </dev/null >"$TMP/out" 2>"$TMP/err" && cmp -s "$TMP/out" "$TMP/want" &&
    grep -q "reading the hypothesis from .*hyp" "$TMP/err"; then pass; else
    fail "REF HYP form: $(head -c 300 "$TMP/out") $(head -c 300 "$TMP/err")"; fi
expect_fail "REF REF with an empty pipe" "<stdin> has 0 lines.*-i HYP" sh -c 'true | "$0" bleu "$1" "$2"' \
    "$NMT" "$TMP/ref1" "$TMP/hyp"

# --- sacreBLEU's spellings ---------------------------------------------------------
# spelled NAME SHORT LONG [BASE]: the words SHORT, put before the references,
# between them and after -i HYP, print byte for byte what LONG prints before
# them. LONG must succeed and print something else than BASE (no options by
# default), so that an option that did nothing could not pass.
printf '%s\n' 'the dog bit the MAN.' "It wasn't surprising." 'The man had just bitten HIM.' >"$TMP/hyp_case"
spelled() {
    local name=$1 short long base
    read -r -a short <<<"$2"
    read -r -a long <<<"$3"
    read -r -a base <<<"${4:-}"
    local files=("$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp_case")
    if ! "$NMT" bleu "${long[@]}" "${files[@]}" >"$TMP/want" 2>"$TMP/err"; then
        fail "$name: '$3' exits $?: $(head -c 300 "$TMP/err")"; return; fi
    "$NMT" bleu "${base[@]}" "${files[@]}" >"$TMP/base" 2>&1
    if cmp -s "$TMP/want" "$TMP/base"; then fail "$name: '$3' prints what '${4:-}' prints"; return; fi
    local at
    for at in before between after; do
        case $at in
        before) "$NMT" bleu "${short[@]}" "${files[@]}" ;;
        between) "$NMT" bleu "$TMP/ref1" "${short[@]}" "$TMP/ref2" -i "$TMP/hyp_case" ;;
        after) "$NMT" bleu "${files[@]}" "${short[@]}" ;;
        esac >"$TMP/got" 2>"$TMP/err"
        if cmp -s "$TMP/got" "$TMP/want"; then pass; else
            fail "$name, $at the files: '$2' printed '$(head -c 300 "$TMP/got")' $(head -c 300 "$TMP/err"), '$3' '$(head -c 300 "$TMP/want")'"
        fi
    done
}
spelled "-lc" "-lc" "--lowercase"
spelled "-tok" "-tok none" "--tokenize none"
spelled "-tok=" "-tok=none" "--tokenize=none"
spelled "-f json" "-f json" "--format json"
spelled "-f json is --json" "-f json" "--json"
spelled "-f text" "--json -f text" "--json --format text" "--json"
spelled "-fjson" "-fjson" "--format=json"
spelled "-w" "-w 4" "--width 4"
spelled "-b" "-b" "--score-only"
spelled "-m" "-m chrf" "--metrics chrf"
spelled "-m, two words" "-m bleu chrf" "--metrics bleu,chrf"
spelled "-m, three words" "-m chrf++ bleu chrf" "--metrics bleu,chrf,chrf++"
spelled "-sl" "-sl" "--sentence-level"
spelled "-sh" "-sh" "--short"
spelled "-s" "-s floor" "--smooth-method floor"
spelled "-sv" "-s floor -sv 0.2" "--smooth-method floor --smooth-value 0.2"
spelled "-cc" "-m chrf -cc 4" "-m chrf --chrf-char-order 4" "-m chrf"
spelled "-cw" "-m chrf -cw 2" "-m chrf --chrf-word-order 2" "-m chrf"
spelled "-lc is BLEU's" "-m bleu chrf -lc" "-m bleu,chrf --lowercase" "-m bleu,chrf"
spelled "--chrf-lowercase" "-m chrf --chrf-lowercase" "-m chrf --lc" "-m chrf"
# A whole sacreBLEU command line, JSON with one decimal.
spelled "sacrebleu's line" "-m bleu chrf -tok none -lc -f json -w 1 -sh" \
    "--metrics bleu,chrf --tokenize none --lowercase --format json --width 1 --short"

# -i, and the words that change nothing: the same output as without them.
"$NMT" bleu "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp_case" >"$TMP/want" 2>&1
for words in "-i $TMP/hyp_case" "--input $TMP/hyp_case" "-l en-de" "--language-pair de-en" "-e utf-8" \
    "--encoding UTF8" "-nc" "--no-color" "--force" "-l en-zh -tok 13a" "-l en-ja -t none -t 13a"; do
    read -r -a w <<<"$words"
    for at in before after; do
        if [ $at = before ]; then "$NMT" bleu "${w[@]}" "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp_case"
        else "$NMT" bleu "$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp_case" "${w[@]}"; fi >"$TMP/got" 2>&1
        if cmp -s "$TMP/got" "$TMP/want"; then pass; else fail "'$words' $at: $(head -c 300 "$TMP/got")"; fi
    done
done
# The language pair picks BLEU's tokenizer only: chrF alone takes any target.
"$NMT" bleu -m chrf "$TMP/ref1" -i "$TMP/hyp_case" >"$TMP/want_chrf" 2>&1
if "$NMT" bleu -m chrf "$TMP/ref1" -i "$TMP/hyp_case" -l en-zh >"$TMP/got" 2>&1 && cmp -s "$TMP/got" "$TMP/want_chrf"
then pass; else fail "-m chrf -l en-zh: $(head -c 300 "$TMP/got")"; fi
# -lc, -tok and -f as option values stay values: a hypothesis named -lc.
cp "$TMP/hyp_case" "$TMP/-lc"
if (cd "$TMP" && "$NMT" bleu ref1 ref2 -i -lc) >"$TMP/got" 2>&1 && cmp -s "$TMP/got" "$TMP/want"; then pass; else
    fail "-i -lc: $(head -c 300 "$TMP/got")"; fi
# A file named like a metric after the metrics of -m is still a reference.
cp "$TMP/ref1" "$TMP/refs"
if (cd "$TMP" && "$NMT" bleu -m bleu refs ref2 -i hyp_case) >"$TMP/got" 2>&1 && cmp -s "$TMP/got" "$TMP/want"; then
    pass; else fail "-m bleu FILE: $(head -c 300 "$TMP/got")"; fi
expect_fail "-m with TER" "--metrics: unknown value 'ter'" "$NMT" bleu -m bleu ter "$TMP/ref1" -i "$TMP/hyp"
expect_fail "-lc without bleu" "--lowercase: a BLEU option.*--chrf-lowercase" \
    "$NMT" bleu -m chrf -lc "$TMP/ref1" -i "$TMP/hyp"
expect_fail "-l zh target" "--language-pair: sacreBLEU tokenizes a zh target with its zh tokenizer" \
    "$NMT" bleu "$TMP/ref1" -i "$TMP/hyp" -l en-zh
expect_fail "-l ko target" "ko-mecab" "$NMT" bleu -l en-ko "$TMP/ref1" -i "$TMP/hyp"
expect_fail "-l not a pair" "--language-pair: '.*ref1' is not a language pair.*--lc" \
    "$NMT" bleu -l "$TMP/ref1" -i "$TMP/hyp"
expect_fail "-e latin-1" "--encoding: 'latin-1': nmt bleu reads UTF-8 only" \
    "$NMT" bleu -e latin-1 "$TMP/ref1" -i "$TMP/hyp"
expect_fail "-f latex" "--format: unknown value 'latex'" "$NMT" bleu "$TMP/ref1" -i "$TMP/hyp" -f latex
expect_fail "-t test set" "sacreBLEU's -t, a test set" "$NMT" bleu -t wmt14 "$TMP/ref1" -i "$TMP/hyp"

# --- refusals -------------------------------------------------------------------
printf 'a\nb\n' >"$TMP/two"
expect_fail "line counts" "line counts differ: .*hyp has 3 lines, .*two has 2 lines" \
    "$NMT" bleu "$TMP/two" -i "$TMP/hyp"
expect_fail "src line count" "two has 2 lines" "$NMT" bleu --by-length --src "$TMP/two" "$TMP/ref1" -i "$TMP/hyp"
expect_fail "missing ref" "nonexistent.*cannot open" "$NMT" bleu "$TMP/nonexistent" -i "$TMP/hyp"
expect_fail "missing hyp" "nohyp.*cannot open" "$NMT" bleu "$TMP/ref1" -i "$TMP/nohyp"
expect_fail "no reference" "no reference" "$NMT" bleu -i "$TMP/hyp"
: >"$TMP/nothing"
expect_fail "empty corpus" "no sentences" "$NMT" bleu "$TMP/nothing" -i "$TMP/nothing"
expect_fail "bad smoothing" "--smooth: unknown value 'expo'" "$NMT" bleu --smooth expo "$TMP/ref1" -i "$TMP/hyp"
expect_fail "bad tokenizer" "--tokenize: unknown value 'intl'" "$NMT" bleu -t intl "$TMP/ref1" -i "$TMP/hyp"
expect_fail "value without method" "only floor and add-k" "$NMT" bleu --smooth-value 0.2 "$TMP/ref1" -i "$TMP/hyp"
expect_fail "bad value" "--smooth-value: 'x' is not" "$NMT" bleu -s floor --smooth-value x "$TMP/ref1" -i "$TMP/hyp"
expect_fail "bad width" "--width" "$NMT" bleu -w 11 "$TMP/ref1" -i "$TMP/hyp"
printf '\xff\xfe\n' >"$TMP/latin"
expect_fail "invalid UTF-8" "latin" "$NMT" bleu "$TMP/latin" -i "$TMP/latin"
expect_ok "help" "$NMT" bleu --help
grep -q -- "--by-length" "$TMP/out" && pass || fail "help lists --by-length"
for w in -lc -tok -sl -sh -sv -cc -cw -nc "-f, --format" "-l, --language-pair" --chrf-lowercase; do
    grep -q -- "$w" "$TMP/out" && pass || fail "help lists $w"
done
finish
