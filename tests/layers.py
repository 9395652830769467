"""The code's layers: every #include goes down or sideways, never up.

Each header has a rank (below); a file may include only headers of its own
rank or lower, the library (src/*.c) nothing of the command line (src/cli),
the public headers (include/nmt) only public headers, and the headers'
include graph has no cycle. docs/DESIGN.md ("The code") describes the same
order. Usage: layers.py SOURCE_ROOT
"""
import os
import re
import sys

# Lowest first: text and numbers, then data, the model, what is built on the
# model, training, and the command line on top.
RANKS = {
    0: "error rng text utf8 json pool threads dist vocab tensors optim train_status "
       "bleu bleu_internal chrf",
    1: "subwords corpus batch safetensors",
    2: "model layers seq2seq",
    3: "modelfile decode align average units translator",
    4: "train trainer progress runlog",
}
# .c files that implement a header of another name
IMPLEMENTS = {
    "token": "text", "bleu_text": "bleu", "bleu_lower": "bleu", "infer": "model",
    "linear": "layers", "embed": "layers", "cell": "layers", "attention": "layers",
    "output": "layers", "checkpoint": "trainer", "snapshots": "trainer",
    "batch_log": "trainer",
}
CLI = 5


def rank_of(name):
    for r, names in RANKS.items():
        if name in names.split():
            return r
    return None


def main(root):
    files = []
    for d in ("include/nmt", "src", "src/cli"):
        for f in sorted(os.listdir(os.path.join(root, d))):
            if f.endswith((".c", ".h", ".cc")):
                files.append(os.path.join(d, f))
    bad, graph, checked = [], {}, 0
    for path in files:
        stem = os.path.splitext(os.path.basename(path))[0]
        in_cli = path.startswith("src/cli/")
        own = CLI if in_cli else rank_of(IMPLEMENTS.get(stem, stem))
        if own is None:
            bad.append(f"{path}: no rank (add it to tests/layers.py and the source map)")
            continue
        text = open(os.path.join(root, path), encoding="utf-8").read()
        for inc in re.findall(r'^#include "([^"]+)"', text, flags=re.M):
            checked += 1
            target = os.path.splitext(os.path.basename(inc))[0]
            if inc.startswith("cli/") or inc.endswith("explorer_html.h"):
                r = CLI
            else:
                r = rank_of(target)
            if r is None:
                bad.append(f"{path}: includes {inc}, which has no rank")
                continue
            if r > own:
                bad.append(f"{path} (rank {own}) includes {inc} (rank {r}): an upward include")
            if path.startswith("include/") and not inc.startswith("nmt/"):
                bad.append(f"{path}: a public header includes the internal {inc}")
            if path.endswith(".h"):
                graph.setdefault(stem if not in_cli else "cli/" + stem, set()).add(
                    inc if inc.startswith("cli/") else target)
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
            visit(os.path.splitext(nxt)[0], trail + [node])
        state[node] = 2

    for node in sorted(graph):
        visit(node, [])
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
