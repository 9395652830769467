#!/usr/bin/env python3
"""What scripts/experiments/guided-alignment needs beyond nmt itself.

  guided_alignment_report.py gold-toy LEXICON SRC TGT
      Pharaoh gold links of the toy corpus's pairs SRC, TGT (plain or gzip),
      one line a pair, from the toy grammar's reference translator
      (scripts/data/make-toy-corpus, which --check runs over every pair):
      the validation pairs have no gold file of their own. Refuses a pair
      whose target is not the lexicon's translation.
  guided_alignment_report.py aer GOLD [--shift] < JSON
      The AER, precision and recall of hard links from nmt align --format
      json (one map, --tgt given) against GOLD, in words: a target word's
      row is the mean of its pieces' rows, a source word's column the sum of
      its pieces' columns (pieces grouped as nmt align --units words groups
      them: a piece starting with U+2581 begins a word), and each target word
      is linked to the source word (not </s>) it attends most, the lower
      index on a tie (nmt align's rule). With --shift a piece's row is the
      one of the step after it, the step that reads it (docs/DESIGN.md,
      "Guided alignment"); the last piece's is the step that predicts </s>.
  guided_alignment_report.py links HYP GOLD
      The AER, precision and recall of a Pharaoh file against GOLD, line by
      line (the links a round made of the training pairs).
  guided_alignment_report.py table RESULTS
      RESULTS (tab-separated rows: run, what, AER, precision, recall,
      perplexity, BLEU) as a Markdown table.

Standard library only.
"""
import gzip
import importlib.machinery
import importlib.util
import json
import os
import sys

MARK = "\u2581"


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8").splitlines()


def gold_toy(lexicon, src, tgt):
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "data", "make-toy-corpus")
    loader = importlib.machinery.SourceFileLoader("make_toy_corpus", path)
    spec = importlib.util.spec_from_loader("make_toy_corpus", loader)
    toy = importlib.util.module_from_spec(spec)
    loader.exec_module(toy)
    translate = toy.reference_translator(open(lexicon, encoding="utf-8").read())
    for n, (s, t) in enumerate(zip(read_lines(src), read_lines(tgt)), 1):
        want, links = translate(s)
        if want != t:
            sys.exit("gold-toy: line %d: the target is not the lexicon's translation" % n)
        print(links)


def words_of(units):
    """The word of each unit (</s> excluded: the caller drops it)."""
    pieces = any(u.startswith(MARK) for u in units)
    word, out = -1, []
    for k, u in enumerate(units):
        if not pieces or k == 0 or u.startswith(MARK):
            word += 1
        out.append(word)
    return out, word + 1


def hard_links(src, tgt, att, shift):
    """One link per target word, from the rows (shifted or not)."""
    sw, n_sw = words_of(src[:-1])
    tw, n_tw = words_of(tgt[:-1])
    links = set()
    for w in range(n_tw):
        rows = [att[q + shift] for q, v in enumerate(tw) if v == w]
        score = [0.0] * n_sw
        for row in rows:
            for j, v in enumerate(sw):
                score[v] += row[j] / len(rows)
        if n_sw:
            links.add((score.index(max(score)), w))
    return links


def read_links(path):
    return [set(tuple(int(x) for x in link.replace("?", "-").split("-")) for link in line.split())
            for line in read_lines(path)]


def scores(a, s, both):
    rate = 1 - 2 * both / (a + s) if a + s else 0
    return "AER %.4f  precision %.4f  recall %.4f" % (rate, both / a if a else 1,
                                                     both / s if s else 1)


def links(hyp_path, gold_path):
    hyp, gold = read_links(hyp_path), read_links(gold_path)
    if len(hyp) != len(gold):
        sys.exit("links: %d lines against %d" % (len(hyp), len(gold)))
    print(scores(sum(map(len, hyp)), sum(map(len, gold)),
                 sum(len(h & g) for h, g in zip(hyp, gold))))


def aer(gold_path, shift):
    gold = read_links(gold_path)
    a = s = both = 0
    for k, line in enumerate(sys.stdin):
        m = json.loads(line)
        hyp = hard_links(m["source"], m["target"], m["attention"], 1 if shift else 0)
        g = gold[m.get("line", k + 1) - 1]
        a, s, both = a + len(hyp), s + len(g), both + len(hyp & g)
    print(scores(a, s, both))


def table(path):
    print("| run | map | AER | precision | recall | perplexity | BLEU |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for line in open(path, encoding="utf-8"):
        cells = line.rstrip("\n").split("\t")
        print("| " + " | ".join(cells) + " |")


def main(argv):
    if len(argv) == 4 and argv[0] == "gold-toy":
        gold_toy(*argv[1:])
    elif len(argv) in (2, 3) and argv[0] == "aer" and argv[2:] in ([], ["--shift"]):
        aer(argv[1], argv[2:] == ["--shift"])
    elif len(argv) == 3 and argv[0] == "links":
        links(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "table":
        table(argv[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
