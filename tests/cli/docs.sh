#!/usr/bin/env bash
# The documentation tells the truth: the README opens with the quick start,
# its example with the shipped model prints what the README says it prints,
# every package scripts/deps.sh installs is listed under "Building by hand",
# the README stays a README (at most 250 lines: the manual is in docs/),
# every link between the project's documents (file and heading) leads
# somewhere, every file the design documents name exists, docs/DESIGN.md's
# map of the tree names every folder there is and no other, and every
# experiment page says how and where its figures were measured.
. "$(dirname "$0")/lib.sh"
ROOT=${NMT_SOURCE_ROOT:?NMT_SOURCE_ROOT is not set}
README=$ROOT/README.md

# section NAME: the lines of README section "## NAME" up to the next "## ".
section() {
    awk -v h="## $1" '$0 == h { on = 1; next } on && /^## / { exit } on' "$README"
}

# --- the quick start comes first and has the four steps
first=$(grep -m1 '^## ' "$README")
[ "$first" = "## Quick start" ] && pass || fail "README's first section is '$first', not '## Quick start'"
quick=$(section "Quick start")
for want in 'git clone' 'scripts/test' 'scripts/demo' 'translate -m models/toy-attention.safetensors' \
    'nmt train --src' 'meson install'; do
    grep -qF -- "$want" <<<"$quick" && pass || fail "the quick start does not show '$want'"
done

# --- its example prints what it says: the line after the translate example
# is "# <expected output>"
example=$(grep -m1 -A1 '^echo .*| build/src/nmt translate -m models/toy-attention.safetensors$' <<<"$quick")
if [ -z "$example" ]; then
    fail "no translate example with the shipped model in the quick start"
else
    input=$(sed -n '1s/^echo "\(.*\)" |.*/\1/p' <<<"$example")
    expected=$(sed -n '2s/^# //p' <<<"$example")
    got=$(cd "$ROOT" && echo "$input" | "$NMT" translate -m models/toy-attention.safetensors 2>"$TMP/err")
    [ -n "$expected" ] && [ "$got" = "$expected" ] && pass ||
        fail "quick start: '$input' translates to '$got', the README says '$expected'"
fi

# --- a README, not a manual: the rest lives in docs/
lines=$(wc -l <"$README")
[ "$lines" -le 250 ] && pass || fail "README.md has $lines lines, more than 250: move the detail into docs/"

# --- every package the install scripts may install is documented
building=$(section "Building by hand")
grep -qF -- '-Dtests=false' <<<"$building" && pass || fail "Building by hand does not mention -Dtests=false"
pkgs=$(grep -o 'missing+=([^)]*)' "$ROOT/scripts/deps.sh" | sed 's/missing+=(//; s/)//' | tr ' ' '\n' | sort -u)
[ -n "$pkgs" ] && pass || fail "found no packages in scripts/deps.sh"
for p in $pkgs; do
    grep -qF -- "\`$p\`" <<<"$building" && pass || fail "package $p (scripts/deps.sh) is not listed under Building by hand"
done

# --- links between the documents: files exist, #anchors name a heading
(cd "$ROOT" && python3 - . README.md docs/*.md docs/experiments/*.md) <<'EOF' >"$TMP/links" 2>&1
import os, re, sys
root = sys.argv[1]
def slug(h):  # GitHub's: lower case, drop punctuation, spaces to '-'
    h = re.sub(r'`|\*', '', h.strip().lower())
    return re.sub(r'\s', '-', re.sub(r'[^\w\- ]', '', h))
def anchors(path):
    out, seen, fence = set(), {}, False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
        m = None if fence else re.match(r'#+ (.*)', line)
        if m:
            s = slug(m.group(1)); n = seen.get(s, 0); seen[s] = n + 1
            out.add(s if n == 0 else f'{s}-{n}')
    return out
bad = checked = 0
for rel in sys.argv[2:]:
    src = os.path.join(root, rel)
    text = re.sub(r'```.*?```', '', open(src, encoding='utf-8').read(), flags=re.S)
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'[a-z]+:', target):
            continue
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(src), path)) if path else src
        checked += 1
        if not os.path.exists(dest):
            print(f'{rel}: link to {target}: no such file'); bad += 1
        elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
            print(f'{rel}: link to {target}: no such heading'); bad += 1
print(f'{checked} links checked')
sys.exit(1 if bad or checked == 0 else 0)
EOF
if [ $? -eq 0 ]; then pass; else fail "broken links: $(cat "$TMP/links")"; fi

# --- the source map: every source file, script or folder that the design
# documents name (in backticks) exists, so the map stays true as code moves
# (a bare file name may be in any source folder, at any depth; cli/x.c is
# src/cli/x.c, nmt/x.h is include/nmt/x.h)
(cd "$ROOT" && python3 - . docs/DESIGN.md docs/training.md docs/decoding.md docs/benchmarks.md) <<'EOF' >"$TMP/paths" 2>&1
import glob, os, re, sys
root = sys.argv[1]
bad = checked = 0
exts = ('.c', '.h', '.cc', '.py', '.sh', '.md', '.build', '.txt')
dirs = ('scripts/', 'src/', 'tests/', 'include/', 'corpora/', 'models/', 'docs/', 'pytorch/')
for rel in sys.argv[2:]:
    text = open(os.path.join(root, rel), encoding='utf-8').read()
    for tok in re.findall(r'`([^`\s]+)`', text):
        tok = tok.rstrip(',.')
        if not (tok.endswith(exts) or tok.endswith('/') or tok.startswith(dirs)):
            continue
        if tok.startswith(('http', '-')) or tok.count('.') > 2:
            continue
        checked += 1
        if '/' in tok:
            found = [p for d in ('.', 'src', 'include') for p in glob.glob(os.path.join(root, d, tok))]
        else:
            found = [p for d in ('src/**', 'include/nmt', 'tests/**', 'scripts/**', 'pytorch', 'docs', '.')
                     for p in glob.glob(os.path.join(root, d, tok), recursive=True)]
        if not found:
            print(f'{rel}: `{tok}` names no file'); bad += 1
print(f'{checked} paths checked')
sys.exit(1 if bad or checked < 50 else 0)
EOF
if [ $? -eq 0 ]; then pass; else fail "the design documents name files that do not exist: $(cat "$TMP/paths")"; fi

# --- docs/DESIGN.md's map of the tree (the table of "The code"): every
# folder a row names exists, and every folder of the source is named: each
# folder of src/ and include/, each top-level folder (one of its folders
# named will do: corpora/toy/) and each folder of scripts/, tests/ and docs/
(cd "$ROOT" && python3 - . docs/DESIGN.md) <<'EOF' >"$TMP/map" 2>&1
import os, re, subprocess, sys
root, design = sys.argv[1], sys.argv[2]
text = open(os.path.join(root, design), encoding='utf-8').read()
code = re.search(r'^## The code\n(.*?)^## ', text, flags=re.S | re.M).group(1)
named = set()
for line in code.splitlines():
    m = re.match(r'\| `([^`]+/)` \|', line)
    if m:
        named.add(m.group(1).rstrip('/'))
bad = []
for d in sorted(named):
    if not os.path.isdir(os.path.join(root, d)):
        bad.append(f'the map names {d}/, which is no folder')
# the tree's folders: git's in a checkout, else those of the files there
try:
    files = subprocess.run(['git', '-C', root, 'ls-files'], capture_output=True, text=True,
                           check=True).stdout.split('\n')
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(p, f), root) for p, _, fs in os.walk(root) for f in fs]
    files = [f for f in files if not re.match(r'(build|\.git/|models/.+/|corpora/multi30k/)', f)]
folders = set()
for f in filter(None, files):
    parts = f.split('/')[:-1]
    for i in range(1, len(parts) + 1):
        folders.add('/'.join(parts[:i]))
want = set()
for d in folders:
    parts = d.split('/')
    if parts[0] in ('src', 'include') or len(parts) == 1 or (
            len(parts) == 2 and parts[0] in ('scripts', 'tests', 'docs')):
        want.add(d)
for d in sorted(want):
    if d not in named and not any(n.startswith(d + '/') for n in named):
        bad.append(f'{d}/ is not in the map (a row "| `{d}/` | ... |" in "The code")')
for b in bad:
    print(b)
print(f'{len(named)} folders named, {len(want)} wanted')
sys.exit(1 if bad or len(named) < 10 else 0)
EOF
if [ $? -eq 0 ]; then pass; else fail "docs/DESIGN.md's map and the tree differ: $(cat "$TMP/map")"; fi

# --- every experiment page (docs/experiments/*.md but its index) shows the
# command that made its figures (a sh code block) and the commit they were
# measured at ("commit 1a2b3c4", or "before commit ..." where only the commit
# that recorded them is known); in a clone with its history every such
# commit must be one of the repository's
history=no
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 &&
    [ "$(git -C "$ROOT" rev-parse --is-shallow-repository 2>/dev/null)" = false ]; then
    history=yes
fi
pages=0
for page in "$ROOT"/docs/experiments/*.md; do
    [ "$(basename "$page")" = README.md ] && continue
    pages=$((pages + 1))
    name=docs/experiments/$(basename "$page")
    grep -q '^```sh$' "$page" && pass || fail "$name shows no command (a \`\`\`sh code block)"
    commits=$(tr '\n' ' ' <"$page" | grep -oE '\bcommits? `?[0-9a-f]{7,40}\b' | grep -oE '[0-9a-f]{7,40}$' | sort -u)
    [ -n "$commits" ] && pass || fail "$name names no commit its figures were measured at ('commit 1a2b3c4')"
    if [ "$history" = yes ]; then
        for c in $commits; do
            git -C "$ROOT" cat-file -e "$c^{commit}" 2>/dev/null && pass ||
                fail "$name: commit $c is not in the repository's history"
        done
    fi
done
[ "$pages" -gt 0 ] && pass || fail "no experiment pages in docs/experiments/"

finish
