# scripts/data/get-multi30k --from: copies the Multi30k files from a local folder,
# verifies their checksums, is idempotent, and refuses corrupt or missing
# files without installing them. Needs the shared corpus ($NMT_CORPORA).
# --tok (Multi30k's tokenized references and the Moses scripts that made
# them): a folder laid out as Multi30k's repository, with stand-ins for those
# files (we may not keep the real ones), is refused file by file and nothing
# of it installed. The real files' sha256s are checked by hand against a
# clone (docs/testing.md).
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
GET="$ROOT/scripts/data/get-multi30k"
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

# --tok: stand-ins where Multi30k's repository keeps the files (a clone's
# layout), none with the recorded sha256: each is refused, none installed,
# and the raw files already in place are left alone.
R=$TMP/clone
TOKS="tok/test_2016_flickr.lc.norm.tok.de tok/test_2016_flickr.lc.norm.tok.en
      tok/val.lc.norm.tok.de tok/val.lc.norm.tok.en"
MOSES="moses/tokenizer/lowercase.perl moses/tokenizer/normalize-punctuation.perl
       moses/tokenizer/tokenizer.perl moses/share/nonbreaking_prefixes/nonbreaking_prefix.de
       moses/share/nonbreaking_prefixes/nonbreaking_prefix.en"
mkdir -p "$R/data/task1/tok" "$R/scripts/moses-3a0631a/tokenizer" \
    "$R/scripts/moses-3a0631a/share/nonbreaking_prefixes"
for f in $TOKS; do echo "ein hund ." >"$R/data/task1/tok/${f#tok/}"; done
for f in $MOSES; do echo "#!/bin/sh" >"$R/scripts/moses-3a0631a/${f#moses/}"; done
expect_fail "--tok: stand-ins refused" "9 file\(s\) missing or corrupt" \
    "$GET" --tok --from "$R" --dest "$TMP/m"
for f in $TOKS $MOSES; do
    grep -q "$R/.*${f##*/}: checksum mismatch" "$TMP/err" && pass || fail "--tok: $f not refused"
    [ ! -e "$TMP/m/$f" ] && pass || fail "--tok: the stand-in $f was installed"
done
[ "$(grep -c "already present" "$TMP/out")" -eq 6 ] && pass || fail "--tok: the raw files not kept"
[ -z "$(find "$TMP/m" -name '.*.part')" ] && pass || fail "--tok: partial files left behind"
# a missing one is named by both the places it was looked for
rm "$R/data/task1/tok/val.lc.norm.tok.en"
expect_fail "--tok: a missing file" "tok/val\.lc\.norm\.tok\.en: no such file \(nor .*data/task1/tok/val\.lc\.norm\.tok\.en\)" \
    "$GET" --tok --from "$R" --dest "$TMP/m"
# without --tok, nothing of it is looked at
expect_ok "no --tok: raw files only" "$GET" --from "$R" --dest "$TMP/m"
[ ! -e "$TMP/m/tok" ] && [ ! -e "$TMP/m/moses" ] && pass || fail "no --tok: tok/ or moses/ made"

# Bad options.
expect_fail "unknown pair" "no checksums recorded for 'fr-en'" "$GET" --pair fr-en --from "$SRC" --dest "$TMP/m4"
expect_fail "no such --from" "not a directory" "$GET" --from "$TMP/nowhere" --dest "$TMP/m4"
expect_fail "unknown option" "unknown option '--bogus'" "$GET" --bogus
finish
