"""No include cycle between modules.

A module is a .c (or .cc) with the header of the same name in its folder
(src/train/runlog.c with src/train/runlog.h), or a header or a source file
alone; a public header (include/nmt/X.h) is a module of its own. Module A
uses module B when a file of A includes a header of B. Two modules that use
each other, or a longer ring, cannot be read, tested or moved one without
the other: the .c of one includes the other's header and the other's .c
includes its. layers.py checks the headers alone (a ring of .h files) and
the layers; this checks what the headers' own .c files add, which is where
such rings hide. Each ring is reported with the #include lines that make
it, so that it can be mended where it is.

Includes are found as the compiler finds them: in the includer's folder,
then from src/ (the library: "train/trainer.h") or from src/cli (the
command line: "cli_opts.h", "serve/cmd_serve_types.h"). An #include "..."
that names no file of the tree (but the generated pages) fails the test, so
that a ring cannot hide behind an include the check does not follow.

A ring listed in KNOWN is reported too, but does not fail the test: it is
being mended elsewhere (another branch's work), and its entry goes once it
is (the test says so when the ring is gone). Any other ring fails.
Usage: module_cycles.py SOURCE_ROOT
"""
import os
import re
import sys

# the rings of a graph: calls.py's, for the calls between the library's files
from calls import cycles as rings

SOURCES = (".c", ".cc", ".h")
# generated into the build folder: not a module of the tree
GENERATED = {"explorer_html.h", "serve_html.h"}
# Rings reported but not failed, each as ({module, ...}, who mends it).
# None: nmt serve's (serve.h, which its parts' headers included back) went
# when its shared types became src/cli/serve/cmd_serve_types.h.
KNOWN = []


def module_of(path):
    """src/train/runlog.c and src/train/runlog.h -> src/train/runlog."""
    return os.path.splitext(path)[0]


def resolve(includer, inc, root):
    """The file of the tree an #include "inc" of `includer` names, or None."""
    if inc.startswith("nmt/"):
        targets = ["include/" + inc]
    else:  # the includer's folder, then the folder includes are named from
        base = "src/cli" if includer.startswith("src/cli/") else "src"
        targets = [os.path.join(os.path.dirname(includer), inc), os.path.join(base, inc)]
    for target in targets:
        if os.path.exists(os.path.join(root, target)):
            return os.path.normpath(target)
    return None


def scan(root):
    """Every module's uses: {module: {module: [(file, line, include), ...]}},
    the number of files and the includes that name no file."""
    uses, files, lost = {}, 0, []
    for top in ("src", "include"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                files += 1
                mod = module_of(path)
                uses.setdefault(mod, {})
                text = open(os.path.join(root, path), encoding="utf-8").read()
                for k, line in enumerate(text.splitlines(), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m or os.path.basename(m.group(1)) in GENERATED:
                        continue
                    target = resolve(path, m.group(1), root)
                    if target is None:
                        lost.append(f"{path}:{k}: #include \"{m.group(1)}\" names no file of the tree")
                        continue
                    other = module_of(target)
                    if other != mod:
                        uses[mod].setdefault(other, []).append((path, k, m.group(1)))
    return uses, files, lost


def main(root):
    uses, files, lost = scan(root)
    found, failed = rings(uses), []
    for line in lost:
        print("FAIL: " + line, file=sys.stderr)
        failed.append([line])
    for comp in found:
        members = set(comp)
        known = [why for ring, why in KNOWN if ring == members]
        if known:
            print("KNOWN (not failed; " + known[0] + "): these modules include each other: " +
                  ", ".join(comp), file=sys.stderr)
        else:
            failed.append(comp)
            print("FAIL: these modules include each other: " + ", ".join(comp), file=sys.stderr)
        for a in comp:
            for b in sorted(uses[a]):
                if b in members:
                    for path, line, inc in uses[a][b]:
                        print(f"    {path}:{line}: #include \"{inc}\"", file=sys.stderr)
    for ring, why in KNOWN:
        if ring not in [set(c) for c in found]:
            print("NOTE: the known ring of " + ", ".join(sorted(ring)) + " is gone: remove it "
                  "from KNOWN in tests/module_cycles.py", file=sys.stderr)
    edges = sum(len(v) for v in uses.values())
    print(f"{files} files, {len(uses)} modules, {edges} uses, {len(found)} rings")
    if files < 100:
        print("FAIL: too few files found: is this the source root?", file=sys.stderr)
        failed.append(["few"])
    print(f"{0 if failed else 1} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
