#!/usr/bin/env python3
"""PyTorch baseline of nmt's model, written from docs/DESIGN.md's equations alone.

It serves two purposes:
  * the truth for the `parity` test suite: `grad` computes the loss and
    autograd gradients of a model file on a batch, in float32 and float64
    (with label smoothing, and with the dropout masks nmt drew);
  * the speed peer of `scripts/bench/bench`: `train` and `translate` run the same
    model with the same batching and optimizer settings in PyTorch.

Subcommands:
  init      write a random model file in nmt's safetensors layout
  grad      loss and gradients of a model on a batch (JSON), as safetensors
  selftest  check this model on its own (gradcheck, padding invariance, a
            plain per-sentence numpy implementation)
  train     train on a corpus, report steps/s and target tokens/s
  translate greedy or beam translation with a model file

Run it with a python3 that has torch (Debian's python3-torch).

This file is the command line; the rest lies beside it:
  torch_baseline_model.py   the model, its tensors and its files
  torch_baseline_parity.py  init, grad, selftest
  torch_baseline_peer.py    train, translate
Every name of those modules is also this module's, so that
`import torch_baseline as tb` reaches all of it (tests/parity.py,
tests/cli/multi30k-experiment.sh).
"""

import argparse
import sys

# the whole baseline under one name (see above)
from torch_baseline_model import *  # noqa: F401,F403
from torch_baseline_parity import *  # noqa: F401,F403
from torch_baseline_peer import *  # noqa: F401,F403
from torch_baseline_model import ATTENTIONS, GATES
from torch_baseline_parity import cmd_grad, cmd_init, cmd_selftest
from torch_baseline_peer import cmd_train, cmd_translate


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
