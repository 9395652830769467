# scripts/align-corpus on the toy corpus's 1000 test pairs (and a pair with
# an empty side): its refusals, each naming the option; --rounds 1, the
# statistical round alone, byte for byte what nmt align --em both ways and
# --symmetrize grow-diag-final-and write; the whole recipe in 2 minutes
# (enough to leave its guided round more than a minute on a loaded machine):
# one line for every input line, an empty one for the empty pair, links
# inside their pairs, every link one that the statistical round of a
# direction had too (the agreement the recipe keeps), two guided models
# kept with --keep, and on the toy's gold links at least as precise as
# the statistical round's, with an AER a broken recipe would not reach.
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
AC=$SRC/scripts/align-corpus
TOY=$SRC/corpora/toy
export NMT

gzip -dc "$TOY/test.src.gz" >"$TMP/s"
gzip -dc "$TOY/test.tgt.gz" >"$TMP/t"
cp "$TOY/test.align" "$TMP/gold"
# pair 1001: a source without a target
echo "sko bap frug" >>"$TMP/s"
echo "" >>"$TMP/t"
echo "" >>"$TMP/gold"

# --- refusals -------------------------------------------------------------------
expect_ok "--help" "$AC" --help
grep -q -- "--minutes M" "$TMP/out" && pass || fail "--help: no --minutes on stdout"
expect_fail "no --minutes" "--minutes" "$AC" --src "$TMP/s" --tgt "$TMP/t" -o "$TMP/a"
expect_fail "--minutes 0" "--minutes '0'" "$AC" --src "$TMP/s" --tgt "$TMP/t" --minutes 0 -o "$TMP/a"
expect_fail "--minutes abc" "--minutes 'abc'" "$AC" --src "$TMP/s" --tgt "$TMP/t" --minutes abc -o "$TMP/a"
expect_fail "--rounds 3" "--rounds '3'" "$AC" --src "$TMP/s" --tgt "$TMP/t" --minutes 1 --rounds 3 -o "$TMP/a"
expect_fail "--threads 0" "--threads '0'" "$AC" --src "$TMP/s" --tgt "$TMP/t" --minutes 1 --threads 0 -o "$TMP/a"
expect_fail "unknown option" "unknown option '--fast'" "$AC" --fast
head -n 5 "$TMP/t" >"$TMP/t5"
expect_fail "line counts" "1001 lines and --tgt 5" "$AC" --src "$TMP/s" --tgt "$TMP/t5" --minutes 1 -o "$TMP/a"
expect_fail "unreadable --src" "--src .*cannot be read" "$AC" --src "$TMP/none" --tgt "$TMP/t" --minutes 1 -o "$TMP/a"
[ ! -e "$TMP/a" ] && pass || fail "a refused run wrote its output"

# --- --rounds 1: the statistical round, as nmt align writes it ------------------------
expect_ok "--rounds 1" "$AC" --src "$TMP/s" --tgt "$TMP/t" --minutes 1 --rounds 1 -o "$TMP/r1.align"
head -n 1000 "$TMP/s" >"$TMP/s.u"
head -n 1000 "$TMP/t" >"$TMP/t.u"
"$NMT" align --em --src "$TMP/s.u" --tgt "$TMP/t.u" -o "$TMP/f" 2>/dev/null
"$NMT" align --em --src "$TMP/t.u" --tgt "$TMP/s.u" -o "$TMP/r" 2>/dev/null
"$NMT" align --links "$TMP/f" --reverse-links "$TMP/r" --symmetrize grow-diag-final-and -o "$TMP/sym"
echo "" >>"$TMP/sym"
cmp -s "$TMP/sym" "$TMP/r1.align" && pass || fail "--rounds 1: not nmt align --em's grow-diag-final-and"
grep -q "1 pairs have a side without words" "$TMP/err" && pass ||
    fail "--rounds 1: the empty pair not said on stderr: $(cat "$TMP/err")"

# --- the recipe, in 2 minutes -------------------------------------------------------------
expect_ok "--minutes 2" "$AC" --src "$TMP/s" --tgt "$TMP/t" --minutes 2 -o "$TMP/full.align" \
    --keep "$TMP/keep"
grep -q "round 2: two Transformers guided" "$TMP/err" && pass || fail "no round 2: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/full.align")" = 1001 ] && pass || fail "$(wc -l <"$TMP/full.align") lines, want 1001"
[ -z "$(tail -n 1 "$TMP/full.align")" ] && pass || fail "the empty pair has links"
# links inside their pairs
paste -d '|' "$TMP/s" "$TMP/t" "$TMP/full.align" | awk -F '|' '{
    ns = split($1, a, " "); nt = split($2, b, " "); n = split($3, l, " ")
    for (k = 1; k <= n; k++) { split(l[k], p, "-"); if (p[1] >= ns || p[2] >= nt) bad++ } }
    END { exit bad > 0 }' && pass || fail "a link past its pair's words"
# every link is one the statistical round of a direction had
w=$TMP/keep
awk '{ o = ""; for (i = 1; i <= NF; i++) { split($i, p, "-"); o = o " " p[2] "-" p[1] } print o }' \
    "$w/1.ts.links" >"$w/1.ts.st"
paste -d '|' "$w/1.st.links" "$w/1.ts.st" "$w/2.links" | awk -F '|' '{
    n = split($1 " " $2, e, " "); for (k in had) delete had[k]; for (i = 1; i <= n; i++) had[e[i]] = 1
    m = split($3, l, " "); for (i = 1; i <= m; i++) if (!(l[i] in had)) bad++ }
    END { exit bad > 0 }' && pass || fail "a link neither statistical direction had"
for d in 2.st 2.ts; do
    "$NMT" info "$w/$d/checkpoint.safetensors" | grep -q "^aligned head *layer 1 head 0, trained toward word links" && pass ||
        fail "$d: not a guided model"
done
# against the toy's gold: agreement trades recall for precision, so the
# recipe's links are at least as precise as the statistical round's alone
# (round 1, in the kept folder), and a recipe that crossed its directions
# or its words would be far from both bounds. How much recall two minutes
# of training on a loaded machine leave varies, so the AER bound is loose.
head -n 1000 "$TMP/gold" >"$TMP/gold.u"
"$NMT" align --links "$TMP/full.align" --gold "$TMP/gold" >"$TMP/aer" 2>&1
"$NMT" align --links "$w/1.links" --gold "$TMP/gold.u" >"$TMP/aer1" 2>&1
aer=$(awk '{ print $2; exit }' "$TMP/aer")
p_full=$(awk '{ print $4; exit }' "$TMP/aer")
p_round1=$(awk '{ print $4; exit }' "$TMP/aer1")
awk -v a="$aer" 'BEGIN { exit !(a != "" && a < 0.6) }' && pass ||
    fail "the toy's AER $aer, want below 0.6: $(cat "$TMP/aer")"
awk -v p="$p_full" -v q="$p_round1" 'BEGIN { exit !(p != "" && q != "" && p >= q) }' && pass ||
    fail "precision $p_full below the statistical round's $p_round1"

finish
