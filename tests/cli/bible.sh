# scripts/data/get-bible: the KJV and the Reina-Valera 1909 verse by verse,
# with gold links from their Strong's numbers (docs/bible.md). The corpus
# is made twice (the same counts and digests), its files and its split
# checked, the gold of every 50th verse worked out again from mod2imp's
# markup by a simpler route (tests/bible_check.py), Genesis 1:1's gold as
# worked by hand, and nmt's words of 600 verses (a word model, a model of
# pieces learned by nmt and one made by spm_train with NFKC) found to be
# the lines' tokens; --check, --sample, a run stopped midway, refusals.
# Needs Debian's SWORD packages (scripts/test installs them): SKIP without.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GET="$ROOT/scripts/data/get-bible"
CHECK=(python3 "$ROOT/tests/bible_check.py")
. "$ROOT/scripts/deps.sh"
if [ -n "$(nmt_bible_deps_check)" ]; then
    echo "SKIP: missing $(nmt_bible_deps_check | tr '\n' ' ')(scripts/test installs them)"
    exit 77
fi
B=$TMP/bible

# --- refusals, before anything is made ---------------------------------------
expect_ok "help" "$GET" --help
grep -q -- "--sample N --out DIR" "$TMP/out" && grep -q "SHA256SUMS" "$TMP/out" && pass ||
    fail "--help lacks --sample or the files"
expect_fail "unknown option" "unknown option '--bogus'" "$GET" --bogus
expect_fail "--sample not a number" "--sample: '3x' is not a number of verses" "$GET" --sample 3x --out "$B"
expect_fail "--sample 0" "--sample: 0 verses; 1 or more" "$GET" --sample 0 --out "$B"
expect_fail "--sample without a value" "--sample needs a number" "$GET" --sample
expect_fail "--sample without --out" "--sample needs --out DIR" "$GET" --sample 5
expect_fail "--check with --sample" "--check takes no --sample" "$GET" --check --sample 5 --out "$B"
expect_fail "--check of nothing" "--check: no folder" "$GET" --check --out "$TMP/nowhere"
touch "$TMP/afile"
expect_fail "--out a file" "exists and is not a folder" "$GET" --out "$TMP/afile"
mkdir "$TMP/mine" && echo keep >"$TMP/mine/notes.txt"
expect_fail "--out a folder of other files" "not a corpus this script made; not replacing it" \
    "$GET" --out "$TMP/mine"
[ "$(cat "$TMP/mine/notes.txt")" = keep ] && [ "$(ls -A "$TMP/mine")" = notes.txt ] && pass ||
    fail "the refused folder was touched"
[ ! -e "$B" ] && pass || fail "a refused run made its folder"

# --- the corpus, twice ---------------------------------------------------------
start=$(date +%s)
expect_ok "get-bible" "$GET" --out "$B"
cp "$TMP/out" "$TMP/first.out"
cp "$B/SHA256SUMS" "$TMP/first.sums"
echo "get-bible took $(($(date +%s) - start)) s" >&2
grep -Fxq "The Bible corpus is in $B" "$TMP/first.out" && pass || fail "no last line: $(tail -1 "$TMP/first.out")"
grep -q "^packages: sword-text-kjv .*, sword-text-sparv .*, libsword-utils " "$TMP/first.out" && pass ||
    fail "the package versions not printed"
grep -q "^  verses [0-9]" "$TMP/first.out" && grep -q "^  links_sure [0-9]" "$TMP/first.out" && pass ||
    fail "the counts not printed"
[ "$(grep -c "^  [0-9a-f]\{64\}  " "$TMP/first.out")" -eq 19 ] && pass || fail "not 19 digests printed"
# the digests are checked against the recorded ones for these versions
if grep -q "^packages: $(sed -n 's/^RECORDED_VERSIONS="\(.*\)"$/\1/p' "$GET")\$" "$TMP/first.out"; then
    grep -q "^sha256 (all equal to the recorded ones):" "$TMP/first.out" && pass ||
        fail "the recorded versions, but the digests not said to be the recorded ones"
else
    echo "note: not the package versions the digests were recorded for" >&2
    grep -q "^sha256 (not checked: recorded for " "$TMP/first.out" && pass || fail "other versions not said"
fi
(cd "$B" && sha256sum -c --quiet SHA256SUMS) && pass || fail "SHA256SUMS does not match the files"
[ -z "$(find "$TMP" -maxdepth 1 -name '.bible-making.*')" ] && pass || fail "the staging folder left behind"
# a second run: the same counts and digests, printed the same
expect_ok "get-bible again" "$GET" --out "$B"
cmp -s "$TMP/first.out" "$TMP/out" && pass || fail "a second run printed otherwise: $(diff "$TMP/first.out" "$TMP/out" | head -5)"
expect_ok "--check -q" "$GET" -q --check --out "$B"
[ ! -s "$TMP/out" ] && pass || fail "-q printed: $(head -2 "$TMP/out")"
expect_ok "--check" "$GET" --check --out "$B"
diff <(sed '$d' "$TMP/first.out") <(sed '$d' "$TMP/out") >/dev/null && pass ||
    fail "--check does not print what the run printed"
grep -Fxq "The Bible corpus in $B is intact" "$TMP/out" && pass || fail "--check: $(tail -1 "$TMP/out")"

# --- the files, the gold's notation, the split, Genesis 1:1 -------------------
"${CHECK[@]}" corpus "$B" && pass || fail "the corpus's files (above)"
# a copy with Genesis 1:1's sure 3-4 made possible, which the checks below
# must find
mkdir "$TMP/bad"
cp "$B"/* "$TMP/bad/"
sed -i '1s/3-4/3?4/' "$TMP/bad/bible.gold"

# --- the gold against mod2imp's markup, read another way -----------------------
mod2imp engKJV2006eb >"$TMP/kjv.imp" && mod2imp spaRV1909eb >"$TMP/rv.imp" && pass || fail "mod2imp"
"${CHECK[@]}" markup "$B" "$TMP/kjv.imp" "$TMP/rv.imp" 50 >&2 && pass || fail "the gold against the markup (above)"
"${CHECK[@]}" markup "$TMP/bad" "$TMP/kjv.imp" "$TMP/rv.imp" 50 >"$TMP/check.out" &&
    fail "the markup check missed a changed link" ||
    { grep -q "Gen.1.1: (3, 4) (God - Dios) possible, not sure" "$TMP/check.out" && pass ||
        fail "the markup check: $(head -2 "$TMP/check.out")"; }

# --- --check finds damage ------------------------------------------------------
expect_fail "--check: a damaged file" "bible.gold: sha256 .*, its SHA256SUMS says" \
    "$GET" --check --out "$TMP/bad"
cp "$B/bible.gold" "$TMP/bad/bible.gold"
touch "$TMP/bad/extra"
expect_fail "--check: a file too many" "its SHA256SUMS lists" "$GET" --check --out "$TMP/bad"
rm "$TMP/bad/extra"
expect_ok "--check: repaired" "$GET" --check --out "$TMP/bad"
# the recorded digests: a copy of the script with one of them changed fails,
# one whose recorded versions are others says so and does not fail
mkdir -p "$TMP/copy/scripts/data"
cp "$ROOT/scripts/deps.sh" "$TMP/copy/scripts/"
cp "$ROOT/scripts/data/bible.py" "$ROOT/scripts/data/nmt_tokenizer.py" "$TMP/copy/scripts/data/"
sum=$(grep " bible.gold$" "$B/SHA256SUMS" | cut -d' ' -f1)
if grep -q "$sum" "$GET" && grep -q "^packages: $(sed -n 's/^RECORDED_VERSIONS="\(.*\)"$/\1/p' "$GET")\$" "$TMP/first.out"; then
    sed "s/$sum/$(printf '0%.0s' {1..64})/" "$GET" >"$TMP/copy/scripts/data/get-bible"
    expect_fail "a recorded digest differs" "bible.gold: sha256 $sum, recorded 0{64}" \
        bash "$TMP/copy/scripts/data/get-bible" --check --out "$B"
    grep -q "1 file(s) differ from the digests recorded for sword-text-kjv" "$TMP/err" && pass ||
        fail "the failure does not say how many differ"
fi
sed 's/^RECORDED_VERSIONS=.*/RECORDED_VERSIONS="sword-text-kjv 0, sword-text-sparv 0, libsword-utils 0"/' \
    "$GET" >"$TMP/copy/scripts/data/get-bible"
expect_ok "other recorded versions" bash "$TMP/copy/scripts/data/get-bible" --check --out "$B"
grep -q "^sha256 (not checked: recorded for sword-text-kjv 0, " "$TMP/out" && pass ||
    fail "other versions not said: $(grep sha256 "$TMP/out")"

# --- nmt's words are the tokens: 600 verses ------------------------------------
# (every 100th verse and the rarer characters: tests/bible_check.py select)
"${CHECK[@]}" select "$B" "$TMP/s" >&2 && pass || fail "select"
n=$(wc -l <"$TMP/s.en")
[ "$n" -ge 550 ] && [ "$n" -le 700 ] && grep -q "’s" "$TMP/s.en" && grep -q "ב" "$TMP/s.en" && grep -q -- "—" "$TMP/s.en" &&
    grep -q "\[" "$TMP/s.en" && grep -q -- "-" "$TMP/s.es" && pass || fail "the selection: $n verses"
TINY=(--arch rnn --cell gru --emb 8 --hidden 8 --att-dim 8 --out-dim 8 --batch-size 64
      --max-len 200 --max-steps 1 --seed 5 -q)
expect_ok "train a word model" "$NMT" train --src "$TMP/s.en" --tgt "$TMP/s.es" "${TINY[@]}" \
    --min-count 1 --out "$TMP/words"
expect_ok "train a model of pieces" "$NMT" train --src "$TMP/s.en" --tgt "$TMP/s.es" "${TINY[@]}" \
    --subwords 400 --out "$TMP/pieces"
# spm_train's defaults: NFKC and a character coverage that leaves rare
# characters unknown
cat "$TMP/s.en" "$TMP/s.es" >"$TMP/both"
expect_ok "spm_train" spm_train --input="$TMP/both" --model_prefix="$TMP/nfkc" --vocab_size=400 \
    --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3 --minloglevel=2
expect_ok "train a model of NFKC pieces" "$NMT" train --src "$TMP/s.en" --tgt "$TMP/s.es" "${TINY[@]}" \
    --spm "$TMP/nfkc.model" --out "$TMP/nfkc"
for m in words pieces nfkc; do
    expect_ok "align ($m)" "$NMT" align -m "$TMP/$m/checkpoint.safetensors" --src "$TMP/s.en" \
        --tgt "$TMP/s.es" --format json --units words -o "$TMP/$m.json"
    "${CHECK[@]}" words "$TMP/$m.json" "$TMP/s.en" "$TMP/s.es" >&2 && pass || fail "$m: nmt's words (above)"
done
# and nmt reads the gold: every link inside its words, AER computed
for m in words pieces; do
    expect_ok "align --gold ($m)" "$NMT" align -m "$TMP/$m/checkpoint.safetensors" --src "$TMP/s.en" \
        --tgt "$TMP/s.es" --gold "$TMP/s.gold" --format pharaoh -o "$TMP/$m.links"
    grep -q "AER" "$TMP/out" && pass || fail "$m: no AER: $(head -c 300 "$TMP/out")"
done

# --- a run stopped midway leaves the corpus as it was -------------------------------
# (the script and its children, as Ctrl-C or a kill of the session would)
for sig in TERM KILL; do
    setsid "$GET" --out "$B" >/dev/null 2>&1 &
    pid=$!
    # midway: once it exports the second module (its folder is named by its pid)
    midway=0
    for _ in $(seq 1 600); do
        compgen -G "$TMP/.bible-making.$pid.*/spaRV1909eb.imp" >/dev/null && { midway=1; break; }
        sleep 0.1
    done
    [ $midway = 1 ] && pass || fail "SIG$sig: the run never reached its second export"
    kill -$sig -- -$pid 2>/dev/null
    wait $pid 2>/dev/null
    (cd "$B" && sha256sum -c --quiet SHA256SUMS) && cmp -s "$B/SHA256SUMS" "$TMP/first.sums" && pass ||
        fail "SIG$sig midway: the corpus is not the old one"
done
# SIGTERM cleans up; SIGKILL leaves its hidden folder, which is no corpus,
# until the next run removes it
left=$(find "$TMP" -maxdepth 1 -name '.bible-making.*')
[ -n "$left" ] && [ "$(echo "$left" | wc -l)" -eq 1 ] && [ ! -e "$left/corpus/SHA256SUMS" ] && pass ||
    fail "after SIGTERM and SIGKILL: '$left' left"

# --- --sample --------------------------------------------------------------------
expect_ok "--sample 300" "$GET" --sample 300 --out "$TMP/sample"
"${CHECK[@]}" sample "$TMP/sample" "$B" 300 && pass || fail "--sample 300 (above)"
grep -q "^sha256 (not recorded for a sample):" "$TMP/out" && pass || fail "--sample: what was checked"
grep -q "^  sample_verses 300$" "$TMP/out" && pass || fail "--sample: its count"
[ -z "$(find "$TMP" -maxdepth 1 -name '.bible-making.*')" ] && pass ||
    fail "the killed run's folder not removed by the next run"
expect_ok "--check of a sample" "$GET" --check --out "$TMP/sample"
finish
