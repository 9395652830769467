"""Turns src/cli/explorer.html into a C header for nmt align --format html:
explorer_head[] (everything before the line holding @DATA@, and that line up
to it) and explorer_tail[] (the rest), each a NULL-terminated array of string
literals, one per line, so that no literal grows past what every C compiler
takes. Run by meson at build time: python3 embed.py IN OUT."""
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


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        text = f.read()
    if text.count("@DATA@") != 1:
        sys.exit("%s: needs exactly one @DATA@" % src)
    head, tail = text.split("@DATA@")
    with open(dst, "w", encoding="utf-8") as f:
        f.write("/* Generated from %s by src/cli/embed.py: do not edit. */\n" % src.split("/")[-1])
        f.write(array("explorer_head", head))
        f.write(array("explorer_tail", tail))


main()
