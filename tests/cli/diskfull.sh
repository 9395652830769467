#!/usr/bin/env bash
# A checkpoint write that fails on a full disk or in a read-only folder: the
# run ends with one line naming the file and the reason, the old checkpoint is
# kept byte for byte, and no temporary file is left; a new --out on a
# read-only file system is refused before anything is made. Both use a small
# tmpfs in a private mount namespace, which needs root: without it the test
# reports SKIP (exit 77) rather than passing. (hostile.sh has the cases that
# need no privileges, a file size limit among them.)
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
    echo "SKIP: needs root and mount namespaces (unshare -m) for a tmpfs" >&2
    exit 77
fi

# one_line NAME: $TMP/err is one line (besides a "Try 'nmt X --help'" line)
one_line() {
    [ "$(grep -cv "^Try 'nmt [a-z]* --help'" "$TMP/err")" -eq 1 ] && pass || fail "$1: not one line on stderr: $(head -c 600 "$TMP/err")"
}
# check_kept NAME DIR BEFORE: DIR's checkpoint is byte-identical to BEFORE,
# loads, and DIR holds nothing but the run's own files.
check_kept() {
    cmp -s "$3" "$2/checkpoint.safetensors" && pass || fail "$1: the checkpoint changed"
    "$NMT" info "$2/checkpoint.safetensors" >/dev/null 2>&1 && pass || fail "$1: the kept checkpoint does not load"
    local extra
    extra=$(ls -A "$2" | grep -Ev '^(checkpoint\.safetensors|best\.safetensors|log\.tsv)$')
    [ -z "$extra" ] && pass || fail "$1: files left behind: $extra"
}

printf 'ein Hund läuft .\neine Katze schläft .\nzwei Hunde spielen im Park .\nein Mann liest ein Buch .\n' >"$TMP/de"
printf 'a dog runs .\na cat sleeps .\ntwo dogs play in the park .\na man reads a book .\n' >"$TMP/en"
expect_ok "fixture model" "$NMT" train --arch rnn --src "$TMP/de" --tgt "$TMP/en" --emb 8 --hidden 8 --att-dim 8 \
    --out-dim 8 --batch-size 2 --seed 3 -q --max-steps 2 --save-every 1 --out "$TMP/run"

ck=$(wc -c <"$TMP/run/checkpoint.safetensors")
# room for the run's files and a little more, not for a second checkpoint
room=$(((ck + $(wc -c <"$TMP/run/log.tsv") + 8192) / 4096 * 4096 + 4096))
mkdir -p "$TMP/mnt" "$TMP/mnt-ro"
unshare -m bash -c '
    set -u
    mount -t tmpfs -o size="$1" tmpfs "$2" || exit 90
    cp -r "$3"/. "$2"/
    "$4" train --resume "$2" --max-steps 4 -q >"$5/full.out" 2>"$5/full.err"
    echo $? >"$5/full.rc"
    cp -r "$2" "$5/full-after"
    mount -t tmpfs -o size=1m tmpfs "$6" && cp -r "$3"/. "$6"/ && mount -o remount,ro "$6" || exit 91
    "$4" train --resume "$6" --max-steps 4 -q >"$5/ro.out" 2>"$5/ro.err"
    echo $? >"$5/ro.rc"
    cp -r "$6" "$5/ro-after"
    "$4" train --src "$5/de" --tgt "$5/en" -q --out "$6/new" >"$5/ro-new.out" 2>"$5/ro-new.err"
    echo $? >"$5/ro-new.rc"
    if [ -e "$6/new" ]; then echo yes >"$5/ro-new.exists"; fi
' - "$room" "$TMP/mnt" "$TMP/run" "$NMT" "$TMP" "$TMP/mnt-ro"
rc=$?
[ $rc -eq 0 ] && pass || fail "disk full: the mount namespace script failed ($rc)"
for c in full ro; do
    what=$([ $c = full ] && echo "disk full" || echo "read-only folder")
    r=$(cat "$TMP/$c.rc" 2>/dev/null || echo missing)
    [ "$r" != 0 ] && [ "$r" != missing ] && [ "$r" -lt 128 ] && pass || fail "$what: exit $r"
    cp "$TMP/$c.err" "$TMP/err"
    one_line "$what"
    pattern=$([ $c = full ] && echo "No space left on device" || echo "Read-only file system")
    grep -q "$pattern" "$TMP/$c.err" && pass || fail "$what: message: $(cat "$TMP/$c.err")"
    check_kept "$what" "$TMP/$c-after" "$TMP/run/checkpoint.safetensors"
done
r=$(cat "$TMP/ro-new.rc" 2>/dev/null || echo missing)
[ "$r" != 0 ] && [ "$r" != missing ] && [ "$r" -lt 128 ] && pass || fail "--out on a read-only file system: exit $r"
cp "$TMP/ro-new.err" "$TMP/err"
one_line "--out on a read-only file system"
grep -q "mnt-ro/new.*Read-only file system" "$TMP/err" && pass ||
    fail "--out on a read-only file system: message: $(cat "$TMP/err")"
[ ! -e "$TMP/ro-new.exists" ] && pass || fail "--out on a read-only file system: folder made"

finish
