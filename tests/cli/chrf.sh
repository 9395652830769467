# nmt bleu -m chrf / chrf++: sacreBLEU's README example in every output form
# (the expected bytes are what sacreBLEU 2.6.0's command line printed for the
# same files), 240 random cases from Multi30k scored by sacreBLEU itself
# (tests/chrf_expected.tsv), code points rather than bytes, and the refusals.
. "$(dirname "$0")/lib.sh"
SRC=${NMT_SOURCE_ROOT:?NMT_SOURCE_ROOT is not set}
PY=${NMT_PYTHON:-python3}

printf '%s\n' 'The dog bit the man.' 'It was not unexpected.' 'The man bit him first.' >"$TMP/ref1"
printf '%s\n' 'The dog had bit the man.' 'No one was surprised.' 'The man had bitten the dog.' >"$TMP/ref2"
printf '%s\n' 'The dog bit the man.' "It wasn't surprising." 'The man had just bitten him.' >"$TMP/hyp"
bleu_line='BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)'
chrf_line='chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = 59.73'
chrfpp_line='chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0 = 59.15'

# expect_out NAME EXPECTED CMD...: CMD succeeds and prints exactly EXPECTED.
expect_out() {
    local name=$1 want=$2
    shift 2
    if ! "$@" >"$TMP/out" 2>"$TMP/err"; then fail "$name: exit $?: $(head -c 300 "$TMP/err")"; return; fi
    if [ "$(cat "$TMP/out")" = "$want" ]; then pass; else
        fail "$name: got '$(head -c 600 "$TMP/out")', want '$want'"; fi
}
R=("$TMP/ref1" "$TMP/ref2" -i "$TMP/hyp")

# --- one metric, then several: sacrebleu ref1 ref2 -i hyp -m ... -f text -w 2 --
expect_out "chrf" "$chrf_line" "$NMT" bleu -m chrf "${R[@]}"
expect_out "chrf++" "$chrfpp_line" "$NMT" bleu -m chrf++ "${R[@]}"
expect_out "chrf word order 2" "$chrfpp_line" "$NMT" bleu --metrics chrf --chrf-word-order 2 "${R[@]}"
expect_out "--metric CHRF++" "$chrfpp_line" "$NMT" bleu --metric CHRF++ "${R[@]}"
expect_out "bleu alone, named" "$bleu_line" "$NMT" bleu -m bleu "${R[@]}"
# several lines are right-aligned on their '=', BLEU first whatever the order
expect_out "bleu,chrf" "  $bleu_line
$chrf_line" "$NMT" bleu -m chrf,bleu "${R[@]}"
expect_out "-m bleu -m chrf -m chrf++" "    $bleu_line
  $chrf_line
$chrfpp_line" "$NMT" bleu -m bleu -m chrf++ -m chrf "${R[@]}"
expect_out "short, width 1" '   BLEU|#:2|c:mixed|e:no|tok:13a|s:exp|v:2.6.0 = 48.5 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)
chrF2|#:2|c:mixed|e:yes|nc:6|nw:0|s:no|v:2.6.0 = 59.7' "$NMT" bleu -m bleu,chrf --short -w 1 "${R[@]}"
expect_out "score only" "48.53
59.73" "$NMT" bleu -m bleu,chrf -b "${R[@]}"
# sacreBLEU's JSON with -b: the bare scores in a list
expect_out "json score only" "[
48.5,
59.7
]" "$NMT" bleu -m bleu,chrf --json -b -w 1 "${R[@]}"
expect_out "json chrf++" '{
 "name": "chrF2++",
 "score": 59.2,
 "signature": "nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0",
 "nrefs": "2",
 "case": "mixed",
 "eff": "yes",
 "nc": "6",
 "nw": "2",
 "space": "no",
 "version": "2.6.0"
}' "$NMT" bleu -m chrf++ --json -w 1 "${R[@]}"
if "$NMT" bleu -m bleu,chrf --json "${R[@]}" >"$TMP/json" 2>"$TMP/err" && "$PY" - "$TMP/json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text)
assert [x["name"] for x in d] == ["BLEU", "chrF2"], d
assert list(d[1]) == ["name", "score", "signature", "nrefs", "case", "eff", "nc", "nw", "space", "version"]
assert d[0]["score"] == 48.53 and d[1]["score"] == 59.73 and d[1]["nc"] == "6"
# sacreBLEU's layout: '[', the objects at column 0 joined by ',\n', ']'
assert text.startswith("[\n{\n \"name\": \"BLEU\"") and "\n},\n{\n \"name\": \"chrF2\"" in text
assert text.endswith("\n}\n]\n"), repr(text[-20:])
EOF
then pass; else fail "json list: $(head -c 400 "$TMP/json") $(head -c 200 "$TMP/err")"; fi

# --stats: a line per metric; chrF's are hyp ref match of each order
expect_out "stats" "17 18 14 7 5 3 17 14 11 8
58 56 46 55 53 36 52 50 31 49 47 26 46 44 22 43 41 18" "$NMT" bleu -m bleu,chrf --stats "${R[@]}"
# --sentence (sacrebleu -m chrf -sl): chrF as it is for one line
expect_out "sentence" "${chrf_line% = *} = 100.00
${chrf_line% = *} = 35.35
${chrf_line% = *} = 51.88" "$NMT" bleu -m chrf --sentence "${R[@]}"
# --by-length: a column per metric
if "$NMT" bleu -m bleu,chrf,chrf++ --by-length "${R[@]}" >"$TMP/out" 2>"$TMP/err" &&
    grep -Eq '^length +sentences +BLEU +chrF2 +chrF2\+\+$' "$TMP/out" &&
    grep -Eq '^1-10 +3 +48\.53 +59\.73 +59\.15$' "$TMP/out" && grep -Eq '^51\+ +0 +- +- +-$' "$TMP/out"; then pass; else
    fail "by-length: $(head -c 600 "$TMP/out") $(head -c 200 "$TMP/err")"; fi
if "$NMT" bleu -m chrf --json --by-length "${R[@]}" >"$TMP/json" 2>"$TMP/err" &&
    "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); b = d["by_length"]
assert d["name"] == "chrF2" and b[0]["score"] == 59.73 and b[0]["sentences"] == 3 and b[1]["score"] is None' "$TMP/json"
then pass; else fail "json by-length: $(head -c 400 "$TMP/json")"; fi

# --- characters are code points, and --lc is Python's lower() ----------------
# "ž" is 2 bytes and "😀" 4: 3 characters each side, 2 of them shared
printf 'a\xc5\xbe\xf0\x9f\x98\x80\n' >"$TMP/uh"
printf 'az\xf0\x9f\x98\x80\n' >"$TMP/ur"
expect_out "code points" "3 3 2 2 2 0 1 1 0 0 0 0 0 0 0 0 0 0" "$NMT" bleu -m chrf --stats "$TMP/ur" -i "$TMP/uh"
printf '\xce\xa3\xce\x9f\xce\xa6\xce\x9f\xce\xa3 \xc3\x84RGER\n' >"$TMP/greek_upper"
printf '\xcf\x83\xce\xbf\xcf\x86\xce\xbf\xcf\x82 \xc3\xa4rger\n' >"$TMP/greek_lower"
expect_out "lowercase, final sigma" 100.00 "$NMT" bleu -m chrf --lc -b "$TMP/greek_lower" -i "$TMP/greek_upper"
expect_out "cased" 0.00 "$NMT" bleu -m chrf -b "$TMP/greek_lower" -i "$TMP/greek_upper"

# --- 240 random cases: the numbers sacreBLEU gave for the same inputs -----------
cases=$TMP/cases
if ! "$PY" "$SRC/tests/bleu_cases.py" generate "$cases" 2>"$TMP/err"; then
    fail "bleu_cases.py generate: $(head -c 400 "$TMP/err")"
fi
checked=0
prev_case=
tab=$'\t'
while IFS= read -r row; do
    case $row in '#'*|'') continue ;; esac
    id=${row%%"$tab"*}; row=${row#*"$tab"}
    args=${row%%"$tab"*}; row=${row#*"$tab"}
    score=${row%%"$tab"*}; row=${row#*"$tab"}
    stats=${row%%"$tab"*}; line=${row#*"$tab"}
    dir=${id%%:*}
    refs=()
    for k in 1 2 3; do [ -f "$cases/$dir/ref$k" ] && refs+=("$cases/$dir/ref$k"); done
    read -r -a opts <<<"$args"
    if [ "$id" = "$dir" ]; then  # a corpus case: one row
        got_line=$("$NMT" bleu "${opts[@]}" -i "$cases/$dir/hyp" "${refs[@]}" 2>&1)
        got_score=$("$NMT" bleu "${opts[@]}" -w 10 -b -i "$cases/$dir/hyp" "${refs[@]}" 2>&1)
        got_stats=$("$NMT" bleu "${opts[@]}" --stats -i "$cases/$dir/hyp" "${refs[@]}" 2>&1)
    else  # a sentence case: row k is line k of the output
        k=${id#*:}
        if [ "$dir" != "$prev_case" ]; then
            "$NMT" bleu "${opts[@]}" -i "$cases/$dir/hyp" "${refs[@]}" >"$TMP/s_line" 2>&1
            "$NMT" bleu "${opts[@]}" -w 10 -b -i "$cases/$dir/hyp" "${refs[@]}" >"$TMP/s_score" 2>&1
            "$NMT" bleu "${opts[@]}" --stats -i "$cases/$dir/hyp" "${refs[@]}" >"$TMP/s_stats" 2>&1
            prev_case=$dir
        fi
        got_line=$(sed -n "${k}p" "$TMP/s_line")
        got_score=$(sed -n "${k}p" "$TMP/s_score")
        got_stats=$(sed -n "${k}p" "$TMP/s_stats")
    fi
    checked=$((checked + 1))
    if [ "$got_stats" != "$stats" ]; then fail "$id ($args): stats '$got_stats', sacreBLEU '$stats'"; continue; fi
    # the score to its tenth decimal, the last sacreBLEU printed
    if [ "$got_score" != "$score" ]; then fail "$id ($args): score '$got_score', sacreBLEU $score"; continue; fi
    if [ "$got_line" != "$line" ]; then fail "$id ($args): line '$got_line', sacreBLEU '$line'"; continue; fi
    pass
done <"$SRC/tests/chrf_expected.tsv"
# The table must not have been cut short: 220 corpus cases and 20 sentence cases.
n_rows=$(grep -cv '^#' "$SRC/tests/chrf_expected.tsv")
n_cases=$(cut -f1 "$SRC/tests/chrf_expected.tsv" | grep -v '^#' | cut -d: -f1 | sort -u | wc -l)
if [ "$checked" -eq "$n_rows" ] && [ "$n_cases" -eq 240 ]; then pass; else
    fail "checked $checked of $n_rows rows, $n_cases cases"; fi

# --- refusals --------------------------------------------------------------------
expect_fail "unknown metric" "--metrics: unknown value 'ter'" "$NMT" bleu -m bleu,ter "${R[@]}"
expect_fail "empty metric" "--metrics: an empty name in 'bleu,'" "$NMT" bleu -m bleu, "${R[@]}"
expect_fail "BLEU option without bleu" "--tokenize: a BLEU option, and bleu is not among --metrics" \
    "$NMT" bleu -m chrf -t none "${R[@]}"
expect_fail "smoothing without bleu" "--smooth: a BLEU option" "$NMT" bleu -m chrf++ -s floor "${R[@]}"
expect_fail "chrF option without chrf" "--chrf-beta: a chrF option, and neither chrf nor chrf\+\+" \
    "$NMT" bleu --chrf-beta 3 "${R[@]}"
expect_fail "chrf++ with another word order" "--chrf-word-order: chrf\+\+ is word order 2" \
    "$NMT" bleu -m chrf++ --chrf-word-order 3 "${R[@]}"
expect_fail "nothing to count" "--chrf-char-order: 0 needs --chrf-word-order" \
    "$NMT" bleu -m chrf --chrf-char-order 0 "${R[@]}"
expect_fail "char order too big" "--chrf-char-order: 11 is out of range" "$NMT" bleu -m chrf --chrf-char-order 11 "${R[@]}"
expect_fail "bad beta" "--chrf-beta: 'two'" "$NMT" bleu -m chrf --chrf-beta two "${R[@]}"
expect_fail "sentence, two metrics" "--sentence: one metric at a time" "$NMT" bleu -m bleu,chrf --sentence "${R[@]}"
# a word order without characters is fine (chrF of word n-grams alone)
expect_out "words only" "chrF2++|nrefs:2|case:mixed|eff:yes|nc:0|nw:2|space:no|version:2.6.0 = 60.17" \
    "$NMT" bleu -m chrf++ --chrf-char-order 0 "${R[@]}"
expect_ok "help" "$NMT" bleu --help
grep -q -- "--chrf-word-order" "$TMP/out" && grep -q -- "-m, --metrics" "$TMP/out" && pass ||
    fail "help lists the chrF options"
finish
