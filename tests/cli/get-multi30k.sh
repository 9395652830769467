# scripts/get-multi30k --from: copies the Multi30k files from a local folder,
# verifies their checksums, is idempotent, and refuses corrupt or missing
# files without installing them. Needs the shared corpus ($NMT_CORPORA).
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GET="$ROOT/scripts/get-multi30k"
SRC=${NMT_CORPORA:?NMT_CORPORA is not set}/multi30k
FILES="train.de.gz train.en.gz val.de.gz val.en.gz test_2016_flickr.de.gz test_2016_flickr.en.gz"
[ -d "$SRC" ] || { fail "no Multi30k corpus in $SRC"; finish; exit 1; }

# A good copy: every file arrives intact, with the expected line counts.
expect_ok "copy from the shared folder" "$GET" --from "$SRC" --dest "$TMP/m"
for f in $FILES; do
    cmp -s "$SRC/$f" "$TMP/m/$f" && pass || fail "$f not copied intact"
done
[ "$(zcat "$TMP/m/train.de.gz" | wc -l)" -eq 29000 ] && pass || fail "train.de has 29000 lines"
[ "$(zcat "$TMP/m/val.en.gz" | wc -l)" -eq 1014 ] && pass || fail "val.en has 1014 lines"
[ "$(zcat "$TMP/m/test_2016_flickr.en.gz" | wc -l)" -eq 1000 ] && pass || fail "test has 1000 lines"
# The copies are writable even though the shared files are read-only.
[ -w "$TMP/m/train.de.gz" ] && pass || fail "copied file is not writable"

# Idempotent: a second run changes nothing and says so.
expect_ok "second run" "$GET" --from "$SRC" --dest "$TMP/m"
[ "$(grep -c "already present" "$TMP/out")" -eq 6 ] && pass || fail "second run: $(cat "$TMP/out")"
# A damaged file in place is replaced by a good copy.
echo garbage >>"$TMP/m/val.de.gz"
expect_ok "repair a damaged file" "$GET" --from "$SRC" --dest "$TMP/m"
cmp -s "$SRC/val.de.gz" "$TMP/m/val.de.gz" && pass || fail "damaged val.de.gz not replaced"

# A corrupted source is refused, and nothing of it is installed.
mkdir "$TMP/bad"
for f in $FILES; do cat "$SRC/$f" >"$TMP/bad/$f"; done
printf 'X' | dd of="$TMP/bad/train.en.gz" bs=1 seek=1000 conv=notrunc 2>/dev/null
expect_fail "corrupted copy refused" "train\.en\.gz: checksum mismatch" "$GET" --from "$TMP/bad" --dest "$TMP/m2"
[ ! -e "$TMP/m2/train.en.gz" ] && pass || fail "corrupted train.en.gz was installed"
ls -A "$TMP/m2" | grep -q part && fail "partial file left behind" || pass
[ -f "$TMP/m2/train.de.gz" ] && pass || fail "the good files are still installed"

# A missing file is named.
rm "$TMP/bad/val.en.gz"
expect_fail "missing file" "val\.en\.gz: no such file" "$GET" --from "$TMP/bad" --dest "$TMP/m3"

# Bad options.
expect_fail "unknown pair" "no checksums recorded for 'fr-en'" "$GET" --pair fr-en --from "$SRC" --dest "$TMP/m4"
expect_fail "no such --from" "not a directory" "$GET" --from "$TMP/nowhere" --dest "$TMP/m4"
expect_fail "unknown option" "unknown option '--bogus'" "$GET" --bogus
finish
