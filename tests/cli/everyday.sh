# Everyday use (issue 17): --resume from any folder and onto data that moved
# (the same data only), the <unk> warning of translate, score, align and
# train --init-from, --resume with limits below the run's position, and a
# log.tsv row at every stop.
. "$(dirname "$0")/lib.sh"

M30K=${NMT_CORPORA:?}/multi30k
ROOT=${NMT_SOURCE_ROOT:?}
TOY=$ROOT/corpora/toy
TOYMODEL=$ROOT/models/toy-attention.safetensors

meta_of() { # meta_of FILE KEY: a metadata value
    local n
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    head -c $((8 + n)) "$1" | tail -c "$n" | grep -o "\"$2\": *\"[^\"]*\"" | sed 's/.*: *"\(.*\)"/\1/'
}
last_row_step() { tail -n 1 "$1" | cut -f1; }

mkdir -p "$TMP/data"
zcat "$M30K/train.de.gz" | head -n 200 >"$TMP/data/s.de"
zcat "$M30K/train.en.gz" | head -n 200 >"$TMP/data/s.en"
zcat "$M30K/val.de.gz" | head -n 20 >"$TMP/data/v.de"
zcat "$M30K/val.en.gz" | head -n 20 >"$TMP/data/v.en"
SMALL=(--emb 8 --hidden 8 --att-dim 8 --batch-size 20 --subwords 0 -q)

# --- 1. --resume from any folder ---------------------------------------------------
# the corpus named by relative paths, as a user in the data folder types it
(cd "$TMP/data" && "$NMT" train --arch rnn --src s.de --tgt s.en --valid-src v.de --valid-tgt v.en \
    "${SMALL[@]}" --max-steps 3 --out ../run) 2>"$TMP/err" && pass ||
    fail "train in the data folder: $(cat "$TMP/err")"
CK=$TMP/run/checkpoint.safetensors
DATA=$(cd "$TMP/data" && pwd -P)
[ "$(meta_of "$CK" train.src)" = "$DATA/s.de" ] && pass ||
    fail "train.src is not absolute: '$(meta_of "$CK" train.src)'"
[ "$(meta_of "$CK" train.valid_tgt_from_run)" = "../data/v.en" ] && pass ||
    fail "train.valid_tgt_from_run: '$(meta_of "$CK" train.valid_tgt_from_run)'"
[ "$(meta_of "$CK" train.src_bytes)" = "$(stat -c %s "$TMP/data/s.de")" ] && pass ||
    fail "train.src_bytes: '$(meta_of "$CK" train.src_bytes)'"
expect_ok "resume from /" bash -c 'cd / && exec "$@"' - "$NMT" train -q --resume "$TMP/run" \
    --max-steps 6
[ "$(meta_of "$CK" state.step)" = 6 ] && pass || fail "resume from /: step $(meta_of "$CK" state.step)"

# data that moved: refused with a hint, then found where the command line says
mv "$TMP/data" "$TMP/moved"
expect_fail "moved data" "training source file $DATA/s\\.de \\(from the checkpoint\\) cannot be opened.*give --src FILE" \
    "$NMT" train -q --resume "$TMP/run" --max-steps 9
[ "$(wc -l <"$TMP/err")" -eq 1 ] && pass || fail "moved data: not one line: $(cat "$TMP/err")"
expect_ok "resume onto moved data" "$NMT" train -q --resume "$TMP/run" --max-steps 9 \
    --src "$TMP/moved/s.de" --tgt "$TMP/moved/s.en" --valid-src "$TMP/moved/v.de" \
    --valid-tgt "$TMP/moved/v.en"
[ "$(meta_of "$CK" state.step)" = 9 ] && pass || fail "moved data: step $(meta_of "$CK" state.step)"
MOVED=$(cd "$TMP/moved" && pwd -P)
[ "$(meta_of "$CK" train.src)" = "$MOVED/s.de" ] && pass ||
    fail "the checkpoint does not name the new place: '$(meta_of "$CK" train.src)'"
expect_ok "then resume as usual" "$NMT" train -q --resume "$TMP/run" --max-steps 10
# other data is refused, by size or by its first lines, and nothing is written
cp "$CK" "$TMP/ck.before"
head -n 150 "$TMP/moved/s.de" >"$TMP/fewer.de"
expect_fail "other data (size)" "--src .*fewer\\.de: not the data the run began on .*bytes where the run's file had" \
    "$NMT" train -q --resume "$TMP/run" --max-steps 12 --src "$TMP/fewer.de"
tac "$TMP/moved/s.de" >"$TMP/reversed.de" # the same bytes in another order
expect_fail "other data (first lines)" "reversed\\.de: not the data the run began on .*first lines differ" \
    "$NMT" train -q --resume "$TMP/run" --max-steps 12 --src "$TMP/reversed.de"
cmp -s "$CK" "$TMP/ck.before" && pass || fail "a refused resume changed the checkpoint"
"$NMT" train --arch rnn -q --src "$TMP/moved/s.de" --tgt "$TMP/moved/s.en" "${SMALL[@]}" --max-steps 1 \
    --out "$TMP/noval" 2>/dev/null
expect_fail "valid data for a run without validation" "--valid-src: the run in .* has no validation set" \
    "$NMT" train -q --resume "$TMP/noval" --max-steps 2 --valid-src "$TMP/moved/v.de"
expect_fail "other options still refused" "--lr cannot be changed on --resume" \
    "$NMT" train -q --resume "$TMP/run" --lr 0.1

# a run folder moved along with its data: found from the run folder, with a note
mkdir -p "$TMP/box/data"
cp "$TMP/moved/s.de" "$TMP/moved/s.en" "$TMP/box/data/"
expect_ok "train in a box" "$NMT" train --arch rnn --src "$TMP/box/data/s.de" --tgt "$TMP/box/data/s.en" \
    "${SMALL[@]}" --max-steps 2 --out "$TMP/box/run"
mv "$TMP/box" "$TMP/box2"
expect_ok "resume the moved box" bash -c 'cd / && exec "$@"' - "$NMT" train --resume "$TMP/box2/run" \
    --max-steps 4
grep -Eq "training source file .*box/data/s\\.de \\(from the checkpoint\\) is not there; using .*box2/run/\\.\\./data/s\\.de" \
    "$TMP/err" && pass || fail "no note of the path from the run folder: $(cat "$TMP/err")"
[ "$(meta_of "$TMP/box2/run/checkpoint.safetensors" state.step)" = 4 ] && pass || fail "box: no steps"

# --- 7. limits below the run's position; a log row at every stop ---------------------
cp "$CK" "$TMP/ck.before"
expect_fail "--max-steps below the step" "--max-steps 5: the run in .*run is at step 10 already" \
    "$NMT" train --resume "$TMP/run" --max-steps 5 --src "$TMP/moved/s.de"
cmp -s "$CK" "$TMP/ck.before" && pass || fail "a refused --max-steps changed the checkpoint"
expect_ok "--max-steps at the step" "$NMT" train -q --resume "$TMP/run" --max-steps 10
# 200 pairs in batches of 20: step 15 is in the second epoch
expect_ok "into the second epoch" "$NMT" train -q --resume "$TMP/run" --max-steps 15
expect_fail "--epochs below the epoch" "--epochs 1: the run in .* is past 1 epochs already" \
    "$NMT" train --resume "$TMP/run" --epochs 1

# a signal: the steps since the last row get one (reports every 100000 steps, so
# that no other row is due)
LONG=("$NMT" train --arch rnn --src "$TOY/train.src.gz" --tgt "$TOY/train.tgt.gz" --emb 8 --hidden 8
      --att-dim 8 --batch-size 20 --subwords 0 -q --epochs 100000 --report-every 100000 --save-every 0)
for sig in INT TERM; do
    rm -rf "$TMP/sig"
    "${LONG[@]}" --out "$TMP/sig" 2>"$TMP/sig.err" &
    pid=$!
    for _ in $(seq 1 500); do [ -s "$TMP/sig/log.tsv" ] && break; sleep 0.02; done
    sleep 1
    kill -$sig $pid
    wait $pid
    rc=$?
    if [ $rc -eq 0 ]; then
        fail "SIG$sig: the run ended before the signal arrived"
        continue
    fi
    [ $rc -ge 128 ] && pass || fail "SIG$sig: exit $rc: $(cat "$TMP/sig.err")"
    step=$(meta_of "$TMP/sig/checkpoint.safetensors" state.step)
    [ "$step" -gt 0 ] && [ "$(last_row_step "$TMP/sig/log.tsv")" = "$step" ] && pass ||
        fail "SIG$sig at step $step: the last log row is of step '$(last_row_step "$TMP/sig/log.tsv")'"
    [ "$(meta_of "$TMP/sig/checkpoint.safetensors" state.report_steps)" = 0 ] && pass ||
        fail "SIG$sig: steps left over for the next row"
done
# the resumed run goes on from there with no row twice
expect_ok "resume after the signal" "$NMT" train -q --resume "$TMP/sig" --max-steps $((step + 5))
[ "$(last_row_step "$TMP/sig/log.tsv")" = $((step + 5)) ] && pass || fail "no row at the resumed end"
[ "$(cut -f1 "$TMP/sig/log.tsv" | sort | uniq -d | wc -l)" -eq 0 ] && pass || fail "log rows repeated"
# a limit below the run's step, on a run that resumes from anywhere anyway
cp "$TMP/sig/checkpoint.safetensors" "$TMP/ck.before"
expect_fail "--max-steps below the step (2)" "--max-steps 1: the run in .* is at step $((step + 5)) already" \
    "$NMT" train --resume "$TMP/sig" --max-steps 1
cmp -s "$TMP/sig/checkpoint.safetensors" "$TMP/ck.before" && pass ||
    fail "a refused --max-steps changed the checkpoint"
# --max-time: the same
expect_ok "max-time" "${LONG[@]}" --max-time 1s --out "$TMP/mt"
[ "$(last_row_step "$TMP/mt/log.tsv")" = "$(meta_of "$TMP/mt/checkpoint.safetensors" state.step)" ] &&
    pass || fail "--max-time: the last log row is not the last step"

# --- 4. a vocabulary that does not fit the text: a warning ---------------------------
UNK="warning: [0-9.]+% of the (tokens|pieces) of .* are unknown to the model \\(<unk>"
# German through the toy model
expect_ok "German through the toy model" "$NMT" translate -m "$TOYMODEL" -i "$TMP/moved/v.de" -b 1
grep -Eq "$UNK" "$TMP/err" && pass || fail "no warning for German through the toy model: $(cat "$TMP/err")"
grep -q "v\\.de" "$TMP/err" && pass || fail "the warning does not name the file"
[ "$(wc -l <"$TMP/out")" -eq 20 ] && pass || fail "it still translates"
expect_ok "German through the toy model (stdin)" "$NMT" translate -m "$TOYMODEL" -b 1 <"$TMP/moved/v.de"
grep -Eq "$UNK" "$TMP/err" && pass || fail "no warning on standard input"
expect_ok "align German with the toy model" "$NMT" align -m "$TOYMODEL" --src "$TMP/moved/v.de" \
    --format pharaoh
grep -Eq "$UNK" "$TMP/err" && pass || fail "no warning from align: $(cat "$TMP/err")"
expect_ok "score German with the toy model" "$NMT" score -m "$TOYMODEL" --src "$TMP/moved/v.de" \
    --tgt "$TMP/moved/v.en"
[ "$(grep -Ec "$UNK" "$TMP/err")" -eq 2 ] && pass || fail "score: not a warning per side: $(cat "$TMP/err")"
# the toy model on its own test set: no warning
zcat "$TOY/test.src.gz" | head -n 100 >"$TMP/toy.src"
zcat "$TOY/test.tgt.gz" | head -n 100 >"$TMP/toy.tgt"
expect_ok "toy through toy" "$NMT" score -m "$TOYMODEL" --src "$TMP/toy.src" --tgt "$TMP/toy.tgt"
[ -s "$TMP/err" ] && fail "a warning for the toy model's own text: $(cat "$TMP/err")" || pass
expect_ok "toy translate" "$NMT" translate -m "$TOYMODEL" -i "$TMP/toy.src" -b 1
[ -s "$TMP/err" ] && fail "a warning for the toy model's own text: $(cat "$TMP/err")" || pass
# a Multi30k word model: its val set does not warn, the toy test set does
expect_ok "Multi30k word model" "$NMT" train --arch rnn -q --src "$M30K/train.de.gz" --tgt "$M30K/train.en.gz" \
    --subwords 0 --emb 8 --hidden 8 --att-dim 8 --max-steps 0 --out "$TMP/m30k"
M30KMODEL=$TMP/m30k/checkpoint.safetensors
expect_ok "Multi30k val through it" "$NMT" score -m "$M30KMODEL" --src "$M30K/val.de.gz" \
    --tgt "$M30K/val.en.gz"
[ -s "$TMP/err" ] && fail "a warning for Multi30k's val set: $(cat "$TMP/err")" || pass
expect_ok "the toy test set through it" "$NMT" score -m "$M30KMODEL" --src "$TMP/toy.src" \
    --tgt "$TMP/toy.tgt"
[ "$(grep -Ec "$UNK" "$TMP/err")" -eq 2 ] && pass || fail "toy through Multi30k: $(cat "$TMP/err")"
# train --init-from onto another corpus: said before the run
expect_ok "init-from onto another corpus" "$NMT" train --init-from "$TOYMODEL" \
    --src "$TMP/moved/s.de" --tgt "$TMP/moved/s.en" --max-steps 1 --out "$TMP/from-toy"
grep -Eq "$UNK" "$TMP/err" && grep -q "init-from keeps" "$TMP/err" && pass ||
    fail "no warning for --init-from onto another corpus: $(cat "$TMP/err")"
expect_ok "init-from onto its own corpus" "$NMT" train --init-from "$M30KMODEL" \
    --src "$TMP/moved/s.de" --tgt "$TMP/moved/s.en" --max-steps 1 --out "$TMP/from-m30k"
grep -q "warning" "$TMP/err" && fail "a warning for --init-from on its own corpus: $(cat "$TMP/err")" || pass

# --- 2. scripts/demo and scripts/test show why a build failed ------------------------
# (meson and ninja print their errors on stdout, which both sent to /dev/null)
[ "$(bash -c '. "$1/scripts/deps.sh"; nmt_suites_need_torch unit; echo $?' - "$ROOT")" = 1 ] &&
    pass || fail "scripts/test unit would install PyTorch"
[ "$(bash -c '. "$1/scripts/deps.sh"; nmt_suites_need_torch; echo $?' - "$ROOT")" = 0 ] &&
    pass || fail "scripts/test (every suite) would not install PyTorch"
if [ -n "$(bash -c '. "$1/scripts/deps.sh"; nmt_deps_check' - "$ROOT" | sed '/^$/d')" ]; then
    fail "build dependencies missing, so the scripts' build failure cannot be checked: $(bash -c '. "$1/scripts/deps.sh"; nmt_deps_check' - "$ROOT" | tr '\n' ' ')"
else
    # a build folder whose build fails, with its error on stdout
    mkdir -p "$TMP/broken"
    printf 'rule fail
  command = echo "fake-error: no such library" && false
build src/nmt: fail
build all: phony src/nmt
default all
' \
        >"$TMP/broken/build.ninja"
    NMT_BUILD_DIR=$TMP/broken NMT_DEMO_STEPS=1 "$ROOT/scripts/demo" >"$TMP/out" 2>"$TMP/err" &&
        fail "scripts/demo: exit 0 with a failing build" || pass
    grep -q "fake-error: no such library" "$TMP/err" && grep -q "the build failed" "$TMP/err" && pass ||
        fail "scripts/demo hides the build error: $(cat "$TMP/out" "$TMP/err")"
    # a build "folder" that is a file: meson setup fails at once
    echo "not a folder" >"$TMP/afile"
    NMT_BUILD_DIR=$TMP/afile NMT_NO_ASAN=1 "$ROOT/scripts/test" unit >"$TMP/out" 2>"$TMP/err" &&
        fail "scripts/test: exit 0 with a broken build folder" || pass
    grep -q "meson setup failed" "$TMP/err" && grep -q "afile" <(sed -n '/^----/,$p' "$TMP/err") &&
        pass || fail "scripts/test hides meson's error: $(cat "$TMP/out" "$TMP/err")"
fi

finish
