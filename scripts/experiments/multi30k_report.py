#!/usr/bin/env python3
"""The tables and the plot of scripts/experiments/multi30k-experiment (standard library
only). Subcommands, each on the experiment's output folder OUT:

  start-crc INIT BATCH_LOG   check that the batch log's run started from the
                             weights of the model file INIT (exit 1 if not)
  meta FILE KEY              print a model file's metadata value (empty if absent)
  points OUT [--quick]       the models to evaluate, as TSV: run, kind (point or
                             final), step, minutes, nmt's validation BLEU, file
  report OUT [--with DIR]... OUT/results.tsv, OUT/results.md,
                             OUT/bleu-vs-time.svg, OUT/bleu-by-length.svg
                             and OUT/torch.tsv,
                             OUT/torch-transformer.tsv (a PyTorch run's
                             curves for nmt plot) from OUT/eval/scores.tsv,
                             OUT/info.tsv and the runs' logs; each --with
                             DIR, an earlier output of the experiment, adds
                             its runs (none of them may be in OUT too) with
                             their scores, commands, load, date and commit,
                             so that runs of several sittings make one
                             table and one plot
"""

import json
import os
import struct
import sys
import zlib
from xml.sax.saxutils import escape

RUNS = ("nmt-attention", "nmt-none", "nmt-transformer", "torch-attention", "torch-transformer")
DIRS = {"nmt-attention": "attention", "nmt-none": "none", "nmt-transformer": "transformer",
        "torch-attention": "torch", "torch-transformer": "torch-transformer"}
LABELS = {"nmt-attention": "nmt, attention", "nmt-none": "nmt, no attention",
          "nmt-transformer": "nmt, Transformer", "torch-attention": "PyTorch, attention",
          "torch-transformer": "PyTorch, Transformer"}
COLOURS = {"nmt-attention": "#1f77b4", "nmt-none": "#ff7f0e", "nmt-transformer": "#d62728",
           "torch-attention": "#2ca02c", "torch-transformer": "#9467bd"}
# the nmt run each PyTorch run follows
FOLLOWS = {"torch-attention": "nmt-attention", "torch-transformer": "nmt-transformer"}
SCORES = ("greedy_bleu", "greedy_bleu_lc", "greedy_chrf", "greedy_bleu_tok", "beam_bleu",
          "beam_bleu_lc", "beam_chrf", "beam_bleu_tok", "beam_by_length")
DIRECTIONS = {"de-en": ("De→En", "de", "en"), "en-de": ("En→De", "en", "de")}
# the published score the tokenized BLEU is for: Wu et al. 2021, fairseq's
# transformer_tiny, Multi30k En→De test2016, lowercased and tokenized
ANCHOR = "Wu et al. 2021's 41.02 on En→De test2016, fairseq's transformer_tiny"


def die(msg):
    print("multi30k_report: error: %s" % msg, file=sys.stderr)
    sys.exit(1)


# ---- model files -------------------------------------------------------------

def header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            die("%s: not a safetensors file" % path)
        (n,) = struct.unpack("<Q", raw)
        h = json.loads(f.read(n).decode("utf-8"))
    return h.pop("__metadata__", {}) or {}, h, 8 + n


def weights_crc32(path):
    """The crc32 of a model file's weights: its F32 tensors that are not an
    optimizer's moment of another ("adam.m.src_emb"), in file order (the
    table's), as nmt train --batch-log records the weights it starts from."""
    _, h, base = header(path)
    names = set(h)
    moment = lambda n: any(n.endswith("." + w) and n != w for w in names)
    weights = sorted((v["data_offsets"], k) for k, v in h.items()
                     if v["dtype"] == "F32" and not moment(k))
    crc, count = 0, 0
    with open(path, "rb") as f:
        for (a, b), _ in weights:
            f.seek(base + a)
            crc = zlib.crc32(f.read(b - a), crc)
            count += (b - a) // 4
    return crc & 0xFFFFFFFF, count


def cmd_start_crc(init, log):
    with open(log) as f:
        first = json.loads(f.readline() or "{}")
    if "weights_crc32" not in first:
        die("%s: no first line naming the weights its run started from" % log)
    crc, n = weights_crc32(init)
    if first.get("start_step") != 0 or first["weights_crc32"] != "%08x" % crc or \
            first.get("n_params") != n:
        die("the run of %s did not start from %s: its first line says step %s, %s weights, "
            "crc32 %s; the file has %d weights, crc32 %08x"
            % (log, init, first.get("start_step"), first.get("n_params"),
               first["weights_crc32"], n, crc))
    print("the run started from %s's weights (%d, crc32 %08x)" % (init, n, crc))


# ---- the runs' logs ------------------------------------------------------------

def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    if not rows:
        return []
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def num(x, default=None):
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def nmt_points(out, run):
    """(step, minutes, valid BLEU, file) of every archived validation of an
    nmt run, its time and BLEU from the log.tsv row of that validation."""
    d = os.path.join(out, DIRS[run])
    rows = {}
    for r in read_tsv(os.path.join(d, "log.tsv")):
        # validations of the run's own model: the averaged snapshots' rows
        # (average_of set) are not points of the curve
        if r.get("valid_bleu", "") != "" and r.get("average_of", "") in ("", "0"):
            rows[int(r["step"])] = r
    pts = []
    arch = os.path.join(d, "validated")
    for name in sorted(os.listdir(arch)) if os.path.isdir(arch) else []:
        if not (name.startswith("snapshot-") and name.endswith(".safetensors")):
            continue
        step = int(name[len("snapshot-"):-len(".safetensors")])
        r = rows.get(step)
        if r is None:
            die("%s/%s: no validation row for step %d in log.tsv" % (arch, name, step))
        pts.append((step, float(r["elapsed_s"]) / 60, r["valid_bleu"], os.path.join(arch, name)))
    missing = sorted(set(rows) - {p[0] for p in pts})
    if missing:
        die("%s: validations at steps %s have no archived model" % (d, missing))
    return sorted(pts)


def torch_points(out, run):
    d = os.path.join(out, DIRS[run])
    return [(int(r["step"]), float(r["elapsed_s"]) / 60, "", os.path.join(d, r["file"]))
            for r in read_tsv(os.path.join(d, "snapshots.tsv"))]


def spread(pts, k):
    """k of the points, evenly spread, the last always among them."""
    if len(pts) <= k:
        return pts
    idx = sorted({round(i * (len(pts) - 1) / (k - 1)) for i in range(k)})
    return [pts[i] for i in idx]


def cmd_points(out, quick):
    rows = []
    for run in RUNS:
        d = os.path.join(out, DIRS[run])
        if not os.path.isdir(d):
            continue
        pts = torch_points(out, run) if run.startswith("torch") else nmt_points(out, run)
        if quick:
            pts = spread(pts, 3)
        rows += [(run, "point") + p for p in pts]
        if not run.startswith("torch"):
            log = read_tsv(os.path.join(d, "log.tsv"))
            last = [r for r in log if r.get("loss", "") != ""][-1]
            best = os.path.join(d, "best.safetensors")
            if os.path.exists(best):
                # its step and validation BLEU as nmt train recorded them; an
                # average's step is the newest snapshot's
                meta = header(best)[0]
                step = meta.get("best.step", last["step"])
                rows.append((run, "final", int(step), float(last["elapsed_s"]) / 60,
                             meta.get("best.valid_bleu", ""), best))
    for r in rows:  # "-", not an empty cell: bash's read joins adjacent tabs
        print("%s\t%s\t%d\t%.3f\t%s\t%s" % (r[:4] + (r[4] or "-",) + r[5:]))


# ---- the report ----------------------------------------------------------------

def read_info(out):
    info = {}
    with open(os.path.join(out, "info.tsv"), encoding="utf-8") as f:
        for line in f:
            if "\t" in line:
                k, v = line.rstrip("\n").split("\t", 1)
                info[k] = v
    return info


def fmt(x, nd=2):
    v = num(x)
    return "-" if v is None else "%.*f" % (nd, v)


def run_summary(out, run):
    """(minutes, steps, steps/s) of a run as a whole (out: the output it is in)."""
    d = os.path.join(out, DIRS[run])
    if run.startswith("torch"):
        res = json.loads(open(os.path.join(d, "result.json")).read().strip().splitlines()[-1])
        s, n = res["train_seconds"], res["total_steps"]
    else:
        rows = [r for r in read_tsv(os.path.join(d, "log.tsv")) if r.get("loss", "") != ""]
        s, n = float(rows[-1]["elapsed_s"]), int(rows[-1]["step"])
    return s / 60, n, n / s if s > 0 else float("nan")


def choose_torch_final(rows, run):
    """A PyTorch run's model to report, chosen as nmt chooses best.safetensors:
    the highest validation BLEU (greedy), ties to the lower perplexity."""
    pts = [r for r in rows if r["run"] == run and r["kind"] == "point"]
    if not pts:
        return None
    best = max(pts, key=lambda r: (num(r["valid_bleu"], -1), -num(r["valid_ppl"], 1e30)))
    final = dict(best)
    final["kind"] = "final"
    return final


def write_torch_curve(out, place, run, rows):
    """OUT/<run's folder>.tsv (torch-transformer.tsv, ...): the PyTorch run's
    log.tsv (a loss per step) as nmt's log.tsv reports it, the mean loss of
    the steps of every 10 seconds (nmt train's --report-seconds), with the
    validation BLEU of its snapshots on their steps, in the columns nmt plot
    reads, so that its curves are drawn beside nmt's runs, under the run's
    name (nmt plot OUT/transformer OUT/torch-transformer.tsv). place: the
    output the run is in (OUT or a --with folder)."""
    d = os.path.join(place, DIRS[run])
    bleu = {int(r["step"]): r["valid_bleu"] for r in rows
            if r["run"] == run and r["kind"] == "point" and num(r["valid_bleu"]) is not None}
    log = read_tsv(os.path.join(d, "log.tsv"))
    missing = sorted(set(bleu) - {int(r["step"]) for r in log})
    if missing:
        die("%s/log.tsv: no row for the snapshots of steps %s" % (d, missing))
    dest = os.path.join(out, DIRS[run] + ".tsv")
    tmp = dest + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("step\telapsed_s\tloss\tvalid_bleu\n")
        losses, due = [], 10.0
        for i, r in enumerate(log):
            step, t = int(r["step"]), float(r["elapsed_s"])
            losses.append(float(r["loss"]))
            if t >= due or step in bleu or i == len(log) - 1:
                f.write("%d\t%s\t%.6f\t%s\n" % (step, r["elapsed_s"],
                                                sum(losses) / len(losses), bleu.get(step, "")))
                losses = []
                while due <= t:
                    due += 10.0
    os.replace(tmp, dest)


def svg_plot(rows, path, beam_label, title):
    W, H = 860, 520
    L, R, T, B = 70, 270, 50, 60
    pw, ph = W - L - R, H - T - B
    pts = [r for r in rows if r["kind"] == "point"]
    xmax = max([num(r["minutes"], 0) for r in pts] + [1e-9])
    ymax = max([num(r[k], 0) for r in pts for k in ("beam_bleu", "greedy_bleu")] + [1.0])
    xstep = nice_step(xmax)
    ystep = nice_step(ymax)
    xmax = xstep * -(-xmax // xstep)
    ymax = ystep * -(-ymax // ystep)
    X = lambda x: L + pw * x / xmax
    Y = lambda y: T + ph * (1 - y / ymax)
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'font-family="sans-serif" font-size="12">' % (W, H, W, H),
         '<rect width="%d" height="%d" fill="white"/>' % (W, H),
         '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (L, escape(title))]
    k = 0
    while k * ystep <= ymax + 1e-9:
        y = Y(k * ystep)
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y, L + pw, y))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (L - 6, y + 4, k * ystep))
        k += 1
    k = 0
    while k * xstep <= xmax + 1e-9:
        x = X(k * xstep)
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x, T, x, T + ph))
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (x, T + ph + 18,
                                                                          k * xstep))
        k += 1
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
             % (L, T, pw, ph))
    o.append('<text x="%.1f" y="%d" text-anchor="middle">wall-clock minutes of training</text>'
             % (L + pw / 2, H - 18))
    o.append('<text transform="translate(20 %.1f) rotate(-90)" text-anchor="middle">'
             'BLEU on test2016 (cased, sacreBLEU)</text>' % (T + ph / 2))
    ly = T + 8
    for run in RUNS:
        rp = sorted((r for r in pts if r["run"] == run), key=lambda r: num(r["minutes"]))
        if not rp:
            continue
        for key, dash, label in (("beam_bleu", "", "beam %s" % beam_label),
                                 ("greedy_bleu", ' stroke-dasharray="6 4"', "greedy")):
            xy = [(X(num(r["minutes"])), Y(num(r[key]))) for r in rp if num(r[key]) is not None]
            if not xy:
                continue
            c = COLOURS[run]
            o.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>'
                     % (c, dash, " ".join("%.1f,%.1f" % p for p in xy)))
            for x, y in xy:
                o.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s" stroke="%s"/>'
                         % (x, y, "white" if dash else c, c))
            lx = L + pw + 16
            o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                     % (lx, ly, lx + 28, ly, c, dash))
            o.append('<text x="%d" y="%d">%s, %s</text>' % (lx + 34, ly + 4,
                                                            escape(LABELS[run]), escape(label)))
            ly += 20
    o.append('<text x="%d" y="%d" fill="#555">points: validations (nmt),</text>'
             % (L + pw + 16, ly + 12))
    o.append('<text x="%d" y="%d" fill="#555">snapshots (PyTorch)</text>' % (L + pw + 16, ly + 28))
    o.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    os.replace(tmp, path)


def nice_step(span):
    """The smallest of 1, 2, 5 times a power of ten that cuts span in at most 8."""
    for s in sorted(m * 10.0 ** e for m in (1, 2, 5) for e in range(-3, 6)):
        if span / s <= 8:
            return s
    return span / 8


def gather(out, others):
    """The scores of OUT's runs and of every earlier output in others, as one
    list of rows; the info of OUT with the per-run keys (cmd., load_before.,
    params., ...) of the others added; the output each run is in; and the
    sittings, (folder, info, runs) each, in the order given."""
    info = read_info(out)
    rows = read_tsv(os.path.join(out, "eval", "scores.tsv"))
    if not rows:
        die("%s/eval/scores.tsv has no rows" % out)
    place = {r["run"]: out for r in rows}
    sittings = [(out, info, sorted(place, key=RUNS.index))]
    for d in others:
        if not os.path.isfile(os.path.join(d, "info.tsv")):
            die("--with %s: not an output of scripts/experiments/multi30k-experiment (no info.tsv)" % d)
        more = read_tsv(os.path.join(d, "eval", "scores.tsv"))
        theirs = sorted({r["run"] for r in more}, key=RUNS.index)
        if not theirs:
            die("--with %s: eval/scores.tsv has no rows" % d)
        other = read_info(d)
        for k in ("test", "test_lines", "valid", "beam", "direction"):
            mine, yours = info.get(k), other.get(k)
            if k == "direction":  # an output from before --direction is De→En
                mine, yours = mine or "de-en", yours or "de-en"
            if mine != yours:
                die("--with %s: its %s is %s, %s's %s: not one table" % (d, k, yours, out, mine))
        mine_sha, theirs_sha = info.get("tok_ref_sha256"), other.get("tok_ref_sha256")
        if mine_sha and theirs_sha and mine_sha != theirs_sha:
            die("--with %s: its tokenized reference is another file (sha256 %s, %s's %s)"
                % (d, theirs_sha, out, mine_sha))
        both = [run for run in theirs if run in place]
        if both:
            die("--with %s: %s also in %s; a run may come from one output only"
                % (d, ", ".join(both), place[both[0]]))
        # the keys that describe one run or its initial model; the sitting's
        # own (date, commit, machine, ...) are listed per sitting; a test's
        # or a --quick run's mark carries over to the whole report
        for k, v in other.items():
            if ("." in k or k in ("test_only", "test_only_transformer")) and k not in info:
                info[k] = v
        if other.get("quick") == "1":
            info["quick"] = "1"
        rows += more
        place.update({run: d for run in theirs})
        sittings.append((d, other, theirs))
    return rows, info, place, sittings


def sitting_lines(sittings):
    """"How it was run"'s date, commit, machine and data: one line each for a
    single output; with --with, one line per output, naming its runs."""
    if len(sittings) == 1:
        info = sittings[0][1]
        return ["- %s: %s" % (k, info.get(k, "?")) for k in ("date", "commit", "machine", "data")]
    md = ["- commit: %s" % ", ".join(s[1].get("commit", "?") for s in sittings),
          "- the runs come from %d outputs of the experiment, one table and plot "
          "(`multi30k_report.py report OUT --with DIR`):" % len(sittings)]
    for d, info, runs in sittings:
        md.append("  - %s: %s (date %s, commit %s, machine %s, data %s)"
                  % (d, "; ".join(LABELS[r] for r in runs), info.get("date", "?"),
                     info.get("commit", "?"), info.get("machine", "?"), info.get("data", "?")))
    return md


def by_length(place, row):
    """The buckets of a model's BLEU by source length, [(bucket, sentences,
    BLEU or None)], from its beam translation's nmt bleu --by-length JSON
    (in the eval/ folder of the output it is in); None if it has none (an
    output from before the table)."""
    name = row.get("beam_by_length", "")
    if name in ("", "-"):
        return None
    path = os.path.join(place, "eval", os.path.basename(name))
    if not os.path.isfile(path):
        die("%s: no such file (BLEU by length of %s step %s)" % (path, row["run"], row["step"]))
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    return [(b["length"], b["sentences"], b["score"]) for b in j["by_length"]]


def svg_by_length(table, runs, path, title):
    """BLEU by source length, a line per run over the buckets that have
    sentences. table: {run: [(bucket, sentences, BLEU or None)]}."""
    buckets = [b for b, n, _ in next(iter(table.values())) if n > 0]
    W, H = 860, 460
    L, R, T, B = 70, 230, 50, 70
    pw, ph = W - L - R, H - T - B
    ymax = max([v for run in table for b, n, v in table[run] if v is not None] + [1.0])
    ystep = nice_step(ymax)
    ymax = ystep * -(-ymax // ystep)
    X = lambda i: L + pw * (i + 0.5) / len(buckets)
    Y = lambda y: T + ph * (1 - y / ymax)
    counts = dict((b, n) for b, n, _ in next(iter(table.values())))
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'font-family="sans-serif" font-size="12">' % (W, H, W, H),
         '<rect width="%d" height="%d" fill="white"/>' % (W, H),
         '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (L, escape(title))]
    k = 0
    while k * ystep <= ymax + 1e-9:
        y = Y(k * ystep)
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y, L + pw, y))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (L - 6, y + 4, k * ystep))
        k += 1
    for i, b in enumerate(buckets):
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X(i), T + ph + 18, b))
        o.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">(%d)</text>'
                 % (X(i), T + ph + 34, counts[b]))
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
             % (L, T, pw, ph))
    o.append('<text x="%.1f" y="%d" text-anchor="middle">source words (sentences)</text>'
             % (L + pw / 2, H - 12))
    o.append('<text transform="translate(20 %.1f) rotate(-90)" text-anchor="middle">'
             'BLEU on test2016 (cased, sacreBLEU)</text>' % (T + ph / 2))
    ly = T + 8
    for run in runs:
        scores = dict((b, v) for b, _, v in table[run])
        xy = [(X(i), Y(scores[b])) for i, b in enumerate(buckets) if scores.get(b) is not None]
        c = COLOURS[run]
        if len(xy) > 1:
            o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                     % (c, " ".join("%.1f,%.1f" % p for p in xy)))
        for x, y in xy:
            o.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x, y, c))
        lx = L + pw + 16
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>'
                 % (lx, ly, lx + 28, ly, c))
        o.append('<text x="%d" y="%d">%s</text>' % (lx + 34, ly + 4, escape(LABELS[run])))
        ly += 20
    o.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    os.replace(tmp, path)


def final_of(rows, run):
    f = [r for r in rows if r["run"] == run and r["kind"] == "final"]
    return f[-1] if f else None


def final_table(rows, runs, info, place):
    md = ["## Final models", "",
          "What a user would translate with: nmt's `best.safetensors` (best validation "
          "BLEU; an average of snapshots where the run's recipe averages them and the "
          "average was better), and for PyTorch the snapshot with the best validation BLEU "
          "(greedy, scored by nmt the same way), with `nmt translate`'s defaults.", "",
          "| run | model | BLEU | BLEU lc | chrF | BLEU tok lc | greedy BLEU | greedy lc | "
          "greedy chrF | greedy tok lc | valid BLEU | minutes | steps | steps/s | parameters | "
          "load before | load after |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: | ---: | ---: | ---: |"]
    for run in runs:
        f = final_of(rows, run)
        if not f:
            continue
        minutes, steps, sps = run_summary(place[run], run)
        model = "%s (step %s" % (os.path.basename(f["file"]), f["step"])
        if run.startswith("torch"):
            model += ", %.1f min)" % num(f["minutes"])
        else:
            avg = header(f["file"])[0].get("best.average_of")
            model += ", an average of %s snapshots)" % avg if avg else ")"
        load = lambda k: info.get("%s.%s" % (k, run), "?").split(" ")[0]
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %d | %.2f "
                  "| %s | %s | %s |" % (
                      LABELS[run], model, fmt(f["beam_bleu"]), fmt(f["beam_bleu_lc"]),
                      fmt(f["beam_chrf"]), fmt(f.get("beam_bleu_tok")), fmt(f["greedy_bleu"]),
                      fmt(f["greedy_bleu_lc"]), fmt(f["greedy_chrf"]),
                      fmt(f.get("greedy_bleu_tok")), fmt(f["valid_bleu"]), minutes, steps, sps,
                      info.get("params." + run, "?"), load("load_before"), load("load_after")))
    md += ["", "minutes, steps, steps/s: the whole run (nmt: elapsed_s of its last log.tsv "
           "row, validations included; PyTorch: its training clock, the saving of snapshots "
           "excluded). valid BLEU: greedy, on %s (nmt: its own validation; PyTorch: `nmt "
           "translate -b 1` and `nmt bleu`, `--lc` for a lowercasing model). load: the "
           "machine's 1-minute load average before and after the run (all three in "
           "\"How it was run\"). BLEU tok lc: see \"How the figures are computed\"."
           % info.get("valid", "?"), ""]
    return md


def by_length_section(rows, runs, place, out, title):
    """The final models' BLEU by source length: the table, and the SVG
    (when any final model has the figures)."""
    table = {}
    for run in runs:
        f = final_of(rows, run)
        b = by_length(place[run], f) if f else None
        if b:
            table[run] = b
    md = ["## BLEU by source length", ""]
    if not table:
        return md + ["No figures: the outputs are from before BLEU by length was measured.", ""]
    have = [run for run in runs if run in table]
    counts = [(b, n) for b, n, _ in table[have[0]] if n > 0]
    md += ["The final models' translations (beam), BLEU (cased, sacreBLEU's 13a) of the "
           "test2016 sentences of each source length (`nmt bleu --by-length --src`: the "
           "source's whitespace-separated words).", "",
           "| source words (sentences) | %s |" % " | ".join(LABELS[r] for r in have),
           "| --- |" + " ---: |" * len(have)]
    for b, n in counts:
        cells = [dict((bb, v) for bb, _, v in table[r]).get(b) for r in have]
        md.append("| %s (%d) | %s |" % (b, n, " | ".join(fmt(v) for v in cells)))
    missing = [LABELS[r] for r in runs if r not in table]
    if missing:
        md += ["", "No figures for %s (an output from before BLEU by length was measured)."
               % ", ".join(missing)]
    svg_by_length(table, have, os.path.join(out, "bleu-by-length.svg"), title)
    return md + ["", "Plot: `bleu-by-length.svg`.", ""]


def tok_lines(sittings, tl):
    """How the tokenized BLEU was computed, and whether it was (per output)."""
    md = ["- **BLEU tok lc**, the BLEU of published Multi30k scores (such as %s), not "
          "sacreBLEU's: "
          "the translation lowercased, normalized and tokenized exactly as Multi30k's "
          "`data/task1/tok` files were made (its `scripts/task1-tokenize.sh`: `lowercase.perl "
          "| normalize-punctuation.perl -l %s | tokenizer.perl -l %s`, the Moses scripts of "
          "its `scripts/moses-3a0631a`, got by `scripts/data/get-multi30k --tok`), then scored "
          "against Multi30k's own `test_2016_flickr.lc.norm.tok.%s` with `nmt bleu -tok none`: "
          "split at whitespace and nothing more. That is multi-bleu.perl's BLEU (the same "
          "clipped n-gram counts, the same brevity penalty); the two differ only where an "
          "n-gram order has no match at all, which sacreBLEU's default exp smoothing scores "
          "and multi-bleu.perl makes 0." % (ANCHOR, tl, tl, tl)]
    for d, info, runs in sittings:
        who = "" if len(sittings) == 1 else " (%s: %s)" % (d, "; ".join(LABELS[r] for r in runs))
        if info.get("tok_ref"):
            md.append("  - computed%s: the pipeline remade Multi30k's tok files from the raw "
                      "ones, before any training: %s identical. Reference %s, sha256 %s." % (
                          who, info.get("tok_agreement", "?"), info["tok_ref"],
                          info.get("tok_ref_sha256", "?")))
        else:
            md.append("  - not computed%s: %s." % (
                who, info.get("tok_none", "an output from before the tokenized BLEU")))
    return md


def how_computed(info, sittings, beam):
    name, sl, tl = DIRECTIONS[info.get("direction", "de-en")]
    return ["## How the figures are computed", "",
            "- Direction %s: `train.%s.gz` → `train.%s.gz` (val and test_2016_flickr the "
            "same way); the reference is test2016's `test_2016_flickr.%s.gz`."
            % (name, sl, tl, tl),
            "- Test set: %s (%s sentences). Beam: `nmt translate`'s default (beam %s, its "
            "default length normalisation); greedy: `-b 1`." % (
                info.get("test", "?"), info.get("test_lines", "?"), beam),
            "- BLEU: sacreBLEU's (`nmt bleu`, tokenizer 13a, exp smoothing) on the detokenized "
            "translation against the raw reference, cased; **BLEU lc**: the same with `--lc`; "
            "**chrF**: chrF2, cased (`nmt bleu -m chrf`).",
            "- BLEU by length: the beam's, per bucket of source words (`nmt bleu --by-length "
            "--src test_2016_flickr.%s.gz`)." % sl] + tok_lines(sittings, tl) + [""]


def transformer_line(sittings):
    for d, info, runs in sittings:
        if "nmt-transformer" not in runs:
            continue
        if "transformer_opts" not in info:
            return ["- the Transformer's options: its command below"]
        if info["transformer_opts"] == "":
            return ["- the Transformer: `nmt train --arch transformer`'s defaults (no "
                    "`--transformer-opts`), as the RNN runs have the RNN's"]
        return ["- the Transformer's recipe (`--transformer-opts`): `%s`"
                % info["transformer_opts"]]
    return []


def cmd_report(out, others=()):
    rows, info, place, sittings = gather(out, others)
    for run in RUNS:
        final = choose_torch_final(rows, run) if run.startswith("torch") else None
        if final:
            write_torch_curve(out, place[run], run, rows)
            rows.append(final)
    beam = info.get("beam", "default")
    name = DIRECTIONS[info.get("direction", "de-en")][0]
    cols = ["run", "kind", "step", "minutes", "valid_bleu", "valid_ppl"] + list(SCORES) + ["file"]
    with open(os.path.join(out, "results.tsv"), "w", encoding="utf-8") as f:
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(str(r.get(c, "")) for c in cols) + "\n")
    runs = [run for run in RUNS if any(r["run"] == run for r in rows)]
    md = ["# Multi30k %s: time to BLEU, RNN against Transformer, nmt against PyTorch" % name, ""]
    if info.get("test_only") or info.get("test_only_transformer"):
        md += ["**Not the experiment: a test run with `%s` added to the RNN's nmt train "
               "(NMT_M30K_TEST_TRAIN_OPTS) and `%s` to the Transformer's "
               "(NMT_M30K_TEST_TRANSFORMER_OPTS).**"
               % (info.get("test_only", ""), info.get("test_only_transformer", "")), ""]
    if info.get("quick") == "1":
        md += ["**--quick: a short run with a few evaluation points, for a look, not a "
               "measurement.**", ""]
    md += ["%s, test2016 (%s sentences): BLEU and chrF as sacreBLEU computes them, and the "
           "tokenized lowercased BLEU of published Multi30k scores (\"How the figures are "
           "computed\" says exactly how)." % (name, info.get("test_lines", "?")), ""]
    md += final_table(rows, runs, info, place)
    md += by_length_section(rows, runs, place, out,
                            "Multi30k %s test2016: BLEU by source length, final models (beam)"
                            % name)
    md += ["## BLEU on test2016 against wall-clock minutes", "",
           "Every validation of the nmt runs (its model kept with `--archive-snapshots`) "
           "and every PyTorch snapshot. minutes: nmt's elapsed_s at the validation, "
           "PyTorch's training clock at the snapshot.", "",
           "| run | step | minutes | valid BLEU | greedy BLEU | greedy lc | greedy chrF | "
           "BLEU | BLEU lc | chrF | BLEU tok lc |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for run in runs:
        for r in sorted((r for r in rows if r["run"] == run and r["kind"] == "point"),
                        key=lambda r: int(r["step"])):
            md.append("| %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                LABELS[run], r["step"], num(r["minutes"]), fmt(r["valid_bleu"]),
                fmt(r["greedy_bleu"]), fmt(r["greedy_bleu_lc"]), fmt(r["greedy_chrf"]),
                fmt(r["beam_bleu"]), fmt(r["beam_bleu_lc"]), fmt(r["beam_chrf"]),
                fmt(r.get("beam_bleu_tok"))))
    md += ["", "Plot: `bleu-vs-time.svg` (beam solid, greedy dashed). Machine-readable: "
           "`results.tsv`. `torch-transformer.tsv` (and `torch.tsv`): a PyTorch run's training "
           "loss with the validation BLEU of its snapshots, for `nmt plot` beside nmt's runs "
           "(`nmt plot transformer torch-transformer.tsv -o curves.svg`).", ""]
    md += how_computed(info, sittings, beam)
    md += ["## How it was run", "", "- direction: %s" % name]
    md += sitting_lines(sittings)
    md += transformer_line(sittings)
    for run in runs:
        md.append("- load (1, 5, 15 min) %s: before %s, after %s" % (
            LABELS[run], info.get("load_before." + run, "?"), info.get("load_after." + run, "?")))
    md += ["", "```sh"]
    for key in ("cmd.init", "cmd.nmt-attention", "cmd.nmt-none", "cmd.init-transformer",
                "cmd.nmt-transformer", "cmd.torch-attention", "cmd.torch-transformer"):
        if key in info:
            md.append(info[key])
    md += ["```", ""]
    for run, of in FOLLOWS.items():
        if "follows." + run in info:
            md += ["%s trained the same model from the same initial weights (checked: the "
                   "batch log's first line has their crc32) on the %s run's batches, in "
                   "order, with nmt's learning rate of every step (from the batch log) and "
                   "the recipe read from the run's checkpoint: %s. Its dropout masks are its "
                   "own draws. It ran for the same time by its own clock; it %s. Its final "
                   "model is not an average of snapshots, whatever nmt's recipe does."
                   % (LABELS[run], LABELS[of], info["follows." + run],
                      info.get("ended." + run, "?")), ""]
    text = "\n".join(md)
    tmp = os.path.join(out, "results.md.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, os.path.join(out, "results.md"))
    svg_plot(rows, os.path.join(out, "bleu-vs-time.svg"), beam,
             "Multi30k %s test2016: BLEU against training time, every run" % name)


def main(argv):
    if len(argv) >= 3 and argv[0] == "start-crc":
        return cmd_start_crc(argv[1], argv[2])
    if len(argv) == 3 and argv[0] == "meta":
        print(header(argv[1])[0].get(argv[2], ""))
        return
    if len(argv) in (2, 3) and argv[0] == "points":
        return cmd_points(argv[1], argv[2:] == ["--quick"])
    if len(argv) >= 2 and argv[0] == "report":
        others = argv[2:]
        if len(others) % 2 or any(o != "--with" for o in others[::2]):
            die("report OUT [--with DIR]...: not %s" % " ".join(others))
        return cmd_report(argv[1], others[1::2])
    print(__doc__, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
