# Outputs never overwrite inputs, and appear whole or not at all (issue 24).
# Every command that writes a file refuses, with exit 2 and a message naming
# both options, an output that is one of its inputs, whether it is named
# alike, with another spelling, through a symbolic link or a hard link, or
# reached through standard input or output; the input is left byte for byte.
# nmt average writes over one of its inputs safely (it reads them all, then
# writes atomically): that is allowed and checked. A command that fails
# midway, or is killed, leaves an existing output byte for byte and no
# temporary file (but for SIGKILL, which nothing can catch).
. "$(dirname "$0")/lib.sh"

SRC=${NMT_SOURCE_ROOT:?}
TOY=$SRC/corpora/toy
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# A copy of the shipped model: a command that wrongly wrote over its model
# must not damage the repository's.
M=$TMP/m.safetensors
cp "$SRC/models/toy-attention.safetensors" "$M"
zcat "$TOY/test.src.gz" | head -n 4 >"$TMP/in.src"
zcat "$TOY/test.tgt.gz" | head -n 4 >"$TMP/in.tgt"
zcat "$TOY/test.src.gz" | head -n 100 >"$TMP/many.src"

sum() { sha256sum <"$1" | cut -d' ' -f1; }
# no_temp DIR NAME: no ".NAME.tmp.PID" left in DIR
no_temp() {
    local left
    left=$(ls -A "$1" | grep -E '\.tmp\.[0-9]+$')
    [ -z "$left" ] && pass || fail "$2: temporary files left: $left"
}
# refused_same NAME VICTIM PATTERN CMD...: CMD exits 2 with a message
# matching PATTERN, and VICTIM keeps its bytes. (VICTIM is put back as it
# was afterwards, in place, so that a failure does not spread to the next
# cases.)
refused_same() {
    local name=$1 victim=$2 pattern=$3 before rc
    shift 3
    before=$(sum "$victim")
    cp "$victim" "$TMP/victim.bak"
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 2 ] && pass || fail "$name: exit $rc, expected 2: $(head -c 300 "$TMP/err")"
    grep -Eq -- "$pattern" "$TMP/err" && pass ||
        fail "$name: stderr does not match /$pattern/: $(head -c 300 "$TMP/err")"
    [ "$(sum "$victim")" = "$before" ] && pass || fail "$name: $victim changed"
    no_temp "$(dirname "$victim")" "$name"
    [ "$(sum "$victim")" = "$before" ] || cat "$TMP/victim.bak" >"$victim"
}
# The other names of in.src: another spelling, a symbolic and a hard link.
ln -s in.src "$TMP/link.src"
ln "$TMP/in.src" "$TMP/hard.src"
ALIASES=("$TMP/in.src" "$TMP/./in.src" "$TMP/link.src" "$TMP/hard.src")
SAME="is the same file as"

# ---- translate ------------------------------------------------------------------
T=("$NMT" translate -q -b 1 -m "$M")
for o in "${ALIASES[@]}"; do
    refused_same "translate -i in.src -o $o" "$TMP/in.src" "-o $o $SAME -i $TMP/in.src" \
        "${T[@]}" -i "$TMP/in.src" -o "$o"
    refused_same "translate -i in.src --alignments $o" "$TMP/in.src" \
        "--alignments $o $SAME -i $TMP/in.src" "${T[@]}" -i "$TMP/in.src" --alignments "$o"
done
refused_same "translate -o the model" "$M" "-o $TMP/m.safetensors $SAME -m" \
    "${T[@]}" -i "$TMP/in.src" -o "$TMP/m.safetensors"
refused_same "translate -o F <F" "$TMP/in.src" "-o $TMP/link.src $SAME standard input" \
    bash -c '"$@" <"$0"' "$TMP/in.src" "${T[@]}" -o "$TMP/link.src"
refused_same "translate -i F >>F" "$TMP/in.src" "standard output $SAME -i $TMP/hard.src" \
    bash -c '"$@" >>"$0"' "$TMP/in.src" "${T[@]}" -i "$TMP/hard.src"
echo "old translations" >"$TMP/old.txt"
refused_same "translate -o F --alignments F" "$TMP/old.txt" \
    "-o $TMP/old.txt and --alignments $TMP/./old.txt are the same file" \
    "${T[@]}" -i "$TMP/in.src" -o "$TMP/old.txt" --alignments "$TMP/./old.txt"
# two outputs with one name that does not exist yet
refused_same "translate -o new --alignments new" "$TMP/in.src" "are the same file" \
    "${T[@]}" -i "$TMP/in.src" -o "$TMP/new.txt" --alignments "$TMP/./new.txt"
[ ! -e "$TMP/new.txt" ] && pass || fail "refused outputs were made"
# '-' is standard output, for one output only
mkdir -p "$TMP/dash"
(cd "$TMP/dash" && "${T[@]}" -i "$TMP/in.src" -o - >"$TMP/out" 2>"$TMP/err")
[ "$(wc -l <"$TMP/out")" -eq 4 ] && [ ! -e "$TMP/dash/-" ] && pass ||
    fail "translate -o -: not standard output: $(ls -A "$TMP/dash") $(cat "$TMP/err")"
(cd "$TMP/dash" && "${T[@]}" -i "$TMP/in.src" -o "$TMP/dash/t.txt" --alignments - >"$TMP/out" 2>"$TMP/err")
[ "$(grep -c '"attention"' "$TMP/out")" -eq 4 ] && [ "$(wc -l <"$TMP/dash/t.txt")" -eq 4 ] && pass ||
    fail "translate --alignments -: $(cat "$TMP/err")"
expect_fail "translate -o - --alignments -" "-o and --alignments both name standard output" \
    "${T[@]}" -i "$TMP/in.src" -o - --alignments -
expect_fail "compare -o -" "-o -: the table goes to standard output" \
    "$NMT" compare -q "$M" --src "$TMP/in.src" --ref "$TMP/in.tgt" -o -
# streams that are no regular files are not files to protect: a terminal or
# a pipe may be both standard input and standard output
echo "a" | "${T[@]}" 2>"$TMP/err" | cat >"$TMP/out" && [ "$(wc -l <"$TMP/out")" -eq 1 ] && pass ||
    fail "translate through pipes: $(cat "$TMP/err")"

# ---- align ----------------------------------------------------------------------
A=("$NMT" align -b 1 -m "$M")
for o in "${ALIASES[@]}"; do
    refused_same "align --src in.src -o $o" "$TMP/in.src" "-o $o $SAME --src $TMP/in.src" \
        "${A[@]}" --src "$TMP/in.src" --format tsv -o "$o"
done
cp "$TMP/in.tgt" "$TMP/tgt.tsv"
refused_same "align --tgt -o" "$TMP/tgt.tsv" "-o $TMP/tgt.tsv $SAME --tgt" \
    "${A[@]}" --src "$TMP/in.src" --tgt "$TMP/tgt.tsv" -o "$TMP/tgt.tsv"
refused_same "align html over --src" "$TMP/in.src" "-o $TMP/link.src $SAME --src" \
    "${A[@]}" --src "$TMP/in.src" --format html -o "$TMP/link.src"
refused_same "align -o the model" "$M" "$SAME -m $M" \
    "${A[@]}" --src "$TMP/in.src" --format tsv -o "$M"

# ---- compare: the test set, a model file given as RUN ----------------------------
C=("$NMT" compare -q -b 1 "$M" --src "$TMP/in.src" --ref "$TMP/in.tgt")
for o in "${ALIASES[@]}"; do
    refused_same "compare -o $o" "$TMP/in.src" "-o $o $SAME --src $TMP/in.src" "${C[@]}" -o "$o"
done
refused_same "compare -o --ref" "$TMP/in.tgt" "$SAME --ref" "${C[@]}" -o "$TMP/in.tgt"
refused_same "compare -o RUN" "$M" "$SAME RUN $M" "${C[@]}" -o "$M"
mkdir -p "$TMP/run"
cp "$M" "$TMP/run/best.safetensors"
refused_same "compare -o a run's model" "$TMP/run/best.safetensors" \
    "$SAME $TMP/run/best.safetensors" \
    "$NMT" compare -q -b 1 "$TMP/run" --src "$TMP/in.src" --ref "$TMP/in.tgt" -o "$TMP/run/best.safetensors"

# ---- plot: a log file, a run folder's log -----------------------------------------
printf 'step\telapsed_s\tloss\n1\t0.5\t5.0\n2\t1.0\t4.0\n' >"$TMP/a.tsv"
ln -s a.tsv "$TMP/link.tsv"
ln "$TMP/a.tsv" "$TMP/hard.tsv"
for o in "$TMP/a.tsv" "$TMP/./a.tsv" "$TMP/link.tsv" "$TMP/hard.tsv"; do
    refused_same "plot -o $o" "$TMP/a.tsv" "-o $o $SAME RUN $TMP/a.tsv" "$NMT" plot "$TMP/a.tsv" -o "$o"
done
cp "$TMP/a.tsv" "$TMP/run/log.tsv"
refused_same "plot -o a run's log" "$TMP/run/log.tsv" "$SAME $TMP/run/log.tsv" \
    "$NMT" plot "$TMP/run" -o "$TMP/run/log.tsv"
expect_ok "plot beside its log" "$NMT" plot "$TMP/run" -o "$TMP/run/curves.svg"
grep -q "<svg" "$TMP/run/curves.svg" && pass || fail "plot wrote no SVG"
no_temp "$TMP/run" "plot"

# ---- train --batch-log ------------------------------------------------------------
zcat "$TOY/train.src.gz" | head -n 20 >"$TMP/tr.src"
zcat "$TOY/train.tgt.gz" | head -n 20 >"$TMP/tr.tgt"
ln -s tr.tgt "$TMP/tr-link.tgt"
TR=("$NMT" train --arch rnn -q --src "$TMP/tr.src" --tgt "$TMP/tr.tgt" --emb 8 --hidden 8 --att-dim 8
    --out-dim 8 --max-steps 2)
refused_same "train --batch-log --src" "$TMP/tr.src" "--batch-log $TMP/\./tr.src $SAME --src" \
    "${TR[@]}" --out "$TMP/tr-run1" --batch-log "$TMP/./tr.src"
refused_same "train --batch-log --tgt" "$TMP/tr.tgt" "--batch-log $TMP/tr-link.tgt $SAME --tgt" \
    "${TR[@]}" --out "$TMP/tr-run2" --batch-log "$TMP/tr-link.tgt"
[ ! -e "$TMP/tr-run1" ] && [ ! -e "$TMP/tr-run2" ] && pass || fail "a refused train made its folder"

# ---- average: over one of its inputs is safe by construction -----------------------
# It reads every file before it writes, and writes through a temporary file
# renamed at the end: -o A gives what -o elsewhere gives, and a failure
# leaves A whole.
write() { "$PY" "$SRC/tests/interop.py" write "$@" >/dev/null; }
write "$TMP/a.safetensors" --seed 1
write "$TMP/b.safetensors" --seed 2
cp "$TMP/a.safetensors" "$TMP/a0.safetensors"
expect_ok "average elsewhere" "$NMT" average -q "$TMP/a.safetensors" "$TMP/b.safetensors" -o "$TMP/ab.safetensors"
! cmp -s "$TMP/ab.safetensors" "$TMP/a0.safetensors" && pass || fail "the mean is the first file"
expect_ok "average -o A" "$NMT" average -q "$TMP/a.safetensors" "$TMP/b.safetensors" -o "$TMP/a.safetensors"
cmp -s "$TMP/a.safetensors" "$TMP/ab.safetensors" && pass || fail "average -o A differs from -o elsewhere"
no_temp "$TMP" "average -o A"
cp "$TMP/a0.safetensors" "$TMP/a.safetensors"
: >"$TMP/broken.safetensors"
expect_fail "average -o A with a broken file" "broken" \
    "$NMT" average -q "$TMP/a.safetensors" "$TMP/broken.safetensors" -o "$TMP/a.safetensors"
cmp -s "$TMP/a.safetensors" "$TMP/a0.safetensors" && pass || fail "a failed average changed A"
no_temp "$TMP" "failed average -o A"
# through a symbolic link or a hard link: the model written is the mean, the
# file read keeps its bytes (the link is replaced)
ln -s a.safetensors "$TMP/alink.safetensors"
ln "$TMP/a.safetensors" "$TMP/ahard.safetensors"
for o in alink ahard; do
    expect_ok "average -o $o" "$NMT" average -q "$TMP/a.safetensors" "$TMP/b.safetensors" \
        -o "$TMP/$o.safetensors"
    cmp -s "$TMP/$o.safetensors" "$TMP/ab.safetensors" && pass || fail "average -o $o: not the mean"
    cmp -s "$TMP/a.safetensors" "$TMP/a0.safetensors" && pass || fail "average -o $o changed A"
done

# ---- a command that fails midway leaves the old output whole -----------------------
# 100 good lines, then invalid UTF-8: with --batch-size 1 the first window
# of 64 lines is translated and written before the bad line is read.
{ cat "$TMP/many.src"; printf 'bad \377 line\n'; } >"$TMP/bad.src"
mkdir -p "$TMP/fail"
printf 'old output\n' >"$TMP/fail/out.txt"
printf 'old alignments\n' >"$TMP/fail/al.json"
chmod 640 "$TMP/fail/out.txt"
before=$(sum "$TMP/fail/out.txt")
before_al=$(sum "$TMP/fail/al.json")
expect_fail "translate fails midway" "bad\\.src:101: invalid UTF-8" "${T[@]}" --batch-size 1 \
    -i "$TMP/bad.src" -o "$TMP/fail/out.txt" --alignments "$TMP/fail/al.json"
[ "$(sum "$TMP/fail/out.txt")" = "$before" ] && pass || fail "a failed translate changed -o"
[ "$(sum "$TMP/fail/al.json")" = "$before_al" ] && pass || fail "a failed translate changed --alignments"
expect_fail "translate to a new file fails midway" "invalid UTF-8" "${T[@]}" --batch-size 1 \
    -i "$TMP/bad.src" -o "$TMP/fail/new.txt"
[ ! -e "$TMP/fail/new.txt" ] && pass || fail "a failed translate left a new -o"
no_temp "$TMP/fail" "translate fails midway"
# align: the first pairs are written, then a line too long to align
{ cat "$TMP/in.src"; "$PY" -c "print(' '.join(['sko'] * 100001))"; } >"$TMP/long.src"
printf 'old tsv\n' >"$TMP/fail/al.tsv"
before_tsv=$(sum "$TMP/fail/al.tsv")
expect_fail "align fails midway" "workspace|too long" "${A[@]}" --src "$TMP/long.src" -o "$TMP/fail/al.tsv"
[ "$(sum "$TMP/fail/al.tsv")" = "$before_tsv" ] && pass || fail "a failed align changed -o"
no_temp "$TMP/fail" "align fails midway"
# and a command that succeeds replaces the file, keeping its permissions
expect_ok "translate over an old output" "${T[@]}" -i "$TMP/in.src" -o "$TMP/fail/out.txt"
[ "$(wc -l <"$TMP/fail/out.txt")" -eq 4 ] && pass || fail "translate did not replace -o"
[ "$(stat -c %a "$TMP/fail/out.txt")" = 640 ] && pass || fail "the output lost its permissions"
# through a symbolic link: the file it names is written, the link stays
ln -s out.txt "$TMP/fail/out-link.txt"
expect_ok "translate -o a link" "${T[@]}" -i "$TMP/many.src" -o "$TMP/fail/out-link.txt"
[ -L "$TMP/fail/out-link.txt" ] && [ "$(wc -l <"$TMP/fail/out.txt")" -eq 100 ] && pass ||
    fail "translate -o a link: the link was not followed"
no_temp "$TMP/fail" "translate"

# ---- a command killed midway -----------------------------------------------------
# nmt reads a FIFO that this script holds open: it has written its first
# window and waits for more when it is killed. Nothing here waits on time:
# the loop waits for nmt to open its output (its temporary file appears,
# or, were the output opened in place, the old bytes go).
killed() { # killed SIGNAL: prints nmt's exit code
    local sig=$1 pid rc
    rm -rf "$TMP/kill"
    mkdir -p "$TMP/kill"
    mkfifo "$TMP/kill/in.fifo"
    printf 'old output\n' >"$TMP/kill/out.txt"
    "${T[@]}" --batch-size 1 -i "$TMP/kill/in.fifo" -o "$TMP/kill/out.txt" 2>"$TMP/kill.err" &
    pid=$!
    exec 3<>"$TMP/kill/in.fifo" # read and write: never blocks
    cat "$TMP/many.src" >&3
    while kill -0 $pid 2>/dev/null && ! ls -A "$TMP/kill" | grep -q '^\.out\.txt\.tmp\.' &&
        [ "$(cat "$TMP/kill/out.txt")" = "old output" ]; do
        sleep 0.05
    done
    kill -"$sig" $pid
    wait $pid
    rc=$?
    exec 3>&-
    echo $rc
}
rc=$(killed TERM)
[ "$rc" -eq 143 ] && pass || fail "SIGTERM: exit $rc: $(head -c 300 "$TMP/kill.err")"
[ "$(cat "$TMP/kill/out.txt")" = "old output" ] && pass || fail "SIGTERM: the old output changed"
no_temp "$TMP/kill" "SIGTERM"
rc=$(killed KILL)
[ "$rc" -eq 137 ] && pass || fail "SIGKILL: exit $rc"
[ "$(cat "$TMP/kill/out.txt")" = "old output" ] && pass || fail "SIGKILL: the old output changed"
finish
