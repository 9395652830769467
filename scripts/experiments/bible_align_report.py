#!/usr/bin/env python3
"""Word links from nmt align's piece-level maps, scored on the Bible's gold.

The experiments of scripts/experiments/bible-alignment use it to try link
rules on validation verses before nmt align has them as options, and to
cross-check nmt align's own scorer (the two must agree on the same links):

  maps MAPS.jsonl [MAPS2.jsonl ...] [--shift] [--eos-unaligned] [--min-weight W]
      JSON Lines of `nmt align --format json --units pieces --tgt ...` (one
      head each; several files are averaged: the mean of heads), turned into
      word maps (a target word's row the mean of its pieces' rows, a source
      word's column the sum of its pieces' columns, as nmt align --units
      words does), then into Pharaoh links on standard output, one line a
      pair: each target word to the source word it attends most. --shift
      takes piece i's row from the step that reads it (row i + 1).
  score LINKS GOLD [--reverse-gold] [--full]
      AER (Och and Ney: 1 - (|A&S| + |A&P|) / (|A| + |S|)), precision
      (|A&P| / |A|) and recall (|A&S| / |S|) of LINKS against GOLD (i-j
      sure, i?j possible). By default only the links whose two words each
      stand in some gold link count (partial annotation); --full counts
      every link. --reverse-gold: GOLD lists target-source.
  combine FWD_A REV_A FWD_B REV_B GOLD
      the ways of joining two aligners' links (A: a statistical aligner, B:
      guided attention), each direction's own file (REV target-source): each
      alone symmetrised, the unions, votes, agreement per direction then
      each symmetrisation; AER, precision, recall against GOLD (partial).
  sym FWD REV METHOD
      symmetrises FWD (source-target) with REV (the reverse model's own
      links, target-source): intersection, union, grow-diag,
      grow-diag-final, grow-diag-final-and.
"""
import json
import sys

MARK = "\u2581"


def words_of(pieces):
    """word index of each piece, as nmt align groups them"""
    out, w = [], -1
    for k, p in enumerate(pieces):
        if k == 0 or p.startswith(MARK) or p == "</s>" or pieces[k - 1] == "</s>":
            w += 1
        out.append(w)
    return out, w + 1


def word_map(rec, shift):
    src, tgt, att = rec["source"], rec["target"], rec["attention"]
    if shift:
        # piece i is read by the step that predicts piece i + 1; "</s>" is
        # read by no step of the pass: its row is left as it was.
        att = att[1:] + att[-1:]
    sw, ns = words_of(src)
    tw, nt = words_of(tgt)
    m = [[0.0] * ns for _ in range(nt)]
    cnt = [0] * nt
    for i, row in enumerate(att):
        wi = tw[i]
        cnt[wi] += 1
        r = m[wi]
        for j, v in enumerate(row):
            r[sw[j]] += v
    for i in range(nt):
        if cnt[i]:
            m[i] = [v / cnt[i] for v in m[i]]
    return m


def links_of(m, eos_unaligned=False, min_weight=0.0):
    nt, ns = len(m), len(m[0])
    out = []
    for i in range(nt - 1):
        row = m[i]
        best = max(range(ns - 1), key=lambda j: (row[j], -j)) if ns > 1 else None
        if best is None:
            continue
        if eos_unaligned and row[ns - 1] > row[best]:
            continue
        if row[best] < min_weight:
            continue
        out.append((best, i))
    return out


def cmd_maps(args):
    shift = "--shift" in args
    eos = "--eos-unaligned" in args
    mw = 0.0
    if "--min-weight" in args:
        mw = float(args[args.index("--min-weight") + 1])
        args = [a for a in args if a != str(args[args.index("--min-weight") + 1])]
    files = [a for a in args if not a.startswith("--")]
    handles = [open(f) for f in files]
    for lines in zip(*handles):
        recs = [json.loads(l) for l in lines]
        maps = [word_map(r, shift) for r in recs]
        m = maps[0]
        if len(maps) > 1:
            m = [[sum(mp[i][j] for mp in maps) / len(maps) for j in range(len(m[0]))]
                 for i in range(len(m))]
        print(" ".join(f"{s}-{t}" for s, t in links_of(m, eos, mw)))


def parse(line, reverse=False):
    sure, poss = set(), set()
    for tok in line.split():
        sep = "?" if "?" in tok else ("p" if "p" in tok else "-")
        a, b = tok.split(sep)
        link = (int(b), int(a)) if reverse else (int(a), int(b))
        (poss if sep != "-" else sure).add(link)
    return sure, poss | sure


def score(links_file, gold_file, reverse=False, full=False):
    A = S = AS = AP = 0
    with open(links_file) as lf, open(gold_file) as gf:
        for hl, gl in zip(lf, gf):
            hyp, _ = parse(hl)
            sure, poss = parse(gl, reverse)
            if not full:
                ss = {s for s, _ in poss}
                ts = {t for _, t in poss}
                hyp = {(s, t) for s, t in hyp if s in ss and t in ts}
            A += len(hyp)
            S += len(sure)
            AS += len(hyp & sure)
            AP += len(hyp & poss)
    aer = 1 - (AS + AP) / (A + S) if A + S else 0.0
    return aer, (AP / A if A else 1.0), (AS / S if S else 1.0)


def neighbours(diag):
    n = [(-1, 0), (0, -1), (1, 0), (0, 1)]
    return n + [(-1, -1), (-1, 1), (1, -1), (1, 1)] if diag else n


def symmetrize(f, r, method):
    inter, union = f & r, f | r
    if method == "intersection":
        return inter
    if method == "union":
        return union
    a = set(inter)

    def src_aligned(s):
        return any(x == s for x, _ in a)

    def tgt_aligned(t):
        return any(y == t for _, y in a)

    added = True
    while added:  # grow-diag: neighbours of links already in, from the union
        added = False
        for s, t in sorted(a):
            for ds, dt in neighbours(True):
                c = (s + ds, t + dt)
                if c in union and c not in a and (not src_aligned(c[0]) or not tgt_aligned(c[1])):
                    a.add(c)
                    added = True
    if method == "grow-diag":
        return a
    for side in (f, r):  # final: the remaining links of each direction
        for s, t in sorted(side):
            if (s, t) in a:
                continue
            if method == "grow-diag-final-and":
                ok = not src_aligned(s) and not tgt_aligned(t)
            else:
                ok = not src_aligned(s) or not tgt_aligned(t)
            if ok:
                a.add((s, t))
    return a


def cmd_sym(fwd, rev, method):
    with open(fwd) as ff, open(rev) as rf:
        for fl, rl in zip(ff, rf):
            f, _ = parse(fl)
            r, _ = parse(rl, reverse=True)
            print(" ".join(f"{s}-{t}" for s, t in sorted(symmetrize(f, r, method))))


def score_sets(hyps, gold):
    A = S = AS = AP = 0
    for h, (sure, poss) in zip(hyps, gold):
        ss = {a for a, _ in poss}
        ts = {b for _, b in poss}
        h = {(a, b) for a, b in h if a in ss and b in ts}
        A += len(h)
        S += len(sure)
        AS += len(h & sure)
        AP += len(h & poss)
    return 1 - (AS + AP) / (A + S), AP / A, AS / S


def cmd_combine(fa, ra, fb, rb, gold_file):
    def load(f, rev=False):
        return [parse(l, rev)[0] for l in open(f)]
    ef, er, af, ar = load(fa), load(ra, True), load(fb), load(rb, True)
    gold = [parse(l) for l in open(gold_file)]
    gdfa = "grow-diag-final-and"
    rows = [
        ("A alone, " + gdfa, [symmetrize(a, b, gdfa) for a, b in zip(ef, er)]),
        ("B alone, " + gdfa, [symmetrize(a, b, gdfa) for a, b in zip(af, ar)]),
        ("unions of A and B, " + gdfa,
         [symmetrize(a | c, b | d, gdfa) for a, b, c, d in zip(ef, er, af, ar)]),
    ]
    for k in (2, 3):
        out = []
        for sets in zip(ef, er, af, ar):
            cnt = {}
            for x in sets:
                for l in x:
                    cnt[l] = cnt.get(l, 0) + 1
            out.append({l for l, c in cnt.items() if c >= k})
        rows.append((f"links {k} of the 4 have", out))
    for m in ("intersection", "union", "grow-diag", "grow-diag-final", gdfa):
        rows.append(("agreement per direction, " + m,
                     [symmetrize(a & c, b & d, m) for a, b, c, d in zip(ef, er, af, ar)]))
    for name, hyps in rows:
        print("%-44s AER %.4f  precision %.4f  recall %.4f" % ((name,) + score_sets(hyps, gold)))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "maps":
        cmd_maps(argv[2:])
    elif argv[1] == "score":
        a = [x for x in argv[2:] if not x.startswith("--")]
        aer, p, r = score(a[0], a[1], "--reverse-gold" in argv, "--full" in argv)
        print(f"AER {aer:.4f}  precision {p:.4f}  recall {r:.4f}")
    elif argv[1] == "combine":
        cmd_combine(*argv[2:7])
    elif argv[1] == "sym":
        cmd_sym(argv[2], argv[3], argv[4])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
