"""The PyTorch baseline's commands for the parity tests (tests/parity.py):
`init` writes a model file, `grad` the loss and autograd gradients of a
model on a batch, and `selftest` checks the batched model against a plain
per-sentence numpy one, padding invariance and gradcheck.
"""

import json
import math
import os

import numpy as np
import torch

from torch_baseline_model import (ATTENTIONS, BOS, EOS, PLAIN, SPECIALS, Config, Noise,
                                  batch_loss, check_ids, init_params, load_model,
                                  read_batch_json, read_safetensors, save_model, tensor_table,
                                  write_safetensors)


# ---- a plain per-sentence implementation, for selftest ----------------------

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


# ---- init, grad, selftest ---------------------------------------------------

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
