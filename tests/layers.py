"""The code's layers: every #include goes down or sideways, never up.

The library's folders are ranked by the data's way through the program
(docs/DESIGN.md, "The code"): a file may include the internal headers of its
own folder's rank or lower, and the public headers (include/nmt) of that
rank or lower. Besides:
- the command line (src/cli and its folders: draw, align, serve) includes
  only public headers and its own files, named from src/cli
  ("cli_opts.h", "draw/svg.h"); the public headers include only public
  ones;
- what every architecture shares (src/model) includes nothing of an
  architecture (src/model/NAME), and no architecture includes another's;
- the headers' include graph has no cycle;
- no source file (src, include, tests, scripts, pytorch) is over MAX_LINES
  lines, the size the house set itself so that a file reads in one sitting.
Usage: layers.py SOURCE_ROOT
"""
import os
import re
import sys

# Lowest first. A folder's rank, and the rank of each public header (the
# lowest folder that may use it).
FOLDERS = {
    "src/base": 0,
    "src/data": 1, "src/eval": 1,
    "src/model": 2,
    "src/io": 3,
    "src/decode": 4, "src/align": 4,
    "src/train": 5,
    "src/cli": 6,
}
ARCHS = ("rnn", "transformer")  # src/model/NAME: rank 2, like src/model
PUBLIC = {
    0: "error blas rng threads utf8 dist tensors atomic_file",
    1: "text vocab subwords corpus batch links stream bleu chrf",
    2: "model rnn transformer",
    3: "modelfile average",
    4: "decode translator units align symmetrize extract ibm2",
    5: "optim train train_setup train_status progress runlog",
}
CLI = FOLDERS["src/cli"]
MAX_LINES = 900
SOURCE_EXT = (".c", ".h", ".cc", ".py", ".sh")


def long_files(root):
    """Every source file of the house over MAX_LINES lines."""
    out = []
    for top in ("src", "include", "tests", "scripts", "pytorch"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if not n.endswith(SOURCE_EXT) and "." in n:  # scripts have no suffix
                    continue
                path = os.path.join(dirpath, n)
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = sum(1 for _ in f)
                if lines > MAX_LINES:
                    out.append(f"{os.path.relpath(path, root)}: {lines} lines, over {MAX_LINES}")
    return out


def folder_of(path):
    d = os.path.dirname(path)
    for arch in ARCHS:
        if d == "src/model/" + arch:
            return d, FOLDERS["src/model"]
    if d.startswith("src/cli/"):  # the command line's own folders
        return d, CLI
    return d, FOLDERS.get(d)


def public_rank(stem):
    for r, names in PUBLIC.items():
        if stem in names.split():
            return r
    return None


def main(root):
    files = []
    cli_dirs = sorted(os.path.relpath(p, root) for p, _, _ in os.walk(os.path.join(root, "src/cli")))
    for d in ["include/nmt"] + sorted(FOLDERS) + ["src/model/" + a for a in ARCHS] + cli_dirs[1:]:
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        for f in sorted(os.listdir(full)):
            if f.endswith((".c", ".h", ".cc")):
                files.append(os.path.join(d, f))
    # every source folder of the library is ranked
    bad = []
    for dirpath, _, names in os.walk(os.path.join(root, "src")):
        rel = os.path.relpath(dirpath, root)
        if any(n.endswith((".c", ".h", ".cc")) for n in names) and folder_of(rel + "/x")[1] is None:
            bad.append(f"{rel}: a folder with no rank (add it to tests/layers.py and docs/DESIGN.md)")
    graph, checked = {}, 0
    for path in files:
        public = path.startswith("include/")
        stem = os.path.splitext(os.path.basename(path))[0]
        if public:
            own_dir, own = "include/nmt", public_rank(stem)
        else:
            own_dir, own = folder_of(path)
        if own is None:
            bad.append(f"{path}: no rank (add it to tests/layers.py and docs/DESIGN.md)")
            continue
        text = open(os.path.join(root, path), encoding="utf-8").read()
        for inc in re.findall(r'^#include "([^"]+)"', text, flags=re.M):
            checked += 1
            if inc.startswith("nmt/"):
                target, r = inc, public_rank(os.path.splitext(inc[4:])[0])
            elif own == CLI:  # the command line's own file, named from src/cli
                target, r = "src/cli/" + inc, CLI
                if inc.endswith(("explorer_html.h", "serve_html.h")):  # generated into the build folder
                    continue
                if not os.path.exists(os.path.join(root, target)):
                    bad.append(f"{path} includes {inc}: the command line sees only include/nmt and its own files (named from src/cli)")
                    continue
            elif "/" in inc:  # an internal header, named from src/
                target = "src/" + inc
                r = folder_of(target)[1]
                tdir = os.path.dirname(target)
                if own_dir == "src/model" and tdir != "src/model" and tdir.startswith("src/model/"):
                    bad.append(f"{path} includes {inc}: what the architectures share includes none of them")
                if (own_dir.startswith("src/model/") and tdir.startswith("src/model/")
                        and tdir != own_dir):
                    bad.append(f"{path} includes {inc}: an architecture includes another's")
            else:  # a file of the same folder
                target = os.path.join(own_dir, inc)
                r = own
                if inc.endswith(("explorer_html.h", "serve_html.h")):  # generated into the build folder
                    continue
                if not os.path.exists(os.path.join(root, target)):
                    bad.append(f"{path} includes {inc}, which is not in its folder (name internal headers from src/)")
                    continue
            if r is None:
                bad.append(f"{path}: includes {inc}, which has no rank")
                continue
            if r > own:
                bad.append(f"{path} (rank {own}) includes {inc} (rank {r}): an upward include")
            if public and not inc.startswith("nmt/"):
                bad.append(f"{path}: a public header includes the internal {inc}")
            if path.endswith(".h"):
                graph.setdefault(path, set()).add(
                    "include/" + inc if inc.startswith("nmt/") else target)
    # no cycle among the headers
    state = {}

    def visit(node, trail):
        if state.get(node) == 1:
            bad.append("an include cycle: " + " -> ".join(trail + [node]))
            return
        if state.get(node) == 2:
            return
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(graph):
        visit(node, [])
    bad += long_files(root)
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    print(f"{len(files)} files, {checked} includes checked")
    if checked < 100:
        print("FAIL: too few includes found: is this the source root?", file=sys.stderr)
        bad.append("few")
    print(f"{0 if bad else 1} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
