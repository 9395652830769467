#!/usr/bin/env python3
"""Random BLEU and chrF test cases built from the Multi30k English references.

Each case is a small corpus: reference lines drawn from Multi30k's val and
test2016 English sides, a hypothesis made by perturbing them (dropped,
shuffled, repeated words, case changes, punctuation stripped or added, HTML
entities, numbers, empty lines, ...), sometimes a second reference (another
perturbation), and BLEU options (tokenizer, --lc, smoothing). The chrF cases
are drawn the same way from a generator of their own (so the BLEU cases stay
as they were), with up to three references, more non-ASCII text (characters
are code points: multibyte UTF-8 counts once), Unicode and repeated
whitespace, words wrapped in punctuation for chrF++, and chrF options
(chrf or chrf++, --lc, orders, beta, whitespace, eps smoothing). Everything
is drawn from seeded generators, so the same cases come out on every machine
and Python 3 version.

  bleu_cases.py generate OUT              writes OUT/<id>/{hyp,ref1[,ref2..],args}
                                          for the BLEU (c..., s...) and the chrF
                                          (chrf-c..., chrf-s...) cases
  bleu_cases.py expected SACREBLEU        prints tests/bleu_expected.tsv
  bleu_cases.py expected-chrf SACREBLEU   prints tests/chrf_expected.tsv

The last two score every case with sacreBLEU run from the source tree
SACREBLEU (not needed by the tests, which only read the stored numbers). A
checkout of its tag v2.6.0 needs the sacrebleu/version.py its build would
write (__version__ = "2.6.0") and its imports (portalocker, tabulate,
colorama, lxml: Debian's python3-portalocker, python3-tabulate,
python3-colorama, python3-lxml).

The corpus is found through $NMT_CORPORA (the directory holding multi30k/),
else in the repository's corpora/multi30k.
"""
import gzip
import os
import random
import sys

N_CORPUS_CASES = 220
N_SENTENCE_CASES = 20
SEED = 20240517

PUNCT = [".", ",", "!", "?", ";", ":", "\"", "'", "(", ")", "-", "&quot;",
         "&amp;", "&lt;", "&gt;", "...", "/", "[", "]", "$", "%"]
NUMBERS = ["3.5", "1,000", "5-6", "2.", ",7", "10-", "-4", "0.5%", "1990s",
           "12:30", "3,5.2"]
ODD = ["naïve", "Zoë", "ÄRGER", "İstanbul", "café.", "façade,", "\u00a0", "–", "“quoted”",
       "'s", "n't", "<skipped>", "e-mail", "x-ray-", "U.S.A.", "Mr."]


def multi30k_dir():
    """$NMT_CORPORA/multi30k, else the repository's corpora/multi30k (where
    scripts/data/get-multi30k puts it)."""
    here = os.path.dirname(os.path.abspath(__file__))
    tried = []
    for base in (os.environ.get("NMT_CORPORA"), os.path.join(here, "..", "corpora")):
        if base:
            d = os.path.join(base, "multi30k")
            tried.append(d)
            if os.path.exists(os.path.join(d, "val.en.gz")):
                return d
    sys.exit("bleu_cases.py: no Multi30k val.en.gz in %s (run scripts/data/get-multi30k)"
             % " or ".join(tried))


def load_references():
    lines = []
    for name in ("val.en.gz", "test_2016_flickr.en.gz"):
        path = os.path.join(multi30k_dir(), name)
        with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
            lines.extend(line.rstrip("\n") for line in f)
    return lines


def perturb(rng, sentence, vocab):
    """A hypothesis-like variant of a reference sentence."""
    roll = rng.random()
    if roll < 0.05:
        return ""
    if roll < 0.12:
        return sentence
    words = sentence.split()
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(12)
        if op == 0 and words:  # drop words
            for _ in range(rng.randint(1, 3)):
                if words:
                    del words[rng.randrange(len(words))]
        elif op == 1 and len(words) > 1:  # swap neighbours
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        elif op == 2:  # shuffle everything
            rng.shuffle(words)
        elif op == 3 and words:  # repeat a word or a phrase
            i = rng.randrange(len(words))
            j = min(len(words), i + rng.randint(1, 3))
            words[i:i] = words[i:j] * rng.randint(1, 2)
        elif op == 4 and words:  # change case
            i = rng.randrange(len(words))
            words[i] = rng.choice([str.upper, str.lower, str.title, str.swapcase])(words[i])
        elif op == 5:  # strip punctuation
            words = [w.strip(".,!?;:'\"") for w in words]
            words = [w for w in words if w]
        elif op == 6:  # add punctuation, attached or free
            i = rng.randint(0, len(words))
            p = rng.choice(PUNCT)
            if words and i > 0 and rng.random() < 0.6:
                words[i - 1] += p
            else:
                words.insert(i, p)
        elif op == 7:  # numbers, with the separators 13a treats specially
            words.insert(rng.randint(0, len(words)), rng.choice(NUMBERS))
        elif op == 8 and words:  # replace a word
            words[rng.randrange(len(words))] = rng.choice(vocab)
        elif op == 9:  # insert other words
            for _ in range(rng.randint(1, 3)):
                words.insert(rng.randint(0, len(words)), rng.choice(vocab))
        elif op == 10:  # non-ASCII and tokenizer corner cases
            words.insert(rng.randint(0, len(words)), rng.choice(ODD))
        elif op == 11 and len(words) > 2:  # truncate
            words = words[: rng.randint(1, len(words) - 1)]
    text = " ".join(words)
    if rng.random() < 0.1:
        text += rng.choice([" ", "  ", "\u3000"])  # trailing whitespace is stripped
    return text


def draw_options(rng, sentence_mode):
    args = []
    if rng.random() < 0.2:
        args += ["--tokenize", "none"]
    if rng.random() < 0.25:
        args += ["--lc"]
    roll = rng.random()
    if roll < 0.15:
        args += ["--smooth", "none"]
    elif roll < 0.3:
        args += ["--smooth", "floor"]
        if rng.random() < 0.5:
            args += ["--smooth-value", rng.choice(["0.01", "0.05", "0.2", "0.5"])]
    elif roll < 0.45:
        args += ["--smooth", "add-k"]
        if rng.random() < 0.5:
            args += ["--smooth-value", rng.choice(["0.5", "2", "3"])]
    if sentence_mode:
        args += ["--sentence"]
    return args


def make_cases():
    """[(id, args, hyp_lines, [ref_lines, ...])], always the same."""
    refs_pool = load_references()
    vocab = sorted({w for line in refs_pool for w in line.split()})
    rng = random.Random(SEED)
    cases = []
    for i in range(N_CORPUS_CASES + N_SENTENCE_CASES):
        sentence_mode = i >= N_CORPUS_CASES
        n = rng.randint(1, 8) if sentence_mode else rng.choice([1, 2, 3, 5, 10, 20, 40, 80])
        ref1 = [refs_pool[rng.randrange(len(refs_pool))] for _ in range(n)]
        refs = [ref1]
        if rng.random() < 0.35:
            refs.append([perturb(rng, r, vocab) for r in ref1])
        style = rng.random()
        if style < 0.03:
            hyp = list(ref1)  # perfect match
        elif style < 0.05:
            hyp = [""] * n  # empty hypotheses
        else:
            hyp = [perturb(rng, r, vocab) for r in ref1]
        case_id = ("s%03d" if sentence_mode else "c%03d") % i
        cases.append((case_id, draw_options(rng, sentence_mode), hyp, refs))
    return cases


# ---- chrF cases ----------------------------------------------------------

N_CHRF_CORPUS_CASES = 220
N_CHRF_SENTENCE_CASES = 20
CHRF_SEED = 20250611

# Multibyte and case-changing text: CJK, an emoji (4 bytes), a combining
# accent, Greek with final sigma, dotted capital I, sharp s, a ligature, a
# titlecase digraph; words wrapped in punctuation for chrF++'s split; Unicode
# spaces inside a token (not split by the generator, still whitespace to
# Python).
CHRF_EXTRA = ["\u6771\u4eac", "\U0001F600", "e\u0301", "\u03a3\u039f\u03a6\u039f\u03a3",
              "\u0130stanbul", "Stra\u00dfe", "\ufb01ne", "\u01c4", "\u01c5ungla", "(word)",
              "\"quoted\"", "end.", "...", "'s", "a\u00a0b", "x\u3000y", "tab\there",
              "\u00c4RGER", "na\u00efve", "-", "!?", "\u2013dash"]


def perturb_chrf(rng, sentence, vocab):
    """perturb()'s variant, then chrF's corner cases: non-ASCII words and
    whitespace that only the character n-grams with --chrf-whitespace see."""
    text = perturb(rng, sentence, vocab)
    words = text.split(" ")
    if rng.random() < 0.35:
        for _ in range(rng.randint(1, 2)):
            words.insert(rng.randint(0, len(words)), rng.choice(CHRF_EXTRA))
    sep = " "
    if rng.random() < 0.1:
        sep = rng.choice(["  ", "\t", " \u00a0"])
    text = sep.join(words)
    if rng.random() < 0.1:
        text = rng.choice([" ", "  ", "\u3000"]) + text  # leading whitespace stays
    return text


def draw_chrf_options(rng, sentence_mode):
    roll = rng.random()
    if roll < 0.5:
        args = ["-m", "chrf"]
    elif roll < 0.75:
        args = ["-m", "chrf++"]
    elif roll < 0.85:
        args = ["-m", "chrf", "--chrf-word-order", "2"]
    else:
        args = ["-m", "chrf", "--chrf-word-order", rng.choice(["1", "3"])]
    if rng.random() < 0.25:
        args += ["--lc"]
    if rng.random() < 0.15:
        args += ["--chrf-char-order", rng.choice(["1", "2", "3", "4", "8", "10"])]
    if rng.random() < 0.15:
        args += ["--chrf-beta", rng.choice(["0", "1", "3", "5"])]
    if rng.random() < 0.15:
        args += ["--chrf-whitespace"]
    if rng.random() < 0.2:
        args += ["--chrf-eps-smoothing"]
    if sentence_mode:
        args += ["--sentence"]
    return args


def make_chrf_cases():
    """[(id, args, hyp_lines, [ref_lines, ...])], always the same."""
    refs_pool = load_references()
    vocab = sorted({w for line in refs_pool for w in line.split()})
    rng = random.Random(CHRF_SEED)
    cases = []
    for i in range(N_CHRF_CORPUS_CASES + N_CHRF_SENTENCE_CASES):
        sentence_mode = i >= N_CHRF_CORPUS_CASES
        n = rng.randint(1, 8) if sentence_mode else rng.choice([1, 2, 3, 5, 10, 20, 40, 80])
        ref1 = [refs_pool[rng.randrange(len(refs_pool))] for _ in range(n)]
        refs = [ref1]
        roll = rng.random()
        for _ in range(2 if roll < 0.1 else 1 if roll < 0.4 else 0):
            refs.append([perturb_chrf(rng, r, vocab) for r in ref1])
        style = rng.random()
        if style < 0.03:
            hyp = list(ref1)  # perfect match
        elif style < 0.05:
            hyp = [""] * n  # empty hypotheses
        else:
            hyp = [perturb_chrf(rng, r, vocab) for r in ref1]
        case_id = ("chrf-s%03d" if sentence_mode else "chrf-c%03d") % i
        cases.append((case_id, draw_chrf_options(rng, sentence_mode), hyp, refs))
    return cases


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def generate(out):
    for case_id, args, hyp, refs in make_cases() + make_chrf_cases():
        d = os.path.join(out, case_id)
        os.makedirs(d, exist_ok=True)
        write_lines(os.path.join(d, "hyp"), hyp)
        for k, ref in enumerate(refs, 1):
            write_lines(os.path.join(d, "ref%d" % k), ref)
        write_lines(os.path.join(d, "args"), [" ".join(args)])


def read_like_sacrebleu(path):
    # sacreBLEU's command line reads files with newline="\n" and rstrip()s.
    with open(path, encoding="utf-8", newline="\n") as f:
        return [line.rstrip() for line in f]


def expected(sacrebleu_src):
    """Scores every case with sacreBLEU (run from its source tree) and prints
    one TSV row per corpus case, or per sentence of a sentence-mode case."""
    import tempfile
    sys.path.insert(0, sacrebleu_src)
    from sacrebleu.metrics import BLEU
    from sacrebleu.utils import sum_of_lists
    import sacrebleu

    print("# Expected BLEU of tests/bleu_cases.py's cases, computed by sacreBLEU %s"
          % sacrebleu.__version__)
    print("# id\targs\tscore\tstats (hyp_len ref_len matches1-4 totals1-4)\tsacreBLEU line (-f text -w 2)")
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        for case_id, args, _, refs in make_cases():
            d = os.path.join(tmp, case_id)
            hyp = read_like_sacrebleu(os.path.join(d, "hyp"))
            ref_streams = [read_like_sacrebleu(os.path.join(d, "ref%d" % k))
                           for k in range(1, len(refs) + 1)]
            opt = dict(tokenize="13a", lowercase=False, smooth_method="exp", smooth_value=None)
            it = iter(args)
            for a in it:
                if a == "--tokenize":
                    opt["tokenize"] = next(it)
                elif a == "--lc":
                    opt["lowercase"] = True
                elif a == "--smooth":
                    opt["smooth_method"] = next(it)
                elif a == "--smooth-value":
                    opt["smooth_value"] = float(next(it))
            sentence_mode = "--sentence" in args
            metric = BLEU(effective_order=sentence_mode, **opt)
            # Each row: a name, the score, and the summed sentence statistics
            # (taken before compute_bleu, which adds add-k's k to its copy).
            if sentence_mode:
                rows = [("%s:%d" % (case_id, k + 1), [h], [[x] for x in r])
                        for k, (h, *r) in enumerate(zip(hyp, *ref_streams))]
            else:
                rows = [(case_id, hyp, ref_streams)]
            for row_id, h, r in rows:
                s = metric.corpus_score(h, r)
                sig = metric.get_signature().format()
                stats = [int(x) for x in sum_of_lists(metric._extract_corpus_statistics(h, r))]
                print("%s\t%s\t%.6f\t%s\t%s" % (row_id, " ".join(args), s.score,
                                                 " ".join("%d" % x for x in stats),
                                                 s.format(width=2, signature=sig)))



def expected_chrf(sacrebleu_src):
    """As expected(), for the chrF cases: the score with 10 decimals (nmt bleu
    -w 10 -b must print the same digits), the statistics as nmt bleu --stats
    prints them, and the text line."""
    import tempfile
    sys.path.insert(0, sacrebleu_src)
    from sacrebleu.metrics import CHRF
    from sacrebleu.utils import sum_of_lists
    import sacrebleu

    print("# Expected chrF of tests/bleu_cases.py's chrF cases, computed by sacreBLEU %s"
          % sacrebleu.__version__)
    print("# id\targs\tscore (-w 10)\tstats (hyp ref match of each order)\tsacreBLEU line (-f text -w 2)")
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        for case_id, args, _, refs in make_chrf_cases():
            d = os.path.join(tmp, case_id)
            hyp = read_like_sacrebleu(os.path.join(d, "hyp"))
            ref_streams = [read_like_sacrebleu(os.path.join(d, "ref%d" % k))
                           for k in range(1, len(refs) + 1)]
            # nmt bleu's options as sacreBLEU's CHRF arguments (--lc is its
            # --chrf-lowercase; chrf++ is word order 2)
            opt = dict(char_order=6, word_order=0, beta=2, lowercase=False,
                       whitespace=False, eps_smoothing=False)
            it = iter(args)
            for a in it:
                if a == "-m":
                    opt["word_order"] = 2 if next(it) == "chrf++" else opt["word_order"]
                elif a == "--lc":
                    opt["lowercase"] = True
                elif a == "--chrf-char-order":
                    opt["char_order"] = int(next(it))
                elif a == "--chrf-word-order":
                    opt["word_order"] = int(next(it))
                elif a == "--chrf-beta":
                    opt["beta"] = int(next(it))
                elif a == "--chrf-whitespace":
                    opt["whitespace"] = True
                elif a == "--chrf-eps-smoothing":
                    opt["eps_smoothing"] = True
            metric = CHRF(**opt)
            if "--sentence" in args:
                rows = [("%s:%d" % (case_id, k + 1), [h], [[x] for x in r])
                        for k, (h, *r) in enumerate(zip(hyp, *ref_streams))]
            else:
                rows = [(case_id, hyp, ref_streams)]
            for row_id, h, r in rows:
                s = metric.corpus_score(h, r)
                sig = metric.get_signature().format()
                stats = sum_of_lists(metric._extract_corpus_statistics(h, r))
                print("%s\t%s\t%.10f\t%s\t%s" % (row_id, " ".join(args), s.score,
                                                  " ".join("%d" % x for x in stats),
                                                  s.format(width=2, signature=sig)))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "generate":
        generate(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "expected":
        expected(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "expected-chrf":
        expected_chrf(sys.argv[2])
    else:
        sys.exit(__doc__)
