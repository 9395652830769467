"""No call cycle between the library's files.

A file calls another when its object in libnmt.a uses a global symbol the
other defines (nm). Two files that call each other, or a longer ring, are
one idea split in two places or a layer that reaches up: either way a
reader cannot take one without the other. The include rule (layers.py)
covers headers; this covers the calls that headers hide.
Usage: calls.py LIBNMT.A
"""
import collections
import shutil
import subprocess
import sys


def graph_of(lib):
    out = subprocess.run([shutil.which("nm") or "nm", "-A", "-g", lib], capture_output=True,
                         text=True, check=True).stdout
    defined, uses = {}, collections.defaultdict(set)
    for line in out.splitlines():
        # "lib.a:member.o:0000000000000000 T name" or "lib.a:member.o:                 U name"
        head, _, rest = line.rpartition(":")
        member = head.split(":")[-1]
        parts = rest.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        if kind == "U":
            uses[member].add(name)
        elif kind in "TDRBCGi":
            # i: a function cloned for several ISA levels (base/simd.h), an
            # ifunc that the callers' U names, beside its local clones
            defined.setdefault(name, member)
    graph = collections.defaultdict(set)
    for member, names in uses.items():
        for n in names:
            if n in defined and defined[n] != member:
                graph[member].add(defined[n])
    return defined, graph


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
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
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main(lib):
    defined, graph = graph_of(lib)
    if len(defined) < 100:
        print(f"FAIL: only {len(defined)} symbols in {lib}: is it the library?", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    found = cycles(graph)
    for c in found:
        print("FAIL: these files call each other: " + ", ".join(c), file=sys.stderr)
    print(f"{len(graph)} files that call others, {sum(len(v) for v in graph.values())} edges")
    print(f"{0 if found else 1} passed, {1 if found else 0} failed")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
