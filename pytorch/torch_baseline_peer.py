"""The PyTorch baseline as nmt's speed peer (scripts/bench/bench,
scripts/experiments/torch-curves, scripts/experiments/multi30k-experiment):
the corpus and its batches, nmt's batch logs and training recipes to
follow, `train` and `translate` (greedy and beam search).
"""

import gzip
import json
import math
import os
import re
import sys
import time
import unicodedata
import zlib

import numpy as np
import torch

from torch_baseline_model import (BOS, EOS, PAD, SPECIALS, UNK, Config, Noise, attend,
                                  attention_keys, batch_loss, decoder_init, decoder_step,
                                  decoder_weights, encode, init_params, load_model, make_batch,
                                  out_matrix, read_safetensors, tensor_table, write_safetensors)


# ---- the corpus and its batches ---------------------------------------------

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


# ---- nmt's batch logs and model files, followed -----------------------------

def open_batch_log(path):
    """The batch log of `nmt train --batch-log`: (its first line's record of
    the weights the steps start from, or None for a log without one; an
    iterator of (step, lr or None, pairs), each step's pairs as token ids
    without </s> and <s>: (source, target), or (source, target, the
    decoder's input) in a log of a run with word dropout on the target side
    (its tgt_in; the source is the one the encoder read, after word
    dropout, in every log))."""
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

    def pairs(j):
        if "tgt_in" in j:
            return list(zip(j["src"], j["tgt"], j["tgt_in"]))
        return list(zip(j["src"], j["tgt"]))

    def steps():
        with f:
            for j in head:
                yield j["step"], j.get("lr"), pairs(j)
            for k, line in enumerate(f, 2):
                try:
                    j = json.loads(line)
                except ValueError:  # a log cut short by a killed run
                    raise ValueError("%s: line %d is not JSON (a log cut short?)" % (path, k))
                yield j["step"], j.get("lr"), pairs(j)
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


# ---- nmt's recipe -----------------------------------------------------------

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
                     # word dropout replaced ids before the log took them: it holds the
                     # source and decoder input the model read (and the labels)
                     "word_dropout_src", "word_dropout_tgt",
                     # where the corpus files lie from the run folder, and their prints
                     # (nmt train --resume finds them and checks them)
                     "src_from_run", "src_bytes", "src_hash",
                     "tgt_from_run", "tgt_bytes", "tgt_hash")  # what the batch log holds
RECIPE_NMT_ONLY = ("valid_src", "valid_tgt", "valid_every", "lr_decay", "patience", "warmup",
                   "lr_schedule", "decay_from", "warmup_share", "early_stop", "save_every",
                   "report_every", "report_seconds", "best_metric", "keep_snapshots",
                   "average_snapshots", "tune_alpha", "valid_src_from_run", "valid_src_bytes",
                   "valid_src_hash", "valid_tgt_from_run", "valid_tgt_bytes", "valid_tgt_hash")
# lr_decay, patience, warmup, lr_schedule, decay_from and warmup_share change nmt's lr;
# the batch log's lr of every step carries their effect. early_stop and max_steps end
# nmt's run, and so the log. tune_alpha only marks the model nmt hands over with the
# beam's length normalisation, after the last step.


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


# ---- train ------------------------------------------------------------------

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
        toks += sum(len(p[1]) + 1 for p in batch)
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


# ---- translation ------------------------------------------------------------

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
