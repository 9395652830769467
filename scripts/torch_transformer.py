#!/usr/bin/env python3
"""The PyTorch peer of nmt's Transformer: the same model built from
PyTorch's own layers (torch.nn.TransformerEncoderLayer and
TransformerDecoderLayer with norm_first=True and ReLU, which are the
design's pre-norm layers), with nmt's embeddings scaled by sqrt(d),
sinusoidal positions and tied output, loaded from an nmt model file.

  torch_transformer.py train --init-from MODEL --batches LOG [--steps N]
        follows nmt train's batches (its --batch-log) with Adam at --lr
        (no clipping): steps/s over the steps after --warmup-steps, the loss
        of each step (to hold against nmt's log.tsv from the same weights)
  torch_transformer.py translate --model MODEL --src IDS.json [--beam K]
        greedy or beam search over source id lists (JSON Lines of ids, as
        nmt's batch log writes them), recomputing the whole prefix at each
        step (torch.nn.TransformerDecoder keeps no key/value cache):
        sentences/s

Both print one JSON line of figures (with the peak RSS) on stdout. Run with a
python3 that has torch (Debian's python3-torch); it is scripts/bench's
peer, not part of nmt.
"""
import argparse
import json
import math
import resource
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn

PAD, UNK, BOS, EOS = 0, 1, 2, 3


def read_model(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    meta = h.pop("__metadata__", {})
    out = {}
    for name, t in h.items():
        if t["dtype"] != "F32" or name.startswith(("adam.", "adadelta.")):
            continue
        s, e = t["data_offsets"]
        out[name] = torch.from_numpy(
            np.frombuffer(b[8 + n + s:8 + n + e], dtype="<f4").reshape(t["shape"]).copy())
    return out, meta


def positions(n, d):
    p = torch.zeros(n, d)
    k = torch.arange(d)
    freq = torch.pow(10000.0, -(k - k % 2).double() / d)
    ang = torch.arange(n).double()[:, None] * freq[None, :]
    p[:, 0::2] = torch.sin(ang[:, 0::2]).float()
    p[:, 1::2] = torch.cos(ang[:, 1::2]).float()
    return p


class Model(nn.Module):
    def __init__(self, meta, P, dropout):
        super().__init__()
        d, h, F = int(meta["d_model"]), int(meta["heads"]), int(meta["ff"])
        Le, Ld = int(meta["enc_layers"]), int(meta["dec_layers"])
        self.d, self.tied = d, meta.get("tied") == "true"
        self.src_emb = nn.Parameter(P["src_emb"].clone())
        self.tgt_emb = nn.Parameter(P["tgt_emb"].clone())
        kw = dict(d_model=d, nhead=h, dim_feedforward=F, dropout=dropout, activation="relu",
                  norm_first=True, batch_first=True)
        self.enc = nn.ModuleList([nn.TransformerEncoderLayer(**kw) for _ in range(Le)])
        self.dec = nn.ModuleList([nn.TransformerDecoderLayer(**kw) for _ in range(Ld)])
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
            ln.bias.copy_(P[p + name + ".b"])

    def embed(self, table, ids):
        return self.drop(math.sqrt(self.d) * table[ids] + self.pos[:ids.shape[1]])

    def encode(self, src, src_pad):
        x = self.embed(self.src_emb, src)
        for L in self.enc:
            x = L(x, src_key_padding_mask=src_pad)
        return self.enc_ln(x)

    def decode(self, H, src_pad, tgt_in, tgt_pad):
        T = tgt_in.shape[1]
        causal = torch.triu(torch.full((T, T), float("-inf")), 1)
        z = self.embed(self.tgt_emb, tgt_in)
        for L in self.dec:
            z = L(z, H, tgt_mask=causal, tgt_key_padding_mask=tgt_pad,
                  memory_key_padding_mask=src_pad)
        t = self.dec_ln(z)
        return t @ (self.tgt_emb if self.tied else self.out_W).T + self.out_b


def pad(lists, lead=None, tail=None):
    seqs = [([lead] if lead is not None else []) + s + ([tail] if tail is not None else [])
            for s in lists]
    T = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), T, dtype=torch.long)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
    return ids, ids == PAD


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
        src, src_pad = pad(b["src"], tail=EOS)
        tgt_in, tgt_pad = pad(b["tgt"], lead=BOS)
        tgt_out, _ = pad(b["tgt"], tail=EOS)
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


def main():
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
    r = sub.add_parser("translate")
    r.add_argument("--model", required=True)
    r.add_argument("--src", required=True)
    r.add_argument("--beam", type=int, default=1)
    r.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    return cmd_train(a) if a.cmd == "train" else cmd_translate(a)


if __name__ == "__main__":
    sys.exit(main())
