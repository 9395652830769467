"""What the bench scripts share (imported beside nmt_kernel): running a child
with its own CPU time and peak RSS, medians, and the run log's rates.
Python 3 standard library only."""
import os
import selectors
import statistics
import subprocess
import sys
import time


def log(prog, msg):
    print("%s: %s" % (prog, msg), file=sys.stderr, flush=True)


def run_measured(cmd, env=None, cwd=None):
    """Runs cmd to its end: its stdout and stderr, wall time, its own CPU
    time and peak RSS (wait4: subprocess would reap it without rusage)."""
    t0 = time.perf_counter()
    with open(os.devnull, "rb") as devnull:
        p = subprocess.Popen(cmd, stdin=devnull, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, cwd=cwd)
    chunks = {p.stdout: [], p.stderr: []}
    sel = selectors.DefaultSelector()
    for f in chunks:
        sel.register(f, selectors.EVENT_READ)
    while sel.get_map():
        for key, _ in sel.select():
            data = key.fileobj.read1(65536)
            if data:
                chunks[key.fileobj].append(data)
            else:
                sel.unregister(key.fileobj)
    _, status, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    out, err = (b"".join(chunks[f]).decode() for f in (p.stdout, p.stderr))
    if rc != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), rc, err[-3000:]))
    return {"wall_s": time.perf_counter() - t0, "cpu_s": ru.ru_utime + ru.ru_stime,
            "peak_rss_mb": ru.ru_maxrss / 1024.0, "stdout": out, "stderr": err}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def log_rows(path):
    """nmt train's log.tsv as dicts (the header names the columns)."""
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def tokens_per_s(path, after_step):
    """Target tokens a second over the rows past after_step of a log written
    with --report-every 1: each row's rate times its own interval, summed,
    over the interval's length (validation rows are left out)."""
    rows = [r for r in log_rows(path) if not r.get("valid_ppl")]
    tokens = seconds = 0.0
    for prev, r in zip(rows, rows[1:]):
        if int(prev["step"]) >= after_step:
            dt = float(r["elapsed_s"]) - float(prev["elapsed_s"])
            tokens += float(r["tok_per_s"]) * dt
            seconds += dt
    return tokens / seconds if seconds > 0 else None
