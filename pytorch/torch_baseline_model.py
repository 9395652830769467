"""The PyTorch baseline's model (pytorch/torch_baseline.py), written from
docs/DESIGN.md's equations alone: the configuration and the table of tensors,
model files (safetensors read and written with numpy), initialisation, and
the batched forward pass with its loss, dropout and label smoothing.
"""

import json
import math
import os
import struct
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
    """pairs: [(src ids, tgt ids)] without specials, or [(src ids, tgt ids,
    the decoder's input ids)] when nmt's word dropout replaced some of what
    the decoder read (its batch log's tgt_in). Returns time-major
    (src, src_len, tgt_in, tgt_out, tgt_len) as docs/DESIGN.md lays them out:
    src = x + </s>, tgt_in = <s> y, tgt_out = y </s>, padding 0."""
    B = len(pairs)
    sl = [len(p[0]) + 1 for p in pairs]
    tl = [len(p[1]) + 1 for p in pairs]
    src = torch.zeros(max(sl), B, dtype=torch.long)
    tin = torch.zeros(max(tl), B, dtype=torch.long)
    tout = torch.zeros(max(tl), B, dtype=torch.long)
    for b, p in enumerate(pairs):
        s, t = p[0], p[1]
        y_in = p[2] if len(p) > 2 else t
        if len(y_in) != len(t):
            raise ValueError("pair %d: %d decoder inputs for %d target tokens"
                             % (b, len(y_in), len(t)))
        src[:len(s), b] = torch.tensor(s, dtype=torch.long)
        src[len(s), b] = EOS
        tin[0, b] = BOS
        tin[1:len(t) + 1, b] = torch.tensor(y_in, dtype=torch.long)
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
    for k, p in enumerate(pairs):
        s, t = p[0], p[1]
        for x in s:
            if not 0 < x < Vs or x in (BOS, EOS):
                raise ValueError("pair %d: source id %d is not a token id (Vs=%d)" % (k, x, Vs))
        for y in list(t) + list(p[2] if len(p) > 2 else []):
            if not 0 < y < Vt or y in (BOS, EOS):
                raise ValueError("pair %d: target id %d is not a token id (Vt=%d)" % (k, y, Vt))


def read_batch_json(path):
    with open(path) as f:
        j = json.load(f)
    if len(j["src"]) != len(j["tgt"]) or not j["src"]:
        raise ValueError("%s: src and tgt must be equally long, non-empty lists" % path)
    return [(list(map(int, s)), list(map(int, t))) for s, t in zip(j["src"], j["tgt"])]
