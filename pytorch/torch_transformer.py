#!/usr/bin/env python3
"""The PyTorch peer of nmt's Transformer: the same model built from
PyTorch's own layers (torch.nn.TransformerEncoderLayer and
TransformerDecoderLayer with norm_first=True and ReLU, which are the
design's pre-norm layers), with nmt's embeddings scaled by sqrt(d),
sinusoidal positions and tied output, loaded from an nmt model file. The
variants of docs/DESIGN.md are followed too: ScaleNorm (metadata norm =
scale: each norm module replaced by g u / max(|u|, 1e-5) with one scalar
g) and FixNorm (fixnorm = true: embedding rows, and a tied output table,
read at unit length).

  torch_transformer.py train --init-from MODEL --batches LOG [--steps N]
        follows nmt train's batches (its --batch-log) with Adam at --lr
        (no clipping): steps/s over the steps after --warmup-steps, the loss
        of each step (to hold against nmt's log.tsv from the same weights)
  torch_transformer.py follow --init-from MODEL --batches LOG --recipe-from CKPT
        [--max-time S] [--snapshot-every S --snapshot-dir DIR] [--log FILE]
        trains as a run of nmt train did (scripts/experiments/multi30k-experiment's
        PyTorch Transformer): from its initial weights (the batch log's first
        line names them), on its batches in order, with its lr of every step
        (the warm-up's included) and the rest of its recipe read from its
        checkpoint (train.*: Adam, clip, the four dropout rates, label
        smoothing, seed, threads, max_time; a setting it does not know stops
        it before any step), for that time by its own clock (the saving of
        snapshots excluded), saving the model every --snapshot-every seconds
        as a file nmt reads (with the initial file's subword model and keys);
        a guided alignment run's too (train.guided_*): the log's gold rows
        train the checkpoint's head of its layer's cross-attention by its
        weight (docs/DESIGN.md, "Guided alignment"), from the weights
        PyTorch's attention returns, which are after its attention dropout
        (nmt's are before it: the same with --dropout-att 0)
  torch_transformer.py translate --model MODEL --src IDS.json [--beam K]
        greedy or beam search over source id lists (JSON Lines of ids, as
        nmt's batch log writes them), recomputing the whole prefix at each
        step (torch.nn.TransformerDecoder keeps no key/value cache):
        sentences/s

Each prints one JSON line of figures (with the peak RSS) on stdout. Run with a
python3 that has torch (Debian's python3-torch); it is scripts/bench/bench's
peer, not part of nmt.
"""
import argparse
import json
import math
import resource
import struct
import sys
import time
import zlib

import numpy as np
import torch
import torch.nn as nn

PAD, UNK, BOS, EOS = 0, 1, 2, 3


def read_header(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    return b, 8 + n, h.pop("__metadata__", {}) or {}, h


def is_moment(name):
    return name.startswith(("adam.", "adadelta."))


def read_model(path):
    b, base, meta, h = read_header(path)
    out = {}
    for name, t in h.items():
        if t["dtype"] != "F32" or is_moment(name):
            continue
        s, e = t["data_offsets"]
        out[name] = torch.from_numpy(
            np.frombuffer(b[base + s:base + e], dtype="<f4").reshape(t["shape"]).copy())
    return out, meta


def weight_names(path):
    """The weights of a model file in file order (its tensor table's), and
    the crc32 of their data as nmt train --batch-log records the weights it
    starts from."""
    b, base, _, h = read_header(path)
    names = sorted((t["data_offsets"], k) for k, t in h.items()
                   if t["dtype"] == "F32" and not is_moment(k))
    crc = 0
    for (s, e), _ in names:
        crc = zlib.crc32(b[base + s:base + e], crc)
    return [k for _, k in names], crc & 0xFFFFFFFF


def positions(n, d):
    p = torch.zeros(n, d)
    k = torch.arange(d)
    freq = torch.pow(10000.0, -(k - k % 2).double() / d)
    ang = torch.arange(n).double()[:, None] * freq[None, :]
    p[:, 0::2] = torch.sin(ang[:, 0::2]).float()
    p[:, 1::2] = torch.cos(ang[:, 1::2]).float()
    return p


SN_EPS = 1e-5  # ScaleNorm's and FixNorm's eps (docs/DESIGN.md)


class ScaleNorm(nn.Module):
    """SN(u) = g u / max(|u|, eps) over the last dimension, g of shape [1].
    It stands where the layers keep their nn.LayerNorm (norm1..3); eps
    and bias are there for the checks PyTorch's layers make of a norm."""

    def __init__(self, g):
        super().__init__()
        self.weight = nn.Parameter(g.clone())
        self.bias = None
        self.eps = SN_EPS

    def forward(self, u):
        return self.weight * u / torch.clamp(u.norm(dim=-1, keepdim=True), min=SN_EPS)


def unit_rows(E):
    """FixNorm: every row of E at unit length, e / max(|e|, eps)."""
    return E / torch.clamp(E.norm(dim=-1, keepdim=True), min=SN_EPS)


def variants(meta):
    """(scale, fixnorm) of a model's metadata; a value this script does not
    know stops it (it would train another model in silence)."""
    norm, fix = meta.get("norm", "layer"), meta.get("fixnorm", "false")
    if norm not in ("layer", "scale") or fix not in ("true", "false"):
        raise ValueError("norm %r, fixnorm %r: not a variant this script knows" % (norm, fix))
    return norm == "scale", fix == "true"


class Model(nn.Module):
    def __init__(self, meta, P, dropout):
        super().__init__()
        d, h, F = int(meta["d_model"]), int(meta["heads"]), int(meta["ff"])
        Le, Ld = int(meta["enc_layers"]), int(meta["dec_layers"])
        self.d, self.tied = d, meta.get("tied") == "true"
        self.scale, self.fixnorm = variants(meta)
        # a joint vocabulary: one table, tgt_emb, that the encoder reads too
        self.joint = meta.get("joint_vocab") == "true"
        self.tgt_emb = nn.Parameter(P["tgt_emb"].clone())
        self.src_emb = self.tgt_emb if self.joint else nn.Parameter(P["src_emb"].clone())
        kw = dict(d_model=d, nhead=h, dim_feedforward=F, dropout=dropout, activation="relu",
                  norm_first=True, batch_first=True)
        self.enc = nn.ModuleList([nn.TransformerEncoderLayer(**kw) for _ in range(Le)])
        self.dec = nn.ModuleList([nn.TransformerDecoderLayer(**kw) for _ in range(Ld)])
        if self.scale:
            for L in list(self.enc) + list(self.dec):
                for name in ("norm1", "norm2", "norm3"):
                    if hasattr(L, name):
                        setattr(L, name, ScaleNorm(torch.ones(1)))
                # the encoder layer's fused inference path hard-codes layer
                # norm; this flag only chooses that path (the activation is
                # L.activation), so clearing it keeps every layer on the
                # modules above
                if hasattr(L, "activation_relu_or_gelu"):
                    L.activation_relu_or_gelu = 0
            self.enc_ln, self.dec_ln = ScaleNorm(torch.ones(1)), ScaleNorm(torch.ones(1))
        else:
            self.enc_ln, self.dec_ln = nn.LayerNorm(d), nn.LayerNorm(d)
        self.out_W = None if self.tied else nn.Parameter(P["out.W"].clone())
        self.out_b = nn.Parameter(P["out.b"].clone())
        self.drop = nn.Dropout(dropout)
        with torch.no_grad():
            for l, L in enumerate(self.enc):
                self.load_attention(L.self_attn, P, "enc.%d.self." % l)
                self.load_ff_norms(L, P, "enc.%d." % l, ["ln1", "ln2"])
            for l, L in enumerate(self.dec):
                self.load_attention(L.self_attn, P, "dec.%d.self." % l)
                self.load_attention(L.multihead_attn, P, "dec.%d.cross." % l)
                self.load_ff_norms(L, P, "dec.%d." % l, ["ln1", "ln2", "ln3"])
            for ln, p in ((self.enc_ln, "enc.ln."), (self.dec_ln, "dec.ln.")):
                ln.weight.copy_(P[p + "g"])
                if ln.bias is not None:
                    ln.bias.copy_(P[p + "b"])
        self.pos = positions(512, d)

    @staticmethod
    def load_attention(att, P, p):
        att.in_proj_weight.copy_(torch.cat([P[p + "W_q"], P[p + "W_k"], P[p + "W_v"]]))
        att.in_proj_bias.copy_(torch.cat([P[p + "b_q"], P[p + "b_k"], P[p + "b_v"]]))
        att.out_proj.weight.copy_(P[p + "W_o"])
        att.out_proj.bias.copy_(P[p + "b_o"])

    @staticmethod
    def load_ff_norms(L, P, p, norms):
        L.linear1.weight.copy_(P[p + "ff.W_1"])
        L.linear1.bias.copy_(P[p + "ff.b_1"])
        L.linear2.weight.copy_(P[p + "ff.W_2"])
        L.linear2.bias.copy_(P[p + "ff.b_2"])
        for ln, name in zip([L.norm1, L.norm2, getattr(L, "norm3", None)], norms):
            ln.weight.copy_(P[p + name + ".g"])
            if ln.bias is not None:  # ScaleNorm has none
                ln.bias.copy_(P[p + name + ".b"])

    def set_dropout(self, emb, residual, att, ff):
        """nmt's four sites (docs/training.md): √d·emb + P; each sublayer's
        output before the residual sum (PyTorch's dropout1..3); the attention
        weights of every head (MultiheadAttention's dropout); the feed-forward
        layer after the relu (the layer's inner dropout)."""
        self.drop.p = emb
        for L in list(self.enc) + list(self.dec):
            for name in ("dropout1", "dropout2", "dropout3"):
                if hasattr(L, name):
                    getattr(L, name).p = residual
            L.dropout.p = ff
            L.self_attn.dropout = att
            if hasattr(L, "multihead_attn"):
                L.multihead_attn.dropout = att

    @torch.no_grad()
    def export(self):
        """{nmt tensor name: tensor}: the inverse of the loading above."""
        d, P = self.d, {"tgt_emb": self.tgt_emb, "out.b": self.out_b}
        if not self.joint:
            P["src_emb"] = self.src_emb
        if not self.tied:
            P["out.W"] = self.out_W

        def attention(att, p):
            for k, name in enumerate("qkv"):
                P[p + "W_" + name] = att.in_proj_weight[k * d:(k + 1) * d]
                P[p + "b_" + name] = att.in_proj_bias[k * d:(k + 1) * d]
            P[p + "W_o"] = att.out_proj.weight
            P[p + "b_o"] = att.out_proj.bias

        def ff_norms(L, p, norms):
            P[p + "ff.W_1"], P[p + "ff.b_1"] = L.linear1.weight, L.linear1.bias
            P[p + "ff.W_2"], P[p + "ff.b_2"] = L.linear2.weight, L.linear2.bias
            for ln, name in zip([L.norm1, L.norm2, getattr(L, "norm3", None)], norms):
                P[p + name + ".g"] = ln.weight
                if ln.bias is not None:
                    P[p + name + ".b"] = ln.bias
        for l, L in enumerate(self.enc):
            attention(L.self_attn, "enc.%d.self." % l)
            ff_norms(L, "enc.%d." % l, ["ln1", "ln2"])
        for l, L in enumerate(self.dec):
            attention(L.self_attn, "dec.%d.self." % l)
            attention(L.multihead_attn, "dec.%d.cross." % l)
            ff_norms(L, "dec.%d." % l, ["ln1", "ln2", "ln3"])
        for ln, p in ((self.enc_ln, "enc.ln."), (self.dec_ln, "dec.ln.")):
            P[p + "g"] = ln.weight
            if ln.bias is not None:
                P[p + "b"] = ln.bias
        return {k: v.detach().contiguous() for k, v in P.items()}

    def embed(self, table, ids):
        if self.fixnorm:
            table = unit_rows(table)
        return self.drop(math.sqrt(self.d) * table[ids] + self.pos[:ids.shape[1]])

    def encode(self, src, src_pad):
        x = self.embed(self.src_emb, src)
        for L in self.enc:
            x = L(x, src_key_padding_mask=src_pad)
        return self.enc_ln(x)

    def watch_cross(self, layer):
        """Keeps decoder layer `layer`'s cross-attention weights of every
        head, [B, h, T, S], in self.cross_weights at each decode: the layer
        asks its attention for none, so its call is made to ask for them."""
        att = self.dec[layer].multihead_attn
        plain = att.forward

        def forward(*args, **kw):
            kw.update(need_weights=True, average_attn_weights=False)
            out, w = plain(*args, **kw)
            self.cross_weights = w
            return out, None
        att.forward = forward

    def decode(self, H, src_pad, tgt_in, tgt_pad):
        T = tgt_in.shape[1]
        causal = torch.triu(torch.full((T, T), float("-inf")), 1)
        z = self.embed(self.tgt_emb, tgt_in)
        for L in self.dec:
            z = L(z, H, tgt_mask=causal, tgt_key_padding_mask=tgt_pad,
                  memory_key_padding_mask=src_pad)
        t = self.dec_ln(z)
        # tied: the target table (FixNorm: at unit rows); an untied out.W as it is
        W = (unit_rows(self.tgt_emb) if self.fixnorm else self.tgt_emb) if self.tied else self.out_W
        return t @ W.T + self.out_b


def pad(lists, lead=None, tail=None):
    seqs = [([lead] if lead is not None else []) + s + ([tail] if tail is not None else [])
            for s in lists]
    T = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), T, dtype=torch.long)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
    return ids, ids == PAD


def batch_ids(b):
    """A batch log line's (src, src_pad, tgt_in, tgt_pad, tgt_out): the
    source and the decoder's input as nmt's model read them (after word
    dropout: the log's src, and its tgt_in when the target side had word
    dropout, else tgt), the labels its tgt."""
    src, src_pad = pad(b["src"], tail=EOS)
    tgt_in, tgt_pad = pad(b.get("tgt_in", b["tgt"]), lead=BOS)
    tgt_out, _ = pad(b["tgt"], tail=EOS)
    return src, src_pad, tgt_in, tgt_pad, tgt_out


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cmd_train(a):
    P, meta = read_model(a.init_from)
    model = Model(meta, P, a.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=a.label_smoothing)
    plain = nn.CrossEntropyLoss(ignore_index=PAD)
    lines = open(a.batches).read().splitlines()[1:]
    losses, times = [], []
    for line in lines[:a.steps]:
        b = json.loads(line)
        src, src_pad, tgt_in, tgt_pad, tgt_out = batch_ids(b)
        t0 = time.perf_counter()
        opt.zero_grad()
        logits = model.decode(model.encode(src, src_pad), src_pad, tgt_in, tgt_pad)
        V = logits.shape[-1]
        loss = loss_fn(logits.reshape(-1, V), tgt_out.reshape(-1))
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(float(plain(logits.detach().reshape(-1, V), tgt_out.reshape(-1))))
    timed = times[a.warmup_steps:]
    print(json.dumps({"steps": len(timed), "steps_per_s": len(timed) / sum(timed),
                      "losses": losses, "peak_rss_mb": peak_rss_mb(),
                      "threads": torch.get_num_threads()}))


# ---- follow: a run of nmt train, trained again in PyTorch -----------------

# What `follow` does with each of nmt train's settings (the checkpoint's
# train.* metadata), so that it trains the same model the same way nmt did.
# A setting not listed here stops it: following a recipe half would train
# another model in silence. The lists of settings the batch log carries and
# of those that concern nmt alone are the RNN peer's (torch_baseline_peer.py),
# so that a setting taught to one is known to both.
RECIPE_MODEL = ("tied_embeddings", "lowercase")  # must agree with the initial model
RECIPE_FOLLOWED = ("optimizer", "lr", "clip", "dropout_emb", "dropout_residual",
                   "dropout_att", "dropout_ff", "label_smoothing", "seed", "threads",
                   "max_time")
RECIPE_RNN_ONLY = ("dropout_enc", "dropout_out")  # the RNN's sites: 0 in a Transformer's run
# guided alignment: the head and its weight are followed; the links file is
# not read (the batch log holds each batch's gold rows)
RECIPE_GUIDED = ("guided_weight", "guided_layer", "guided_head", "guided_shift")
RECIPE_GUIDED_FILE = ("guided_links", "guided_links_from_run", "guided_links_bytes",
                      "guided_links_hash", "guided_links_digest")


def read_recipe(path, meta):
    """{setting: value} of an nmt checkpoint's train.*, after checking that
    every setting is known and that the model ones describe the initial
    model (its metadata meta). Raises ValueError naming what does not fit."""
    from torch_baseline_peer import RECIPE_IN_BATCHES, RECIPE_NMT_ONLY
    _, _, m, _ = read_header(path)
    r = {k[len("train."):]: v for k, v in m.items() if k.startswith("train.")}
    if not r:
        raise ValueError("%s has no train.* metadata: not a checkpoint of nmt train" % path)
    if m.get("arch") != "transformer" or meta.get("arch") != "transformer":
        raise ValueError("%s and the initial model must both be Transformers (arch %s, %s)"
                         % (path, m.get("arch"), meta.get("arch")))
    absent = {"tied": "false", "fixnorm": "false", "norm": "layer", "joint_vocab": "false"}
    for k in ("d_model", "heads", "ff", "enc_layers", "dec_layers", "tied", "lowercase", "norm",
              "fixnorm", "joint_vocab"):
        if m.get(k, absent.get(k)) != meta.get(k, absent.get(k)):
            raise ValueError("%s: %s = %s, but the initial model has %s"
                             % (path, k, m.get(k), meta.get(k)))
    # --batch-tokens only cuts the batches, which the log holds as they were
    # cut; --accumulate (several batches a step) is not followed: refused
    known = set(RECIPE_MODEL + RECIPE_FOLLOWED + RECIPE_RNN_ONLY + RECIPE_IN_BATCHES
                + ("batch_tokens",) + RECIPE_NMT_ONLY + RECIPE_GUIDED + RECIPE_GUIDED_FILE)
    unknown = sorted(k for k in r if k not in known)
    if unknown:
        raise ValueError("%s: nmt train setting(s) %s unknown to this script, which cannot "
                         "tell whether they change the training; teach it (RECIPE_* in "
                         "torch_transformer.py)"
                         % (path, ", ".join("train.%s = %s" % (k, r[k]) for k in unknown)))
    missing = sorted(k for k in RECIPE_MODEL + RECIPE_FOLLOWED if k not in r)
    if missing:
        raise ValueError("%s lacks train.%s" % (path, ", train.".join(missing)))
    for k in RECIPE_RNN_ONLY:
        if float(r.get(k, 0)) != 0:
            raise ValueError("%s: train.%s = %s, an RNN setting, in a Transformer's run"
                             % (path, k, r[k]))
    flag = {"0": "false", "1": "true"}
    if flag.get(r["tied_embeddings"]) != meta.get("tied", "false"):
        raise ValueError("%s: train.tied_embeddings = %s, but the initial model has tied %s"
                         % (path, r["tied_embeddings"], meta.get("tied", "false")))
    if flag.get(r["lowercase"]) != meta.get("lowercase", "false"):
        raise ValueError("%s: train.lowercase = %s, but the initial model has lowercase %s"
                         % (path, r["lowercase"], meta.get("lowercase", "false")))
    if r["optimizer"] not in ("adam", "sgd", "adadelta"):
        raise ValueError("%s: train.optimizer = %s, which this script does not have"
                         % (path, r["optimizer"]))
    if "guided_links" in r and sorted(k for k in RECIPE_GUIDED if k not in r):
        raise ValueError("%s: a guided run lacks train.%s" % (path, ", train.".join(
            k for k in RECIPE_GUIDED if k not in r)))
    return r


def open_batches(path):
    """(the first line's record of the weights the steps start from, an
    iterator of each step's line) of `nmt train --batch-log`."""
    import gzip
    f = (gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open)(path, "rt")
    first = json.loads(f.readline() or "{}")

    def steps():
        with f:
            for k, line in enumerate(f, 2):
                try:
                    yield json.loads(line)
                except ValueError:  # a log cut short by a killed run
                    raise ValueError("%s: line %d is not JSON (a log cut short?)" % (path, k))
    return first, steps()


def cmd_follow(a):
    from torch_baseline_model import read_safetensors, write_safetensors
    if bool(a.snapshot_every) != bool(a.snapshot_dir):
        raise ValueError("--snapshot-every and --snapshot-dir go together")
    P, meta = read_model(a.init_from)
    names, crc = weight_names(a.init_from)
    r = read_recipe(a.recipe_from, meta)
    if not a.batches and not a.dry_run:
        raise ValueError("--batches is required (but for --dry-run)")
    first, logged = open_batches(a.batches) if a.batches else ({}, None)
    if a.batches and (first.get("weights_crc32") != "%08x" % crc
                      or first.get("start_step") != 0):
        raise ValueError("%s starts from other weights (step %s, crc32 %s) than %s (crc32 "
                         "%08x): not the batches of a run from this model"
                         % (a.batches, first.get("start_step"), first.get("weights_crc32"),
                            a.init_from, crc))
    rate = {k: float(r[k]) for k in ("dropout_emb", "dropout_residual", "dropout_att",
                                     "dropout_ff")}
    follows = {"optimizer": r["optimizer"], "lr": float(r["lr"]), "clip": float(r["clip"]),
               **rate, "label_smoothing": float(r["label_smoothing"]), "seed": int(r["seed"]),
               "threads": int(r["threads"]),
               "max_time": a.max_time if a.max_time is not None else float(r["max_time"])}
    if "guided_links" in r:
        follows.update(guided_weight=float(r["guided_weight"]),
                       guided_layer=int(r["guided_layer"]), guided_head=int(r["guided_head"]))
    if a.dry_run:
        print(json.dumps({"recipe": r, "follows": follows, "weights_crc32": "%08x" % crc}))
        return 0
    torch.set_num_threads(follows["threads"])
    torch.manual_seed(follows["seed"])
    model = Model(meta, P, 0.0)
    model.set_dropout(rate["dropout_emb"], rate["dropout_residual"], rate["dropout_att"],
                      rate["dropout_ff"])
    model.train()
    exported = model.export()
    if sorted(exported) != sorted(names):
        raise ValueError("%s: its tensors are not this model's (%s)" % (
            a.init_from, ", ".join(sorted(set(names) ^ set(exported)))))
    if any(not torch.equal(exported[k], P[k]) for k in names):
        raise ValueError("%s: a tensor does not come back as it was loaded" % a.init_from)
    params = list(model.parameters())
    guided = "guided_weight" in follows
    if guided:
        model.watch_cross(follows["guided_layer"])
    lr0 = follows["lr"]
    if follows["optimizer"] == "adam":  # nmt's: betas 0.9, 0.999, eps 1e-8 (torch's defaults)
        opt = torch.optim.Adam(params, lr=lr0)
    elif follows["optimizer"] == "adadelta":  # nmt's rho and eps; lr multiplies the update
        opt = torch.optim.Adadelta(params, lr=lr0, rho=0.95, eps=1e-6)
    else:
        opt = torch.optim.SGD(params, lr=lr0)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=follows["label_smoothing"])
    plain = nn.CrossEntropyLoss(ignore_index=PAD)
    clip = follows["clip"] if follows["clip"] > 0 else float("inf")
    max_time = follows["max_time"]
    # what a snapshot carries besides the weights: the initial file's keys
    # without a dot (crc32 aside: the subword model's settings, tied, the
    # sizes) and its tensors that are neither weights nor moments (subwords)
    arrays, imeta, _ = read_safetensors(a.init_from)
    keys = {k: v for k, v in imeta.items() if "." not in k and k != "crc32"}
    kept = [(n, arr) for n, arr in arrays.items()
            if n not in set(names) and not is_moment(n)]
    log = open(a.log, "w") if a.log else None
    if log:
        log.write("step\tloss\tgrad_norm\tlr\telapsed_s\n")
    snaps = None
    if a.snapshot_dir:
        import os
        os.makedirs(a.snapshot_dir, exist_ok=True)
        snaps = open(os.path.join(a.snapshot_dir, "snapshots.tsv"), "w")
        snaps.write("step\telapsed_s\tsave_s\tfile\n")
    # the training clock: wall time from the first step, the time of saving
    # snapshots excluded (it is recorded beside them)
    clock0, saving = time.perf_counter(), 0.0
    train_s = lambda: time.perf_counter() - clock0 - saving
    next_snap = a.snapshot_every or 0.0
    step, lr_now, loss, ended_by, last_snap = 0, lr0, None, "batches", -1

    def snapshot():
        nonlocal saving, last_snap
        import os
        if last_snap == step:  # the end came right after one
            return
        last_snap = step
        t = train_s()
        name = "snapshot-%d.safetensors" % step
        w0 = time.perf_counter()
        W = model.export()
        m = dict(keys, **{"torch.step": str(step), "torch.elapsed_s": "%.3f" % t})
        write_safetensors(os.path.join(a.snapshot_dir, name),
                          [(n, W[n].numpy()) for n in names] + kept, m)
        dt = time.perf_counter() - w0
        saving += dt
        snaps.write("%d\t%.3f\t%.3f\t%s\n" % (step, t, dt, name))
        snaps.flush()
        print("snapshot at step %d, %.1f s of training (saved in %.2f s)" % (step, t, dt),
              file=sys.stderr)

    for b in logged:
        if max_time and train_s() >= max_time:
            ended_by = "time"
            break
        if b.get("lr") is None:
            raise ValueError("%s: step %d has no lr: cannot follow nmt's schedule"
                             % (a.batches, step + 1))
        if b["lr"] != lr_now:  # nmt's lr of this very step (its warm-up included)
            for g in opt.param_groups:
                g["lr"] = b["lr"]
            lr_now = b["lr"]
        src, src_pad, tgt_in, tgt_pad, tgt_out = batch_ids(b)
        opt.zero_grad(set_to_none=True)
        logits = model.decode(model.encode(src, src_pad), src_pad, tgt_in, tgt_pad)
        V = logits.shape[-1]
        # the gradient is the training loss's; the loss shown is -log p(y), as nmt's
        objective = loss_fn(logits.reshape(-1, V), tgt_out.reshape(-1))
        if guided:
            if "guide" not in b:
                raise ValueError("%s: step %d has no gold rows, but its run was guided"
                                 % (a.batches, step + 1))
            # the weight over the batch's target tokens times -sum p log alpha
            alpha = model.cross_weights[:, follows["guided_head"]]
            at = [(k, i, j, p) for k, rows in enumerate(b["guide"]) for i, j, p in rows]
            k, i, j, p = (torch.tensor(c) for c in zip(*at)) if at else ([],) * 4
            term = -(p * torch.log(alpha[k, i, j])).sum() if at else 0
            objective = objective + follows["guided_weight"] * term / int((tgt_out != PAD).sum())
        objective.backward()
        loss = float(plain(logits.detach().reshape(-1, V), tgt_out.reshape(-1)))
        norm = float(torch.nn.utils.clip_grad_norm_(params, clip))
        opt.step()
        step += 1
        if log:
            log.write("%d\t%.6f\t%.6f\t%.9g\t%.3f\n" % (step, loss, norm, lr_now, train_s()))
            log.flush()
        if a.max_steps and step >= a.max_steps:
            ended_by = "max_steps"
            break
        if snaps and train_s() >= next_snap and not (max_time and train_s() >= max_time):
            snapshot()
            while next_snap <= train_s():
                next_snap += a.snapshot_every
    elapsed = train_s()
    if snaps:
        snapshot()
        snaps.close()
    if log:
        log.close()
    print(json.dumps({"total_steps": step, "train_seconds": elapsed, "save_seconds": saving,
                      "steps_per_s": step / elapsed if elapsed > 0 else float("nan"),
                      "ended_by": ended_by, "last_loss": loss, "follows": follows,
                      "params": sum(p.numel() for p in params), "peak_rss_mb": peak_rss_mb(),
                      "threads": torch.get_num_threads()}))


@torch.no_grad()
def search(model, src_ids, beam, max_ratio=2.0, max_extra=10, alpha=0.6):
    src, src_pad = pad([src_ids], tail=EOS)
    H = model.encode(src, src_pad)
    limit = int(max_ratio * len(src_ids) + max_extra)
    hyps = [([], 0.0)]
    done = []
    for _ in range(limit + 1):
        prefix, _ = pad([h for h, _ in hyps], lead=BOS)
        logp = torch.log_softmax(
            model.decode(H.expand(len(hyps), -1, -1), src_pad.expand(len(hyps), -1), prefix,
                         prefix == -1)[:, -1], -1)
        cand = []
        for k, (h, s) in enumerate(hyps):
            top = torch.topk(logp[k], beam)
            cand += [(h + [int(i)], s + float(v)) for v, i in zip(top.values, top.indices)]
        cand.sort(key=lambda c: -c[1])
        hyps = []
        for h, s in cand:
            if h[-1] == EOS:
                done.append((h[:-1], s / (len(h) ** alpha if beam > 1 else 1)))
            elif len(hyps) < beam:
                hyps.append((h, s))
        if len(done) >= beam or not hyps:
            break
    best = max(done, key=lambda c: c[1]) if done else hyps[0]
    return best[0]


def cmd_translate(a):
    P, meta = read_model(a.model)
    model = Model(meta, P, 0.0).eval()
    sources = [json.loads(line) for line in open(a.src)]
    t0 = time.perf_counter()
    for s in sources:
        search(model, s, a.beam)
    dt = time.perf_counter() - t0
    print(json.dumps({"sentences": len(sources), "sentences_per_s": len(sources) / dt,
                      "beam": a.beam, "peak_rss_mb": peak_rss_mb(),
                      "threads": torch.get_num_threads()}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--init-from", required=True)
    t.add_argument("--batches", required=True)
    t.add_argument("--steps", type=int, default=50)
    t.add_argument("--warmup-steps", type=int, default=3)
    t.add_argument("--lr", type=float, default=5e-4)
    t.add_argument("--dropout", type=float, default=0.0)
    t.add_argument("--label-smoothing", type=float, default=0.0)
    t.add_argument("--threads", type=int, default=2)
    f = sub.add_parser("follow")
    f.add_argument("--init-from", required=True, help="nmt train --max-steps 0's checkpoint")
    f.add_argument("--batches", help="the run's --batch-log (its first line names the initial "
                   "weights; every step's line its batch and lr)")
    f.add_argument("--recipe-from", required=True, metavar="CHECKPOINT",
                   help="the run's checkpoint: its train.* settings are followed")
    f.add_argument("--max-time", type=float, default=None, metavar="SECONDS",
                   help="training time (default: the recipe's max_time)")
    f.add_argument("--max-steps", type=int, default=0)
    f.add_argument("--snapshot-every", type=float, default=0, metavar="SECONDS")
    f.add_argument("--snapshot-dir", metavar="DIR")
    f.add_argument("--log", help="step, loss, grad_norm (before clipping), lr, elapsed_s")
    f.add_argument("--dry-run", action="store_true",
                   help="check the recipe, the initial model and the batch log; print what "
                   "would be followed")
    r = sub.add_parser("translate")
    r.add_argument("--model", required=True)
    r.add_argument("--src", required=True)
    r.add_argument("--beam", type=int, default=1)
    r.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    if a.cmd == "follow":  # its threads and seed are the recipe's
        return cmd_follow(a)
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    return cmd_train(a) if a.cmd == "train" else cmd_translate(a)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, OSError) as e:  # bad input: one line, not a traceback
        print("torch_transformer.py: error: %s" % e, file=sys.stderr)
        sys.exit(1)
