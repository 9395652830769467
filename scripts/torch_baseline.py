#!/usr/bin/env python3
"""PyTorch baseline of nmt's model, written from docs/DESIGN.md's equations alone.

It serves two purposes:
  * the truth for the `parity` test suite: `grad` computes the loss and
    autograd gradients of a model file on a batch, in float32 and float64
    (with label smoothing, and with the dropout masks nmt drew);
  * the speed peer of `scripts/bench`: `train` and `translate` run the same
    model with the same batching and optimizer settings in PyTorch.

Subcommands:
  init      write a random model file in nmt's safetensors layout
  grad      loss and gradients of a model on a batch (JSON), as safetensors
  selftest  check this model on its own (gradcheck, padding invariance, a
            plain per-sentence numpy implementation)
  train     train on a corpus, report steps/s and target tokens/s
  translate greedy or beam translation with a model file

Run it with a python3 that has torch (Debian's python3-torch).
"""

import argparse
import gzip
import json
import math
import os
import re
import struct
import sys
import time
import unicodedata
import zlib

import numpy as np
import torch

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
GATES = {"rnn": 1, "gru": 3, "lstm": 4}
# docs/DESIGN.md's attention family: how a_ij is made from s_{i-1} and h_j
ATTENTIONS = ["bahdanau", "dot", "general", "scaled-dot", "none"]


# ---- configuration and the table of tensors --------------------------------

class Config:
    """The settings a model file's metadata holds."""

    def __init__(self, cell="lstm", attention="bahdanau", bidirectional=True,
                 emb=8, hidden=7, att_dim=6, out_dim=5, lowercase=False,
                 src_vocab=None, tgt_vocab=None, tied=False):
        if cell not in GATES:
            raise ValueError("cell must be rnn, gru or lstm, not %r" % cell)
        if attention not in ATTENTIONS:
            raise ValueError("attention must be one of %s, not %r" % (", ".join(ATTENTIONS),
                                                                       attention))
        if attention == "dot" and bidirectional:
            raise ValueError("attention dot scores s . h_j, which needs h_j of the decoder "
                             "state's size: not with a bidirectional encoder")
        self.cell = cell
        self.attention = attention
        self.bidirectional = bool(bidirectional)
        self.emb, self.hidden, self.att_dim, self.out_dim = emb, hidden, att_dim, out_dim
        self.tied = bool(tied)
        if self.tied and out_dim != emb:
            raise ValueError("tied embeddings need out_dim (%d) equal to emb (%d)" % (out_dim, emb))
        self.lowercase = bool(lowercase)
        self.src_vocab = list(src_vocab or SPECIALS)
        self.tgt_vocab = list(tgt_vocab or SPECIALS)
        for v in (self.src_vocab, self.tgt_vocab):
            if v[:4] != SPECIALS:
                raise ValueError("a vocabulary must start with " + " ".join(SPECIALS))

    @property
    def D(self):
        return 2 if self.bidirectional else 1

    def metadata(self):
        b = lambda x: "true" if x else "false"
        md = {
            "format": "nmt-1", "cell": self.cell, "attention": self.attention,
            "bidirectional": b(self.bidirectional), "emb": str(self.emb),
            "hidden": str(self.hidden), "att_dim": str(self.att_dim),
            "out_dim": str(self.out_dim), "lowercase": b(self.lowercase),
            "src_vocab": "\n".join(self.src_vocab), "tgt_vocab": "\n".join(self.tgt_vocab),
        }
        if self.tied:  # absent means false, as nmt writes it
            md["tied"] = "true"
        return md

    @staticmethod
    def from_metadata(md):
        if md.get("format") != "nmt-1":
            raise ValueError("not an nmt-1 model file (format=%r)" % md.get("format"))
        flag = {"true": True, "false": False}
        return Config(cell=md["cell"], attention=md["attention"],
                      bidirectional=flag[md["bidirectional"]], emb=int(md["emb"]),
                      hidden=int(md["hidden"]), att_dim=int(md["att_dim"]),
                      out_dim=int(md["out_dim"]), lowercase=flag[md["lowercase"]],
                      src_vocab=md["src_vocab"].split("\n"),
                      tgt_vocab=md["tgt_vocab"].split("\n"),
                      tied=flag[md.get("tied", "false")])


def tensor_table(cfg):
    """docs/DESIGN.md's tensors, in file order: [(name, shape)]."""
    E, H, A, O = cfg.emb, cfg.hidden, cfg.att_dim, cfg.out_dim
    G, D = GATES[cfg.cell], cfg.D
    Vs, Vt = len(cfg.src_vocab), len(cfg.tgt_vocab)
    t = [("src_emb", (Vs, E)), ("tgt_emb", (Vt, E))]
    for d in ["fwd", "bwd"][:D]:
        t += [("enc.%s.W_ih" % d, (G * H, E)), ("enc.%s.W_hh" % d, (G * H, H)),
              ("enc.%s.b" % d, (G * H,))]
    t += [("dec.init.W", (H, D * H)), ("dec.init.b", (H,))]
    if cfg.attention == "bahdanau":
        t += [("att.W", (A, H)), ("att.U", (A, D * H)), ("att.b", (A,)), ("att.v", (A,))]
    elif cfg.attention == "general":  # keys U h_j of the decoder state's size
        t += [("att.U", (H, D * H))]
    elif cfg.attention == "scaled-dot":
        t += [("att.W", (A, H)), ("att.U", (A, D * H))]
    t += [("dec.W_ih", (G * H, E + D * H)), ("dec.W_hh", (G * H, H)), ("dec.b", (G * H,)),
          ("out.W_t", (O, H + D * H + E)), ("out.b_t", (O,))]
    if not cfg.tied:  # tied: the output matrix is tgt_emb
        t += [("out.W", (Vt, O))]
    return t + [("out.b", (Vt,))]


def out_matrix(cfg, P):
    """W_out of p = softmax(W_out t + b_out): tgt_emb itself when tied."""
    return P["tgt_emb"] if cfg.tied else P["out.W"]


# ---- safetensors, read and written with numpy ------------------------------

# U8: nmt keeps a subword model's SentencePiece model in the tensor "subwords"
_DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64, "U8": np.uint8}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def read_safetensors(path):
    """Returns ({name: array}, metadata, crc32 of the data section)."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError("%s: too short for a safetensors file" % path)
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise ValueError("%s: header length %d past the end of the file" % (path, n))
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, info in header.items():
        dt = np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<")
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=dt).reshape(info["shape"])
        tensors[name] = arr.astype(dt.newbyteorder("="))
    return tensors, meta, zlib.crc32(data) & 0xFFFFFFFF


def write_safetensors(path, tensors, meta):
    """tensors: list of (name, array) in the order to write. Adds the crc32 of
    the data section to the metadata, as nmt files carry it."""
    header, chunks, off = {}, [], 0
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr)
        blob = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _NAMES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [off, off + len(blob)]}
        chunks.append(blob)
        off += len(blob)
    data = b"".join(chunks)
    meta = dict(meta)
    meta["crc32"] = "%08x" % (zlib.crc32(data) & 0xFFFFFFFF)
    header = {"__metadata__": meta, **header}
    hj = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hj += b" " * (-len(hj) % 8)  # the data section starts 8-aligned
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + data)
    os.replace(tmp, path)


def load_model(path, dtype=torch.float32):
    """Returns (cfg, {name: tensor}) after checking names, shapes and crc."""
    arrays, meta, crc = read_safetensors(path)
    cfg = Config.from_metadata(meta)
    if "crc32" in meta and meta["crc32"] != "%08x" % crc:
        raise ValueError("%s: crc32 %s does not match the data (%08x)" % (path, meta["crc32"], crc))
    params = {}
    for name, shape in tensor_table(cfg):
        if name not in arrays:
            raise ValueError("%s: tensor %s is missing" % (path, name))
        if tuple(arrays[name].shape) != shape:
            raise ValueError("%s: %s has shape %s, expected %s"
                             % (path, name, arrays[name].shape, shape))
        params[name] = torch.tensor(arrays[name], dtype=dtype)
    return cfg, params


def save_model(path, cfg, params, extra_meta=None):
    meta = cfg.metadata()
    meta.update(extra_meta or {})
    out = [(n, params[n].detach().to(torch.float32).numpy()) for n, _ in tensor_table(cfg)]
    write_safetensors(path, out, meta)


# ---- initialisation --------------------------------------------------------

def init_params(cfg, seed=1, scheme="bahdanau", scale=0.5):
    """`bahdanau`: the paper's appendix (orthogonal recurrent blocks, attention
    N(0, 0.001^2), v and biases 0, the rest N(0, 0.01^2), LSTM forget bias 1).
    `uniform`: every entry U(-scale, scale), so that every gradient is nonzero
    and every nonlinearity is off its linear part (what parity tests want)."""
    g = torch.Generator().manual_seed(seed)
    H = cfg.hidden
    p = {}
    for name, shape in tensor_table(cfg):
        if scheme == "uniform":
            p[name] = (torch.rand(shape, generator=g) * 2 - 1) * scale
            continue
        if name.endswith(".b") or name in ("att.v", "out.b_t", "dec.init.b"):
            t = torch.zeros(shape)
            if cfg.cell == "lstm" and name in ("enc.fwd.b", "enc.bwd.b", "dec.b"):
                t[H:2 * H] = 1.0  # forget gate
        elif name.endswith("W_hh"):
            blocks = []
            for _ in range(shape[0] // H):
                q, r = torch.linalg.qr(torch.randn(H, H, generator=g))
                blocks.append(q * torch.sign(torch.diagonal(r)))
            t = torch.cat(blocks, 0)
        elif name in ("att.W", "att.U"):
            t = torch.randn(shape, generator=g) * 0.001
        else:
            t = torch.randn(shape, generator=g) * 0.01
        p[name] = t
    return p


# ---- the model ---------------------------------------------------------------

def cell_step(cell, gx, h, c, W_hh_t):
    """One step of a cell for a batch. gx = W_ih x + b, precomputed for all
    steps at once; [B, G*H]. W_hh_t is W_hh transposed, [H, G*H], taken once
    per pass (not per step: autograd would then add a full-size gradient
    for each step's slice). Returns (h', c') (c' is None but for lstm)."""
    gh = h @ W_hh_t
    H = h.shape[1]
    if cell == "rnn":
        return torch.tanh(gx + gh), None
    if cell == "lstm":
        a = gx + gh
        i, f = torch.sigmoid(a[:, :H]), torch.sigmoid(a[:, H:2 * H])
        gg, o = torch.tanh(a[:, 2 * H:3 * H]), torch.sigmoid(a[:, 3 * H:])
        c2 = f * c + i * gg
        return o * torch.tanh(c2), c2
    # gru: the reset gate multiplies U_n h, after the product (docs/DESIGN.md)
    r = torch.sigmoid(gx[:, :H] + gh[:, :H])
    z = torch.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
    n = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h, None


def run_direction(cfg, P, prefix, emb, mask, reverse):
    """One encoder direction over time-major emb [T, B, E] with mask [T, B]
    (True on real positions). A masked step keeps the state, so the forward
    direction carries ->h_n past the end and the backward one stays at 0
    until each sentence's own last token. Returns (states [T, B, H], final)."""
    T, B, _ = emb.shape
    H = cfg.hidden
    # all steps' input products in one matrix product; unbind (not gx[t] per
    # step) so that backward stacks the pieces once instead of adding T
    # full-size gradients
    gx_all = (emb @ P[prefix + ".W_ih"].t() + P[prefix + ".b"]).unbind(0)
    h = emb.new_zeros(B, H)
    c = emb.new_zeros(B, H) if cfg.cell == "lstm" else None
    out = [None] * T
    W_hh_t = P[prefix + ".W_hh"].t()
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        h2, c2 = cell_step(cfg.cell, gx_all[t], h, c, W_hh_t)
        m = mask[t].unsqueeze(1)
        h = torch.where(m, h2, h)
        if c is not None:
            c = torch.where(m, c2, c)
        out[t] = h
    return torch.stack(out, 0), h


class Noise:
    """What training adds to the plain pass, as nmt does it: inverted dropout
    at three sites (`emb`: the source and target embeddings; `enc`: the
    annotations h_j, as attention, context and z read them; `out`: the deep
    output t) and label smoothing of the training loss. `masks` (from
    `parity_grad`) replaces a site's random draw by nmt's mask: {site:
    factors}, time-major rows of 0 or 1 / (1 - rate); sites "src_emb",
    "tgt_emb", "enc", "out"."""

    def __init__(self, emb=0.0, enc=0.0, out=0.0, label_smoothing=0.0, masks=None):
        self.rate = {"src_emb": emb, "tgt_emb": emb, "enc": enc, "out": out}
        # nmt holds the rate in a float
        self.label_smoothing = float(np.float32(label_smoothing))
        self.masks = masks or {}

    def __call__(self, site, x):
        if site in self.masks:
            return x * self.masks[site].to(x.dtype).view(x.shape)
        p = self.rate[site]
        return torch.nn.functional.dropout(x, p, True) if p > 0 else x


PLAIN = Noise()


def encode(cfg, P, src, src_mask, noise=PLAIN):
    """src [T, B] ids. Returns (annotations h [T, B, D*H] as the decoder reads
    them, dropped out with training's noise, and the summary z [B, D*H] of
    those: the fwd annotation of each sentence's last token and the bwd one
    of its first; padding keeps the state, so without dropout z is the fwd
    direction's final state and the bwd's state at the first token)."""
    e = noise("src_emb", P["src_emb"][src])
    hf, _ = run_direction(cfg, P, "enc.fwd", e, src_mask, False)
    ann = hf
    if cfg.bidirectional:
        hb, _ = run_direction(cfg, P, "enc.bwd", e, src_mask, True)
        ann = torch.cat([hf, hb], 2)
    ann = noise("enc", ann)
    H, B = cfg.hidden, src.shape[1]
    last = src_mask.sum(0) - 1
    z = ann[last, torch.arange(B, device=src.device), :H]
    if cfg.bidirectional:
        z = torch.cat([z, ann[0, :, H:]], 1)
    return ann, z


def decoder_init(cfg, P, z):
    s = torch.tanh(z @ P["dec.init.W"].t() + P["dec.init.b"])
    c = torch.zeros_like(s) if cfg.cell == "lstm" else None
    return s, c


def decoder_weights(cfg, P):
    """The decoder's per-step matrices, sliced and transposed once per pass:
    W_ih splits into its embedding and context columns."""
    E = cfg.emb
    Q = {"W_emb_t": P["dec.W_ih"][:, :E].t(), "W_ctx_t": P["dec.W_ih"][:, E:].t(),
         "W_hh_t": P["dec.W_hh"].t(), "attention": cfg.attention}
    if cfg.attention in ("bahdanau", "scaled-dot"):
        Q["att.W_t"] = P["att.W"].t()
    if cfg.attention == "bahdanau":
        Q["att.v"] = P["att.v"]
    if cfg.attention == "scaled-dot":
        Q["scale"] = 1.0 / math.sqrt(cfg.att_dim)
    return Q


def attention_keys(cfg, P, ann):
    """The keys k_j the scores read, once per batch: U_a h_j + b_a
    (bahdanau), U_a h_j (general, scaled-dot), h_j itself (dot); None
    without attention. ann [T, B, DH] -> [T, B, K]."""
    if cfg.attention == "bahdanau":
        return ann @ P["att.U"].t() + P["att.b"]
    if cfg.attention in ("general", "scaled-dot"):
        return ann @ P["att.U"].t()
    return ann if cfg.attention == "dot" else None


def attend(Q, s, ann, keys, src_mask):
    """One step of attention: s [B, H], ann [T, B, DH], keys [T, B, K]
    (attention_keys). The score of position j, by kind (docs/DESIGN.md):
    bahdanau v . tanh(W_a s + k_j); dot and general s . k_j; scaled-dot
    (W_a s) . k_j / sqrt(A). Returns (context [B, DH], weights [T, B])."""
    kind = Q["attention"]
    if kind == "bahdanau":
        scores = torch.tanh(keys + (s @ Q["att.W_t"]).unsqueeze(0)) @ Q["att.v"]
    elif kind == "scaled-dot":
        scores = (keys * (s @ Q["att.W_t"]).unsqueeze(0)).sum(2) * Q["scale"]
    else:  # dot, general: the state itself asks
        scores = (keys * s.unsqueeze(0)).sum(2)
    scores = scores.masked_fill(~src_mask, float("-inf"))
    alpha = torch.softmax(scores, 0)
    return (alpha.unsqueeze(2) * ann).sum(0), alpha


def decoder_step(cfg, Q, gx_emb, s, c, ctx):
    """s_i = dec([emb ; c_i], s_{i-1}); the embedding's share of W_ih x + b is
    gx_emb, precomputed for all steps."""
    gx = gx_emb + ctx @ Q["W_ctx_t"]
    return cell_step(cfg.cell, gx, s, c, Q["W_hh_t"])


def forward_nll(cfg, P, src, src_len, tgt_in, tgt_out, tgt_len, noise=PLAIN):
    """(per-token -log p(y), per-token training loss), each [Tt, B] and 0 at
    padding, of a time-major batch. The training loss is -log p(y), or with
    label smoothing e PyTorch's cross_entropy(label_smoothing=e):
    (1 - e)(-log p(y)) + e mean_k(-log p(k)); noise's dropout applies to both."""
    Ts, B = src.shape
    Tt = tgt_in.shape[0]
    dev = src.device
    src_mask = torch.arange(Ts, device=dev).unsqueeze(1) < src_len.unsqueeze(0)
    tgt_mask = torch.arange(Tt, device=dev).unsqueeze(1) < tgt_len.unsqueeze(0)
    ann, z = encode(cfg, P, src, src_mask, noise)
    s, c = decoder_init(cfg, P, z)
    y_emb = noise("tgt_emb", P["tgt_emb"][tgt_in])                    # [Tt, B, E]
    Q = decoder_weights(cfg, P)
    gx_emb = (y_emb @ Q["W_emb_t"] + P["dec.b"]).unbind(0)
    Uh = attention_keys(cfg, P, ann)
    states, ctxs = [], []
    for i in range(Tt):
        ctx = attend(Q, s, ann, Uh, src_mask)[0] if Uh is not None else z
        s, c = decoder_step(cfg, Q, gx_emb[i], s, c, ctx)
        states.append(s)
        ctxs.append(ctx)
    S, C = torch.stack(states, 0), torch.stack(ctxs, 0)
    # deep output and softmax for all steps at once
    t = noise("out", torch.tanh(torch.cat([S, C, y_emb], 2) @ P["out.W_t"].t() + P["out.b_t"]))
    logits = t @ out_matrix(cfg, P).t() + P["out.b"]
    logp = torch.log_softmax(logits, 2)
    nll = -logp.gather(2, tgt_out.unsqueeze(2)).squeeze(2)
    m = tgt_mask.to(nll.dtype)
    if not noise.label_smoothing:
        return nll * m, nll * m
    V = logits.shape[2]
    smoothed = torch.nn.functional.cross_entropy(
        logits.reshape(-1, V), tgt_out.reshape(-1), reduction="none",
        label_smoothing=noise.label_smoothing).view(Tt, B)
    return nll * m, smoothed * m


def make_batch(pairs, device="cpu"):
    """pairs: [(src ids, tgt ids)] without specials. Returns time-major
    (src, src_len, tgt_in, tgt_out, tgt_len) as docs/DESIGN.md lays them out:
    src = x + </s>, tgt_in = <s> y, tgt_out = y </s>, padding 0."""
    B = len(pairs)
    sl = [len(s) + 1 for s, _ in pairs]
    tl = [len(t) + 1 for _, t in pairs]
    src = torch.zeros(max(sl), B, dtype=torch.long)
    tin = torch.zeros(max(tl), B, dtype=torch.long)
    tout = torch.zeros(max(tl), B, dtype=torch.long)
    for b, (s, t) in enumerate(pairs):
        src[:len(s), b] = torch.tensor(s, dtype=torch.long)
        src[len(s), b] = EOS
        tin[0, b] = BOS
        tin[1:len(t) + 1, b] = torch.tensor(t, dtype=torch.long)
        tout[:len(t), b] = torch.tensor(t, dtype=torch.long)
        tout[len(t), b] = EOS
    to = lambda x: x.to(device)
    return (to(src), to(torch.tensor(sl)), to(tin), to(tout), to(torch.tensor(tl)))


def batch_loss(cfg, P, pairs, noise=PLAIN):
    """(mean training loss over real target tokens, the one to take the
    gradient of; per-sentence nll sums [B]; mean -log p(y), the loss nmt
    reports)."""
    src, sl, tin, tout, tl = make_batch(pairs)
    nll, train = forward_nll(cfg, P, src, sl, tin, tout, tl, noise)
    n = tl.sum()
    return train.sum() / n, nll.sum(0), nll.sum() / n


def check_ids(cfg, pairs):
    Vs, Vt = len(cfg.src_vocab), len(cfg.tgt_vocab)
    for k, (s, t) in enumerate(pairs):
        for x in s:
            if not 0 < x < Vs or x in (BOS, EOS):
                raise ValueError("pair %d: source id %d is not a token id (Vs=%d)" % (k, x, Vs))
        for y in t:
            if not 0 < y < Vt or y in (BOS, EOS):
                raise ValueError("pair %d: target id %d is not a token id (Vt=%d)" % (k, y, Vt))


def read_batch_json(path):
    with open(path) as f:
        j = json.load(f)
    if len(j["src"]) != len(j["tgt"]) or not j["src"]:
        raise ValueError("%s: src and tgt must be equally long, non-empty lists" % path)
    return [(list(map(int, s)), list(map(int, t))) for s, t in zip(j["src"], j["tgt"])]


# ---- a plain per-sentence implementation, for selftest --------------------

def plain_nll(cfg, P, src, tgt, label_smoothing=0.0):
    """(-log p(tgt | src) summed, the label-smoothed loss summed), one
    sentence, numpy float64, every equation written out as in docs/DESIGN.md: no
    batching, masks or precomputation."""
    W = {k: v.detach().to(torch.float64).numpy() for k, v in P.items()}
    H, E = cfg.hidden, cfg.emb
    sig = lambda a: 1 / (1 + np.exp(-a))

    def step(pre, x, h, c):
        a = W[pre + "W_ih"] @ x + W[pre + "W_hh"] @ h + W[pre + "b"]
        if cfg.cell == "rnn":
            return np.tanh(a), c
        if cfg.cell == "lstm":
            i, f, g, o = a[:H], a[H:2 * H], a[2 * H:3 * H], a[3 * H:]
            c = sig(f) * c + sig(i) * np.tanh(g)
            return sig(o) * np.tanh(c), c
        Wx = W[pre + "W_ih"] @ x + W[pre + "b"]
        Uh = W[pre + "W_hh"] @ h
        r = sig(Wx[:H] + Uh[:H])
        zg = sig(Wx[H:2 * H] + Uh[H:2 * H])
        n = np.tanh(Wx[2 * H:] + r * Uh[2 * H:])
        return (1 - zg) * n + zg * h, c

    xs = list(src) + [EOS]
    n = len(xs)
    fw, h, c = [], np.zeros(H), np.zeros(H)
    for x in xs:
        h, c = step("enc.fwd.", W["src_emb"][x], h, c)
        fw.append(h)
    ann = fw
    z = fw[-1]
    if cfg.bidirectional:
        bw, h, c = [None] * n, np.zeros(H), np.zeros(H)
        for j in range(n - 1, -1, -1):
            h, c = step("enc.bwd.", W["src_emb"][xs[j]], h, c)
            bw[j] = h
        ann = [np.concatenate([fw[j], bw[j]]) for j in range(n)]
        z = np.concatenate([fw[-1], bw[0]])
    s = np.tanh(W["dec.init.W"] @ z + W["dec.init.b"])
    c = np.zeros(H)
    ins, outs = [BOS] + list(tgt), list(tgt) + [EOS]
    W_out = W["tgt_emb"] if cfg.tied else W["out.W"]
    total, smoothed, e_ls = 0.0, 0.0, label_smoothing
    for yp, y in zip(ins, outs):
        if cfg.attention != "none":
            if cfg.attention == "bahdanau":
                a = [W["att.v"] @ np.tanh(W["att.W"] @ s + W["att.U"] @ hj + W["att.b"])
                     for hj in ann]
            elif cfg.attention == "dot":
                a = [s @ hj for hj in ann]
            elif cfg.attention == "general":
                a = [s @ (W["att.U"] @ hj) for hj in ann]
            else:  # scaled-dot
                a = [(W["att.W"] @ s) @ (W["att.U"] @ hj) / math.sqrt(cfg.att_dim)
                     for hj in ann]
            a = np.array(a)
            al = np.exp(a - a.max())
            al /= al.sum()
            ctx = sum(al[j] * ann[j] for j in range(n))
        else:
            ctx = z
        e = W["tgt_emb"][yp]
        s, c = step("dec.", np.concatenate([e, ctx]), s, c)
        t = np.tanh(W["out.W_t"] @ np.concatenate([s, ctx, e]) + W["out.b_t"])
        logits = W_out @ t + W["out.b"]
        m = logits.max()
        lse = m + math.log(np.exp(logits - m).sum())
        total += lse - logits[y]
        smoothed += (1 - e_ls) * (lse - logits[y]) + e_ls * np.mean(lse - logits)
    assert E == W["src_emb"].shape[1]
    return total, smoothed


# ---- subcommands -------------------------------------------------------------

def synthetic_vocab(prefix, n):
    if n < 5:
        raise ValueError("a vocabulary needs at least 5 entries (4 specials + 1)")
    return SPECIALS + ["%s%d" % (prefix, i) for i in range(4, n)]


def config_from_args(a):
    conf = {}
    if a.config:
        text = open(a.config).read() if os.path.exists(a.config) else a.config
        conf = json.loads(text)
    for k in ("cell", "attention", "emb", "hidden", "att_dim", "out_dim"):
        v = getattr(a, k)
        if v is not None:
            conf[k] = v
    if a.tied_embeddings:
        conf["tied"] = True
    if a.bidirectional is not None:
        conf["bidirectional"] = a.bidirectional
    if a.lowercase:
        conf["lowercase"] = True
    for side in ("src", "tgt"):
        v = conf.pop(side + "_vocab", None)
        n = getattr(a, side + "_vocab")
        if n is not None:
            v = n
        if v is None:
            v = 13 if side == "src" else 11
        conf[side + "_vocab"] = v if isinstance(v, list) else synthetic_vocab(side[0], int(v))
    return Config(**conf)


def cmd_init(a):
    cfg = config_from_args(a)
    P = init_params(cfg, seed=a.seed, scheme=a.init, scale=a.scale)
    save_model(a.out, cfg, P)
    n = sum(p.numel() for p in P.values())
    print("wrote %s: %s %s %s%s, %d parameters" % (a.out, cfg.cell, cfg.attention,
          "bi" if cfg.bidirectional else "uni", ", tied" if cfg.tied else "", n))


def gradients(cfg, P32, pairs, dtype, noise=PLAIN):
    """(objective, per-sentence nll, mean nll, {name: gradient of the objective})."""
    P = {k: v.to(dtype).clone().requires_grad_(True) for k, v in P32.items()}
    objective, sent, nll = batch_loss(cfg, P, pairs, noise)
    objective.backward()
    return (objective.item(), sent.detach().tolist(), nll.item(),
            {k: v.grad for k, v in P.items()})


def read_masks(path):
    """The dropout masks `parity_grad` drew: {site: factors}."""
    arrays, _, _ = read_safetensors(path)
    return {k[len("dropout."):]: torch.tensor(v, dtype=torch.float64)
            for k, v in arrays.items() if k.startswith("dropout.")}


def cmd_grad(a):
    cfg, P = load_model(a.model)
    pairs = read_batch_json(a.batch)
    check_ids(cfg, pairs)
    torch.set_num_threads(1)
    noise = Noise(label_smoothing=a.label_smoothing,
                  masks=read_masks(a.masks) if a.masks else None)
    o64, s64, l64, g64 = gradients(cfg, P, pairs, torch.float64, noise)
    o32, _, l32, g32 = gradients(cfg, P, pairs, torch.float32, noise)
    out = []
    for name, _ in tensor_table(cfg):
        out.append((name, g64[name].numpy()))  # float64, the truth
    for name, _ in tensor_table(cfg):
        out.append(("float32." + name, g32[name].numpy()))
    meta = {"loss": repr(l64), "loss_float32": repr(l32), "objective": repr(o64),
            "objective_float32": repr(o32), "sentence_nll": ",".join(repr(x) for x in s64),
            "n_tokens": str(sum(len(t) + 1 for _, t in pairs))}
    write_safetensors(a.out, out, meta)
    print("loss float64 %.10g float32 %.10g; objective float64 %.10g" % (l64, l32, o64))


def selftest_configs():
    for tied in (False, True):
        for cell in ("rnn", "gru", "lstm"):
            for att in ATTENTIONS:
                for bi in (True, False):
                    if att == "dot" and bi:
                        continue  # refused: s . h_j needs D*H = H
                    yield Config(cell=cell, attention=att, bidirectional=bi, emb=4, hidden=3,
                                 att_dim=3, out_dim=4 if tied else 3, tied=tied,
                                 src_vocab=synthetic_vocab("s", 9),
                                 tgt_vocab=synthetic_vocab("t", 8))


def cmd_selftest(a):
    """Checks the batched model against itself and against plain_nll."""
    torch.set_num_threads(1)
    pairs = [([4, 5, 6, 1], [4, 5]), ([7], [6, 6, 7]), ([8, 8, 4], []), ([], [5])]
    worst = {"plain": 0.0, "padding": 0.0, "smoothed": 0.0}
    failures = 0
    smooth = Noise(label_smoothing=0.25)
    n_tokens = sum(len(t) + 1 for _, t in pairs)
    for k, cfg in enumerate(selftest_configs()):
        P = {n: v.to(torch.float64) for n, v in
             init_params(cfg, seed=k + 1, scheme="uniform", scale=0.8).items()}
        tag = "%s/%s/%s%s" % (cfg.cell, cfg.attention, "bi" if cfg.bidirectional else "uni",
                              "/tied" if cfg.tied else "")
        _, sent, _ = batch_loss(cfg, P, pairs)
        smoothed = batch_loss(cfg, P, pairs, smooth)[0].item()
        ref_smoothed = sum(plain_nll(cfg, P, s, t, 0.25)[1] for s, t in pairs) / n_tokens
        e3 = abs(smoothed - ref_smoothed) / abs(ref_smoothed)
        worst["smoothed"] = max(worst["smoothed"], e3)
        if e3 > 1e-12:
            print("FAIL %s: label-smoothed loss batched %.15g plain %.15g"
                  % (tag, smoothed, ref_smoothed))
            failures += 1
        for b, (s, t) in enumerate(pairs):
            ref = plain_nll(cfg, P, s, t)[0]
            alone = batch_loss(cfg, P, [(s, t)])[1][0].item()
            e1 = abs(sent[b].item() - ref) / abs(ref)
            e2 = abs(sent[b].item() - alone) / abs(alone)
            worst["plain"] = max(worst["plain"], e1)
            worst["padding"] = max(worst["padding"], e2)
            if e1 > 1e-12 or e2 > 1e-12:
                print("FAIL %s pair %d: batched %.15g plain %.15g alone %.15g"
                      % (tag, b, sent[b].item(), ref, alone))
                failures += 1
        names = [n for n, _ in tensor_table(cfg)]
        leaves = [P[n].clone().requires_grad_(True) for n in names]

        def f(*xs):  # tied models with label smoothing
            return batch_loss(cfg, dict(zip(names, xs)), pairs, smooth if cfg.tied else PLAIN)[0]
        if not torch.autograd.gradcheck(f, leaves, eps=1e-6, atol=1e-7, rtol=1e-5,
                                        raise_exception=False, fast_mode=True):
            print("FAIL %s: gradcheck" % tag)
            failures += 1
    print("selftest: %d configurations (%d untied, as many tied); worst relative difference of a "
          "sentence's nll: batched vs plain numpy %.2e, batched vs alone %.2e; of the "
          "label-smoothed loss (0.25) batched vs plain numpy %.2e; gradcheck %s"
          % (k + 1, (k + 1) // 2, worst["plain"], worst["padding"], worst["smoothed"],
             "ok" if not failures else "see above"))
    return 1 if failures else 0


# ---- the speed peer: data, training, translation ---------------------------

_TOKEN = re.compile(r"\w+(?:[-'’.]\w+)*|[^\w\s]", re.UNICODE)


def tokenize(line, lowercase):
    """Whitespace split with punctuation split off words, close to nmt's."""
    line = unicodedata.normalize("NFC", line.strip())
    if lowercase:
        line = line.lower()
    return _TOKEN.findall(line)


def read_lines(path):
    """Lines of a plain or gzip file (told apart by the magic bytes); read in
    one go so that a pipe works too."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8").splitlines()


def build_vocab(sents, min_count, max_vocab=0):
    """Ids by falling count, ties by the token's UTF-8 bytes."""
    counts = {}
    for s in sents:
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    words = sorted((w for w, n in counts.items() if n >= min_count and w not in SPECIALS),
                   key=lambda w: (-counts[w], w.encode("utf-8")))
    if max_vocab:
        words = words[:max(0, max_vocab - 4)]
    return SPECIALS + words


def read_corpus(src_path, tgt_path, lowercase, max_len, svocab=None, tvocab=None,
                min_count=1, skip_empty=True):
    S = [tokenize(l, lowercase) for l in read_lines(src_path)]
    T = [tokenize(l, lowercase) for l in read_lines(tgt_path)]
    if len(S) != len(T):
        raise ValueError("%s and %s differ in line count (%d, %d)" % (src_path, tgt_path, len(S), len(T)))
    keep = [(s, t) for s, t in zip(S, T)
            if not (skip_empty and (not s or not t))
            and not (max_len and (len(s) > max_len or len(t) > max_len))]
    if svocab is None:
        svocab = build_vocab([s for s, _ in keep], min_count)
        tvocab = build_vocab([t for _, t in keep], min_count)
    si = {w: i for i, w in enumerate(svocab)}
    ti = {w: i for i, w in enumerate(tvocab)}
    pairs = [([si.get(w, UNK) for w in s], [ti.get(w, UNK) for w in t]) for s, t in keep]
    return pairs, svocab, tvocab


def plan_batches(pairs, batch_size, shuffle, seed, epoch):
    """Length-sorted pools of 100 batches cut into batches, batch order
    shuffled: small padding, as nmt's planner does."""
    g = torch.Generator().manual_seed(seed * 1000003 + epoch)
    idx = torch.randperm(len(pairs), generator=g).tolist() if shuffle else list(range(len(pairs)))
    if not shuffle:
        return [idx[i:i + batch_size] for i in range(0, len(idx), batch_size)]
    pool = batch_size * 100
    batches = []
    for p in range(0, len(idx), pool):
        chunk = sorted(idx[p:p + pool], key=lambda i: (len(pairs[i][0]), len(pairs[i][1])))
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    order = torch.randperm(len(batches), generator=g).tolist()
    return [batches[i] for i in order]


def peak_rss_mb():
    try:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    except ImportError:
        return float("nan")


def open_batch_log(path):
    """The batch log of `nmt train --batch-log`: (its first line's record of
    the weights the steps start from, or None for a log without one; an
    iterator of (step, lr or None, pairs), each step's pairs as token ids
    without </s> and <s>)."""
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    f = opener(path, "rt")
    first = f.readline()
    start = None
    head = []
    if first:
        j = json.loads(first)
        if "step" in j:
            head = [j]
        else:
            start = j

    def steps():
        with f:
            for j in head:
                yield j["step"], j.get("lr"), list(zip(j["src"], j["tgt"]))
            for k, line in enumerate(f, 2):
                try:
                    j = json.loads(line)
                except ValueError:  # a log cut short by a killed run
                    raise ValueError("%s: line %d is not JSON (a log cut short?)" % (path, k))
                yield j["step"], j.get("lr"), list(zip(j["src"], j["tgt"]))
    return start, steps()


def read_batch_log(path):
    """Yields (step, pairs) from the JSON Lines of `nmt train --batch-log`."""
    for step, _, pairs in open_batch_log(path)[1]:
        yield step, pairs


def weights_crc32(cfg, P):
    """The crc32 of the weights as a model file's data holds them (float32
    little-endian, table order): what `nmt train --batch-log` records of the
    weights its steps start from."""
    crc = 0
    for name, _ in tensor_table(cfg):
        crc = zlib.crc32(np.ascontiguousarray(
            P[name].detach().to(torch.float32).numpy(), dtype="<f4").tobytes(), crc)
    return crc & 0xFFFFFFFF


def carried_over(path, cfg):
    """What a model file holds besides the weights this script trains: the
    design's metadata keys (those without a dot, crc32 aside: the subword
    model's settings, `tied`, and any added later) and every tensor that is
    neither a weight nor an optimizer's moment of one (the U8 `subwords`),
    as `nmt average` tells them apart. Returns ({key: value}, [(name, array)])."""
    arrays, meta, _ = read_safetensors(path)
    weights = {n for n, _ in tensor_table(cfg)}
    moment = lambda n: any(n.endswith("." + w) and len(n) > len(w) + 1 for w in weights)
    keys = {k: v for k, v in meta.items() if "." not in k and k != "crc32"}
    tensors = [(n, arr) for n, arr in arrays.items() if n not in weights and not moment(n)]
    return keys, tensors


def save_following(path, cfg, P, carried, extra_meta):
    """A model file nmt reads as its own: the weights, the init file's
    metadata keys and tensors (the latter after the floats, as nmt writes
    its U8 `subwords`), and extra_meta (keys with a dot)."""
    keys, tensors = carried
    meta = cfg.metadata()
    meta.update(keys)
    meta.update(extra_meta)
    out = [(n, P[n].detach().to(torch.float32).numpy()) for n, _ in tensor_table(cfg)]
    write_safetensors(path, out + tensors, meta)


# What `train --recipe-from CHECKPOINT` does with each of nmt train's settings
# (the checkpoint's train.* metadata), so that the run trains the same model
# the same way nmt did. A setting not listed here stops the run: following a
# recipe half would train another model in silence.
RECIPE_MODEL = ("cell", "attention", "bidirectional", "emb", "hidden", "att_dim", "out_dim",
                "tied_embeddings", "lowercase")        # must agree with the initial model
RECIPE_FOLLOWED = ("optimizer", "lr", "clip", "dropout_emb", "dropout_enc", "dropout_out",
                   "label_smoothing", "seed", "threads", "max_time")  # taken over here
RECIPE_IN_BATCHES = ("src", "tgt", "batch_size", "max_len", "min_count", "max_vocab",
                     "shuffle", "subword_alpha", "epochs", "max_steps",
                     # where the corpus files lie from the run folder, and their prints
                     # (nmt train --resume finds them and checks them)
                     "src_from_run", "src_bytes", "src_hash",
                     "tgt_from_run", "tgt_bytes", "tgt_hash")  # what the batch log holds
RECIPE_NMT_ONLY = ("valid_src", "valid_tgt", "valid_every", "lr_decay", "patience", "warmup",
                   "early_stop", "save_every", "report_every", "report_seconds",
                   "best_metric", "keep_snapshots", "average_snapshots",
                   "valid_src_from_run", "valid_src_bytes", "valid_src_hash",
                   "valid_tgt_from_run", "valid_tgt_bytes", "valid_tgt_hash")
# lr_decay, patience and warmup change nmt's lr; the batch log's lr of every
# step carries their effect. early_stop and max_steps end nmt's run, and so the log.


def read_recipe(path, cfg):
    """{setting: value} of the train.* metadata of an nmt checkpoint, after
    checking that every setting is known and that the model ones describe
    cfg. Raises ValueError naming what does not fit."""
    _, meta, _ = read_safetensors(path)
    r = {k[len("train."):]: v for k, v in meta.items() if k.startswith("train.")}
    if not r:
        raise ValueError("%s has no train.* metadata: not a checkpoint of nmt train" % path)
    known = set(RECIPE_MODEL + RECIPE_FOLLOWED + RECIPE_IN_BATCHES + RECIPE_NMT_ONLY)
    unknown = sorted(k for k in r if k not in known)
    if unknown:
        raise ValueError("%s: nmt train setting(s) %s unknown to this script, which cannot "
                         "tell whether they change the training; teach it (RECIPE_* in %s)"
                         % (path, ", ".join("train.%s = %s" % (k, r[k]) for k in unknown),
                            os.path.basename(__file__)))
    missing = sorted(k for k in RECIPE_MODEL + RECIPE_FOLLOWED if k not in r)
    if missing:
        raise ValueError("%s lacks train.%s" % (path, ", train.".join(missing)))
    flag = lambda k: {"0": False, "1": True}[r[k]]
    model = {"cell": cfg.cell, "attention": cfg.attention, "bidirectional": cfg.bidirectional,
             "emb": cfg.emb, "hidden": cfg.hidden, "att_dim": cfg.att_dim,
             "out_dim": cfg.out_dim, "tied_embeddings": cfg.tied, "lowercase": cfg.lowercase}
    for k, want in model.items():
        got = flag(k) if isinstance(want, bool) else type(want)(r[k])
        if got != want:
            raise ValueError("%s: train.%s = %s, but the initial model has %s"
                             % (path, k, r[k], want))
    if r["optimizer"] not in ("adam", "sgd", "adadelta"):
        raise ValueError("%s: train.optimizer = %s, which this script does not have"
                         % (path, r["optimizer"]))
    return r


def follow_recipe(a, cfg):
    """Sets a's training options from --recipe-from's checkpoint; an option
    also given on the command line must not contradict it."""
    r = read_recipe(a.recipe_from, cfg)
    take = {"optimizer": r["optimizer"], "lr": float(r["lr"]), "clip": float(r["clip"]),
            "dropout_emb": float(r["dropout_emb"]), "dropout_enc": float(r["dropout_enc"]),
            "dropout_out": float(r["dropout_out"]),
            "label_smoothing": float(r["label_smoothing"]), "seed": int(r["seed"])}
    for k, v in take.items():
        given = getattr(a, k)
        if given is not None and given != v:
            raise ValueError("--%s %s contradicts the recipe's train.%s = %s (%s); leave it out"
                             % (k.replace("_", "-"), given, k, r[k], a.recipe_from))
        setattr(a, k, v)
    if a.dropout is not None:
        raise ValueError("--dropout with --recipe-from: the recipe sets the three rates")
    if a.threads is None:
        a.threads = int(r["threads"])
    if a.max_time is None:
        a.max_time = float(r["max_time"])
    return r


TRAIN_DEFAULTS = {"optimizer": "adam", "lr": 1e-3, "clip": 5.0, "label_smoothing": 0.0,
                  "seed": 1, "threads": 2, "max_time": 0.0}


def cmd_train(a):
    if a.batches and not a.init_from:
        raise ValueError("--batches needs --init-from (the ids are the model's vocabularies)")
    if not a.batches and not (a.src and a.tgt) and not a.dry_run:
        raise ValueError("--src and --tgt are required (or --batches with --init-from)")
    if a.recipe_from and not (a.init_from and (a.batches or a.dry_run)):
        raise ValueError("--recipe-from follows a run of nmt: it needs --init-from and --batches")
    if a.dry_run and not a.recipe_from:
        raise ValueError("--dry-run checks --recipe-from's recipe against --init-from")
    if bool(a.snapshot_every) != bool(a.snapshot_dir):
        raise ValueError("--snapshot-every and --snapshot-dir go together")
    recipe = None
    if a.init_from:
        cfg, P = load_model(a.init_from)
        if a.recipe_from:
            recipe = follow_recipe(a, cfg)
    lr_given = a.lr is not None
    for k, v in TRAIN_DEFAULTS.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    start, logged = open_batch_log(a.batches) if a.batches else (None, None)
    if a.init_from and a.batches:
        crc = weights_crc32(cfg, P)
        if start is not None and (start.get("weights_crc32") != "%08x" % crc
                                  or start.get("start_step") != 0):
            raise ValueError("%s starts from other weights (step %s, crc32 %s) than %s (crc32 "
                             "%08x): not the batches of a run from this model"
                             % (a.batches, start.get("start_step"), start.get("weights_crc32"),
                                a.init_from, crc))
        if start is None and a.recipe_from:
            raise ValueError("%s has no first line naming its initial weights (an older nmt?): "
                             "cannot check that they are %s's" % (a.batches, a.init_from))
    follows = {k: getattr(a, k) for k in ("optimizer", "lr", "clip", "dropout_emb",
                                          "dropout_enc", "dropout_out", "label_smoothing",
                                          "seed", "threads", "max_time")}
    if a.dry_run:
        print(json.dumps({"recipe": recipe, "follows": follows, "tied": cfg.tied,
                          "weights_crc32": "%08x" % weights_crc32(cfg, P)}))
        return 0
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if a.init_from:
        pairs = [] if a.batches else read_corpus(a.src, a.tgt, cfg.lowercase, a.max_len,
                                                 cfg.src_vocab, cfg.tgt_vocab)[0]
        carried = carried_over(a.init_from, cfg)
    else:
        pairs, sv, tv = read_corpus(a.src, a.tgt, a.lowercase, a.max_len, min_count=a.min_count)
        cfg = Config(cell=a.cell, attention=a.attention, bidirectional=a.bidirectional,
                     emb=a.emb, hidden=a.hidden, att_dim=a.att_dim, out_dim=a.out_dim,
                     lowercase=a.lowercase, src_vocab=sv, tgt_vocab=tv,
                     tied=a.tied_embeddings)
        P = init_params(cfg, seed=a.seed)
        carried = ({}, [])
    if not pairs and not a.batches:
        raise ValueError("empty corpus")
    P = {k: v.clone().requires_grad_(True) for k, v in P.items()}
    params = [P[n] for n, _ in tensor_table(cfg)]
    if a.optimizer == "adam":  # nmt's: betas 0.9, 0.999, eps 1e-8 (torch's defaults)
        opt = torch.optim.Adam(params, lr=a.lr)
    elif a.optimizer == "adadelta":  # nmt's rho and eps; lr multiplies the update
        opt = torch.optim.Adadelta(params, lr=a.lr, rho=0.95, eps=1e-6)
    else:
        opt = torch.optim.SGD(params, lr=a.lr)
    n_par = sum(p.numel() for p in params)
    print("corpus %s, vocab %d/%d, %d parameters, %d threads"
          % ("from " + a.batches if a.batches else "%d pairs" % len(pairs),
             len(cfg.src_vocab), len(cfg.tgt_vocab), n_par, a.threads), file=sys.stderr)
    epochs = a.epochs or (1 << 30 if a.max_steps else 1)

    def schedule():
        """(epoch, lr or None, pairs of the step): nmt's batches, or this script's plan."""
        if a.batches:
            for _, lr, batch in logged:
                yield 0, lr, batch
            return
        for epoch in range(1, epochs + 1):
            for bi in plan_batches(pairs, a.batch_size, not a.no_shuffle, a.seed, epoch):
                yield epoch, None, [pairs[i] for i in bi]

    n_batches = len(plan_batches(pairs, a.batch_size, False, 0, 0)) if pairs else 1 << 30
    total = min(a.max_steps or 1 << 62, n_batches * epochs)
    warm = a.warmup if total > a.warmup else 0
    log = open(a.log, "w") if a.log else None
    if log:
        log.write("step\tloss\tgrad_norm\tlr\telapsed_s\n")
    # --dropout sets every site; a site's own option overrides it (as nmt's)
    rate = lambda site: site if site is not None else (a.dropout or 0.0)
    noise = Noise(rate(a.dropout_emb), rate(a.dropout_enc), rate(a.dropout_out),
                  a.label_smoothing)
    snaps = None
    if a.snapshot_dir:
        os.makedirs(a.snapshot_dir, exist_ok=True)
        snaps = open(os.path.join(a.snapshot_dir, "snapshots.tsv"), "w")
        snaps.write("step\telapsed_s\tsave_s\tfile\n")
    # the training clock: wall time from the first step, the time of saving
    # snapshots excluded (it is recorded beside them)
    clock0, saving = time.perf_counter(), 0.0
    train_s = lambda: time.perf_counter() - clock0 - saving
    next_snap = a.snapshot_every or 0.0
    lr_now, lr_from_log = a.lr, None
    step, toks, t0, loss, ended_by = 0, 0, None, None, "batches"

    last_snap = [-1]

    def snapshot():
        nonlocal saving
        if last_snap[0] == step:  # the end came right after one
            return
        last_snap[0] = step
        t = train_s()
        name = "snapshot-%d.safetensors" % step
        w0 = time.perf_counter()
        save_following(os.path.join(a.snapshot_dir, name), cfg, P, carried,
                       {"torch.step": str(step), "torch.elapsed_s": "%.3f" % t})
        dt = time.perf_counter() - w0
        saving += dt
        snaps.write("%d\t%.3f\t%.3f\t%s\n" % (step, t, dt, name))
        snaps.flush()
        print("snapshot at step %d, %.1f s of training (saved in %.2f s)" % (step, t, dt),
              file=sys.stderr)

    for epoch, lr, batch in schedule():
        if a.max_time and train_s() >= a.max_time:
            ended_by = "time"
            break
        if lr is not None:  # nmt's lr of this very step (its decays included)
            if lr_from_log is None and lr_given and a.recipe_from is None and lr != a.lr:
                raise ValueError("%s: step 1 has lr %g, --lr is %g" % (a.batches, lr, a.lr))
            lr_from_log = lr
            if lr != lr_now:
                for g in opt.param_groups:
                    g["lr"] = lr
                lr_now = lr
        elif a.recipe_from:
            raise ValueError("%s: step %d has no lr: cannot follow nmt's schedule"
                             % (a.batches, step + 1))
        if step == warm:
            t0, toks0, step0, saving0 = time.perf_counter(), toks, step, saving
        # the gradient is the training loss's; the loss shown is -log p(y), as nmt's
        objective, _, loss = batch_loss(cfg, P, batch, noise)
        opt.zero_grad(set_to_none=True)
        objective.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, a.clip if a.clip > 0 else float("inf"))
        opt.step()
        step += 1
        toks += sum(len(t) + 1 for _, t in batch)
        if log:
            log.write("%d\t%.6f\t%.6f\t%.9g\t%.3f\n" % (step, loss.item(), float(norm), lr_now,
                                                       train_s()))
            log.flush()
        if a.report and step % a.report == 0:
            print("step %d epoch %d loss %.4f" % (step, epoch, loss.item()), file=sys.stderr)
        if a.max_steps and step >= a.max_steps:
            ended_by = "max_steps"
            break
        if snaps and train_s() >= next_snap and not (a.max_time and train_s() >= a.max_time):
            snapshot()
            while next_snap <= train_s():
                next_snap += a.snapshot_every
    elapsed = train_s()
    if snaps:
        snapshot()
        snaps.close()
    if log:
        log.close()
    el = time.perf_counter() - t0 - (saving - saving0) if t0 is not None else float("nan")
    st = step - step0 if t0 is not None else 0
    res = {"steps": st, "seconds": el, "steps_per_s": st / el if st else float("nan"),
           "tgt_tok_per_s": (toks - toks0) / el if st else float("nan"),
           "warmup_steps": warm, "threads": a.threads, "params": n_par,
           "last_loss": loss.item() if loss is not None else float("nan"),
           "peak_rss_mb": peak_rss_mb(), "total_steps": step, "train_seconds": elapsed,
           "save_seconds": saving, "ended_by": ended_by, "lr_followed": lr_from_log is not None,
           "follows": follows if a.recipe_from else None}
    if a.out:
        save_following(a.out, cfg, P, carried, {"torch.step": str(step)})
    print(json.dumps(res))


def never_output(logp):
    """<pad> and <s> are never outputs (as in nmt's decoder); <unk> may be."""
    logp = logp.clone()
    logp[:, PAD] = float("-inf")
    logp[:, BOS] = float("-inf")
    return logp


def word_limit(n_src, max_ratio):
    """nmt translate's cap: R x source words + 10 words."""
    return int(math.floor(max_ratio * n_src)) + 10


@torch.no_grad()
def translate_batch(cfg, P, srcs, beam, max_ratio):
    """Greedy (beam 1) over the batch, or beam search one sentence at a time.
    Returns [(target ids without </s>, sum of log p, ended with </s>)]."""
    if beam > 1:
        return [beam_one(cfg, P, s, beam, word_limit(len(s), max_ratio)) for s in srcs]
    src, sl, _, _, _ = make_batch([(s, []) for s in srcs])
    Ts, B = src.shape
    mask = torch.arange(Ts).unsqueeze(1) < sl.unsqueeze(0)
    ann, z = encode(cfg, P, src, mask)
    s, c = decoder_init(cfg, P, z)
    Uh = attention_keys(cfg, P, ann)
    prev = torch.full((B,), BOS, dtype=torch.long)
    limit = [word_limit(len(x), max_ratio) for x in srcs]
    out = [[] for _ in range(B)]
    score, ended, alive = [0.0] * B, [False] * B, [True] * B
    for _ in range(max(limit) + 1):
        logp, s, c = next_logp(cfg, P, prev, s, c, ann, Uh, z, mask)
        best, prev = never_output(logp).max(1)
        best, toks = best.tolist(), prev.tolist()
        for b in range(B):
            if not alive[b]:
                continue
            if len(out[b]) == limit[b]:  # cut: the limit's words are out
                alive[b] = False
                continue
            score[b] += best[b]
            if toks[b] == EOS:
                ended[b], alive[b] = True, False
            else:
                out[b].append(toks[b])
        if not any(alive):
            break
    return list(zip(out, score, ended))


def next_logp(cfg, P, prev, s, c, ann, Uh, z, mask):
    Q = decoder_weights(cfg, P)
    e = P["tgt_emb"][prev]
    ctx = attend(Q, s, ann, Uh, mask)[0] if Uh is not None else z
    gx = e @ Q["W_emb_t"] + P["dec.b"]
    s, c = decoder_step(cfg, Q, gx, s, c, ctx)
    t = torch.tanh(torch.cat([s, ctx, e], 1) @ P["out.W_t"].t() + P["out.b_t"])
    return torch.log_softmax(t @ out_matrix(cfg, P).t() + P["out.b"], 1), s, c


def beam_one(cfg, P, src_ids, K, max_len):
    """Beam search for one sentence: K rows, finished hypotheses kept apart,
    scores are summed log-probabilities divided by length (incl. </s>)."""
    src, sl, _, _, _ = make_batch([(src_ids, [])])
    mask = torch.arange(src.shape[0]).unsqueeze(1) < sl.unsqueeze(0)
    ann, z = encode(cfg, P, src, mask)
    s, c = decoder_init(cfg, P, z)
    Uh = attention_keys(cfg, P, ann)
    hyps, scores, finished = [[]], torch.zeros(1), []
    prev = torch.tensor([BOS])
    for step in range(max_len):
        R = len(hyps)
        ex = lambda x: x.expand(x.shape[0], R, *x.shape[2:]) if x is not None else None
        logp, s, c = next_logp(cfg, P, prev, s, c, ex(ann), ex(Uh),
                               z.expand(R, -1), mask.expand(-1, R))
        cand = (scores.unsqueeze(1) + never_output(logp)).view(-1)
        top = cand.topk(min(K, cand.numel()))
        new_h, new_s, rows, toks = [], [], [], []
        V = logp.shape[1]
        for sc, ix in zip(top.values.tolist(), top.indices.tolist()):
            r, tok = divmod(ix, V)
            if tok == EOS:
                finished.append((sc / (len(hyps[r]) + 1), hyps[r]))
            else:
                new_h.append(hyps[r] + [tok])
                new_s.append(sc)
                rows.append(r)
                toks.append(tok)
        if len(finished) >= K or not new_h:
            break
        idx = torch.tensor(rows)
        hyps, scores, prev = new_h, torch.tensor(new_s), torch.tensor(toks)
        s = s[idx]
        c = c[idx] if c is not None else None
    if finished:
        best = max(finished, key=lambda x: x[0])
        return best[1], best[0] * (len(best[1]) + 1), True
    best = max(zip(scores.tolist(), hyps), key=lambda x: x[0] / max(1, len(x[1])))
    return best[1], best[0], False


def cmd_translate(a):
    torch.set_num_threads(a.threads)
    cfg, P = load_model(a.model)
    si = {w: i for i, w in enumerate(cfg.src_vocab)}
    lines = read_lines(a.input) if a.input != "-" else [l.rstrip("\n") for l in sys.stdin]
    srcs = [[si.get(w, UNK) for w in tokenize(l, cfg.lowercase)] for l in lines]
    t0 = time.perf_counter()
    outs = []
    for i in range(0, len(srcs), a.batch_size):
        outs += [o[0] for o in translate_batch(cfg, P, srcs[i:i + a.batch_size], a.beam,
                                               a.max_ratio)]
    el = time.perf_counter() - t0
    f = open(a.output, "w") if a.output != "-" else sys.stdout
    for o in outs:
        f.write(" ".join(cfg.tgt_vocab[i] for i in o) + "\n")
    if f is not sys.stdout:
        f.close()
    print(json.dumps({"sentences": len(srcs), "seconds": el,
                      "sentences_per_s": len(srcs) / el if el > 0 else float("nan"),
                      "beam": a.beam, "threads": a.threads, "peak_rss_mb": peak_rss_mb()}),
          file=sys.stderr)


# ---- command line --------------------------------------------------------------

def add_model_args(p):
    p.add_argument("--config", help="JSON (a file or inline) with Config's fields")
    p.add_argument("--cell", choices=list(GATES))
    p.add_argument("--attention", choices=ATTENTIONS)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--bidirectional", dest="bidirectional", action="store_true", default=None)
    g.add_argument("--unidirectional", dest="bidirectional", action="store_false")
    for k in ("emb", "hidden", "att-dim", "out-dim"):
        p.add_argument("--" + k, type=int)
    p.add_argument("--tied-embeddings", action="store_true",
                   help="the output matrix is tgt_emb (needs --out-dim = --emb)")
    p.add_argument("--lowercase", action="store_true")


def add_noise_args(p):
    """nmt train's regularizer options, with its meaning."""
    p.add_argument("--dropout", type=float, default=None,
                   help="the rate of all three dropouts (default 0)")
    p.add_argument("--dropout-emb", type=float, default=None,
                   help="on the source and target embeddings")
    p.add_argument("--dropout-enc", type=float, default=None,
                   help="on the annotations h_j (as attention, context and z read them)")
    p.add_argument("--dropout-out", type=float, default=None,
                   help="on the deep output, before the vocabulary projection")
    p.add_argument("--label-smoothing", type=float, default=None,
                   help="of the training loss (the loss shown stays -log p; default 0)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("init", help="write a random model file")
    add_model_args(p)
    p.add_argument("--src-vocab", type=int, help="size of a synthetic source vocabulary")
    p.add_argument("--tgt-vocab", type=int, help="size of a synthetic target vocabulary")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--init", choices=["bahdanau", "uniform"], default="bahdanau")
    p.add_argument("--scale", type=float, default=0.5, help="range of --init uniform")
    p.add_argument("--out", required=True)

    p = sub.add_parser("grad", help="loss and gradients of a model on a batch")
    p.add_argument("--model", required=True)
    p.add_argument("--batch", required=True, help='JSON {"src": [[ids]], "tgt": [[ids]]}')
    p.add_argument("--label-smoothing", type=float, default=0.0)
    p.add_argument("--masks", help="the dropout masks to apply: tensors dropout.SITE of a "
                   "file parity_grad wrote")
    p.add_argument("--out", required=True)

    sub.add_parser("selftest", help="gradcheck and padding invariance of this model")

    p = sub.add_parser("train", help="train, report steps/s and tokens/s (speed peer)")
    p.add_argument("--src")
    p.add_argument("--tgt")
    p.add_argument("--init-from", help="start from this model file (nmt's or this script's)")
    p.add_argument("--batches", help="follow the batches of `nmt train --batch-log FILE` "
                   "(needs --init-from; --src/--tgt unused)")
    p.add_argument("--log", help="write step, loss, gradient norm (before clipping), lr and "
                   "elapsed_s (the training clock of --max-time) per step")
    p.add_argument("--cell", choices=list(GATES), default="lstm")
    p.add_argument("--attention", choices=ATTENTIONS, default="bahdanau")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--bidirectional", dest="bidirectional", action="store_true", default=True)
    g.add_argument("--unidirectional", dest="bidirectional", action="store_false")
    for k in ("emb", "hidden", "att-dim", "out-dim"):
        p.add_argument("--" + k, type=int, default=256)
    p.add_argument("--tied-embeddings", action="store_true")
    p.add_argument("--lowercase", action="store_true")
    p.add_argument("--min-count", type=int, default=1)
    p.add_argument("--max-len", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--optimizer", choices=["adam", "sgd", "adadelta"], default=None,
                   help="default adam")
    p.add_argument("--lr", type=float, default=None,
                   help="default 1e-3; with --batches whose lines carry nmt's lr, nmt's lr "
                   "of every step")
    p.add_argument("--clip", type=float, default=None, help="default 5")
    add_noise_args(p)
    p.add_argument("--recipe-from", metavar="CHECKPOINT",
                   help="follow a run of nmt train: take the training settings from this "
                   "checkpoint's train.* metadata (optimizer, clip, the dropout rates, label "
                   "smoothing, seed, threads, max_time; the lr of every step from --batches); "
                   "a setting this script does not know, or one the initial model contradicts, "
                   "is an error. Needs --init-from and --batches")
    p.add_argument("--dry-run", action="store_true",
                   help="with --recipe-from: check the recipe, the initial model and the batch "
                   "log's first line, print what would be followed, and exit")
    p.add_argument("--max-time", type=float, default=None, metavar="SECONDS",
                   help="stop once this much training time has passed (wall clock from the "
                   "first step, the saving of snapshots excluded); checked between steps")
    p.add_argument("--snapshot-every", type=float, default=0, metavar="SECONDS",
                   help="save the model every SECONDS of training time, and at the end, into "
                   "--snapshot-dir as snapshot-STEP.safetensors (with snapshots.tsv: step, "
                   "training seconds, seconds spent saving)")
    p.add_argument("--snapshot-dir", metavar="DIR")
    p.add_argument("--epochs", type=int, default=0,
                   help="passes over the corpus (default 1, or until --max-steps)")
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--warmup", type=int, default=2,
                   help="first steps left out of the timing (none if the run is shorter)")
    p.add_argument("--no-shuffle", action="store_true")
    p.add_argument("--seed", type=int, default=None, help="default 1")
    p.add_argument("--threads", type=int, default=None, help="default 2")
    p.add_argument("--report", type=int, default=0, help="print the loss every N steps")
    p.add_argument("--out", help="write the trained model here (with every tensor and "
                   "metadata key of --init-from's file that is not a weight, so that nmt "
                   "reads it as it reads the initial model)")

    p = sub.add_parser("translate", help="greedy or beam translation (speed peer)")
    p.add_argument("-m", "--model", required=True)
    p.add_argument("-i", "--input", default="-")
    p.add_argument("-o", "--output", default="-")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--max-ratio", type=float, default=2.0,
                   help="stop after R x source words + 10 words, as nmt does")
    p.add_argument("--threads", type=int, default=2)

    a = ap.parse_args(argv)
    cmds = {"init": cmd_init, "grad": cmd_grad, "selftest": cmd_selftest,
            "train": cmd_train, "translate": cmd_translate}
    return cmds[a.cmd](a) or 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, OSError) as e:  # bad input: one line, not a traceback
        print("torch_baseline.py: error: %s" % e, file=sys.stderr)
        sys.exit(1)
