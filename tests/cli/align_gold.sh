# nmt align's gold with sure and possible links: the printed AER, precision
# and recall of hand-made links files against hand-made gold in both
# notations of possible links (i?j, ipj), worked out by hand below;
# --gold-partial, --gold-reverse, --links scoring the very figures the
# model's own alignments get, --symmetrize's lines for each method, and the
# refusals, each naming its option or file.
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy
M=$SRC/models/toy-attention.safetensors

# expect_line NAME FILE TEXT: FILE holds the line TEXT, exactly
expect_line() {
    grep -qxF -- "$3" "$2" && pass || fail "$1: want '$3', got: $(head -c 400 "$2")"
}

# --- hand values: sure and possible links -------------------------------------------
# pair 1: A = {0-0, 1-1, 2-2}, S = {0-0}, P = S + {1-1, 2-1}: |A∩S| 1, |A∩P| 2
# pair 2: A = {0-1, 1-0},      S = {0-0}, P = S + {0-1}:      |A∩S| 0, |A∩P| 1
# pair 3: A = {},              S = {1-1}, P = S
# sums: |A| 5, |S| 3, |P| 6 (3 only possible), |A∩S| 1, |A∩P| 3 (2 on a possible link):
# AER = 1 - (1 + 3) / (5 + 3) = 0.5, precision 3/5, recall 1/3.
printf '0-0 1-1 2-2\n0-1 1-0\n\n' >"$TMP/hyp"
printf '0-0 1?1 2?1\n0-0 0?1\n1-1\n' >"$TMP/gold_q"
printf '0-0 1p1 2p1\n0p1 0-0\n1-1\n' >"$TMP/gold_p"
WANT='AER 0.5000  precision 0.6000  recall 0.3333  (3 pairs, 5 model links, 3 gold links, 1 in both; possible: 3 links, 2 in both)'
for g in q p; do
    expect_ok "--links, i${g/q/?}j" "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_$g"
    expect_line "--links, gold_$g" "$TMP/out" "$WANT"
done
# every link sure (the old formula): |S| = |P| = 6, |A∩S| = 3: 1 - 6/11
printf '0-0 1-1 2-1\n0-0 0-1\n1-1\n' >"$TMP/gold_s"
expect_ok "--links, all sure" "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_s"
expect_line "--links, all sure" "$TMP/out" \
    'AER 0.4545  precision 0.6000  recall 0.5000  (3 pairs, 5 model links, 6 gold links, 3 in both; possible: 0 links, 0 in both)'
# a link given as sure and as possible is sure: gold_q with 1-1 sure too on
# line 1 is gold_s's line 1 but 2?1: |S| 4, |A∩S| 2, |A∩P| 3: 1 - 5/9
printf '0-0 1?1 2?1 1-1\n0-0 0?1\n1-1\n' >"$TMP/gold_both"
expect_ok "sure and possible" "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_both"
expect_line "sure and possible" "$TMP/out" \
    'AER 0.4444  precision 0.6000  recall 0.5000  (3 pairs, 5 model links, 4 gold links, 2 in both; possible: 2 links, 1 in both)'

# --line: pair 2 alone, |A| 2, |S| 1, |P| 2, |A∩S| 0, |A∩P| 1: 1 - 1/3
expect_ok "--links --line 2" "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_q" --line 2
expect_line "--links --line 2" "$TMP/out" \
    'AER 0.6667  precision 0.5000  recall 0.0000  (1 pairs, 2 model links, 1 gold links, 0 in both; possible: 1 links, 1 in both)'

# --- --gold-reverse: the same gold written target-source -------------------------------
printf '0-0 1?1 1?2\n0-0 1?0\n1-1\n' >"$TMP/gold_rev"
expect_ok "--gold-reverse" "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_rev" --gold-reverse
expect_line "--gold-reverse" "$TMP/out" "$WANT"

# --- --gold-partial ---------------------------------------------------------------------
# gold 0-0, 2?2: source words {0, 2} and target words {0, 2} annotated.
# A = {0-0, 1-1, 2-2, 0-2, 2-1}: whole, |A| 5, AER 1 - 3/6, precision 2/5;
# partial, 1-1 and 2-1 left out: |A| 3, AER 1 - 3/4, precision 2/3; recall 1
printf '0-0 1-1 2-2 0-2 2-1\n' >"$TMP/hyp2"
printf '0-0 2?2\n' >"$TMP/gold2"
expect_ok "whole" "$NMT" align --links "$TMP/hyp2" --gold "$TMP/gold2"
expect_line "whole" "$TMP/out" \
    'AER 0.5000  precision 0.4000  recall 1.0000  (1 pairs, 5 model links, 1 gold links, 1 in both; possible: 1 links, 1 in both)'
expect_ok "--gold-partial" "$NMT" align --links "$TMP/hyp2" --gold "$TMP/gold2" --gold-partial
expect_line "--gold-partial" "$TMP/out" \
    'AER 0.2500  precision 0.6667  recall 1.0000  (1 pairs, 3 model links, 1 gold links, 1 in both; possible: 1 links, 1 in both)'

# --- --symmetrize: each method on a pair where all five differ (test_gold.c works
# them out): FWD = {0-0, 1-1, 3-2}, REV = {0-0, 0-3, 3-0} (written target-source:
# 0-0 3-0 0-3); line 2: FWD empty, REV 1-2 (source 2, target 1); line 3: both empty
printf '0-0 1-1 3-2\n\n\n' >"$TMP/fwd"
printf '0-0 3-0 0-3\n1-2\n\n' >"$TMP/rev"
check_sym() {
    local method=$1 want=$2
    expect_ok "--symmetrize $method" "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev" \
        --symmetrize "$method"
    [ "$(cat "$TMP/out")" = "$(printf "$want")" ] && pass ||
        fail "--symmetrize $method: got '$(cat "$TMP/out")', want '$(printf "$want")'"
}
check_sym intersection '0-0\n\n'
check_sym union '0-0 0-3 1-1 3-0 3-2\n2-1\n'
check_sym grow-diag '0-0 1-1\n\n'
check_sym grow-diag-final '0-0 0-3 1-1 3-2\n2-1\n'
check_sym grow-diag-final-and '0-0 1-1 3-2\n2-1\n'
[ "$(wc -l <"$TMP/out")" = 3 ] && pass || fail "--symmetrize: $(wc -l <"$TMP/out") lines, want 3"
# with --gold and -o: the links in the file, the scores on stdout. Gold
# 0-0 1-1 3?2 / 2-1 / (none): A = grow-diag-final-and's 4 links, all right:
# |S| 3, |P| 4, |A∩S| 3, |A∩P| 4: AER 0, precision 1, recall 1
printf '0-0 1-1 3?2\n2-1\n\n' >"$TMP/gold3"
expect_ok "--symmetrize -o --gold" "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev" \
    --symmetrize grow-diag-final-and -o "$TMP/sym.align" --gold "$TMP/gold3"
expect_line "--symmetrize --gold" "$TMP/out" \
    'AER 0.0000  precision 1.0000  recall 1.0000  (3 pairs, 4 model links, 3 gold links, 3 in both; possible: 1 links, 1 in both)'
[ "$(cat "$TMP/sym.align")" = "$(printf '0-0 1-1 3-2\n2-1\n')" ] && pass ||
    fail "--symmetrize -o: $(cat "$TMP/sym.align")"
# to standard output, the scores go to stderr
expect_ok "--symmetrize --gold, stdout" "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev" \
    --symmetrize intersection --gold "$TMP/gold3"
grep -q "^AER " "$TMP/err" && ! grep -q "AER" "$TMP/out" && pass ||
    fail "--symmetrize to stdout: scores not on stderr"

# --- refusals -----------------------------------------------------------------------------
head -n 2 "$TMP/gold_q" >"$TMP/gold_short"
expect_fail "links and gold line counts" "hyp has 3 lines but .*gold_short has 2" \
    "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_short"
head -n 1 "$TMP/rev" >"$TMP/rev_short"
expect_fail "links and reverse line counts" "fwd has 3 lines but .*rev_short has 1" \
    "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev_short" --symmetrize union
printf '0-0 1x1\n\n\n' >"$TMP/gold_bad"
expect_fail "bad notation in the gold" "gold_bad, line 1: '1x1' is not an alignment link" \
    "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_bad"
printf '0-0\n1:1\n\n' >"$TMP/hyp_bad"
expect_fail "bad notation in the links" "hyp_bad, line 2: '1:1' is not an alignment link" \
    "$NMT" align --links "$TMP/hyp_bad" --gold "$TMP/gold_q"
printf '0-0\n1P1\n\n' >"$TMP/gold_cap"
expect_fail "P is not p" "gold_cap, line 2: '1P1'" \
    "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_cap"
# --- --links and --reverse-links given again: the aligners of a direction agree ---
# fwd2 agrees with fwd on line 1's 0-0 only and on none of line 2; rev2 is rev
# itself, so the reverse side is unchanged: the intersection of the agreed
# forward links with rev is then a subset of the plain intersection.
printf '0-0 5-5\n\n9-9\n' >"$TMP/fwd2"
expect_ok "--links twice" "$NMT" align --links "$TMP/fwd" --links "$TMP/fwd2" \
    --reverse-links "$TMP/rev" --reverse-links "$TMP/rev" --symmetrize union -o "$TMP/agree.align"
expect_ok "--links once" "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev" \
    --symmetrize union -o "$TMP/plain.align"
# union: agreed forward links (fwd's lines ∩ fwd2's) with all of rev's
want=$(paste -d '|' "$TMP/fwd" "$TMP/fwd2" "$TMP/rev" | awk -F '|' '{
    n = split($1, f, " "); m = split($2, g, " "); for (k in seen) delete seen[k]; out = ""
    for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) if (f[i] == g[j]) seen[f[i]] = 1
    r = split($3, v, " "); for (i = 1; i <= r; i++) { split(v[i], p, "-"); seen[p[2] "-" p[1]] = 1 }
    for (k in seen) out = out k " "; print out }' | while read -r l; do echo $l | tr ' ' '\n' | sort -t- -k1,1n -k2,2n | tr '\n' ' ' | sed 's/ $//'; echo; done)
[ "$(cat "$TMP/agree.align")" = "$want" ] && pass ||
    fail "--links twice: got '$(cat "$TMP/agree.align")', want '$want'"
[ "$(cat "$TMP/agree.align")" != "$(cat "$TMP/plain.align")" ] && pass ||
    fail "--links twice: the second file changed nothing"
printf '0-0\n' >"$TMP/fwd_one"
expect_fail "--links twice, lines differ" "but .*fwd_one has 1" \
    "$NMT" align --links "$TMP/fwd" --links "$TMP/fwd_one" --gold "$TMP/gold3"
expect_fail "--links five times" "--links: at most 4 files" \
    "$NMT" align --links "$TMP/fwd" --links "$TMP/fwd" --links "$TMP/fwd" --links "$TMP/fwd" \
    --links "$TMP/fwd" --gold "$TMP/gold3"

expect_fail "--symmetrize without --reverse-links" "--symmetrize .*--reverse-links" \
    "$NMT" align --links "$TMP/fwd" --symmetrize union
expect_fail "--reverse-links without --symmetrize" "--reverse-links .*--symmetrize" \
    "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev" --gold "$TMP/gold3"
expect_fail "--symmetrize without --links" "--symmetrize needs --links" \
    "$NMT" align --symmetrize union --reverse-links "$TMP/rev"
expect_fail "unknown method" "--symmetrize" \
    "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev" --symmetrize grow
expect_fail "--links without --gold" "--links .*--gold" "$NMT" align --links "$TMP/hyp"
expect_fail "--links with a model" "--links .*-m" \
    "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_q" -m "$M"
expect_fail "--links with --format" "--format svg" \
    "$NMT" align --links "$TMP/hyp" --gold "$TMP/gold_q" --format svg
expect_fail "--gold-partial without --gold" "--gold-partial.*--gold" \
    "$NMT" align -m "$M" --src "$TMP/hyp" --gold-partial
expect_fail "--gold-reverse without --gold" "--gold-reverse.*--gold" \
    "$NMT" align --links "$TMP/hyp" --gold-reverse
expect_fail "-o over an input" "-o" "$NMT" align --links "$TMP/fwd" --reverse-links "$TMP/rev" \
    --symmetrize union -o "$TMP/rev"

# --- the model's alignments: the same scorer ------------------------------------------------
zcat "$TOY/test.src.gz" | head -n 20 >"$TMP/src"
zcat "$TOY/test.tgt.gz" | head -n 20 >"$TMP/tgt"
head -n 20 "$TOY/test.align" >"$TMP/gold"
A=("$NMT" align -m "$M" --threads 1 --src "$TMP/src" --tgt "$TMP/tgt")
expect_ok "model links" "${A[@]}" --format pharaoh -o "$TMP/model.align"
expect_ok "model AER" "${A[@]}" --gold "$TMP/gold"
cp "$TMP/out" "$TMP/model_aer"
expect_ok "its links scored" "$NMT" align --links "$TMP/model.align" --gold "$TMP/gold"
cmp -s "$TMP/out" "$TMP/model_aer" && pass ||
    fail "--links scores the model's links otherwise: $(cat "$TMP/out") / $(cat "$TMP/model_aer")"
# the model's own links as gold, all possible: every link right, no sure link to miss
sed 's/-/?/g' "$TMP/model.align" >"$TMP/own_possible"
expect_ok "own links possible" "${A[@]}" --gold "$TMP/own_possible"
grep -q "^AER 0.0000  precision 1.0000  recall 1.0000  (20 pairs, \([0-9]*\) model links, 0 gold links, 0 in both; possible: [0-9]* links, [0-9]* in both)$" \
    "$TMP/out" && pass || fail "own links possible: $(cat "$TMP/out")"
# written target-source, read with --gold-reverse: AER 0
sed -E 's/([0-9]+)-([0-9]+)/\2-\1/g' "$TMP/model.align" >"$TMP/own_reversed"
expect_ok "--gold-reverse" "${A[@]}" --gold "$TMP/own_reversed" --gold-reverse
grep -q "^AER 0.0000  precision 1.0000  recall 1.0000" "$TMP/out" && pass ||
    fail "--gold-reverse: $(cat "$TMP/out")"
"$NMT" align -m "$M" --threads 1 --src "$TMP/src" --tgt "$TMP/tgt" --gold "$TMP/own_reversed" \
    >"$TMP/out" 2>&1
grep -q "^AER 0.0000" "$TMP/out" && fail "reversed gold read forward: AER 0" || pass
# the first link of each line alone, partial: the one model link on both its
# words is that link (each target word has one), so 20 model links, all right
sed -E 's/^([0-9]+-[0-9]+).*/\1/' "$TMP/model.align" >"$TMP/own_first"
expect_ok "--gold-partial" "${A[@]}" --gold "$TMP/own_first" --gold-partial --per-head
grep -q "^AER 0.0000  precision 1.0000  recall 1.0000  (20 pairs, 20 model links, 20 gold links, 20 in both" \
    "$TMP/out" && pass || fail "--gold-partial: $(cat "$TMP/out")"
grep -q "0.0000\*" "$TMP/out" && pass || fail "--gold-partial --per-head: $(cat "$TMP/out")"
expect_ok "not partial" "${A[@]}" --gold "$TMP/own_first"
grep -q "^AER 0.0000" "$TMP/out" && fail "not partial: AER 0" || pass

# --- pictures: sure and possible gold told apart ----------------------------------------
# line 2 of the toy test set, its gold 0-0 1-2 2-1 3-4 4-3 with 1-2 and 2-1
# possible (one in each notation)
zcat "$TOY/test.src.gz" | sed -n 2p >"$TMP/s1"
zcat "$TOY/test.tgt.gz" | sed -n 2p >"$TMP/t1"
echo "0-0 1?2 2p1 3-4 4-3" >"$TMP/g1"
P=("$NMT" align -m "$M" --threads 1 --src "$TMP/s1" --tgt "$TMP/t1" --gold "$TMP/g1")
expect_ok "svg" "${P[@]}" -o "$TMP/p.svg"
# the sure links in their solid group, the possible ones in a dashed group, and
# a legend entry for each
awk '/<g class="gold"/ { g = "sure" } /<g class="gold-possible"/ { g = "possible" }
     /<\/g>/ { g = "" } g != "" && /<rect/ { n[g]++ }
     END { exit !(n["sure"] == 3 && n["possible"] == 2) }' "$TMP/p.svg" && pass ||
    fail "svg: 3 solid and 2 dashed gold outlines wanted"
grep -q '<g class="gold-possible" [^>]*stroke-dasharray="4 3"' "$TMP/p.svg" && pass ||
    fail "svg: the possible links are not dashed"
grep -q '>gold, sure</text>' "$TMP/p.svg" && grep -q '>gold, possible</text>' "$TMP/p.svg" &&
    pass || fail "svg: the legend does not tell sure from possible"
# all sure: no dashed group, the legend as before
echo "0-0 1-2 2-1 3-4 4-3" >"$TMP/g1s"
expect_ok "svg, all sure" "$NMT" align -m "$M" --src "$TMP/s1" --tgt "$TMP/t1" --gold "$TMP/g1s" \
    -o "$TMP/s.svg"
! grep -q 'gold-possible\|dasharray' "$TMP/s.svg" && grep -q '>gold link</text>' "$TMP/s.svg" &&
    pass || fail "svg, all sure: a dashed mark or another legend"
expect_ok "json" "${P[@]}" --format json
grep -q '"gold": \[\[0, 0\], \[1, 2\], \[2, 1\], \[3, 4\], \[4, 3\]\], "possible": \[\[1, 2\], \[2, 1\]\]}$' \
    "$TMP/out" && pass || fail "json: $(tail -c 200 "$TMP/out")"
expect_ok "json, all sure" "$NMT" align -m "$M" --src "$TMP/s1" --tgt "$TMP/t1" --gold "$TMP/g1s" \
    --format json
! grep -q '"possible"' "$TMP/out" && pass || fail "json, all sure: a possible list"
expect_ok "text" "${P[@]}" --format text --color never
[ "$(grep -c '(' "$TMP/out")" = 3 ] && [ "$(grep -c '\[' "$TMP/out")" = 4 ] &&
    grep -q '\[\] sure, () possible gold link' "$TMP/out" && pass ||
    fail "text: two possible marks, three sure ones and their legend wanted: $(cat "$TMP/out")"
expect_ok "png" "${P[@]}" -o "$TMP/p.png"
expect_ok "html" "${P[@]}" -o "$TMP/p.html"
grep -q '"gold":\[0,0,1,2,2,1,3,4,4,3\],"gp":\[1,2,2,1\]' "$TMP/p.html" && pass ||
    fail "html: the possible links are not listed"
grep -q 'gold link (possible)' "$TMP/p.html" && pass || fail "html: no legend for possible links"

finish
