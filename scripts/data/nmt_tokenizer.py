"""nmt's word tokenizer (src/data/token.c, nmt_tokenize) in Python.

The Bible's gold links (scripts/data/get-bible, docs/bible.md) count tokens,
so its text is written already tokenized, as nmt itself would split it:
this module is a line-for-line port of nmt_tokenize, without lowercasing,
that also says where each token stands in the text (its span), which the
gold needs to know which <w> element a token came from.

The rules (token.c has them in full): whitespace separates tokens; every
punctuation character or symbol is a token of its own, except that a run of
one of . ! ? - = * ~ + < > ^ | … — is one token, an HTML entity is one token,
and an apostrophe followed by an English clitic ('s 're 've 'll 'd 'm) is one
token; '.' , ':' (between digits), a hyphen or an apostrophe before a word
character stay inside the word; a hyphen ending a word before a space or ','
stays with it; English clitics are split off the end of a word ("wife's" ->
"wife 's", "don't" -> "do n't").

tests/cli/bible.sh proves, with nmt itself, that the port and the C agree on
the Bible: nmt's words of every line tested are exactly its space-separated
tokens. If token.c changes, that test says so.
"""

# Non-ASCII punctuation and symbols, sorted, inclusive: token.c's
# punct_ranges, copied as they are.
PUNCT_RANGES = [
    (0x00a1, 0x00a9), (0x00ab, 0x00ac), (0x00ae, 0x00b1), (0x00b4, 0x00b4),
    (0x00b6, 0x00b8), (0x00bb, 0x00bb), (0x00bf, 0x00bf), (0x00d7, 0x00d7),
    (0x00f7, 0x00f7), (0x037e, 0x037e), (0x0387, 0x0387), (0x055a, 0x055f),
    (0x0589, 0x058a), (0x05be, 0x05be), (0x05c0, 0x05c0), (0x05c3, 0x05c3),
    (0x05c6, 0x05c6), (0x05f3, 0x05f4), (0x0606, 0x060f), (0x061b, 0x061b),
    (0x061d, 0x061f), (0x066a, 0x066d), (0x06d4, 0x06d4), (0x0964, 0x0965),
    (0x0970, 0x0970), (0x0e3f, 0x0e3f), (0x0e4f, 0x0e4f), (0x0e5a, 0x0e5b),
    (0x10fb, 0x10fb), (0x1360, 0x1368), (0x166e, 0x166e), (0x169b, 0x169c),
    (0x16eb, 0x16ed), (0x2010, 0x2027), (0x2030, 0x205e), (0x20a0, 0x20c0),
    (0x2100, 0x2101), (0x2103, 0x2103), (0x2109, 0x2109), (0x2116, 0x2117),
    (0x2120, 0x2120), (0x2122, 0x2122), (0x2190, 0x244a), (0x2500, 0x2775),
    (0x2794, 0x2bff), (0x2e00, 0x2e5d), (0x3001, 0x3004), (0x3008, 0x3020),
    (0x3030, 0x3030), (0x303d, 0x303f), (0x30fb, 0x30fb), (0xfd3e, 0xfd3f),
    (0xfe10, 0xfe19), (0xfe30, 0xfe52), (0xfe54, 0xfe66), (0xfe68, 0xfe6b),
    (0xff01, 0xff0f), (0xff1a, 0xff20), (0xff3b, 0xff40), (0xff5b, 0xff65),
    (0xffe0, 0xffe6), (0xffe8, 0xffee), (0xfffc, 0xfffd), (0x1f000, 0x1faff),
]

APOSTROPHES = ("'", "\u2019")
CLITIC_TAILS = ("s", "re", "ve", "ll", "d", "m")
REPEATS = set(".!?-=*~+<>^|\u2026\u2014")


def is_space(c):
    """nmt_utf8_is_token_space (src/base/utf8.c)."""
    cp = ord(c)
    if cp < 0x80:
        return c == " " or 0x09 <= cp <= 0x0d
    return (cp in (0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff)
            or 0x2000 <= cp <= 0x200b)


def is_punct(c):
    p = _PUNCT.get(c)
    if p is None:
        p = _PUNCT[c] = _is_punct(c)
    return p


_PUNCT = {}


def _is_punct(c):
    cp = ord(c)
    if cp < 0x80:
        return 0x20 < cp < 0x7f and c != "_" and not c.isdigit() and not (
            "a" <= c.lower() <= "z")
    lo, hi = 0, len(PUNCT_RANGES)
    while lo < hi:
        mid = (lo + hi) // 2
        if cp > PUNCT_RANGES[mid][1]:
            lo = mid + 1
        elif cp < PUNCT_RANGES[mid][0]:
            hi = mid
        else:
            return True
    return False


def is_word(c):
    return not is_space(c) and not is_punct(c)


def is_digit(c):
    return "0" <= c <= "9"


def joins(prev, c, nxt):
    """Whether punctuation c, between word character prev and nxt, stays
    inside the word."""
    if not is_word(nxt):
        return False
    if c in ".-\u2010\u2011'\u2019":
        return True
    if c in ",:":
        return is_digit(prev) and is_digit(nxt)
    return False


def ascii_ieq(s, lit):
    # token.c compares bytes with | 0x20: only ASCII letters can match
    return len(s) == len(lit) and s.isascii() and s.lower() == lit


def is_clitic_tail(s):
    return any(ascii_ieq(s, t) for t in CLITIC_TAILS)


def entity_end(s, i, n):
    """Where an HTML entity (&amp; &#39; &#x27;) starting at s[i] == '&' ends,
    or i if there is none."""
    j = i + 1
    numeric = j < n and s[j] == "#"
    hexa = numeric and j + 1 < n and s[j + 1] in "xX"
    j += int(numeric) + int(hexa)
    k = j
    while k < n and k - j < 10:
        c = s[k]
        if numeric:
            ok = is_digit(c) or (hexa and c.lower() in "abcdef")
        else:
            ok = c.isascii() and (c.isalpha() or is_digit(c))
        if not ok:
            break
        k += 1
    return k + 1 if k > j and k < n and s[k] == ";" else i


def clitic_start(s, a, b):
    """Where an English clitic starts in the word s[a:b], or b if none."""
    apo = b
    for i in range(a, b):
        if s[i] in APOSTROPHES:
            apo = i
    if apo == b or apo == a:
        return b
    tail = s[apo + 1:b]
    if is_clitic_tail(tail):
        return apo
    if ascii_ieq(tail, "t") and apo - 1 > a and s[apo - 1] in "nN":
        return apo - 1
    return b


def clitic_end(s, i, a, n):
    """Already split text ("they 're"): where a clitic token that starts with
    the apostrophe s[i] ends, or i if what follows is not one."""
    k = a
    while k < n and is_word(s[k]):
        k += 1
    return k if k > a and is_clitic_tail(s[a:k]) else i


def token_spans(s):
    """The tokens of s as (start, end) spans, exactly as nmt_tokenize
    splits it."""
    out = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if is_space(c):
            i += 1
            continue
        start, end = i, i + 1
        hyphen_led = c == "-" and end < n and is_word(s[end])
        if is_punct(c) and not hyphen_led:
            if c == "&":
                e = entity_end(s, i, n)
            elif c in APOSTROPHES:
                e = clitic_end(s, i, end, n)
            else:
                e = i
            if e > i:
                end = e
            while e == i and c in REPEATS and end < n and s[end] == c:
                end += 1
            out.append((start, end))
            i = end
            continue
        prev = c
        while end < n:
            c2 = s[end]
            if is_punct(c2):
                c3 = s[end + 1] if end + 1 < n else " "
                if not joins(prev, c2, c3):
                    if c2 == "-" and (is_space(c3) or c3 == ","):
                        end += 1  # "Ess-" of "Ess- und Wohnzimmer"
                    break
            elif is_space(c2):
                break
            prev = c2
            end += 1
        split = clitic_start(s, start, end)
        out.append((start, split))
        if split < end:
            out.append((split, end))
        i = end
    return out


def tokenize(s):
    return [s[a:b] for a, b in token_spans(s)]


def is_punctuation_token(t):
    """A token made only of punctuation characters and symbols."""
    return all(is_punct(c) for c in t)
