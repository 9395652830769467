"""No code outside src/model tests which architecture a model is.

Each architecture sits behind its table of operations (src/model/arch.h):
its settings, checks, description, defaults for training (sizes, dropout
sites and rates, the lr, the warm-up, the initial weights) and its passes.
The training loop, the set-up of a run, model files and the command line
go through that table, so that a new architecture is a folder of its own
under src/model (and its options in the option table, which names which
options belong to which architecture by the architecture's name). This
test reads every source file of src/ and include/ outside src/model, with
its comments and string literals blanked, and fails on:
- an architecture's constant (NMT_ARCH_RNN, ...) but where the enum
  defines it;
- a comparison of an architecture (`x.arch == ...`, `... != c->arch`), or a
  switch on one;
- an architecture's settings read through a configuration (`cfg.rnn.cell`,
  `c->transformer.heads`): they are the architecture's to read;
- an architecture's name compared with a literal
  (`strcmp(nmt_arch_name(a), "rnn")`).
Usage: arch_kind.py SOURCE_ROOT
"""
import os
import re
import sys

ALLOWED = ("src/model/",)  # the architectures' own code and their registry
RULES = [
    (re.compile(r"\bNMT_ARCH_[A-Z0-9_]+\b(?!\s*=[^=])"), "names an architecture's constant"),
    (re.compile(r"\barch\s*[!=]=|[!=]=\s*[\w.>-]*\barch\b"), "compares an architecture"),
    (re.compile(r"\bswitch\s*\([^)]*\barch\s*\)"), "switches on an architecture"),
    (re.compile(r"\b(?:rnn|transformer)\s*\.\s*[a-z_]\w*"), "reads an architecture's settings"),
    (re.compile(r'nmt_arch_name\s*\([^()]*\)\s*,\s*""|""\s*,\s*nmt_arch_name\s*\('),
     "compares an architecture's name"),
]


def blank(text):
    """Comments and string or character literals as spaces (newlines kept, so
    that line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif two == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(q + " " * (min(j, n) - i - 1) + (q if j < n and text[j] == q else ""))
            i = j + 1 if j < n and text[j] == q else j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def main(root):
    bad, files = [], 0
    for top in ("src", "include"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".c", ".cc", ".h")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                if path.startswith(ALLOWED):
                    continue
                files += 1
                raw = open(os.path.join(root, path), encoding="utf-8").read()
                lines = raw.splitlines()
                for k, line in enumerate(blank(raw).splitlines(), 1):
                    for rule, what in RULES:
                        if rule.search(line):
                            bad.append(f"{path}:{k}: {what}: {lines[k - 1].strip()}")
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    print(f"{files} files outside {', '.join(ALLOWED)} read")
    if files < 50:
        print("FAIL: too few files found: is this the source root?", file=sys.stderr)
        bad.append("few")
    print(f"{0 if bad else 1} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
