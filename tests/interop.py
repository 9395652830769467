#!/usr/bin/env python3
"""Model files between nmt and Python, both ways, with no nmt code on the
Python side: the layout is taken from docs/DESIGN.md ("Model and checkpoint files").

    interop.py              the test: needs numpy and $NMT_BIN
    interop.py write OUT …  writes a model file with the standard library
                            alone (tests/cli/modelfile.sh uses it)

The test
  (b) writes models with its own writer (json.dumps with \\uXXXX escapes and
      surrogate pairs, no padding so the data is unaligned, the JSON keys in
      another order than the data) and checks that `nmt info` reports their
      settings and parameter count, that `nmt score` gives a finite loss, and
      for a model whose only non-zero weights are out.b (so p = softmax(out.b)
      whatever the input) the exact loss and per-sentence NLL, computed here;
  (a) has nmt write a model (`nmt train --init-from` with --max-steps 0) and
      reads it with a numpy-only safetensors reader: layout, alignment, crc32,
      metadata, names, shapes, and every value equal to what was written;
  (c) has nmt learn a subword model (`nmt train --subwords`), reads its
      "subwords" tensor (U8, last) with numpy and its pieces out of the
      SentencePiece protobuf with the standard library, which must be both
      vocabularies; then writes a model of those pieces with its own writer,
      the SentencePiece bytes as a U8 tensor, which nmt must load and use on
      raw text (info, score, translate).

Fails (never skips) when no python3 with numpy is found ($NMT_PYTHON,
/usr/bin/python3, python3).
"""

import argparse
import array
import gzip
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
GATES = {"rnn": 1, "gru": 3, "lstm": 4}


# ---- the layout, from docs/DESIGN.md --------------------------------------------

def tensor_shapes(cfg):
    """[(name, shape)] in docs/DESIGN.md's order for a configuration."""
    G, E, H = GATES[cfg["cell"]], cfg["emb"], cfg["hidden"]
    A, O, D = cfg["att_dim"], cfg["out_dim"], 2 if cfg["bidirectional"] else 1
    Vs, Vt = len(cfg["src_vocab"]), len(cfg["tgt_vocab"])
    t = [("src_emb", [Vs, E]), ("tgt_emb", [Vt, E]),
         ("enc.fwd.W_ih", [G * H, E]), ("enc.fwd.W_hh", [G * H, H]), ("enc.fwd.b", [G * H])]
    if cfg["bidirectional"]:
        t += [("enc.bwd.W_ih", [G * H, E]), ("enc.bwd.W_hh", [G * H, H]), ("enc.bwd.b", [G * H])]
    t += [("dec.init.W", [H, D * H]), ("dec.init.b", [H])]
    if cfg["attention"] == "bahdanau":
        t += [("att.W", [A, H]), ("att.U", [A, D * H]), ("att.b", [A]), ("att.v", [A])]
    elif cfg["attention"] == "general":
        t += [("att.U", [H, D * H])]
    elif cfg["attention"] == "scaled-dot":
        t += [("att.W", [A, H]), ("att.U", [A, D * H])]
    t += [("dec.W_ih", [G * H, E + D * H]), ("dec.W_hh", [G * H, H]), ("dec.b", [G * H]),
          ("out.W_t", [O, H + D * H + E]), ("out.b_t", [O]),
          ("out.W", [Vt, O]), ("out.b", [Vt])]
    return t


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def metadata(cfg):
    b = lambda x: "true" if x else "false"  # noqa: E731
    return {"format": "nmt-1", "cell": cfg["cell"], "attention": cfg["attention"],
            "bidirectional": b(cfg["bidirectional"]), "emb": str(cfg["emb"]),
            "hidden": str(cfg["hidden"]), "att_dim": str(cfg["att_dim"]),
            "out_dim": str(cfg["out_dim"]), "lowercase": b(cfg["lowercase"]),
            "src_vocab": "\n".join(cfg["src_vocab"]), "tgt_vocab": "\n".join(cfg["tgt_vocab"])}


# ---- writing, standard library only -----------------------------------------

def write_model(path, cfg, values, set_meta=None, drop=(), subwords=None):
    """values: {name: list of floats}. The data follows docs/DESIGN.md's order (a
    subword model's bytes last, as U8); the JSON lists the tensors in reverse
    and the metadata last, unpadded."""
    data, offsets = bytearray(), {}
    for name, shape in tensor_shapes(cfg):
        if name in drop:
            continue
        a = array.array("f", values[name])
        assert len(a) == count(shape), name
        if sys.byteorder == "big":
            a.byteswap()
        offsets[name] = (shape, len(data), len(data) + 4 * len(a), "F32")
        data += a.tobytes()
    if subwords is not None:
        offsets["subwords"] = ([len(subwords)], len(data), len(data) + len(subwords), "U8")
        data += subwords
    header = {}
    for name in reversed(list(offsets)):
        shape, b, e, dtype = offsets[name]
        header[name] = {"shape": shape, "data_offsets": [b, e], "dtype": dtype}
    meta = metadata(cfg)
    meta["crc32"] = format(zlib.crc32(bytes(data)) & 0xFFFFFFFF, "08x")
    for k, v in (set_meta or {}).items():
        if v is None:
            meta.pop(k, None)
        else:
            meta[k] = v
    header["__metadata__"] = meta
    text = json.dumps(header).encode("ascii")  # ensure_ascii: \u escapes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(data))


def make_values(cfg, init, seed):
    """random: N(0, 0.3²) everywhere; zero; bias: zero but out.b = ln(1+id)."""
    rng = random.Random(seed)
    vals = {}
    for name, shape in tensor_shapes(cfg):
        n = count(shape)
        if init == "random":
            vals[name] = [rng.gauss(0.0, 0.3) for _ in range(n)]
        elif init == "bias" and name == "out.b":
            vals[name] = [math.log(1.0 + i) for i in range(n)]
        else:
            vals[name] = [0.0] * n
    return vals


def config(cell="gru", attention="bahdanau", bidirectional=True, emb=5, hidden=6, att_dim=4,
           out_dim=3, lowercase=True, src_vocab=(), tgt_vocab=()):
    return {"cell": cell, "attention": attention, "bidirectional": bidirectional, "emb": emb,
            "hidden": hidden, "att_dim": att_dim, "out_dim": out_dim, "lowercase": lowercase,
            "src_vocab": SPECIALS + list(src_vocab), "tgt_vocab": SPECIALS + list(tgt_vocab)}


def cmd_write(argv):
    p = argparse.ArgumentParser(prog="interop.py write")
    p.add_argument("out")
    p.add_argument("--cell", default="gru")
    p.add_argument("--attention", default="bahdanau")
    p.add_argument("--unidirectional", action="store_true")
    p.add_argument("--emb", type=int, default=5)
    p.add_argument("--hidden", type=int, default=6)
    p.add_argument("--att-dim", type=int, default=4)
    p.add_argument("--out-dim", type=int, default=3)
    p.add_argument("--cased", action="store_true", help="lowercase false")
    p.add_argument("--src-tokens", default="ein haus", help="space-separated, after the specials")
    p.add_argument("--tgt-tokens", default="a house")
    p.add_argument("--init", choices=["random", "zero", "bias"], default="random")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--set-meta", action="append", default=[], metavar="KEY=VALUE",
                   help="replace a metadata value after the crc (KEY= drops it)")
    p.add_argument("--drop", action="append", default=[], metavar="TENSOR")
    a = p.parse_args(argv)
    cfg = config(a.cell, a.attention, not a.unidirectional, a.emb, a.hidden, a.att_dim,
                 a.out_dim, not a.cased, a.src_tokens.split(), a.tgt_tokens.split())
    set_meta = {}
    for kv in a.set_meta:
        k, _, v = kv.partition("=")
        set_meta[k] = v if v else None
    write_model(a.out, cfg, make_values(cfg, a.init, a.seed), set_meta, a.drop)
    print(sum(count(s) for _, s in tensor_shapes(cfg)))


# ---- reading, numpy only -----------------------------------------------------

def read_safetensors(path):
    """Checks the layout strictly; returns (header_len, {name: array}, meta,
    crc32 of the data section)."""
    import numpy as np
    raw = open(path, "rb").read()
    assert len(raw) >= 8, "too short"
    n = struct.unpack("<Q", raw[:8])[0]
    assert 8 + n <= len(raw), "header beyond the file"
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__")
    data = raw[8 + n:]
    spans = sorted((v["data_offsets"][0], v["data_offsets"][1], k) for k, v in header.items())
    pos = 0
    for b, e, k in spans:
        assert b == pos, "tensor %s does not start where the previous ended" % k
        pos = e
    assert pos == len(data), "data section not covered exactly"
    arrays = {}
    for k, v in header.items():
        # every tensor F32 but a subword model's bytes
        assert v["dtype"] == ("U8" if k == "subwords" else "F32"), k
        size = 1 if v["dtype"] == "U8" else 4
        b, e = v["data_offsets"]
        assert e - b == size * count(v["shape"]), k
        assert v["dtype"] == "U8" or b % 4 == 0, "F32 tensor %s unaligned" % k
        arrays[k] = np.frombuffer(data[b:e], dtype="u1" if size == 1 else "<f4").reshape(v["shape"])
    return n, arrays, meta, zlib.crc32(data) & 0xFFFFFFFF


def sentencepiece_pieces(model):
    """The pieces of a serialized SentencePiece model (ModelProto field 1,
    each a message whose field 1 is the piece), read from the protobuf wire
    format with the standard library."""
    def varint(b, i):
        v = shift = 0
        while True:
            c = b[i]
            i += 1
            v |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return v, i

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            kind = key & 7
            if kind == 0:
                _, i = varint(b, i)
                yield key >> 3, None
            elif kind == 1:
                i += 8
            elif kind == 5:
                i += 4
            elif kind == 2:
                n, i = varint(b, i)
                yield key >> 3, b[i:i + n]
                i += n
            else:
                raise ValueError("wire type %d" % kind)

    pieces = []
    for num, body in fields(bytes(model)):
        if num == 1:
            pieces.append(next(v for k, v in fields(body) if k == 1).decode("utf-8"))
    return pieces


# ---- the test ------------------------------------------------------------------

class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what, file=sys.stderr)
        return ok


def run(args):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def field(out, key):
    """The value of a 'key   value' line of nmt's output."""
    for line in out.splitlines():
        if line.startswith(key + " "):
            return line[len(key):].strip()
    return None


SRC = ["ein Haus", "zwei \u00c4pfel und ein \U0001F600", "Haus", "unbekannt Haus Haus"]
TGT = ["a house", "two Apples and a \U0001F600", "house house", "house"]
SRC_TOK = ["ein", "haus", "zwei", "\u00e4pfel", "und", "\U0001F600", 'quote"d', "back\\slash"]
TGT_TOK = ["a", "house", "two", "apples", "and", "\U0001F600", "{", "\u201e"]


def expected_bias_nll(cfg):
    """Per sentence -log p with p = softmax(out.b), out.b[i] = ln(1+i)."""
    Vt = len(cfg["tgt_vocab"])
    b = [math.log(1.0 + i) for i in range(Vt)]
    log_z = math.log(sum(math.exp(x) for x in b))
    ids = {t: i for i, t in enumerate(cfg["tgt_vocab"])}
    out = []
    for line in TGT:
        toks = (line.lower() if cfg["lowercase"] else line).split()
        ys = [ids.get(t, 1) for t in toks] + [3]
        out.append((sum(log_z - b[y] for y in ys), len(ys)))
    return out


def test_python_to_nmt(c, nmt, tmp, src, tgt):
    for cell, att, bi in [("gru", "bahdanau", True), ("lstm", "none", False),
                          ("rnn", "bahdanau", False), ("lstm", "bahdanau", True),
                          ("gru", "general", True), ("lstm", "scaled-dot", False),
                          ("rnn", "dot", False)]:
        cfg = config(cell, att, bi, src_vocab=SRC_TOK, tgt_vocab=TGT_TOK)
        path = os.path.join(tmp, "py-%s-%s-%d.safetensors" % (cell, att, bi))
        write_model(path, cfg, make_values(cfg, "random", 7))
        name = "%s/%s/%s" % (cell, att, "bi" if bi else "uni")
        r = run([nmt, "info", path])
        if not c.check(r.returncode == 0, "%s: nmt info failed: %s" % (name, r.stderr.strip())):
            continue
        n_params = sum(count(s) for _, s in tensor_shapes(cfg))
        c.check(field(r.stdout, "parameters") == str(n_params),
                "%s: parameters %s, expected %d" % (name, field(r.stdout, "parameters"), n_params))
        c.check(field(r.stdout, "cell") == cell and field(r.stdout, "attention") == att,
                "%s: info shows the wrong settings:\n%s" % (name, r.stdout))
        c.check(field(r.stdout, "encoder") == ("bidirectional" if bi else "unidirectional"),
                "%s: wrong encoder" % name)
        c.check(field(r.stdout, "src vocab") == str(len(cfg["src_vocab"])), "%s: src vocab" % name)
        r = run([nmt, "score", "-m", path, "--src", src, "--tgt", tgt, "--batch-size", "3"])
        if c.check(r.returncode == 0, "%s: nmt score failed: %s" % (name, r.stderr.strip())):
            loss = float(field(r.stdout, "loss"))
            c.check(math.isfinite(loss) and loss > 0, "%s: loss %r" % (name, loss))

    # p = softmax(out.b) whatever the input: the loss is known exactly
    cfg = config("gru", "bahdanau", True, src_vocab=SRC_TOK, tgt_vocab=TGT_TOK)
    path = os.path.join(tmp, "bias.safetensors")
    write_model(path, cfg, make_values(cfg, "bias", 0))
    want = expected_bias_nll(cfg)
    r = run([nmt, "score", "-m", path, "--src", src, "--tgt", tgt, "--per-sentence"])
    if c.check(r.returncode == 0, "bias model: nmt score failed: %s" % r.stderr.strip()):
        lines = r.stdout.splitlines()
        c.check(len(lines) == len(want), "per-sentence: %d lines for %d pairs" % (len(lines), len(want)))
        for (nll, n), line in zip(want, lines):
            got_nll, got_n = line.split("\t")
            c.check(abs(float(got_nll) - nll) <= 1e-5 * max(1.0, nll) and int(got_n) == n,
                    "per-sentence: got %s, expected %.6f\t%d" % (line, nll, n))
        total = sum(x for x, _ in want) / sum(n for _, n in want)
        got = float(field(r.stderr, "loss"))
        c.check(abs(got - total) <= 1e-5 * total, "bias model: loss %r, expected %.6f" % (got, total))
        c.check(field(r.stderr, "tokens") == str(sum(n for _, n in want)), "bias model: token count")


def test_nmt_to_python(c, nmt, tmp, src, tgt):
    import numpy as np
    cfg = config("lstm", "bahdanau", True, src_vocab=SRC_TOK, tgt_vocab=TGT_TOK)
    path = os.path.join(tmp, "init.safetensors")
    values = make_values(cfg, "random", 11)
    write_model(path, cfg, values)
    out = os.path.join(tmp, "run")
    # --max-steps 0: the checkpoint holds the model as it was loaded
    r = run([nmt, "train", "--init-from", path, "--src", src, "--tgt", tgt, "--out", out,
             "--optimizer", "sgd", "--max-steps", "0"])
    if not c.check(r.returncode == 0, "nmt train --init-from failed: %s" % r.stderr.strip()):
        return
    ckpt = os.path.join(out, "checkpoint.safetensors")
    try:
        n, arrays, meta, crc = read_safetensors(ckpt)
    except (AssertionError, KeyError, ValueError) as e:
        c.check(False, "%s does not read as safetensors: %r" % (ckpt, e))
        return
    c.check((8 + n) % 8 == 0, "the data section starts at %d, not a multiple of 8" % (8 + n))
    c.check(meta.get("crc32") == format(crc, "08x"), "crc32 %s, data has %08x" % (meta.get("crc32"), crc))
    for k, v in metadata(cfg).items():
        c.check(meta.get(k) == v, "metadata %s is %r, expected %r" % (k, meta.get(k), v))
    for name, shape in tensor_shapes(cfg):
        a = arrays.get(name)
        if not c.check(a is not None, "tensor %s missing" % name):
            continue
        c.check(list(a.shape) == shape, "tensor %s has shape %s, expected %s" % (name, a.shape, shape))
        want = np.array(values[name], dtype=np.float32).reshape(shape)
        c.check(np.array_equal(a, want), "tensor %s: values differ from those written" % name)


def test_subwords(c, nmt, tmp):
    corpora = os.environ.get("NMT_CORPORA", os.path.join(os.path.dirname(__file__), "..", "..",
                                                         "shared", "corpora"))
    sides = []
    for lang in ("de", "en"):
        with gzip.open(os.path.join(corpora, "multi30k", "train.%s.gz" % lang), "rt",
                       encoding="utf-8") as f:
            lines = [next(f) for _ in range(300)]
        path = os.path.join(tmp, "sw." + lang)
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(lines)
        sides.append(path)
    out = os.path.join(tmp, "swrun")
    r = run([nmt, "train", "--arch", "rnn", "--src", sides[0], "--tgt", sides[1], "--out", out,
             "--subwords", "300", "--emb", "8", "--hidden", "8", "--att-dim", "8",
             "--out-dim", "8", "--max-steps", "1"])
    if not c.check(r.returncode == 0, "nmt train --subwords failed: %s" % r.stderr.strip()):
        return
    try:
        n, arrays, meta, crc = read_safetensors(os.path.join(out, "checkpoint.safetensors"))
    except (AssertionError, KeyError, ValueError) as e:
        c.check(False, "a subword checkpoint does not read as safetensors: %r" % e)
        return
    c.check(meta.get("crc32") == format(crc, "08x"), "subword checkpoint crc32")
    model = arrays.get("subwords")
    if not c.check(model is not None and model.dtype == "u1" and model.ndim == 1,
                   "the subwords tensor is a U8 vector"):
        return
    pieces = sentencepiece_pieces(model.tobytes())
    c.check(len(pieces) == 300 and pieces[:4] == SPECIALS, "pieces: %r..." % pieces[:6])
    c.check(meta.get("src_vocab") == "\n".join(pieces) and meta.get("tgt_vocab") == "\n".join(pieces),
            "both vocabularies are the SentencePiece model's pieces")

    # a model of those pieces, written here; nmt reads raw text with it
    cfg = config("gru", "bahdanau", True, lowercase=False)
    cfg["src_vocab"] = cfg["tgt_vocab"] = pieces
    path = os.path.join(tmp, "py-subwords.safetensors")
    write_model(path, cfg, make_values(cfg, "random", 5), subwords=model.tobytes())
    r = run([nmt, "info", path])
    if c.check(r.returncode == 0, "nmt info of a Python subword model: %s" % r.stderr.strip()):
        c.check((field(r.stdout, "units") or "").startswith("subwords: SentencePiece unigram, 300 pieces"),
                "info units: %r" % field(r.stdout, "units"))
    r = run([nmt, "score", "-m", path, "--src", sides[0], "--tgt", sides[1]])
    if c.check(r.returncode == 0, "nmt score with a Python subword model: %s" % r.stderr.strip()):
        c.check(math.isfinite(float(field(r.stdout, "loss"))), "subword model: finite loss")
    r = run([nmt, "translate", "-m", path, "-i", sides[0], "-b", "1"])
    c.check(r.returncode == 0 and len(r.stdout.splitlines()) == 300 and "\u2581" not in r.stdout,
            "nmt translate with a Python subword model: %s" % r.stderr.strip())
    # the pieces must be the vocabularies
    cfg["tgt_vocab"] = pieces[:-1] + ["\u2581nicht-ein-piece"]
    write_model(path, cfg, make_values(cfg, "random", 5), subwords=model.tobytes())
    r = run([nmt, "info", path])
    c.check(r.returncode != 0 and "(they must be the same)" in r.stderr,
            "a vocabulary that is not the pieces is refused: %s" % r.stderr.strip())


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "write":
        return cmd_write(sys.argv[2:])
    try:
        import numpy  # noqa: F401
    except ImportError:
        reexec_with_numpy()
    nmt = os.environ.get("NMT_BIN")
    if not nmt:
        print("FAIL: NMT_BIN is not set", file=sys.stderr)
        sys.exit(1)
    tmp = tempfile.mkdtemp(prefix="nmt-interop-")
    try:
        src, tgt = os.path.join(tmp, "c.src"), os.path.join(tmp, "c.tgt")
        with open(src, "w", encoding="utf-8") as f:
            f.write("\n".join(SRC) + "\n")
        with open(tgt, "w", encoding="utf-8") as f:
            f.write("\n".join(TGT) + "\n")
        c = Checks()
        test_python_to_nmt(c, nmt, tmp, src, tgt)
        test_nmt_to_python(c, nmt, tmp, src, tgt)
        test_subwords(c, nmt, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (c.passed, c.failed))
    sys.exit(1 if c.failed else 0)


def reexec_with_numpy():
    if not os.environ.get("NMT_INTEROP_REEXEC"):
        for cand in (os.environ.get("NMT_PYTHON"), "/usr/bin/python3", "python3"):
            exe = shutil.which(cand) if cand else None
            if not exe or os.path.realpath(exe) == os.path.realpath(sys.executable):
                continue
            if subprocess.run([exe, "-c", "import numpy"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                os.environ["NMT_INTEROP_REEXEC"] = "1"
                os.execv(exe, [exe] + sys.argv)
    print("FAIL: no python3 with numpy (tried $NMT_PYTHON, /usr/bin/python3, python3)",
          file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    main()
