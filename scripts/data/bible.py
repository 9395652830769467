#!/usr/bin/env python3
"""Makes the Bible corpus and its Strong's-number gold from two SWORD
modules exported with mod2imp (scripts/data/get-bible runs it; the rules are
stated in docs/bible.md, and each is named where it is applied below).

  bible.py --kjv KJV.imp --rv RV.imp --out DIR [--sample N]

writes into DIR (which must exist and be empty):
  bible.en bible.es bible.ref bible.gold   every verse kept, in canonical order
  train.en train.es train.lines            the split (not with --sample)
  valid.en valid.es valid.gold valid.ref valid.lines
  test.en test.es test.gold test.ref test.lines
and COUNTS, its counts, one "name value" a line.
With --sample N, only N verses spread evenly over the corpus, as
bible.en bible.es bible.ref bible.gold and sample.lines (their line numbers
in the whole corpus), and no split.

Python 3 standard library only. Nothing depends on the Python version, the
locale or the machine: the split's hash is SHA-256.
"""

import argparse
import hashlib
import os
import re
import sys
import unicodedata

import nmt_tokenizer as tok

# Strong's dictionaries: Hebrew 1-8674, Greek 1-5624 (a few numbers between
# are unused: in range, they would simply be rare).
STRONG_MAX = {"H": 8674, "G": 5624}
# A lemma item: "strong:H0430", or a further number of the same attribute
# written without the prefix ("strong:G2424 G5547").
LEMMA_ITEM = re.compile(r"(?:strong:)?([HG])([0-9]+)")
# Spanish object pronouns: a <transChange> holding just one of these right
# after a <w>, with no space, is an enclitic the translators added
# ("sáca<transChange>lo</transChange>" is "sácalo"), not two words run
# together.
ENCLITICS = {"me", "te", "se", "nos", "os", "lo", "la", "le", "los", "las", "les"}
# ... unless the word before is one that takes no enclitic (a pronoun joins
# a verb, never these): then it is two words run together ("no lo").
NO_ENCLITIC = {"a", "á", "como", "cómo", "con", "cuanto", "cuánto", "de", "e", "el", "él",
               "ella", "ellas", "ellos", "en", "mas", "ni", "no", "nos", "o", "ó", "os",
               "para", "pero", "por", "que", "qué", "si", "sí", "u", "y"}
LAST_WORD = re.compile(r"\w+$")

# mismatched(): a verse pair whose Strong's numbers say that its sides are
# not translations of each other is dropped
MIN_SHARED = 0.15
NEIGHBOUR_MARGIN = 0.1

KEY = re.compile(r"^(.*) ([0-9]+):([0-9]+)$")
# A verse's markup as text and tags, alternately; a tag as its "/" if it
# closes, its name, its attributes and its "/" if it is empty.
PIECES = re.compile(r"(<[^<>]*>)")
TAG = re.compile(r"<(/?)([A-Za-z]+)((?:\s+[A-Za-z:]+=\"[^\"]*\")*)\s*(/?)>")
ATTR = re.compile(r"([A-Za-z:]+)=\"([^\"]*)\"")
ENTITY = re.compile(r"&(#[0-9]+|#x[0-9A-Fa-f]+|[A-Za-z]+);")
NAMED_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
USFM_MARKER = re.compile(r"\\\+?[a-z]+[0-9]*\*?")
# nmt's whitespace (nmt_utf8_is_token_space), runs of it
SPACES = re.compile("[\t-\r \x85\xa0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+")

# Elements whose tags are dropped and whose text is kept.
TEXT_ELEMENTS = {"divineName", "q", "seg", "foreign", "title", "reference"}
# Elements that mark a place (paragraphs, lines, chapters): a space.
MARK_ELEMENTS = {"div", "chapter", "milestone", "l", "lg", "lb"}


class Fail(Exception):
    pass


def read_entries(path):
    """The verse entries of a mod2imp export, in order: (key, reference,
    markup), the reference OSIS style (Gen.1.1). Headings ("[ Module
    Heading ]") and introductions (chapter or verse 0) are left out."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parts = re.split(r"^\$\$\$(.*)\n", text, flags=re.M)
    if parts[0].strip():
        raise Fail(f"{path}: does not start with a $$$ key line")
    osis_of = {}
    out = []
    for key, body in zip(parts[1::2], parts[2::2]):
        m = KEY.match(key)
        if not m:
            continue
        book, chapter, verse = m.group(1), int(m.group(2)), int(m.group(3))
        if chapter == 0 and verse == 0:
            d = re.search(r'<div [^>]*osisID="([A-Za-z0-9]+)"[^>]*type="book"', body)
            if not d:
                raise Fail(f"{path}: {key}: no book <div> with its osisID")
            osis_of[book] = d.group(1)
        if chapter == 0 or verse == 0:
            continue
        if book not in osis_of:
            raise Fail(f"{path}: {key}: a verse before its book's heading")
        out.append((key, f"{osis_of[book]}.{chapter}.{verse}", body))
    return out


def numbers_of(attrs, where):
    """The normalised Strong's numbers of a <w>'s lemma (or savlm), in
    order, without repeats, and the count of numbers dropped as out of
    range."""
    nums, dropped = [], 0
    for name in ("lemma", "savlm"):
        value = attrs.get(name)
        if value is None:
            continue
        for item in value.split():
            m = LEMMA_ITEM.fullmatch(item)
            if not m:
                if item.startswith("strong:") or re.fullmatch(r"[HG][0-9].*", item):
                    raise Fail(f"{where}: a Strong's number of a form not known: '{item}'")
                continue  # another scheme's lemma (lemma.TR:...): not a number
            n = int(m.group(2))  # leading zeros dropped: H0430 is H430
            if not 1 <= n <= STRONG_MAX[m.group(1)]:
                dropped += 1
                continue
            num = f"{m.group(1)}{n}"
            if num not in nums:
                nums.append(num)
    return nums, dropped


def unescape(text, where):
    def one(m):
        e = m.group(1)
        if e.startswith("#x"):
            return chr(int(e[2:], 16))
        if e.startswith("#"):
            return chr(int(e[1:]))
        if e not in NAMED_ENTITIES:
            raise Fail(f"{where}: unknown entity &{e};")
        return NAMED_ENTITIES[e]
    return ENTITY.sub(one, text) if "&" in text else text


class Verse:
    """One verse of one side: its text, the spans of its <w> elements
    (start, end, index), in order, and each <w>'s numbers."""

    def __init__(self, text, spans, numbers):
        self.text = text
        self.spans = spans
        self.numbers = numbers


def parse_verse(markup, where, stats):
    """A verse's markup to its text, with the spans of its <w>s."""
    out = Text()
    numbers = []  # of each <w>, by index
    note_depth = 0
    w_open = None  # index of the <w> being read
    tc_depth = 0  # <transChange> elements open
    # Where a <w> or <transChange> ended with only tags since: what ended
    # ("w" or "tc"); a start of either there is a candidate gap.
    just_closed = None
    gap = None  # (what closed, what opens), until the next text
    pieces = PIECES.split(markup)

    for k, piece in enumerate(pieces):
        if not k & 1:
            if not piece or note_depth:
                continue
            if "<" in piece or ">" in piece:
                raise Fail(f"{where}: a tag not understood: {piece[:80]}")
            text = piece
            if "\\" in text:
                text = USFM_MARKER.sub(lambda m: stats.bump("usfm_markers_dropped") or "", text)
            if "&" in text:
                text = unescape(text, where)
            text = text.replace("\u00b6", " ")  # the KJV's paragraph mark
            if not text:
                continue
            if gap is not None:
                closed, opened = gap
                gap = None
                if out.last_is_word() and tok.is_word(text[0]):
                    if closed == "w" and opened == "tc" and \
                            added_text(pieces, k).strip() in ENCLITICS and \
                            out.last_word().lower() not in NO_ENCLITIC:
                        stats.bump("enclitics_joined")
                    else:
                        out.put(" ", -1)
                        stats.bump("spaces_put_between_elements")
            just_closed = None
            out.put(text, -1 if w_open is None else w_open)
            continue
        tag = TAGS.get(piece)
        if tag is None:
            m = TAG.fullmatch(piece)
            if not m:
                raise Fail(f"{where}: a tag not understood: {piece[:80]}")
            tag = TAGS[piece] = (m.group(1), m.group(2), m.group(3), m.group(4))
        closing, name, attr_text, empty = tag
        if name == "note":
            if empty:
                continue
            note_depth += -1 if closing else 1
            if note_depth < 0:
                raise Fail(f"{where}: </note> without <note>")
            if not closing:
                stats.bump("notes_dropped")
            continue
        if note_depth:
            continue
        if name in MARK_ELEMENTS:
            out.put(" ", -1)
            just_closed = gap = None
            continue
        if name == "w":
            if empty:
                raise Fail(f"{where}: an empty <w/>")
            if closing:
                if w_open is None:
                    raise Fail(f"{where}: </w> without <w>")
                w_open = None
                just_closed = "w"
            else:
                if w_open is not None:
                    raise Fail(f"{where}: a <w> inside a <w>")
                got = NUMBERS.get(attr_text)
                if got is None:
                    got = NUMBERS[attr_text] = numbers_of(dict(ATTR.findall(attr_text)), where)
                nums, dropped = got
                if dropped:
                    stats.bump("numbers_dropped_out_of_range", dropped)
                w_open = len(numbers)
                numbers.append(nums)
                if just_closed:
                    gap = (just_closed, "w")
            continue
        if name == "transChange":
            if empty:
                continue
            if closing:
                if not tc_depth:
                    raise Fail(f"{where}: </transChange> without <transChange>")
                tc_depth -= 1
                just_closed = "tc"
            else:
                tc_depth += 1
                if just_closed:
                    gap = (just_closed, "tc")
            continue
        if name in TEXT_ELEMENTS:
            # Their start and end tags need not pair up in one verse (the
            # KJV's "\nd ... </divineName>"): nothing depends on them.
            continue
        raise Fail(f"{where}: an element this script has no rule for: <{name}>")
    if w_open is not None or note_depth or tc_depth:
        raise Fail(f"{where}: an element left open at the end of the verse")
    return out.verse(numbers)


# numbers_of of each <w>'s attributes, and each tag taken apart, met so far
NUMBERS = {}
TAGS = {}


def added_text(pieces, k):
    """The text of the <transChange> whose first text is pieces[k]: up to its
    end tag, other tags left out."""
    out = []
    for piece in pieces[k:]:
        if piece.startswith("</transChange"):
            break
        if piece[:1] != "<":
            out.append(piece)
    return "".join(out)


class Text:
    """A verse's text as it is put together, whitespace collapsed on the
    way (a run of it is one space, none at the ends), with the spans of
    its <w> elements."""

    def __init__(self):
        self.parts = []
        self.length = 0
        self.spans = []  # (start, end, w index)

    def put(self, text, w):
        if "  " in text or not text.isprintable():
            text = SPACES.sub(" ", text)
        if text[0] == " " and (not self.parts or self.parts[-1][-1] == " "):
            text = text[1:]
            if not text:
                return
        if w >= 0:
            self.spans.append((self.length, self.length + len(text), w))
        self.parts.append(text)
        self.length += len(text)

    def last_word(self):
        m = LAST_WORD.search("".join(self.parts[-4:]))
        return m.group(0) if m else ""

    def last_is_word(self):
        return bool(self.parts) and tok.is_word(self.parts[-1][-1])

    def verse(self, numbers):
        text = "".join(self.parts).rstrip(" ")
        return Verse(text, self.spans, numbers)


class Stats(dict):
    def bump(self, name, by=1):
        self[name] = self.get(name, 0) + by


def tokens_of(v, where):
    """The verse's tokens (nmt's tokenizer) and each one's Strong's numbers:
    those of every <w> any of its characters stands in; punctuation tokens
    none."""
    toks, nums = [], []
    spans, numbers = v.spans, v.numbers
    p = 0  # the first <w> span that does not end before the token
    at = 0
    for chunk in v.text.split(" ") if v.text else []:
        split = CHUNKS.get(chunk)
        if split is None:
            split = CHUNKS[chunk] = chunk_tokens(chunk, where)
        for t, a, b, punct in split:
            toks.append(t)
            a += at
            b += at
            while p < len(spans) and spans[p][1] <= a:
                p += 1
            if punct or p == len(spans) or spans[p][0] >= b:
                nums.append(())
                continue
            found = numbers[spans[p][2]]
            q = p + 1
            while q < len(spans) and spans[q][0] < b:  # a token over several <w>
                found = list(found)
                found.extend(n for n in numbers[spans[q][2]] if n not in found)
                q += 1
            nums.append(found)
        at += len(chunk) + 1
    return toks, nums


# chunk_tokens of each whitespace-free chunk of text met so far
CHUNKS = {}


def chunk_tokens(chunk, where):
    """A chunk's tokens as (token, start, end, whether it is punctuation),
    each checked to tokenize as itself."""
    # Latin letters only: one word (nmt's punctuation below U+0250 is no
    # letter in any version of Unicode; above it, the tokenizer decides)
    if chunk.isalpha() and max(chunk) < "\u0250":
        return [(chunk, 0, len(chunk), False)]
    out = []
    for a, b in tok.token_spans(chunk):
        t = chunk[a:b]
        if tok.token_spans(t) != [(0, len(t))]:
            raise Fail(f"{where}: the token '{t}' would not tokenize as itself")
        out.append((t, a, b, tok.is_punctuation_token(t)))
    return out


def gold_links(en_nums, es_nums):
    """Possible links: every pair that shares a number; sure: the pairs that
    share a number standing on exactly one token of each side. Returns
    [(i, j, sure)] sorted by i, then j."""
    en_at, es_at = {}, {}
    for i, ns in enumerate(en_nums):
        for n in ns:
            en_at.setdefault(n, []).append(i)
    for j, ns in enumerate(es_nums):
        for n in ns:
            es_at.setdefault(n, []).append(j)
    links = {}
    for n, ii in en_at.items():
        jj = es_at.get(n)
        if not jj:
            continue
        sure = len(ii) == 1 and len(jj) == 1
        for i in ii:
            for j in jj:
                links[(i, j)] = links.get((i, j), False) or sure
    return sorted((i, j, s) for (i, j), s in links.items())


def gold_line(links):
    return " ".join(f"{i}{'-' if s else '?'}{j}" for i, j, s in links)


def split_of(ref):
    """The translation split of a verse, by a hash of its reference, so that
    it does not depend on which other verses are kept: 1 in 30 validation,
    2 in 30 test, the rest training."""
    h = int(hashlib.sha256(ref.encode("ascii")).hexdigest()[:8], 16) % 30
    return "valid" if h == 0 else "test" if h in (1, 2) else "train"


def build(kjv_path, rv_path):
    stats = Stats()
    en = read_entries(kjv_path)
    es = read_entries(rv_path)
    if [k for k, _, _ in en] != [k for k, _, _ in es]:
        raise Fail("the two modules do not have the same verses in the same order")
    verses = []
    for (key, ref, en_markup), (_, ref_es, es_markup) in zip(en, es):
        if ref != ref_es:
            raise Fail(f"{key}: references differ: {ref} and {ref_es}")
        stats.bump("verses_in_modules")
        e = parse_verse(en_markup, f"English {key}", stats)
        s = parse_verse(es_markup, f"Spanish {key}", stats)
        e_toks, e_nums = tokens_of(e, f"English {key}")
        s_toks, s_nums = tokens_of(s, f"Spanish {key}")
        if not e_toks or not s_toks:
            stats.bump("dropped_empty_" + ("both" if not e_toks and not s_toks
                                           else "english" if not e_toks else "spanish"))
            continue
        for side, toks in (("English", e_toks), ("Spanish", s_toks)):
            line = " ".join(toks)
            if unicodedata.normalize("NFKC", line) != line:
                raise Fail(f"{side} {key}: NFKC would change the text: {line}")
        verses.append((ref, e_toks, s_toks, gold_links(e_nums, s_nums), e_nums, s_nums))
    return [v for v, why in zip(verses, mismatched(verses, stats)) if not why], stats


def mismatched(verses, stats):
    """For each verse pair, why its two sides are not translations of each
    other by their Strong's numbers, or None. The Spanish module keeps its
    own versification in the KJV's keys in a few chapters (Num 13 and 30,
    1 Sam 24, 1 Kgs 22, 1 Chr 21, 2 Chr 33, Job 39-40, Hos 12, Jonah 2 and
    some single verses): there each Spanish verse is its neighbour's
    translation. Measured by J, the distinct numbers on both sides over
    the distinct numbers on either, a pair whose sides both carry numbers
    is dropped when J is below MIN_SHARED, or when the English verse has a
    J higher by more than NEIGHBOUR_MARGIN with the Spanish verse before or
    after it, or the Spanish verse with the English verse before or after
    it (the verses before and after in the corpus, empty ones left out)."""
    en = [frozenset(n for ns in v[4] for n in ns) for v in verses]
    es = [frozenset(n for ns in v[5] for n in ns) for v in verses]

    def shared(a, b):
        return len(a & b) / len(a | b) if a and b else 0.0

    out = []
    for k in range(len(verses)):
        if not en[k] or not es[k]:
            out.append(None)
            continue
        own = shared(en[k], es[k])
        near = [m for m in (k - 1, k + 1) if 0 <= m < len(verses)]
        best = max([shared(en[k], es[m]) for m in near] + [shared(en[m], es[k]) for m in near])
        why = ("dropped_numbers_disagree" if own < MIN_SHARED
               else "dropped_neighbour_fits_better" if best > own + NEIGHBOUR_MARGIN else None)
        if why:
            stats.bump(why)
        out.append(why)
    return out


def count(verses, stats):
    c = dict(stats)
    c["verses"] = len(verses)
    c["tokens_en"] = sum(len(v[1]) for v in verses)
    c["tokens_es"] = sum(len(v[2]) for v in verses)
    c["tokens_with_number_en"] = sum(sum(1 for n in v[4] if n) for v in verses)
    c["tokens_with_number_es"] = sum(sum(1 for n in v[5] if n) for v in verses)
    c["tokens_in_gold_en"] = sum(len({i for i, _, _ in v[3]}) for v in verses)
    c["tokens_in_gold_es"] = sum(len({j for _, j, _ in v[3]}) for v in verses)
    c["links_sure"] = sum(sum(1 for l in v[3] if l[2]) for v in verses)
    c["links_possible_only"] = sum(sum(1 for l in v[3] if not l[2]) for v in verses)
    c["verses_without_links"] = sum(1 for v in verses if not v[3])
    longest = max(verses, key=lambda v: len(v[1]))
    c["longest_en"] = f"{len(longest[1])} ({longest[0]})"
    longest = max(verses, key=lambda v: len(v[2]))
    c["longest_es"] = f"{len(longest[2])} ({longest[0]})"
    return c


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def write_set(out, prefix, verses, numbers, with_gold=True, with_ref=True):
    write_lines(os.path.join(out, prefix + ".en"), (" ".join(v[1]) for v in verses))
    write_lines(os.path.join(out, prefix + ".es"), (" ".join(v[2]) for v in verses))
    if with_ref:
        write_lines(os.path.join(out, prefix + ".ref"), (v[0] for v in verses))
    if with_gold:
        write_lines(os.path.join(out, prefix + ".gold"), (gold_line(v[3]) for v in verses))
    if numbers is not None:
        write_lines(os.path.join(out, prefix + ".lines"), (str(n) for n in numbers))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kjv", required=True, help="mod2imp engKJV2006eb's output")
    ap.add_argument("--rv", required=True, help="mod2imp spaRV1909eb's output")
    ap.add_argument("--out", required=True, help="an empty folder to write into")
    ap.add_argument("--sample", type=int, default=0, help="only N verses, spread evenly")
    args = ap.parse_args()
    if os.listdir(args.out):
        raise Fail(f"{args.out}: not empty")
    verses, stats = build(args.kjv, args.rv)
    c = count(verses, stats)
    if args.sample:
        if not 1 <= args.sample <= len(verses):
            raise Fail(f"--sample: between 1 and {len(verses)}, not {args.sample}")
        picked = [k * len(verses) // args.sample for k in range(args.sample)]
        write_set(args.out, "bible", [verses[k] for k in picked], None)
        write_lines(os.path.join(args.out, "sample.lines"), (str(k + 1) for k in picked))
        c["sample_verses"] = len(picked)
    else:
        write_set(args.out, "bible", verses, None)
        split = {"train": [], "valid": [], "test": []}
        for k, v in enumerate(verses):
            split[split_of(v[0])].append(k)
        for name, ks in split.items():
            write_set(args.out, name, [verses[k] for k in ks], [k + 1 for k in ks],
                      with_gold=name != "train", with_ref=name != "train")
            c[f"{name}_verses"] = len(ks)
            if name != "train":
                c[f"{name}_links_sure"] = sum(sum(1 for l in verses[k][3] if l[2]) for k in ks)
                c[f"{name}_links_possible_only"] = sum(
                    sum(1 for l in verses[k][3] if not l[2]) for k in ks)
    write_lines(os.path.join(args.out, "COUNTS"), (f"{name} {c[name]}" for name in sorted(c)))


if __name__ == "__main__":
    try:
        main()
    except Fail as e:
        print(f"get-bible: error: {e}", file=sys.stderr)
        sys.exit(1)
