#!/usr/bin/env python3
"""The parity suite: nmt's loss and hand-written gradients against PyTorch
autograd (pytorch/torch_baseline.py), for all 27 configurations of cell,
attention and encoder, untied and with tied output embeddings.

    parity.py PARITY_GRAD_EXE [ATTENTION...]

For each of rnn/gru/lstm x bahdanau/general/scaled-dot/none x bi/uni, and
rnn/gru/lstm x dot x uni (dot needs D*H = H), x untied/tied: the torch
script writes a random model file, tests/parity_grad (C) and the torch
script compute loss and gradients on the same batches, and every tensor is
compared, three ways: the plain loss; with label smoothing 0.1; and with
dropout 0.3 at all three sites (embeddings, annotations, deep output; the
masks nmt drew, applied by torch) and label smoothing. The truth is torch in
float64; the C program computes in float32. A tensor passes when
max|C - torch| / max|torch| <= 1e-4; the loss, the objective (the smoothed
loss) and each sentence's nll when their relative difference is <= 1e-5.

Needs a python3 with torch and numpy: tries $NMT_PYTHON, /usr/bin/python3,
python3, and fails (never skips) when none has them.
"""

import contextlib
import io
import math
import os
import shutil
import subprocess
import sys
import tempfile

GRAD_TOL = 1e-4
LOSS_TOL = 1e-5


def reexec_with_torch():
    """Runs this script again under a python3 that imports torch and numpy."""
    if not os.environ.get("NMT_PARITY_REEXEC"):
        for cand in (os.environ.get("NMT_PYTHON"), "/usr/bin/python3", "python3"):
            exe = shutil.which(cand) if cand else None
            if not exe or os.path.realpath(exe) == os.path.realpath(sys.executable):
                continue
            ok = subprocess.run([exe, "-c", "import torch, numpy"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode == 0
            if ok:
                os.environ["NMT_PARITY_REEXEC"] = "1"
                os.execv(exe, [exe] + sys.argv)
    print("FAIL: no python3 with torch and numpy (tried $NMT_PYTHON, /usr/bin/python3, "
          "python3); install python3-torch and python3-numpy", file=sys.stderr)
    sys.exit(1)


try:
    import numpy as np
    import torch  # noqa: F401  (the baseline needs it; fail early and clearly)
except ImportError:
    reexec_with_torch()

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("NMT_SOURCE_ROOT") or os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "pytorch"))
import torch_baseline as tb  # noqa: E402

# Sizes of the brief: E=8, H=7, A=6, O=5, Vs=13, Vt=11. Source token ids are
# 1 (<unk>) and 4..12, target 1 and 4..10.
SIZES = ["--emb", "8", "--hidden", "7", "--att-dim", "6", "--src-vocab", "13",
         "--tgt-vocab", "11"]
# the deep output's size: 5, or tied to the embeddings' 8
OUT_DIM = {False: ["--out-dim", "5"], True: ["--out-dim", "8", "--tied-embeddings"]}
# the gradient checks: (name, parity_grad's options; torch's are the same but
# the masks, which it reads from parity_grad's file)
DROPOUT = ["--dropout-emb", "0.3", "--dropout-enc", "0.3", "--dropout-out", "0.3"]
CASES = [("plain", []), ("ls", ["--label-smoothing", "0.1"]),
         ("dropout", DROPOUT + ["--label-smoothing", "0.1"])]
BATCHES = {
    # different lengths both ways, length-1 sentences on each side
    "lengths": {"src": [[4, 5, 6, 7, 8], [9], [10, 11, 12], [5, 4]],
                "tgt": [[4], [5, 6, 7, 8], [9, 10], [4, 6, 8]]},
    # <unk> and repeated tokens: embedding rows gather several gradients
    "repeats": {"src": [[1, 4, 4, 1, 5], [6, 6, 6], [1], [7, 8, 7, 8, 7, 8]],
                "tgt": [[5, 5, 1], [1], [6, 7, 6, 7], [8, 8, 8, 8, 8]]},
    # empty sides (nmt score keeps such pairs): only </s> / <s> remain
    "empty": {"src": [[], [4, 5], [6]], "tgt": [[7], [], []]},
}


def configs(kinds=tuple(tb.ATTENTIONS)):
    for tied in (False, True):
        for cell in ("rnn", "gru", "lstm"):
            for att in kinds:
                for bi in (True, False):
                    if att == "dot" and bi:
                        continue  # refused: s . h_j needs D*H = H
                    yield cell, att, bi, tied


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def compare(cfg, c_path, t_path, dropped):
    """Returns (errors list, loss error (the plain loss and the objective),
    worst grad error, its tensor, torch-float32 worst, per-sentence worst).
    With dropped, the C file must hold the masks of all four sites, each
    with units dropped and kept."""
    errors = []
    c, cmeta, ccrc = tb.read_safetensors(c_path)
    t, tmeta, _ = tb.read_safetensors(t_path)
    if cmeta.get("crc32") != "%08x" % ccrc:
        errors.append("C file crc32 %s does not match its data %08x" % (cmeta.get("crc32"), ccrc))
    # an nmt-written file must read as a model in the torch script too
    try:
        ccfg = tb.Config.from_metadata(cmeta)
        if ccfg.metadata() != cfg.metadata():
            errors.append("C file metadata differs from the model's")
    except (KeyError, ValueError) as e:
        errors.append("C file metadata unreadable: %s" % e)
    loss_err = 0.0
    for key in ("loss", "objective"):
        e = rel(float(cmeta[key]), float(tmeta[key]))
        loss_err = max(loss_err, e)
        if e > LOSS_TOL:
            errors.append("%s C %s torch %s (rel %.2e)" % (key, cmeta[key], tmeta[key], e))
    cs = [float(x) for x in cmeta["sentence_nll"].split(",")]
    ts = [float(x) for x in tmeta["sentence_nll"].split(",")]
    sent_err = max(rel(a, b) for a, b in zip(cs, ts)) if len(cs) == len(ts) else float("inf")
    if sent_err > LOSS_TOL:
        errors.append("sentence nll C %s torch %s" % (cs, ts))
    table = tb.tensor_table(cfg)
    masks = {n for n in c if n.startswith("dropout.")}
    extra = set(c) - {n for n, _ in table} - masks
    if extra:
        errors.append("C file has unexpected tensors %s" % sorted(extra))
    want = {"dropout.src_emb", "dropout.tgt_emb", "dropout.enc", "dropout.out"} if dropped else set()
    if masks != want:
        errors.append("C file has the masks %s, expected %s" % (sorted(masks), sorted(want)))
    for n in masks & want:
        if not (c[n] == 0).any() or not (c[n] > 1).any():
            errors.append("mask %s drops nothing or everything" % n)
    worst, worst_name, worst32 = 0.0, "", 0.0
    for name, shape in table:
        if name not in c:
            errors.append("C gradient %s missing" % name)
            continue
        if tuple(c[name].shape) != shape:
            errors.append("C gradient %s shape %s, expected %s" % (name, c[name].shape, shape))
            continue
        g = c[name].astype(np.float64)
        truth = t[name]
        scale = np.abs(truth).max()
        diff = np.abs(g - truth).max()
        if not np.isfinite(g).all():
            errors.append("%s: C gradient not finite" % name)
            continue
        err = diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))
        if err > worst or not worst_name:
            worst, worst_name = err, name
        if err > GRAD_TOL:
            errors.append("%s: max|diff| %.3g over max|grad| %.3g = %.2e" % (name, diff, scale, err))
        s32 = np.abs(t["float32." + name] - truth).max()
        worst32 = max(worst32, s32 / scale if scale > 0 else 0.0)
    return errors, loss_err, worst, worst_name, worst32, sent_err


def as_text(ids, vocab, unknown):
    """A sentence of the synthetic vocabulary whose tokenization gives ids
    (id 1, <unk>, written as a word the vocabulary lacks)."""
    return " ".join(unknown if i == 1 else vocab[i] for i in ids)


def ulp_half(x):
    """Half a float32 unit in the last place of each element: the rounding
    of one float32 subtraction that produced x."""
    x = np.abs(x.astype(np.float32))
    return (np.spacing(x).astype(np.float64)) / 2


def end_to_end(nmt, model, cfg, pairs, tmp, tag):
    """The model (written by torch) through nmt's own command line: `nmt
    score` must give torch's loss, and one step of `nmt train --optimizer sgd
    --lr 1 --clip 0` must change every weight by minus torch's gradient, and
    with --label-smoothing 0.1 and --clip at half that gradient's norm by
    minus half of the smoothed loss's gradient, and with --word-dropout 0.3
    (every other dropout 0) by minus the gradient of the ids its --batch-log
    recorded (the source and decoder input the model read, the labels as
    they were) (the checkpoints, written by nmt, read back here). Returns
    (errors, loss rel, worst step error, worst word dropout step error)."""
    errors = []
    src = os.path.join(tmp, "e2e.src")
    tgt = os.path.join(tmp, "e2e.tgt")
    with open(src, "w") as f:
        f.writelines(as_text(s, cfg.src_vocab, "zzz") + "\n" for s, _ in pairs)
    with open(tgt, "w") as f:
        f.writelines(as_text(t, cfg.tgt_vocab, "qqq") + "\n" for _, t in pairs)
    P64 = {k: v.to(torch.float64) for k, v in tb.load_model(model)[1].items()}

    def gradient(ls, batch=pairs):
        P = {k: v.clone().requires_grad_(True) for k, v in P64.items()}
        objective, _, loss = tb.batch_loss(cfg, P, batch, tb.Noise(label_smoothing=ls))
        objective.backward()
        return loss, {n: P[n].grad.numpy() for n in P}
    loss, grad = gradient(0.0)
    grad_ls = gradient(0.1)[1]

    r = subprocess.run([nmt, "score", "-m", model, "--src", src, "--tgt", tgt],
                       capture_output=True, text=True)
    fields = dict(l.split(None, 1) for l in r.stdout.splitlines() if l.strip())
    if r.returncode != 0 or "loss" not in fields:
        return ["nmt score exit %d: %s" % (r.returncode, r.stderr.strip()[:300])], 0, 0
    score_err = rel(float(fields["loss"]), loss.item())
    if score_err > LOSS_TOL:
        errors.append("nmt score loss %s, torch %.9g" % (fields["loss"], loss.item()))

    # one step unclipped, one clipped to half the gradient's norm (the step
    # is then the gradient times clip / norm)
    gnorm_ls = math.sqrt(sum(float((g ** 2).sum()) for g in grad_ls.values()))
    worst, worst_wd = 0.0, 0.0
    for clip, factor, ls, G in ((0.0, 1.0, 0.0, grad), (gnorm_ls / 2, 0.5, 0.1, grad_ls),
                                (0.0, 1.0, 0.0, None)):
        wd = G is None  # word dropout: the gradient of the ids the batch log holds
        out = os.path.join(tmp, "run-%s-%g%s" % (tag.replace("/", "-"), factor,
                                                 "-wd" if wd else ""))
        r = subprocess.run([nmt, "train", "--init-from", model, "--src", src, "--tgt", tgt,
                            "--out", out, "--optimizer", "sgd", "--lr", "1", "--clip",
                            repr(clip), "--dropout", "0", "--label-smoothing", repr(ls),
                            "--no-shuffle", "--batch-size", str(len(pairs)), "--max-steps", "1",
                            "--threads", "1"] +
                           (["--word-dropout", "0.3", "--batch-log", out + ".log"] if wd else []),
                           capture_output=True, text=True)
        if r.returncode != 0:
            errors.append("nmt train exit %d: %s" % (r.returncode, r.stderr.strip()[:300]))
            continue
        if wd:
            steps = [b for _, _, b in tb.open_batch_log(out + ".log")[1]]
            read = steps[0] if len(steps) == 1 else []
            if [list(p[1]) for p in read] != [list(t) for _, t in pairs]:
                errors.append("word dropout: the batch log's labels are not the targets")
                continue
            if not any(list(p[0]) + list(p[2]) != list(s) + list(t)
                       for p, (s, t) in zip(read, pairs)):
                errors.append("word dropout 0.3 replaced nothing: the check proves nothing")
            G = gradient(0.0, read)[1]
        try:
            _, new = tb.load_model(os.path.join(out, "checkpoint.safetensors"), torch.float64)
        except (ValueError, KeyError, OSError) as e:
            errors.append("checkpoint written by nmt does not load in torch: %s" % e)
            continue
        for name, _ in tb.tensor_table(cfg):
            old, nw = P64[name].numpy(), new[name].numpy()
            g = G[name] * factor
            # (old - new) is exact in float64; nmt's float update rounds once
            diff = np.maximum(np.abs((old - nw) - g) - ulp_half(nw), 0).max()
            err = diff / max(np.abs(g).max(), 1e-30)
            if wd:
                worst_wd = max(worst_wd, err)
            else:
                worst = max(worst, err)
            if err > GRAD_TOL:
                errors.append("SGD step (clip %g, label smoothing %g%s) on %s: max|(old - new) - "
                              "step| %.3g = %.2e of max|step|"
                              % (clip, ls, ", word dropout 0.3" if wd else "", name, diff, err))
    return errors, score_err, worst, worst_wd


def adam_run(nmt, tmp, tied=False, ls=0.0, attention="bahdanau", bi=True, steps=30):
    """Training trajectory: `steps` Adam steps (lr 3e-3, clip 0.1, below
    every gradient norm; two batches of 16 in corpus order) by `nmt train`
    and by torch from the same model must give the same loss at every step
    (log.tsv's 4 decimals) and final models of the same loss. (Adam hardly
    sees a clip that scales every step, so clipping itself is checked by the
    SGD steps of end_to_end.) With tied embeddings and label smoothing ls the
    steps follow the smoothed loss's gradient and the losses compared stay
    the plain ones. Returns (errors, worst step rel, final rel)."""
    rng = np.random.RandomState(3)
    src = os.path.join(tmp, "adam.src")
    tgt = os.path.join(tmp, "adam.tgt")
    pairs = [([int(x) for x in rng.randint(4, 50, rng.randint(1, 10))],
              [int(x) for x in rng.randint(4, 40, rng.randint(1, 10))]) for _ in range(32)]
    name = "adam-%s%s%s" % (attention, "-bi" if bi else "-uni", "-tied" if tied else "")
    model = os.path.join(tmp, name + ".safetensors")
    quiet(["init", "--cell", "lstm", "--attention", attention,
           "--bidirectional" if bi else "--unidirectional", "--emb", "16", "--hidden", "16",
           "--att-dim", "16", "--out-dim", "16", "--src-vocab", "50", "--tgt-vocab", "40",
           "--init", "uniform", "--scale", "0.3", "--seed", "7", "--out", model]
          + (["--tied-embeddings"] if tied else []))
    cfg, P = tb.load_model(model)
    with open(src, "w") as f:
        f.writelines(as_text(a, cfg.src_vocab, "zzz") + "\n" for a, _ in pairs)
    with open(tgt, "w") as f:
        f.writelines(as_text(b, cfg.tgt_vocab, "qqq") + "\n" for _, b in pairs)
    out = os.path.join(tmp, "run-" + name)
    r = subprocess.run([nmt, "train", "--init-from", model, "--src", src, "--tgt", tgt,
                        "--out", out, "--optimizer", "adam", "--lr", "3e-3", "--clip", "0.1",
                        "--dropout", "0", "--label-smoothing", repr(ls),
                        "--no-shuffle", "--batch-size", "16", "--epochs", "100",
                        "--max-steps", str(steps), "--report-every", "1", "--threads", "1", "-q"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return ["nmt train (adam) exit %d: %s" % (r.returncode, r.stderr.strip()[:300])], 0, 0
    with open(os.path.join(out, "log.tsv")) as f:
        rows = [l.rstrip("\n").split("\t") for l in f]
    col = rows[0].index("loss")
    gcol = rows[0].index("grad_norm")
    least = min(float(row[gcol]) for row in rows[1:])
    if least <= 0.1:
        errors_clip = ["a gradient norm %g <= the clip 0.1: clipping not exercised" % least]
    else:
        errors_clip = []
    nmt_loss = {int(row[0]): float(row[col]) for row in rows[1:]}
    # torch, float32 as nmt trains
    P = {k: v.clone().requires_grad_(True) for k, v in P.items()}
    params = [P[n] for n, _ in tb.tensor_table(cfg)]
    opt = torch.optim.Adam(params, lr=3e-3)
    errors, worst = errors_clip, 0.0
    noise = tb.Noise(label_smoothing=ls)
    for step in range(1, steps + 1):
        batch = pairs[16 * ((step - 1) % 2):16 * ((step - 1) % 2) + 16]
        objective, _, loss = tb.batch_loss(cfg, P, batch, noise)
        opt.zero_grad()
        objective.backward()
        torch.nn.utils.clip_grad_norm_(params, 0.1)
        opt.step()
        if step not in nmt_loss:
            errors.append("log.tsv has no row for step %d" % step)
            continue
        # the log rounds to 4 decimals
        e = max(abs(nmt_loss[step] - loss.item()) - 5e-5, 0) / loss.item()
        worst = max(worst, e)
        if e > 1e-4:
            errors.append("step %d: nmt loss %.4f, torch %.6f" % (step, nmt_loss[step], loss.item()))
    with torch.no_grad():
        P64 = {k: v.detach().to(torch.float64) for k, v in P.items()}
        _, N64 = tb.load_model(os.path.join(out, "checkpoint.safetensors"), torch.float64)
        lt = tb.batch_loss(cfg, P64, pairs)[0].item()
        ln = tb.batch_loss(cfg, N64, pairs)[0].item()
    final = rel(ln, lt)
    if final > 1e-4:
        errors.append("after %d steps: loss of nmt's model %.8g, of torch's %.8g" % (steps, ln, lt))
    return errors, worst, final


def speed_peer_runs(tmp):
    """The baseline's speed-peer commands at a tiny size: `train` reports its
    figures as JSON and writes a model, `translate` gives one line per input
    line, greedy and beam. Returns errors."""
    errors = []
    src, tgt = os.path.join(tmp, "adam.src"), os.path.join(tmp, "adam.tgt")
    model = os.path.join(tmp, "peer.safetensors")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        tb.main(["train", "--src", src, "--tgt", tgt, "--emb", "8", "--hidden", "8",
                 "--att-dim", "8", "--out-dim", "8", "--batch-size", "8", "--max-steps", "6",
                 "--threads", "1", "--out", model])
    res = tb.json.loads(buf.getvalue().strip().splitlines()[-1])
    if res.get("steps") != 4 or not res.get("steps_per_s", 0) > 0 \
            or not res.get("tgt_tok_per_s", 0) > 0:
        errors.append("train reported %s" % res)
    # nmt train's recipe options, with their meaning
    tied = os.path.join(tmp, "peer-tied.safetensors")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        tb.main(["train", "--src", src, "--tgt", tgt, "--emb", "8", "--hidden", "8",
                 "--att-dim", "8", "--out-dim", "8", "--batch-size", "8", "--max-steps", "6",
                 "--threads", "1", "--tied-embeddings", "--label-smoothing", "0.1",
                 "--dropout", "0.1", "--dropout-enc", "0.2", "--out", tied])
    res = tb.json.loads(buf.getvalue().strip().splitlines()[-1])
    cfg_t, P_t = tb.load_model(tied)
    if not cfg_t.tied or "out.W" in P_t or not res.get("last_loss", 0) > 0:
        errors.append("train --tied-embeddings --label-smoothing --dropout*: tied %s, "
                      "tensors %s, %s" % (cfg_t.tied, sorted(P_t), res))
    for beam in ("1", "3"):
        out = os.path.join(tmp, "peer-%s.txt" % beam)
        with contextlib.redirect_stderr(io.StringIO()):
            tb.main(["translate", "-m", model, "-i", src, "-o", out, "--beam", beam,
                     "--max-ratio", "1", "--threads", "1"])
        with open(out) as f, open(src) as g:
            n_out, n_in = len(f.readlines()), len(g.readlines())
        if n_out != n_in:
            errors.append("translate --beam %s: %d lines for %d" % (beam, n_out, n_in))
    return errors


def greedy_check(nmt, model, cfg, sources, tmp, tag):
    """nmt translate --beam 1 (the step-by-step inference code, not the
    training pass) against torch's greedy search in float64: the same
    tokens and the same score (--alpha 0 --n-best 1: the log-probability of
    the words and of </s> when the translation ended before the length
    limit). Returns (errors, worst score rel, sentences that ended)."""
    path = os.path.join(tmp, "greedy.src")
    with open(path, "w") as f:
        f.writelines(as_text(s, cfg.src_vocab, "zzz") + "\n" for s in sources)
    # a model that ends every translation at once checks little: lower
    # p(</s>) until torch's translations hold some words
    _, P = tb.load_model(model)
    for bias in np.arange(0.0, -8.0, -0.25):
        Pb = dict(P, **{"out.b": P["out.b"].clone()})
        Pb["out.b"][tb.EOS] += float(bias)
        if sum(len(t) for t, _, _ in tb.translate_batch(cfg, Pb, sources, 1, 2.0)) \
                >= 2 * len(sources):
            break
    model = os.path.join(tmp, "greedy.safetensors")
    tb.save_model(model, cfg, Pb)
    r = subprocess.run([nmt, "translate", "-m", model, "-i", path, "--beam", "1",
                        "--alpha", "0", "--n-best", "1", "--threads", "1", "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        return ["nmt translate exit %d: %s" % (r.returncode, r.stderr.strip()[:300])], 0, 0
    lines = [l.split(" ||| ") for l in r.stdout.splitlines()]
    if len(lines) != len(sources) or any(len(l) != 3 for l in lines):
        return ["nmt translate --n-best 1 gave %r" % r.stdout[:300]], 0, 0
    _, P64 = tb.load_model(model, torch.float64)
    ti = {w: i for i, w in enumerate(cfg.tgt_vocab)}
    errors, worst, n_ended = [], 0.0, 0
    for k, (src, (toks, logp, ended)) in enumerate(
            zip(sources, tb.translate_batch(cfg, P64, sources, 1, 2.0))):
        got = [ti.get(w, -1) for w in lines[k][1].split()]
        if got != toks:
            errors.append("sentence %d: nmt %s, torch %s" % (k, got, toks))
            continue
        n_ended += ended
        e = rel(float(lines[k][2]), logp)
        worst = max(worst, e)
        if e > LOSS_TOL * 10:
            errors.append("sentence %d: nmt score %s, torch %.9g" % (k, lines[k][2], logp))
    n_words = sum(len(l[1].split()) for l in lines)
    if n_words < 2 * len(sources):
        errors.append("too weak a check: %d words in all" % n_words)
    return errors, worst, n_ended


def quiet(args):
    """tb.main with its progress lines swallowed."""
    with contextlib.redirect_stdout(io.StringIO()):
        return tb.main(args)


def run(argv):
    kinds = argv[2:] or tb.ATTENTIONS
    if len(argv) < 2 or any(k not in tb.ATTENTIONS for k in kinds):
        print("usage: parity.py PARITY_GRAD_EXE [ATTENTION...] (of %s; default all)"
              % " ".join(tb.ATTENTIONS), file=sys.stderr)
        return 2
    driver = argv[1]
    n_half = len(list(configs(kinds))) // 2  # the untied ones, then as many tied
    nmt = os.environ.get("NMT_BIN")
    if not nmt or not os.access(nmt, os.X_OK):
        print("FAIL: NMT_BIN (the nmt program) is not set or not executable")
        return 1
    failures = 0
    print("torch_baseline selftest (the torch model against a plain numpy one, "
          "padding invariance, gradcheck):")
    if tb.main(["selftest"]) != 0:
        print("FAIL: the torch baseline's own selftest")
        failures += 1

    tmp = tempfile.mkdtemp(prefix="nmt-parity-")
    tmp_adam = tempfile.mkdtemp(prefix="nmt-parity-adam-")
    rows = []
    ran = 0
    try:
        for bname, batch in BATCHES.items():
            with open(os.path.join(tmp, bname + ".json"), "w") as f:
                tb.json.dump(batch, f)
        for k, (cell, att, bi, tied) in enumerate(configs(kinds)):
            tag = "%s/%s/%s%s" % (cell, att, "bi" if bi else "uni", "/tied" if tied else "")
            model = os.path.join(tmp, "m%d.safetensors" % k)
            # uniform init: every gradient is nonzero (Bahdanau's v = 0 would
            # zero those of att.W, att.U, att.b) and the nonlinearities curve
            quiet(["init", "--cell", cell, "--attention", att,
                     "--bidirectional" if bi else "--unidirectional"] + SIZES + OUT_DIM[tied] +
                    ["--init", "uniform", "--scale", "0.5", "--seed", str(100 + k % n_half),
                     "--out", model])
            cfg, _ = tb.load_model(model)
            worst = {"loss": 0.0, "name": "", "t32": 0.0, "sent": 0.0}
            for case, _ in CASES:
                worst[case] = 0.0
            e2e_pairs = [(a, b) for bn in ("lengths", "repeats")
                         for a, b in zip(BATCHES[bn]["src"], BATCHES[bn]["tgt"])]
            errors, worst["score"], worst["sgd"], worst["wd"] = end_to_end(
                nmt, model, cfg, e2e_pairs, tmp, tag)
            for e in errors:
                print("FAIL %s end to end: %s" % (tag, e))
            failures += len(errors)
            errors, worst["greedy"], worst["ended"] = greedy_check(
                nmt, model, cfg, [a for a, _ in e2e_pairs], tmp, tag)
            for e in errors:
                print("FAIL %s greedy: %s" % (tag, e))
            failures += len(errors)
            for bname in BATCHES:
                for case, opts in CASES:
                    bpath = os.path.join(tmp, bname + ".json")
                    cg = os.path.join(tmp, "c%d_%s_%s.safetensors" % (k, bname, case))
                    tg = os.path.join(tmp, "t%d_%s_%s.safetensors" % (k, bname, case))
                    r = subprocess.run([driver, model, bpath, cg] + opts + ["--seed", str(k)],
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        print("FAIL %s %s %s: parity_grad exit %d: %s"
                              % (tag, bname, case, r.returncode, r.stderr.strip()[:500]))
                        failures += 1
                        continue
                    topts = [o for o in opts if o not in DROPOUT]
                    if case == "dropout":
                        topts += ["--masks", cg]
                    quiet(["grad", "--model", model, "--batch", bpath, "--out", tg] + topts)
                    errors, le, ge, gname, g32, se = compare(cfg, cg, tg, case == "dropout")
                    for e in errors:
                        print("FAIL %s %s %s: %s" % (tag, bname, case, e))
                    failures += len(errors)
                    ran += 1
                    worst["loss"] = max(worst["loss"], le)
                    worst["sent"] = max(worst["sent"], se)
                    worst["t32"] = max(worst["t32"], g32)
                    if ge >= worst[case]:
                        worst[case] = ge
                    if ge >= max(worst[c] for c, _ in CASES):
                        worst["name"] = "%s (%s, %s)" % (gname, bname, case)
            rows.append((tag, worst))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print()
    print("%-24s %8s %8s %8s %8s %8s  %-30s %8s %8s %8s %8s %12s" % (
        "configuration", "loss rel", "sent rel", "plain", "ls 0.1", "dropout",
        "worst in tensor (batch, case)", "torch f32", "score rel", "sgd step", "wd step",
        "greedy"))
    for tag, w in rows:
        print("%-24s %8.1e %8.1e %8.1e %8.1e %8.1e  %-30s %8.1e %8.1e %8.1e %8.1e %8.1e %d/%d"
              % (tag, w["loss"], w["sent"], w["plain"], w["ls"], w["dropout"], w["name"],
                 w["t32"], w["score"], w["sgd"], w["wd"], w["greedy"], w["ended"],
                 len(e2e_pairs)))
    print("loss rel: the plain loss and the objective (label-smoothed), C against torch64; "
          "plain, ls 0.1, dropout: worst max|C - torch64| / max|torch64| per tensor of the "
          "gradients (limit %.0e) of the plain loss, with label smoothing 0.1, and with "
          "dropout 0.3 at all three sites (nmt's masks) and label smoothing 0.1;\n"
          "torch f32: the same for torch in float32, for scale; score rel: `nmt score` "
          "against the torch loss; sgd step: one `nmt train --optimizer sgd --lr 1` step "
          "against minus the torch gradient, unclipped, and clipped to half its norm with "
          "--label-smoothing 0.1, per tensor (limit %.0e); wd step: the same step with "
          "--word-dropout 0.3 against the torch gradient of the ids its batch log recorded;\n"
          "greedy: `nmt translate --beam 1` tokens equal torch's, worst score rel (limit %.0e); "
          "n/8 ended with </s> before the length limit"
          % (GRAD_TOL, GRAD_TOL, LOSS_TOL * 10))
    # bahdanau both ways; each other scorer (of those asked) once
    trajectories = [("bahdanau", True, False, 0.0), ("bahdanau", True, True, 0.1),
                    ("dot", False, False, 0.0), ("general", True, True, 0.1),
                    ("scaled-dot", True, False, 0.1)]
    for att, bi, tied, ls in trajectories:
        if att not in kinds:
            continue
        errors, step_err, final_err = adam_run(nmt, tmp_adam, tied, ls, att, bi)
        what = "lstm/%s/%s %s%s" % (att, "bi" if bi else "uni", "tied" if tied else "untied",
                                    ", label smoothing %g" % ls if ls else "")
        for e in errors:
            print("FAIL adam trajectory (%s): %s" % (what, e))
        failures += len(errors)
        print("adam trajectory (%s, 30 steps, clip 0.1): worst step loss rel "
              "%.2e (beyond log.tsv's rounding), final model loss rel %.2e (limits 1e-4)"
              % (what, step_err, final_err))
    errors = speed_peer_runs(tmp_adam)
    for e in errors:
        print("FAIL torch_baseline speed peer: %s" % e)
    failures += len(errors)
    if not errors:
        print("torch_baseline train/translate (speed peer) run at a tiny size")
    shutil.rmtree(tmp_adam, ignore_errors=True)
    want = 2 * n_half * len(BATCHES) * len(CASES)
    print("%d configurations x %d batches x %d cases: %s" % (
        len(rows), len(BATCHES), len(CASES),
        "all pass" if not failures and ran == want else "%d failures, %d of %d ran"
        % (failures, ran, want)))
    return 1 if failures or ran != want else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv))
