/* A small XML well-formedness check for the SVG tests (test_align,
 * test_svg): no parser library needed. */
#ifndef NMT_TEST_XML_CHECK_H
#define NMT_TEST_XML_CHECK_H

#include <string.h>

/* A small well-formedness check: tags nest and close, attribute values are
 * quoted, '&' starts a known entity, '<' never appears in text. Returns the
 * number of elements, or -1 with the reason in *why. */
static int xml_check(const char *s, const char **why)
{
    const char *stack[256];
    size_t stack_len[256];
    int depth = 0, elements = 0;
    if (strncmp(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 39)) {
        *why = "no XML declaration";
        return -1;
    }
    const char *p = s + 39;
    while (*p) {
        if (*p == '&') {
            static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            int ok = 0;
            for (int k = 0; k < 5; k++)
                ok |= !strncmp(p, ent[k], strlen(ent[k]));
            if (!ok) {
                *why = "bad entity";
                return -1;
            }
            p++;
        } else if (*p == '>') {
            *why = "stray '>'";
            return -1;
        } else if (*p == '<') {
            int closing = p[1] == '/';
            const char *name = p + 1 + closing;
            size_t n = strcspn(name, " \t\n/>");
            if (!n) {
                *why = "empty tag name";
                return -1;
            }
            p = name + n;
            /* Attributes: name="value" with no '<' inside. */
            for (;;) {
                while (*p == ' ' || *p == '\n')
                    p++;
                if (*p == '>' || (*p == '/' && p[1] == '>'))
                    break;
                size_t an = strcspn(p, "=> \n");
                if (!an || p[an] != '=' || p[an + 1] != '"' || closing) {
                    *why = "bad attribute";
                    return -1;
                }
                const char *v = p + an + 2, *end = strchr(v, '"');
                if (!end || memchr(v, '<', (size_t)(end - v))) {
                    *why = "bad attribute value";
                    return -1;
                }
                p = end + 1;
            }
            int self = *p == '/';
            p += self ? 2 : 1;
            if (closing) {
                if (!depth || stack_len[depth - 1] != n || strncmp(stack[depth - 1], name, n)) {
                    *why = "mismatched closing tag";
                    return -1;
                }
                depth--;
            } else {
                elements++;
                if (!self) {
                    if (depth == 256) {
                        *why = "too deep";
                        return -1;
                    }
                    stack[depth] = name;
                    stack_len[depth++] = n;
                }
            }
        } else {
            p++;
        }
    }
    if (depth) {
        *why = "unclosed element";
        return -1;
    }
    return elements;
}

#endif
