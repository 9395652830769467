#!/usr/bin/env python3
"""Checks of the Bible corpus (scripts/data/get-bible) for tests/cli/bible.sh.
Each command prints one line per failed check ("FAIL: ...") and exits 1 if
there was one. Standard library only; nothing here imports get-bible's code:
what the corpus should be is worked out again, more simply.

  bible_check.py corpus DIR                 the files, the gold's notation, the split
  bible_check.py markup DIR KJV.imp RV.imp K  every K-th verse's gold against
                                            its markup, read by a simpler route
  bible_check.py words JSON EN ES           nmt align's JSON words are the
                                            lines' space-separated tokens
  bible_check.py sample SAMPLE_DIR DIR N    a --sample N folder against the corpus
  bible_check.py select DIR PREFIX          writes PREFIX.en .es .gold: every
                                            100th verse, and the verses of
                                            rarer characters (below)
"""

import hashlib
import json
import os
import re
import sys

FAILS = []


def fail(msg):
    FAILS.append(msg)
    if len(FAILS) <= 20:
        print("FAIL: " + msg)


def lines(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.endswith("\n"):
        fail(f"{path}: does not end with a newline")
    return text[:-1].split("\n") if text else []


def parse_gold(line, where):
    """{(i, j): sure} of one gold line, checking its notation: i-j or i?j,
    sorted by i then j, each pair once."""
    links = {}
    prev = None
    for item in line.split(" ") if line else []:
        m = re.fullmatch(r"(0|[1-9][0-9]*)([-?])(0|[1-9][0-9]*)", item)
        if not m:
            fail(f"{where}: '{item}' is not i-j or i?j")
            continue
        pair = (int(m.group(1)), int(m.group(3)))
        if pair in links:
            fail(f"{where}: {pair} twice (sure links must not come again as possible)")
        if prev is not None and pair <= prev:
            fail(f"{where}: links not sorted at '{item}'")
        prev = pair
        links[pair] = m.group(2) == "-"
    return links


# The books of the Old Testament, by their OSIS names: the rest are the New.
OLD = ("Gen Exod Lev Num Deut Josh Judg Ruth 1Sam 2Sam 1Kgs 2Kgs 1Chr 2Chr Ezra Neh Esth "
       "Job Ps Prov Eccl Song Isa Jer Lam Ezek Dan Hos Joel Amos Obad Jonah Mic Nah Hab Zeph "
       "Hag Zech Mal").split()

GEN_1_1 = ("In the beginning God created the heaven and the earth .",
           "EN el principio crió Dios los cielos y la tierra .",
           # worked by hand: beginning H7225 on EN el principio (3 tokens:
           # possible); God H430 on Dios, created H1254 on crió (sure);
           # heaven H8064 on los cielos (possible); and H853 on nothing in
           # Spanish; earth H776 on y la tierra (possible)
           "2?0 2?1 2?2 3-4 4-3 6?5 6?6 9?7 9?8 9?9")


def check_corpus(d):
    en, es = lines(f"{d}/bible.en"), lines(f"{d}/bible.es")
    ref, gold = lines(f"{d}/bible.ref"), lines(f"{d}/bible.gold")
    n = len(en)
    if not (len(es) == len(ref) == len(gold) == n) or n < 30000:
        fail(f"line counts: en {n}, es {len(es)}, ref {len(ref)}, gold {len(gold)}")
        return
    counts = dict(l.split(" ", 1) for l in lines(f"{d}/COUNTS"))
    sure = possible = 0
    for k in range(n):
        for side, text in (("en", en[k]), ("es", es[k])):
            if not text or text != " ".join(text.split()) or "  " in text:
                fail(f"bible.{side}:{k + 1}: empty, or not tokens separated by single spaces")
        if not re.fullmatch(r"[1-3]?[A-Z][a-z]+\.[1-9][0-9]*\.[1-9][0-9]*", ref[k]):
            fail(f"bible.ref:{k + 1}: '{ref[k]}' is not Book.C.V")
        ne, ns = len(en[k].split(" ")), len(es[k].split(" "))
        links = parse_gold(gold[k], f"bible.gold:{k + 1}")
        for (i, j), s in links.items():
            if not (i < ne and j < ns):
                fail(f"bible.gold:{k + 1}: {i}-{j} outside {ne} x {ns} tokens")
            sure += s
            possible += not s
    if len(set(ref)) != n:
        fail("bible.ref: a reference twice")
    if (en[0], es[0], gold[0]) != GEN_1_1 or ref[0] != "Gen.1.1":
        fail(f"Genesis 1:1: {ref[0]} | {en[0]} | {es[0]} | {gold[0]}")
    want = {"verses": n, "links_sure": sure, "links_possible_only": possible,
            "tokens_en": sum(len(l.split(" ")) for l in en),
            "tokens_es": sum(len(l.split(" ")) for l in es)}
    for name, value in want.items():
        if counts.get(name) != str(value):
            fail(f"COUNTS: {name} {counts.get(name)}, the files have {value}")
    # the split: by the documented hash of the reference
    seen = []
    h = [int(hashlib.sha256(r.encode()).hexdigest()[:8], 16) % 30 for r in ref]
    for name, share in (("train", range(3, 30)), ("valid", (0,)), ("test", (1, 2))):
        picked = [k for k in range(n) if h[k] in share]
        got = [int(x) - 1 for x in lines(f"{d}/{name}.lines")]
        if got != picked:
            fail(f"{name}.lines: not the verses the hash rule picks")
            continue
        seen += got
        exts = ("en", "es") if name == "train" else ("en", "es", "ref", "gold")
        whole = {"en": en, "es": es, "ref": ref, "gold": gold}
        for ext in exts:
            if lines(f"{d}/{name}.{ext}") != [whole[ext][k] for k in got]:
                fail(f"{name}.{ext}: not bible.{ext}'s lines at {name}.lines")
        if name != "train":
            books = {ref[k].split(".")[0] for k in got}
            if len(got) < 1000 or not books & set(OLD) or not books - set(OLD):
                fail(f"{name}: {len(got)} verses, books {sorted(books)[:5]}...: "
                     "not 1000 or more from both testaments")
            if counts.get(f"{name}_verses") != str(len(got)):
                fail(f"COUNTS: {name}_verses {counts.get(name + '_verses')}, the files have {len(got)}")
    if sorted(seen) != list(range(n)):
        fail("the split: train, valid and test are not every verse once")


def entries(path):
    with open(path, encoding="utf-8") as f:
        parts = re.split(r"^\$\$\$(.*)\n", f.read(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2])), parts[1::2]


def words_with_numbers(markup):
    """[(numbers, words)] of each <w>: its Strong's numbers (as (H|G, int),
    in the range of Strong's dictionary) and the words (runs of \\w) of its
    text; notes left out."""
    markup = re.sub(r"<note\b.*?</note>", "", markup, flags=re.S)
    out = []
    for attrs, inner in re.findall(r"<w ([^>]*)>(.*?)</w>", markup, flags=re.S):
        nums = set()
        for value in re.findall(r'(?:lemma|savlm)="([^"]*)"', attrs):
            for letter, digits in re.findall(r"([HG])([0-9]+)", value):
                if 1 <= int(digits) <= (8674 if letter == "H" else 5624):
                    nums.add((letter, int(digits)))
        out.append((nums, re.findall(r"\w+", re.sub(r"<[^>]*>", "", inner))))
    return out


def check_markup(d, kjv_path, rv_path, every):
    """Every every-th verse: each gold link joins tokens that stand in <w>s
    sharing a number; and where a token can be found without doubt (its
    word occurs once in the verse), the links that must be there are: a
    possible one between tokens of <w>s sharing a number, a sure one when
    that number is on one one-word <w> on each side."""
    ref, gold = lines(f"{d}/bible.ref"), lines(f"{d}/bible.gold")
    en, es = lines(f"{d}/bible.en"), lines(f"{d}/bible.es")
    kjv, keys = entries(kjv_path)
    rv, _ = entries(rv_path)
    # OSIS book names to SWORD's: both lists in canonical order
    osis = list(dict.fromkeys(r.split(".")[0] for r in ref))
    sword = list(dict.fromkeys(m.group(1) for m in map(re.compile(r"(.*) [0-9]+:[0-9]+$").match, keys)
                               if m))
    if len(osis) != 66 or len(sword) != 66:
        fail(f"books: {len(osis)} in bible.ref, {len(sword)} in the module")
        return
    name_of = dict(zip(osis, sword))
    checked = links_checked = 0
    for k in range(0, len(ref), every):
        book, c, v = ref[k].split(".")
        key = f"{name_of[book]} {c}:{v}"
        toks = (en[k].split(" "), es[k].split(" "))
        norm = [["".join(re.findall(r"\w", t)) for t in side] for side in toks]
        ws = (words_with_numbers(kjv[key]), words_with_numbers(rv[key]))
        links = parse_gold(gold[k], f"bible.gold:{k + 1}")
        for (i, j), s in links.items():
            if i >= len(norm[0]) or j >= len(norm[1]):
                fail(f"{ref[k]}: gold link {i}-{j} outside the verse")
                continue
            ok = any(any(w in norm[0][i] for w in ew) and any(w in norm[1][j] for w in sw)
                     for en_n, ew in ws[0] for es_n, sw in ws[1] if en_n & es_n)
            if not ok:
                fail(f"{ref[k]}: gold link {i}{'-' if s else '?'}{j} "
                     f"({toks[0][i]} - {toks[1][j]}): no number on both")
            links_checked += 1
        # the links that must be there
        once = [{t for t in side if t and side.count(t) == 1} for side in norm]
        for en_n, ew in ws[0]:
            for es_n, sw in ws[1]:
                for num in en_n & es_n:
                    sure = (len(ew) == 1 and len(sw) == 1
                            and sum(num in n for n, _ in ws[0]) == 1
                            and sum(num in n for n, _ in ws[1]) == 1)
                    for a in ew:
                        for b in sw:
                            if a not in once[0] or b not in once[1]:
                                continue
                            pair = (norm[0].index(a), norm[1].index(b))
                            if pair not in links:
                                fail(f"{ref[k]}: no gold link {pair} ({a} - {b}, both {num})")
                            elif sure and not links[pair]:
                                fail(f"{ref[k]}: {pair} ({a} - {b}) possible, not sure: "
                                     f"{num} stands on one word each side")
        checked += 1
    print(f"markup: {checked} verses, {links_checked} gold links checked")
    if checked < 100 or links_checked < 1000:
        fail("markup: too few verses or links checked")


def check_words(path, en_path, es_path):
    en, es = lines(en_path), lines(es_path)
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(l) for l in f]
    if len(rows) != len(en):
        fail(f"{path}: {len(rows)} alignments for {len(en)} lines")
    for k, row in enumerate(rows):
        for side, key, text in (("en", "source", en[k]), ("es", "target", es[k])):
            if row[key] != text.split(" ") + ["</s>"]:
                fail(f"line {k + 1} ({side}): nmt's words {row[key][:-1]} are not the tokens {text}")
    print(f"words: {len(rows)} pairs compared")


def check_sample(s, d, n):
    picked = [int(x) for x in lines(f"{s}/sample.lines")]
    total = len(lines(f"{d}/bible.en"))
    if picked != [k * total // n + 1 for k in range(n)]:
        fail(f"sample.lines: not the {n} lines spread evenly over {total}")
    for ext in ("en", "es", "ref", "gold"):
        whole = lines(f"{d}/bible.{ext}")
        if lines(f"{s}/bible.{ext}") != [whole[k - 1] for k in picked]:
            fail(f"sample bible.{ext}: not the corpus's lines at sample.lines")
    extra = set(os.listdir(s)) - {"bible.en", "bible.es", "bible.ref", "bible.gold",
                                  "sample.lines", "COUNTS", "SOURCE", "SHA256SUMS"}
    if extra:
        fail(f"sample: unexpected files {sorted(extra)}")


# Characters of most verses: the rest (apostrophes, hyphens, brackets, æ,
# circumflexes, Hebrew letters, ...) make a verse one to test the
# tokenizer on.
COMMON = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             "ÁÉÍÓÚÑáéíóúñ ,.:;?!¿¡")


def select(d, prefix):
    """Every 100th verse, every 12th of those with a character not in
    COMMON, and all those with [ ] — or a Hebrew letter."""
    en, es, gold = (lines(f"{d}/bible.{ext}") for ext in ("en", "es", "gold"))
    picked, rare = [], 0
    for k in range(len(en)):
        chars = set(en[k] + es[k])
        if k % 100 == 0 or chars & set("[]—") or any("\u05d0" <= c <= "\u05ea" for c in chars):
            picked.append(k)
        elif chars - COMMON:
            rare += 1
            if rare % 12 == 1:
                picked.append(k)
    for ext, whole in (("en", en), ("es", es), ("gold", gold)):
        with open(f"{prefix}.{ext}", "w", encoding="utf-8") as f:
            f.writelines(whole[k] + "\n" for k in picked)
    print(f"select: {len(picked)} verses")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "corpus":
        check_corpus(*args)
    elif cmd == "markup":
        check_markup(args[0], args[1], args[2], int(args[3]))
    elif cmd == "words":
        check_words(*args)
    elif cmd == "select":
        select(*args)
    elif cmd == "sample":
        check_sample(args[0], args[1], int(args[2]))
    else:
        sys.exit(f"unknown command {cmd}")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
