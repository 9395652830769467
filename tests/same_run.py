"""same_run.py U E [STEP...]: run folder E, extended with --resume after stops at
the STEPs, ends as the uninterrupted run U: the checkpoint's tensors and
its state.* (but the elapsed time); best.safetensors and average.safetensors
(tensors and their best.* / average.* metadata); the same snapshots, bit
for bit; and log.tsv has U's rows, with the same steps, epochs, lr and
validations, plus a row at each stop (a stop's validation, if any), whose
next row averages the loss from the stop on. The one difference allowed
(docs/training.md, "The validation at a stop"): E's best model may be the
model of a stop, if it is at least as good as U's by the run's metric.

Standard library only; tests/cli/resume.sh and transformer_resume.sh use it.
"""
import json, os, re, struct, sys

u, e = sys.argv[1], sys.argv[2]
stops = {int(x) for x in sys.argv[3:]}
bad = []


def read(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]).get("__metadata__", {}), b[8 + n:]


def model(name, prefixes, skip=()):
    pu, pe = os.path.join(u, name), os.path.join(e, name)
    if not os.path.exists(pu) and not os.path.exists(pe):
        return
    if not os.path.exists(pu) or not os.path.exists(pe):
        bad.append(f"{name} in only one of the runs")
        return
    (mu, du), (me, de) = read(pu), read(pe)
    if du != de:
        bad.append(f"{name}: other tensors")
    for k in sorted(set(mu) | set(me)):
        if k.startswith(prefixes) and k not in skip and mu.get(k) != me.get(k):
            bad.append(f"{name}: {k} {mu.get(k)} against {me.get(k)}")


def at_least_as_good(a, b, metric):  # (bleu, ppl) pairs, as beats_best orders them
    by_ppl = metric == "ppl" or (a[0] < 1 and b[0] < 1)
    return (a[1], -a[0]) <= (b[1], -b[0]) if by_ppl else (-a[0], a[1]) <= (-b[0], b[1])


mu, _ = read(os.path.join(u, "checkpoint.safetensors"))
me, _ = read(os.path.join(e, "checkpoint.safetensors"))
skip = {"state.elapsed_s"}
if int(me["state.best_step"]) in stops and me["state.best_step"] != mu["state.best_step"]:
    score = lambda m: (float(m["state.best_bleu"]), float(m["state.best_ppl"]))
    if not at_least_as_good(score(me), score(mu), mu["train.best_metric"]):
        bad.append(f"the best model is the stop's at {me['state.best_step']}, but worse")
    skip |= {"state.best_bleu", "state.best_ppl", "state.best_step", "state.best_average_of"}
    print(f"(the best model is the stop's at step {me['state.best_step']})", file=sys.stderr)
else:
    model("best.safetensors", ("best.",))
model("checkpoint.safetensors", ("state.",), skip)
model("average.safetensors", ("average.",))
snaps = [sorted(f for f in os.listdir(d) if re.match(r"snapshot-\d+\.safetensors$", f))
         for d in (u, e)]
if snaps[0] != snaps[1]:
    bad.append(f"snapshots {snaps[0]} against {snaps[1]}")
for f in snaps[0]:
    model(f, ("snapshot.",))


def rows(d):
    lines = [line.rstrip("\n").split("\t") for line in open(os.path.join(d, "log.tsv"))]
    return lines[0], lines[1:]


head, ru = rows(u)
col = {name: i for i, name in enumerate(head)}
_, re_ = rows(e)
key = lambda r: (int(r[0]), r[col["average_of"]] != "")
U, E = {key(r): r for r in ru}, {key(r): r for r in re_}
for k in sorted(set(U) - set(E)):
    bad.append(f"log.tsv: no row {k}")
for k in sorted(set(E) - set(U)):
    if k[0] not in stops:
        bad.append(f"log.tsv: a row {k} the uninterrupted run has not")
# a training row after a row of a stop only averages from the stop on
after_stop, prev_extra = set(), False
for r in re_:
    k = key(r)
    if not k[1]:
        if prev_extra:
            after_stop.add(k)
        prev_extra = k not in U
for k in sorted(set(U) & set(E)):
    names = ["step", "epoch", "lr", "average_of"]
    if k not in after_stop:
        names += ["loss", "ppl", "grad_norm"]
    if not (k[0] in stops and U[k][col["valid_ppl"]] == ""):
        names += ["valid_ppl", "valid_bleu"]
    for n in names:
        if U[k][col[n]] != E[k][col[n]]:
            bad.append(f"log.tsv row {k}: {n} {U[k][col[n]]} against {E[k][col[n]]}")
for b in bad[:12]:
    print(b)
sys.exit(1 if bad else 0)
