#!/usr/bin/env python3
"""The table and the plot of scripts/experiments/transformer-search's output.

    transformer_search_report.py OUT [NAME...]

Reads OUT/NAME/run.tsv (the run's record) and OUT/NAME/log.tsv (its
curves) for every finished run in OUT (NAME... first, in that order; runs
of earlier sittings after them), and writes OUT/results.md, OUT/results.tsv
and OUT/valid-bleu-vs-time.svg. The runs are ranked by the validation BLEU
of the model each handed over (beam 5, cased), never by a test set. Standard
library only.
"""

import os
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
           "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363"]


def read_record(path):
    rec = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("\t")
            rec[k] = v
    return rec


def read_log(path):
    """log.tsv's rows as dicts (the header names the columns)."""
    with open(path, encoding="utf-8") as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def summarize(out, name):
    rec = read_record(os.path.join(out, name, "run.tsv"))
    rows = read_log(os.path.join(out, name, "log.tsv"))
    train = [r for r in rows if not r.get("average_of")]
    valid = [r for r in train if num(r.get("valid_bleu")) is not None]
    avg = [r for r in rows if r.get("average_of") and num(r.get("valid_bleu")) is not None]
    last = train[-1]
    best = max(valid, key=lambda r: (num(r["valid_bleu"]), -num(r["valid_ppl"]))) if valid else None
    minutes = num(last["elapsed_s"]) / 60
    s = {
        "name": name,
        "rec": rec,
        "steps": int(last["step"]),
        "epochs": int(last["epoch"]),
        "minutes": minutes,
        "steps_per_s": int(last["step"]) / num(last["elapsed_s"]),
        "best_greedy": num(best["valid_bleu"]) if best else None,
        "best_step": int(best["step"]) if best else None,
        "best_minute": num(best["elapsed_s"]) / 60 if best else None,
        "last_greedy": num(valid[-1]["valid_bleu"]) if valid else None,
        "best_ppl": min(num(r["valid_ppl"]) for r in valid) if valid else None,
        "average": num(avg[-1]["valid_bleu"]) if avg else None,
        "beam": num(rec.get("valid_beam_bleu")),
        "chrf": num(rec.get("valid_beam_chrf")),
        "alpha": rec.get("valid_beam_alpha") or "-",
        "curve": [(num(r["elapsed_s"]) / 60, num(r["valid_bleu"])) for r in valid],
        # the greedy validation BLEU at each epoch's end (the last validation
        # of that epoch), which the load does not change
        "by_epoch": {int(r["epoch"]): num(r["valid_bleu"]) for r in valid},
    }
    return s


MATCH_EPOCHS = (1, 5, 10, 15, 20, 25, 30, 35)
MATCH_MINUTES = (10, 20, 30)


def at_minute(run, minute):
    """The last greedy validation BLEU measured by that minute."""
    seen = [b for m, b in run["curve"] if m <= minute + 0.25]
    return seen[-1] if seen else None


def matched_table(runs):
    """Markdown: every run's greedy validation BLEU at the same epochs (the
    same data seen, whatever the load or the batch) and at the same minutes."""
    head = ["run"] + ["ep %d" % e for e in MATCH_EPOCHS] + ["%d min" % m for m in MATCH_MINUTES]
    md = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for r in runs:
        cells = [fmt(r["by_epoch"].get(e)) for e in MATCH_EPOCHS]
        cells += [fmt(at_minute(r, m)) for m in MATCH_MINUTES]
        md.append("| %s | %s |" % (r["name"], " | ".join(c or "-" for c in cells)))
    return md


def fmt(x, nd=2):
    return "" if x is None else "%.*f" % (nd, x)


def nice_step(span):
    for s in sorted(m * 10.0 ** e for m in (1, 2, 5) for e in range(-3, 6)):
        if span / s <= 8:
            return s
    return span / 8


def svg_plot(runs, path, title):
    """Validation BLEU against minutes, a polyline a run; the best run drawn
    last, thicker, so that it stands out; the legend in rank order."""
    W, H = 980, max(560, 90 + 18 * len(runs))
    L, R, T, B = 60, 330, 50, 55
    pw, ph = W - L - R, H - T - B
    pts = [p for r in runs for p in r["curve"]]
    xmax = max([p[0] for p in pts] + [1e-9])
    ymax = max([p[1] for p in pts] + [1.0])
    ymin = 0.0
    top = sorted(p[1] for p in pts)
    if len(top) > 4:  # the interesting part: from a bit below the runs' halfway marks
        ymin = max(0.0, top[len(top) // 4] - 5)
    xs, ys = nice_step(xmax), nice_step(ymax - ymin)
    xmax = xs * -(-xmax // xs)
    ymin = ys * (ymin // ys)
    ymax = ys * -(-ymax // ys)
    X = lambda x: L + pw * x / xmax
    Y = lambda y: T + ph * (1 - (max(y, ymin) - ymin) / (ymax - ymin))
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
         'font-family="sans-serif" font-size="12">' % (W, H, W, H),
         '<rect width="%d" height="%d" fill="white"/>' % (W, H),
         '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (L, escape(title))]
    k = 0
    while ymin + k * ys <= ymax + 1e-9:
        y = Y(ymin + k * ys)
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y, L + pw, y))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (L - 6, y + 4, ymin + k * ys))
        k += 1
    k = 0
    while k * xs <= xmax + 1e-9:
        x = X(k * xs)
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x, T, x, T + ph))
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (x, T + ph + 18, k * xs))
        k += 1
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
             % (L, T, pw, ph))
    o.append('<text x="%.1f" y="%d" text-anchor="middle">wall-clock minutes of training</text>'
             % (L + pw / 2, H - 15))
    o.append('<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">'
             'validation BLEU (greedy, cased)</text>' % (T + ph / 2))
    ly = T + 8
    order = list(range(len(runs)))
    for i in reversed(order):  # the best last, on top
        r = runs[i]
        c = COLOURS[i % len(COLOURS)]
        width = 3 if i == 0 else 1.3
        xy = [(X(x), Y(y)) for x, y in r["curve"]]
        if xy:
            o.append('<polyline fill="none" stroke="%s" stroke-width="%s" points="%s"/>'
                     % (c, width, " ".join("%.1f,%.1f" % p for p in xy)))
    for i in order:
        r = runs[i]
        c = COLOURS[i % len(COLOURS)]
        lx = L + pw + 14
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%s"/>'
                 % (lx, ly, lx + 22, ly, c, 3 if i == 0 else 1.5))
        label = "%d. %s: %s" % (i + 1, r["name"], fmt(r["beam"]))
        o.append('<text x="%d" y="%d"%s>%s</text>' % (lx + 28, ly + 4,
                                                      ' font-weight="bold"' if i == 0 else "",
                                                      escape(label)))
        ly += 18
    o.append('<text x="%d" y="%d" fill="#555">the rank and validation BLEU of the model</text>'
             % (L + pw + 14, ly + 10))
    o.append('<text x="%d" y="%d" fill="#555">each run handed over (beam 5)</text>'
             % (L + pw + 14, ly + 26))
    o.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    os.replace(tmp, path)


COLUMNS = ["rank", "name", "options", "params", "steps", "epochs", "steps_per_s", "minutes",
           "best_greedy", "best_step", "best_minute", "last_greedy", "best_ppl", "average",
           "valid_beam_bleu", "valid_beam_chrf", "valid_beam_alpha", "commit", "date_start", "load_before",
           "load_after", "command"]


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, first = argv[1], argv[2:]
    names = list(first)
    for d in sorted(os.listdir(out)):
        if d not in names and os.path.isfile(os.path.join(out, d, "run.tsv")):
            names.append(d)
    runs = [summarize(out, n) for n in names if os.path.isfile(os.path.join(out, n, "run.tsv"))]
    if not runs:
        print("transformer_search_report: no finished run in %s" % out, file=sys.stderr)
        return 1
    runs.sort(key=lambda r: (-(r["beam"] or 0), -(r["best_greedy"] or 0)))
    r0 = runs[0]["rec"]
    direction = r0.get("direction", "de-en")
    title = "Transformer recipes on Multi30k %s, %s each" % (direction, r0.get("max_time"))
    svg_plot(runs, os.path.join(out, "valid-bleu-vs-time.svg"), title)
    with open(os.path.join(out, "results.tsv.tmp"), "w", encoding="utf-8") as f:
        f.write("\t".join(COLUMNS) + "\n")
        for i, r in enumerate(runs):
            rec = r["rec"]
            vals = {"rank": str(i + 1), "name": r["name"], "options": rec.get("options", ""),
                    "params": rec.get("params", ""), "steps": str(r["steps"]),
                    "epochs": str(r["epochs"]), "steps_per_s": fmt(r["steps_per_s"]),
                    "minutes": fmt(r["minutes"], 1), "best_greedy": fmt(r["best_greedy"]),
                    "best_step": str(r["best_step"] or ""), "best_minute": fmt(r["best_minute"], 1),
                    "last_greedy": fmt(r["last_greedy"]), "best_ppl": fmt(r["best_ppl"], 3),
                    "average": fmt(r["average"]), "valid_beam_bleu": fmt(r["beam"]),
                    "valid_beam_chrf": fmt(r["chrf"]), "valid_beam_alpha": r["alpha"]}
            for k in ("commit", "date_start", "load_before", "load_after", "command"):
                vals[k] = rec.get(k, "")
            f.write("\t".join(vals[c] for c in COLUMNS) + "\n")
    os.replace(os.path.join(out, "results.tsv.tmp"), os.path.join(out, "results.tsv"))
    md = ["# %s" % title, "",
          "Ranked by the validation BLEU (val, cased sacreBLEU, beam 5) of the model each run "
          "handed over; no test set was read. Greedy validation BLEU is what nmt train "
          "measured during the run (its best, and at its last validation). Load: the 1-minute "
          "load average before and after the run (the run's own threads count). Alpha: the "
          "beam's length normalisation (-: not recorded; the script decoded at 0.6 then).", ""]
    alphas = sorted(set(r["alpha"] for r in runs))
    if len(alphas) > 1:
        md += ["**The beam scores were decoded at different alphas (%s): rank them only "
               "after `transformer-search --rescore`.**" % ", ".join(alphas), ""]
    md += ["| # | run | options | params | steps | steps/s | epochs | best greedy (step, min) "
           "| last greedy | average | **valid BLEU, beam** | chrF | alpha | commit | start (UTC) "
           "| load |",
           "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: | --- | --- | --- |"]
    for i, r in enumerate(runs):
        rec = r["rec"]
        md.append("| %d | %s | `%s` | %s | %d | %s | %d | %s (%s, %s) | %s | %s | **%s** | %s | "
                  "%s | %s | %s | %s-%s |" % (
                      i + 1, r["name"], rec.get("options") or "(defaults)", rec.get("params", ""),
                      r["steps"], fmt(r["steps_per_s"]), r["epochs"], fmt(r["best_greedy"]),
                      r["best_step"], fmt(r["best_minute"], 1), fmt(r["last_greedy"]),
                      fmt(r["average"]), fmt(r["beam"]), fmt(r["chrf"]), r["alpha"],
                      rec.get("commit", ""),
                      rec.get("date_start", ""), rec.get("load_before", ""),
                      rec.get("load_after", "")))
    md += ["", "Greedy validation BLEU (as nmt train validates) at the same epoch and at the "
           "same minute (-: the run had not got there):", ""]
    md += matched_table(runs)
    md += ["", "Commands (`$m`: Multi30k's folder):", ""]
    for r in runs:
        md.append("- %s: `%s`" % (r["name"], r["rec"].get("command", "")))
    with open(os.path.join(out, "results.md.tmp"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    os.replace(os.path.join(out, "results.md.tmp"), os.path.join(out, "results.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
