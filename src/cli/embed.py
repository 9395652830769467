"""Turns a page of src/cli (align/explorer.html for nmt align --format
html, serve/serve.html for nmt serve) into a C header: NAME_head[] (everything before
@DATA@) and NAME_tail[] (the rest), each a NULL-terminated array of string
literals, one per line, so that no literal grows past what every C compiler
takes. NAME is "explorer" unless given.

A line that holds @INCLUDE:FILE@ (FILE one of the files given after the
name) is replaced by that file's text: the heatmap drawing (draw/heatmap.js) is
one file that both pages take this way, inside one of their <script>
elements. Run by meson at build time: python3 embed.py IN OUT [NAME [FILE...]]."""
import os
import re
import sys


def literal(text):
    out = []
    for ch in text:
        c = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "?":
            out.append("\\?")  # no trigraphs
        elif 0x20 <= c < 0x7F:
            out.append(ch)
        else:
            out.extend("\\%03o" % b for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def array(name, text):
    lines = text.splitlines(keepends=True)
    body = "".join("    %s,\n" % literal(l) for l in lines)
    return "static const char *const %s[] = {\n%s    NULL,\n};\n" % (name, body)


def include(text, files, src):
    by_name = {os.path.basename(p): p for p in files}

    def one(m):
        name = m.group(1)
        if name not in by_name:
            sys.exit("%s: @INCLUDE:%s@ but %s was not given to embed.py" % (src, name, name))
        with open(by_name[name], encoding="utf-8") as f:
            body = f.read()
        if "</script" in body.lower() or "@DATA@" in body or "@INCLUDE:" in body:
            sys.exit("%s: may not hold </script, @DATA@ or @INCLUDE:" % name)
        return body

    return re.sub(r"^[^\n]*@INCLUDE:([A-Za-z0-9_.-]+)@[^\n]*\n", one, text, flags=re.M)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    name = sys.argv[3] if len(sys.argv) > 3 else "explorer"
    with open(src, encoding="utf-8") as f:
        text = include(f.read(), sys.argv[4:], src)
    if text.count("@DATA@") != 1:
        sys.exit("%s: needs exactly one @DATA@" % src)
    head, tail = text.split("@DATA@")
    with open(dst, "w", encoding="utf-8") as f:
        f.write("/* Generated from %s by src/cli/embed.py: do not edit. */\n" % src.split("/")[-1])
        f.write(array(name + "_head", head))
        f.write(array(name + "_tail", tail))


main()
