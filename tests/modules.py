"""No two modules of src/ include each other, directly or round a ring.

A module is a source file (.c or .cc) with its header of the same stem in
the same folder (src/cli/serve/cmd_serve_queue.c with cmd_serve_queue.h);
a header with no source file of its stem is a module of its own
(src/train/trainer.h). A public header (include/nmt) is a module of its
own too: it is the API of several source files, not one's, and it includes
only public headers (tests/layers.py), so no ring passes through it. Module A depends on module B when a file of
A includes a header of B. A cycle is a ring of such dependencies: A
includes B's header and B (or a module B depends on, and so on) includes
A's. Such a ring means that neither half can be understood, tested or moved
without the other: the shared part belongs in a module of its own
(src/cli/serve/cmd_serve_types.h is the server's).

tests/layers.py checks the direction of includes between folders and the
headers' own include graph; this checks the modules', inside a folder too.
Usage: modules.py SOURCE_ROOT
"""
import os
import re
import sys

SOURCES = (".c", ".cc")
# Headers generated into the build folder (src/cli/meson.build)
GENERATED = ("explorer_html.h", "serve_html.h")


def source_files(root):
    out = []
    for top in ("src", "include"):
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for n in sorted(names):
                if n.endswith(SOURCES + (".h",)):
                    out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def resolve(root, path, inc):
    """The file that #include "inc" in path means, or None."""
    if inc.startswith("nmt/"):
        cands = ["include/" + inc]
    else:
        # the includer's folder first, as the compiler does, then the
        # folder includes are named from: src/cli for the command line,
        # src for the library
        base = "src/cli" if path.startswith("src/cli/") else "src"
        cands = [os.path.join(os.path.dirname(path), inc), os.path.join(base, inc)]
    for c in cands:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def main(root):
    files = source_files(root)
    def module_of(f):
        return os.path.splitext(f)[0]

    graph, bad, checked = {}, [], 0
    for f in files:
        text = open(os.path.join(root, f), encoding="utf-8").read()
        a = module_of(f)
        graph.setdefault(a, {})
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, flags=re.M):
            checked += 1
            target = resolve(root, f, inc)
            if target is None:
                if os.path.basename(inc) not in GENERATED:
                    bad.append(f"{f} includes {inc}, which is no file of the tree")
                continue
            b = module_of(target)
            if b != a:
                graph[a].setdefault(b, (f, inc))

    # Tarjan's strongly connected components: every component of more than
    # one module holds a cycle
    index, low, on, stack, comps = {}, {}, set(), [], []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            strong(v)

    def ring(comp):
        """One cycle through the component's first module, as the includes
        that make it."""
        members, start = set(comp), comp[0]
        prev, todo = {start: None}, [start]
        while todo:
            v = todo.pop(0)
            for w in sorted(graph[v]):
                if w not in members:
                    continue
                if w == start:
                    steps, u = [graph[v][w]], v
                    while prev[u] is not None:
                        steps.append(graph[prev[u]][u])
                        u = prev[u]
                    return " -> ".join(f"{f} includes {inc}" for f, inc in reversed(steps))
                if w not in prev:
                    prev[w] = v
                    todo.append(w)
        return "?"

    for comp in comps:
        bad.append("a module include cycle among " + ", ".join(comp) + ": " + ring(comp))
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    print(f"{len(files)} files, {len(graph)} modules, {checked} includes checked")
    if checked < 100:
        print("FAIL: too few includes found: is this the source root?", file=sys.stderr)
        bad.append("few")
    print(f"{0 if bad else 1} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
