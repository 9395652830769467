#!/usr/bin/env python3
"""The Transformer's parity with PyTorch: nmt's loss and hand-written
gradients against autograd on a model written here from docs/DESIGN.md's
equations ("The Transformer") and nothing else.

    parity_transformer.py [CONFIG...]

For each configuration (heads, layers, tied or not, label smoothing, and
the variants: ScaleNorm for every norm, FixNorm's unit embedding rows, a
joint vocabulary or two; word dropout; guided alignment) a random model
file is written here
(safetensors, the design's names and metadata: what a reader of the
contract would write), and then, through nmt's own command line as the
contract's reference checks run it:
  * `nmt score` must print the mean -log p of the corpus that torch
    computes (relative 1e-5);
  * one step of `nmt train --init-from FILE --optimizer sgd --lr LR --clip 0
    --dropout 0 --label-smoothing X --warmup 0 --no-shuffle --batch-size N
    --max-steps 1 --threads 1` over all N pairs must move every weight by
    exactly -LR times torch's gradient of the (smoothed) loss: per tensor
    max|g_nmt - g_torch| / max|g_torch| <= 1e-4.
    With word dropout (--word-dropout X --batch-log LOG, every other
    dropout 0) torch's gradient is taken on the ids the log recorded: the
    source and the decoder's input as nmt's model read them, the labels
    as they were (the log's labels must be the corpus's, and some ids must
    have been replaced, or the check would prove nothing).
    With guided alignment (--guided-links LINKS --guided-weight W
    --guided-layer L --guided-head T --guided-step predict|read) the
    gradient is of the loss plus W / N times sum -p log alpha of that
    head's cross-attention weights, the gold rows p made here from word
    links between words of several tokens (docs/DESIGN.md, "Guided
    alignment"), and the checkpoint must name the head (align_*).
A joint vocabulary's file has joint_vocab = true, no src_emb, and one list
under src_vocab and tgt_vocab; the reference then embeds both sides with
tgt_emb, and its gradient gathers all three uses.
The reference runs each sentence alone (no padding, no masks but the causal
one), in float64, so it also checks that padding changes nothing. nmt's
checkpoint after the step must also read back as the same model here.
A ScaleNorm file whose gain is a layer norm's [d], or that holds a norm's
.b, must be refused with the tensor's name.

Needs a python3 with torch and numpy (as tests/parity.py); NMT_BIN is nmt.
"""

import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def reexec_with_torch():
    """Runs this script again under a python3 that imports torch and numpy
    (Debian's python3-torch lives in the system python)."""
    if not os.environ.get("NMT_PARITY_REEXEC"):
        for cand in (os.environ.get("NMT_PYTHON"), "/usr/bin/python3", "python3"):
            exe = shutil.which(cand) if cand else None
            if not exe or os.path.realpath(exe) == os.path.realpath(sys.executable):
                continue
            if subprocess.run([exe, "-c", "import torch, numpy"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                os.environ["NMT_PARITY_REEXEC"] = "1"
                os.execv(exe, [exe] + sys.argv)
    print("FAIL: no python3 with torch and numpy (tried $NMT_PYTHON, /usr/bin/python3, "
          "python3); install python3-torch and python3-numpy", file=sys.stderr)
    sys.exit(1)


try:
    import numpy as np
    import torch
except ImportError:
    reexec_with_torch()

GRAD_TOL = 1e-4
LOSS_TOL = 1e-5
PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]


# ---- model files -------------------------------------------------------------

def write_model(path, tensors, meta):
    """safetensors: 8-byte length, JSON header, F32 data; crc32 of the data."""
    header, blobs, at = {}, [], 0
    for name, a in tensors:
        b = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    data = b"".join(blobs)
    meta = dict(meta, crc32="%08x" % zlib.crc32(data))
    header["__metadata__"] = meta
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def read_model(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    meta = h.pop("__metadata__", {})
    out = {}
    for name, t in h.items():
        s, e = t["data_offsets"]
        if t["dtype"] == "F32":
            out[name] = np.frombuffer(b[8 + n + s:8 + n + e], dtype="<f4").reshape(t["shape"])
    return out, meta


def tensor_names(d, F, Le, Ld, Vs, Vt, tied, scale=False, joint=False):
    """The design's tensors and shapes (any order: readers go by name);
    scale: ScaleNorm's norms, a gain of shape [1] and no bias; a joint
    vocabulary has no src_emb."""
    t = ([] if joint else [("src_emb", (Vs, d))]) + [("tgt_emb", (Vt, d))]

    def mha(p):
        return [(p + w, (d, d)) for w in ("W_q", "W_k", "W_v", "W_o")] + \
               [(p + b, (d,)) for b in ("b_q", "b_k", "b_v", "b_o")]

    def ff(p):
        return [(p + "W_1", (F, d)), (p + "b_1", (F,)), (p + "W_2", (d, F)), (p + "b_2", (d,))]

    def ln(p):
        return [(p + "g", (1,))] if scale else [(p + "g", (d,)), (p + "b", (d,))]
    for l in range(Le):
        t += ln("enc.%d.ln1." % l) + ln("enc.%d.ln2." % l) + mha("enc.%d.self." % l) + \
             ff("enc.%d.ff." % l)
    t += ln("enc.ln.")
    for l in range(Ld):
        t += ln("dec.%d.ln1." % l) + ln("dec.%d.ln2." % l) + ln("dec.%d.ln3." % l) + \
             mha("dec.%d.self." % l) + mha("dec.%d.cross." % l) + ff("dec.%d.ff." % l)
    t += ln("dec.ln.")
    if not tied:
        t.append(("out.W", (Vt, d)))
    t.append(("out.b", (Vt,)))
    return t


# ---- the model, from the equations --------------------------------------------

def positions(n, d):
    p = torch.zeros(n, d, dtype=torch.float64)
    for k in range(d):
        freq = 10000.0 ** (-(k - k % 2) / d)
        for j in range(n):
            p[j, k] = math.cos(j * freq) if k % 2 else math.sin(j * freq)
    return p


def layer_norm(u, g, b):
    mean = u.mean(-1, keepdim=True)
    var = ((u - mean) ** 2).mean(-1, keepdim=True)
    return g * (u - mean) / torch.sqrt(var + 1e-5) + b


SN_EPS = 1e-5


def scale_norm(u, g):
    """SN(u) = g u / max(|u|, eps) over the features."""
    return g * u / torch.clamp(torch.sqrt((u * u).sum(-1, keepdim=True)), min=SN_EPS)


def unit_rows(E):
    """FixNorm: every row e / max(|e|, eps)."""
    return E / torch.clamp(torch.sqrt((E * E).sum(-1, keepdim=True)), min=SN_EPS)


def mha(P, p, q_in, kv_in, h, causal, probs=None):
    """probs: a list that gets each head's attention weights."""
    d = q_in.shape[-1]
    dk = d // h
    Q = q_in @ P[p + "W_q"].T + P[p + "b_q"]
    K = kv_in @ P[p + "W_k"].T + P[p + "b_k"]
    V = kv_in @ P[p + "W_v"].T + P[p + "b_v"]
    heads = []
    for t in range(h):
        c = slice(t * dk, (t + 1) * dk)
        s = Q[:, c] @ K[:, c].T / math.sqrt(dk)
        if causal:
            n = s.shape[0]
            s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), -math.inf)
        a = torch.softmax(s, -1)
        if probs is not None:
            probs.append(a)
        heads.append(a @ V[:, c])
    return torch.cat(heads, -1) @ P[p + "W_o"].T + P[p + "b_o"]


def ffn(P, p, u):
    return torch.relu(u @ P[p + "W_1"].T + P[p + "b_1"]) @ P[p + "W_2"].T + P[p + "b_2"]


def sentence_loss(P, cfg, src, tgt, eps, tgt_in=None, gold=None):
    """(sum of -log p[y], sum of the smoothed per-token loss plus the
    weighted guided term, tokens) of one pair; src and tgt without </s> and
    <s>; tgt_in, the decoder's input without <s>, is tgt unless word dropout
    replaced some of it; gold, guided alignment's rows [m + 1, n] of the
    pair (docs/DESIGN.md, "Guided alignment"): the term is cfg's weight
    times sum -p log alpha of cfg's layer and head over the rows."""
    d, h = cfg["d"], cfg["h"]
    x_ids = torch.tensor(src + [EOS])
    y_in = torch.tensor([BOS] + (tgt if tgt_in is None else tgt_in))
    y_out = torch.tensor(tgt + [EOS])

    def norm(u, p):  # p: "enc.0.ln1." ...
        if cfg.get("scale"):
            return scale_norm(u, P[p + "g"])
        return layer_norm(u, P[p + "g"], P[p + "b"])
    # a joint vocabulary: the encoder reads tgt_emb too
    src_emb, tgt_emb = P["tgt_emb"] if cfg.get("joint") else P["src_emb"], P["tgt_emb"]
    if cfg.get("fixnorm"):
        src_emb, tgt_emb = unit_rows(src_emb), unit_rows(tgt_emb)
    x = math.sqrt(d) * src_emb[x_ids] + positions(len(x_ids), d)
    for l in range(cfg["Le"]):
        p = "enc.%d." % l
        u = norm(x, p + "ln1.")
        x = x + mha(P, p + "self.", u, u, h, False)
        x = x + ffn(P, p + "ff.", norm(x, p + "ln2."))
    H = norm(x, "enc.ln.")
    z = math.sqrt(d) * tgt_emb[y_in] + positions(len(y_in), d)
    guided = 0
    for l in range(cfg["Ld"]):
        p = "dec.%d." % l
        u = norm(z, p + "ln1.")
        z = z + mha(P, p + "self.", u, u, h, True)
        probs = []
        z = z + mha(P, p + "cross.", norm(z, p + "ln2."), H, h, False, probs)
        if gold is not None and l == cfg["guided"]["layer"]:
            alpha = probs[cfg["guided"]["head"]]
            guided = -(gold * torch.log(alpha)).sum()
        z = z + ffn(P, p + "ff.", norm(z, p + "ln3."))
    t = norm(z, "dec.ln.")
    # tied: the (FixNorm: normalised) target table; an untied out.W as it is
    W = tgt_emb if cfg["tied"] else P["out.W"]
    logp = torch.log_softmax(t @ W.T + P["out.b"], -1)
    nll = -logp[torch.arange(len(y_out)), y_out]
    smooth = (1 - eps) * nll - eps * logp.mean(-1)
    weight = cfg["guided"]["weight"] if gold is not None else 0
    return nll.sum(), smooth.sum() + weight * guided, len(y_out)


def gold_rows(src_words, tgt_words, links, shift):
    """Guided alignment's rows of one pair (docs/DESIGN.md): pairs of words
    (lists of tokens) and links (i, j) between words; target token q's row
    q + shift is uniform over the source tokens of the words linked to its
    word. [m + 1, n + 1] (</s> on both sides)."""
    src_word = [w for w, ws in enumerate(src_words) for _ in ws]
    tgt_word = [w for w, ws in enumerate(tgt_words) for _ in ws]
    g = torch.zeros(len(tgt_word) + 1, len(src_word) + 1, dtype=torch.float64)
    for q, w in enumerate(tgt_word):
        on = [j for j, v in enumerate(src_word) if (v, w) in links]
        for j in on:
            g[q + shift, j] = 1.0 / len(on)
    return g


# ---- the checks -----------------------------------------------------------------

def run(nmt, args, **kw):
    r = subprocess.run([nmt] + args, capture_output=True, text=True, **kw)
    if r.returncode:
        raise RuntimeError("nmt %s: exit %d: %s" % (" ".join(args[:2]), r.returncode, r.stderr))
    return r.stdout


def read_log(path):
    """The steps of nmt train's --batch-log (its first line names the
    weights): [(src, tgt, tgt_in)] of each step."""
    lines = open(path).read().splitlines()[1:]
    steps = []
    for line in lines:
        b = json.loads(line)
        steps.append(list(zip(b["src"], b["tgt"], b.get("tgt_in", b["tgt"]))))
    return steps


def check(nmt, tmp, name, cfg, rng):
    joint, wd = cfg.get("joint", False), cfg.get("wd", 0.0)
    d, F, Le, Ld = cfg["d"], cfg["F"], cfg["Le"], cfg["Ld"]
    Vs, Vt = (13, 13) if joint else (13, 11)
    src_vocab = SPECIALS + ["s%d" % i for i in range(4, Vs)]
    tgt_vocab = src_vocab if joint else SPECIALS + ["t%d" % i for i in range(4, Vt)]
    params = []
    for n, shape in tensor_names(d, F, Le, Ld, Vs, Vt, cfg["tied"], cfg.get("scale"), joint):
        if n.endswith(".g"):
            # ScaleNorm's scalar gains near sqrt(d), the norm of LN(u)
            g0 = math.sqrt(d) if cfg.get("scale") else 1
            a = g0 * (1 + 0.3 * rng.standard_normal(shape))
        else:
            a = 0.5 * rng.standard_normal(shape)
        params.append((n, a.astype(np.float32)))
    rng.shuffle(params)  # readers go by name, not by order
    meta = {"format": "nmt-1", "arch": "transformer", "d_model": str(d), "heads": str(cfg["h"]),
            "ff": str(F), "enc_layers": str(Le), "dec_layers": str(Ld),
            "lowercase": "false", "src_vocab": "\n".join(src_vocab),
            "tgt_vocab": "\n".join(tgt_vocab)}
    if cfg["tied"]:
        meta["tied"] = "true"
    if cfg.get("scale"):
        meta["norm"] = "scale"
    if cfg.get("fixnorm"):
        meta["fixnorm"] = "true"
    if joint:
        meta["joint_vocab"] = "true"
    model = os.path.join(tmp, name + ".safetensors")
    write_model(model, params, meta)
    # sentences of different lengths, <unk> (an unknown word) and repeats;
    # with guided alignment, words of several tokens ("s4,s5" is s4 , s5:
    # the tokenizer cuts the comma off, all three of that word), and links
    # between the words, many to many, some words without
    guided = cfg.get("guided")
    if guided:
        src_vocab = src_vocab[:-1] + [","]
        tgt_vocab = src_vocab if joint else tgt_vocab[:-1] + [","]
        meta["src_vocab"] = "\n".join(src_vocab)
        meta["tgt_vocab"] = "\n".join(tgt_vocab)
        write_model(model, params, meta)
        cs, ct = len(src_vocab) - 1, len(tgt_vocab) - 1
        # (no two names in a word without a comma between them: "s4s5" is
        # one unknown token)
        word_pairs = [([[4, cs, 5], [6], [7], [8, cs]], [[4]]),
                      ([[9]], [[5, ct], [6, ct, 7], [8]]),
                      ([[10], [cs, 11, cs, 12]], [[9], [ct, 10]]),
                      ([[1], [4, cs, 4], [5]], [[6], [1, ct, 6]]),
                      ([[11, cs, 10], [9], [8], [7, cs, 6]], [[4, ct, 5], [4], [5, ct, 4]])]
        word_links = [{(0, 0), (3, 0)}, {(0, 0), (0, 2)}, {(1, 0), (1, 1), (0, 1)},
                      {(2, 1), (0, 0), (1, 1)}, {(0, 1), (1, 0), (3, 0), (2, 2)}]
        pairs = [([i for w in sw for i in w], [i for w in tw for i in w]) for sw, tw in word_pairs]
        golds = [gold_rows(sw, tw, ln, guided["shift"])
                 for (sw, tw), ln in zip(word_pairs, word_links)]
        links = os.path.join(tmp, name + ".links")
        with open(links, "w") as f:
            f.writelines(" ".join("%d%s%d" % (i, "-?"[(i + j) % 2], j) for i, j in sorted(ln))
                         + "\n" for ln in word_links)
        lines = [(" ".join("".join("zzz" if i == 1 else src_vocab[i] for i in w) for w in sw),
                  " ".join("".join("qqq" if i == 1 else tgt_vocab[i] for i in w) for w in tw))
                 for sw, tw in word_pairs]
    else:
        pairs = [([4, 5, 6, 7, 8], [4]), ([9], [5, 6, 7, 8]), ([10, 11, 12], [9, 10]),
                 ([1, 4, 4, 5], [6, 1, 6]), ([12, 11, 10, 9, 8, 7, 6], [4, 5, 4, 5, 4])]
        golds = [None] * len(pairs)
        lines = [(" ".join("zzz" if i == 1 else src_vocab[i] for i in s),
                  " ".join("qqq" if i == 1 else tgt_vocab[i] for i in t)) for s, t in pairs]
    src, tgt = os.path.join(tmp, name + ".src"), os.path.join(tmp, name + ".tgt")
    with open(src, "w") as f:
        f.writelines(a + "\n" for a, _ in lines)
    with open(tgt, "w") as f:
        f.writelines(b + "\n" for _, b in lines)
    P0 = {n: torch.tensor(a, dtype=torch.float64) for n, a in params}
    eps = cfg["ls"]

    def gradient(steps):
        """(mean -log p, {name: gradient of the (smoothed) mean loss}) over
        (src, tgt, decoder input) triples."""
        P = {n: v.clone().requires_grad_(True) for n, v in P0.items()}
        tot_nll, tot_obj, n_tok = 0, 0, 0
        for (s, t, t_in), gold in zip(steps, golds):
            a, b, n = sentence_loss(P, cfg, list(s), list(t), eps, list(t_in), gold)
            tot_nll, tot_obj, n_tok = tot_nll + a, tot_obj + b, n_tok + n
        (tot_obj / n_tok).backward()
        return float(tot_nll) / n_tok, {n: P[n].grad.numpy() for n in P}
    loss, grads = gradient([(s, t, t) for s, t in pairs])
    errors = []
    # nmt score: the plain mean -log p
    out = run(nmt, ["score", "-m", model, "--src", src, "--tgt", tgt, "--threads", "1"])
    got = None
    for line in out.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "loss":
            got = float(words[1])
    if got is None or abs(got - loss) > LOSS_TOL * loss:
        errors.append("nmt score %s, torch %.7f" % (out.strip(), loss))
    # one SGD step of nmt train: w1 = w0 - lr * g
    lr = 1000.0
    run_dir = os.path.join(tmp, name + ".run")
    log = os.path.join(tmp, name + ".log")
    run(nmt, ["train", "--init-from", model, "--src", src, "--tgt", tgt, "--out", run_dir,
              "--optimizer", "sgd", "--lr", "%g" % lr, "--clip", "0", "--dropout", "0",
              "--label-smoothing", "%g" % eps, "--warmup", "0", "--no-shuffle",
              "--batch-size", str(len(pairs)), "--max-steps", "1", "--max-len", "100",
              "--threads", "1", "-q"] + (["--word-dropout", "%g" % wd, "--batch-log", log]
                                         if wd else []) +
        (["--guided-links", links, "--guided-weight", "%r" % guided["weight"],
          "--guided-layer", str(guided["layer"]), "--guided-head", str(guided["head"]),
          "--guided-step", "read" if guided["shift"] else "predict"] if guided else []))
    if wd:
        # the gradient of the ids the model read; the labels are the corpus's
        logged = read_log(log)
        if len(logged) != 1 or [list(t) for _, t, _ in logged[0]] != [t for _, t in pairs]:
            errors.append("the batch log's labels are not the corpus's targets")
        else:
            replaced = sum(x != y for (s, t, t_in), (s0, t0) in zip(logged[0], pairs)
                           for x, y in zip(list(s) + list(t_in), s0 + t0))
            if replaced == 0:
                errors.append("word dropout %g replaced nothing: the check proves nothing" % wd)
            grads = gradient(logged[0])[1]
            print("%-34s word dropout %g: %d of %d ids read as <unk>"
                  % (name, wd, replaced, sum(len(s) + len(t) for s, t in pairs)))
    after, ameta = read_model(os.path.join(run_dir, "checkpoint.safetensors"))
    for key in ("arch", "d_model", "heads", "ff", "enc_layers", "dec_layers", "norm", "fixnorm",
                "joint_vocab"):
        if ameta.get(key) != meta.get(key):
            errors.append("checkpoint %s = %r, model %r" % (key, ameta.get(key), meta.get(key)))
    if guided and (ameta.get("align_layer"), ameta.get("align_head"), ameta.get("align_shift")) \
            != (str(guided["layer"]), str(guided["head"]), "true" if guided["shift"] else "false"):
        errors.append("the checkpoint names another head trained to align: %r %r %r"
                      % (ameta.get("align_layer"), ameta.get("align_head"),
                         ameta.get("align_shift")))
    if joint and ("src_emb" in after or ameta.get("src_vocab") != ameta.get("tgt_vocab")):
        errors.append("a joint model's checkpoint has a src_emb or two lists")
    worst, worst_name = 0.0, ""
    overall = max(np.abs(grads[n]).max() for n, _ in params)
    for n, a in params:
        truth = grads[n]
        g = (a.astype(np.float64) - after[n].astype(np.float64)) / lr
        scale = np.abs(truth).max()
        # b_k moves every score of a query alike, which the softmax ignores:
        # its gradient is 0 but for rounding, held against the largest one
        if n.endswith(".b_k"):
            scale = overall
        err = np.abs(g - truth).max() / scale if scale > 0 else np.abs(g).max()
        if err > worst:
            worst, worst_name = err, n
        if err > GRAD_TOL:
            errors.append("%s: relative error %.2e" % (n, err))
    print("%-34s loss %.7f (nmt %s)  worst gradient error %.2e (%s)"
          % (name, loss, got, worst, worst_name))
    if cfg.get("scale"):
        errors += check_refusals(nmt, tmp, name, params, meta, src, tgt, d)
    return errors


def check_refusals(nmt, tmp, name, params, meta, src, tgt, d):
    """A file that says norm = scale but holds a layer norm's [d] gain, or
    a norm's bias, is refused with that tensor's name."""
    errors = []
    wide = [(n, np.ones(d, np.float32) if n == "dec.ln.g" else a) for n, a in params]
    bias = params + [("enc.0.ln2.b", np.zeros(d, np.float32))]
    for what, tensors, tensor in (("a [d] gain", wide, "dec.ln.g"), ("a bias", bias, "enc.0.ln2.b")):
        bad = os.path.join(tmp, name + ".bad.safetensors")
        write_model(bad, tensors, meta)
        r = subprocess.run([nmt, "score", "-m", bad, "--src", src, "--tgt", tgt],
                           capture_output=True, text=True)
        if r.returncode == 0 or "'%s'" % tensor not in r.stderr:
            errors.append("a scale-norm file with %s: exit %d, %s"
                          % (what, r.returncode, r.stderr.strip()))
    return errors


CONFIGS = {
    "h2-1+1": dict(d=8, h=2, F=12, Le=1, Ld=1, tied=False, ls=0.0),
    "h4-2+2-tied": dict(d=8, h=4, F=6, Le=2, Ld=2, tied=True, ls=0.0),
    "h1-1+2-ls": dict(d=6, h=1, F=10, Le=1, Ld=2, tied=False, ls=0.1),
    "h3-2+1-tied-ls": dict(d=12, h=3, F=8, Le=2, Ld=1, tied=True, ls=0.2),
    # the variants (docs/DESIGN.md, "The Transformer")
    "scale-h2-2+1": dict(d=8, h=2, F=12, Le=2, Ld=1, tied=False, ls=0.0, scale=True),
    "fixnorm-h2-1+2-tied": dict(d=8, h=2, F=6, Le=1, Ld=2, tied=True, ls=0.1, fixnorm=True),
    "fixnorm-h1-1+1-untied": dict(d=6, h=1, F=10, Le=1, Ld=1, tied=False, ls=0.0, fixnorm=True),
    "scale-fixnorm-h4-2+2-tied-ls": dict(d=8, h=4, F=6, Le=2, Ld=2, tied=True, ls=0.2,
                                         scale=True, fixnorm=True),
    "scale-fixnorm-h3-1+1-untied": dict(d=12, h=3, F=8, Le=1, Ld=1, tied=False, ls=0.0,
                                        scale=True, fixnorm=True),
    "h2-1+2-joint": dict(d=8, h=2, F=12, Le=1, Ld=2, tied=False, ls=0.0, joint=True),
    "h4-2+1-joint-tied-ls": dict(d=8, h=4, F=6, Le=2, Ld=1, tied=True, ls=0.1, joint=True),
    "h2-1+1-wd": dict(d=8, h=2, F=12, Le=1, Ld=1, tied=False, ls=0.0, wd=0.3),
    "h2-2+2-joint-tied-ls-wd": dict(d=8, h=2, F=10, Le=2, Ld=2, tied=True, ls=0.1, joint=True,
                                    wd=0.3),
    "scale-fixnorm-h2-1+2-joint-tied-wd": dict(d=8, h=2, F=6, Le=1, Ld=2, tied=True, ls=0.1,
                                               scale=True, fixnorm=True, joint=True, wd=0.2),
    # guided alignment (docs/DESIGN.md, "Guided alignment"): a head of a
    # layer's cross-attention trained toward word links, the step that
    # predicts each word or the one that reads it
    "guided-h2-1+2-layer1-head1-read": dict(d=8, h=2, F=12, Le=1, Ld=2, tied=False, ls=0.0,
                                            guided=dict(layer=1, head=1, shift=1, weight=0.5)),
    "guided-h4-2+2-layer0-head2-predict-ls": dict(d=8, h=4, F=6, Le=2, Ld=2, tied=True, ls=0.1,
                                                  guided=dict(layer=0, head=2, shift=0,
                                                              weight=2.0)),
    "guided-scale-fixnorm-joint-h2-1+1-read": dict(d=8, h=2, F=6, Le=1, Ld=1, tied=True, ls=0.1,
                                                   scale=True, fixnorm=True, joint=True,
                                                   guided=dict(layer=0, head=0, shift=1,
                                                               weight=0.05)),
}


def main(names):
    nmt = os.environ.get("NMT_BIN")
    if not nmt:
        print("FAIL: NMT_BIN is not set", file=sys.stderr)
        return 1
    rng = np.random.default_rng(2026)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or CONFIGS:
            try:
                errors = check(nmt, tmp, name, CONFIGS[name], rng)
            except RuntimeError as e:
                errors = [str(e)]
            for e in errors:
                print("FAIL: %s: %s" % (name, e), file=sys.stderr)
            failed += bool(errors)
    total = len(names or CONFIGS)
    print("%d passed, %d failed" % (total - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
