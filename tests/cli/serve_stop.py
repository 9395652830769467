"""nmt serve stopped again and again under load (tests/cli/serve_stop.sh).

    serve_stop.py NMT MODEL RUNS TIMEOUT DIR

Each of RUNS runs starts `nmt serve` on a free port and loads it from six
client threads: two ask GET /stats as fast as they can (/stats reads the
request queue, which the shutdown frees; libmicrohttpd closes a
connection after each GET), two POST small translations on keep-alive
connections (some with alignments, some empty, some of several
sentences), two send requests of no sentence and of an empty one 32 at a
time (pipelined), which keep the HTTP thread at work on the queue. After
a random delay of 0 to 150 ms the server gets
SIGTERM (SIGINT in one run of four); every other run gets a second
signal, SIGTERM or SIGINT, 0 to 50 ms later.
Checked in every run: the server exits 0 within TIMEOUT seconds, says it
stopped, and its log has no sanitizer report; each answer is 200 (a whole
answer, one translation per sentence), 503 (only once a signal was sent)
or 429; a connection fails only once a signal was sent. A server still
running after TIMEOUT is killed and its threads' kernel states printed.
Prints a summary line of figures; exit 0 when every run passed.
"""
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

NMT, MODEL, RUNS, TIMEOUT, DIR = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
SENTENCES = ["sko bap frug verd lairn", "pu drut", "", "sko brat skotrud trisk sing pu snul verd"]
# a request of no sentence, answered on the HTTP thread, and one of an
# empty sentence, which goes through the queue (and is not decoded)
BURST = b"".join(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                 for body in (b'{"text": []}', b'{"text": [""]}') * 16)
STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")
SANITIZER = re.compile(rb"AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error")


class Run:
    """One server's run: its clients' tallies and failures."""

    def __init__(self, port):
        self.port = port
        self.stop = threading.Event()
        self.signalled = threading.Event()
        self.lock = threading.Lock()
        self.counts = {}
        self.errors = []

    def tally(self, key):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def error(self, what):
        with self.lock:
            self.errors.append(what)

    def ask(self, conn, method, path, body=None):
        """One request on conn: (status, body), or None when the connection
        failed (counted, and an error unless a signal was sent)."""
        try:
            conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            return r.status, r.read()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            self.tally("connection failed")
            if not self.signalled.is_set():
                self.error("%s %s: %r before any signal" % (method, path, e))
            if isinstance(e, ConnectionRefusedError):
                time.sleep(0.002)  # the server is gone: wait for the run to end
            return None

    def check(self, path, status, data, n):
        """One answer: a whole 200 (n translations, or GET /stats's
        counts), a 503 only once a signal was sent, or a 429."""
        self.tally("%s %d" % (path, status))
        if status == 503 and not self.signalled.is_set():
            self.error("%s: 503 before any signal" % path)
        elif status == 200:
            try:
                d = json.loads(data)
                whole = len(d["translations"]) == n if path == "/translate" else "in_flight" in d
            except (ValueError, KeyError, TypeError):
                whole = False
            if not whole:
                self.error("%s: not a whole answer for %d sentences: %r" % (path, n, data[:200]))
        elif status not in (429, 503):
            self.error("%s: status %d: %r" % (path, status, data[:200]))

    def stats_client(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while not self.stop.is_set():
            got = self.ask(conn, "GET", "/stats")
            if got:
                self.check("/stats", got[0], got[1], 0)

    def burst_client(self):
        """Requests of no sentence or an empty one, 32 at a time on one
        connection (pipelined): they keep the server's HTTP thread busy,
        and reading the queue, so that the shutdown finds it at work."""
        s = None
        while not self.stop.is_set():
            try:
                if s is None:
                    s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
                s.sendall(BURST)
                data, seen = b"", []
                while len(seen) < 32:
                    b = s.recv(65536)
                    if not b:
                        raise ConnectionResetError("closed after %d answers" % len(seen))
                    data += b
                    seen = STATUS.findall(data)
            except OSError as e:
                s = s.close() if s else None
                self.tally("connection failed")
                if not self.signalled.is_set():
                    self.error("no-sentence requests: %r before any signal" % e)
                if isinstance(e, ConnectionRefusedError):
                    time.sleep(0.002)
                continue
            for status in map(int, seen):  # the bodies are not told apart: not checked
                self.tally("/translate %d" % status)
                if status not in (200, 429, 503) or (status == 503 and not self.signalled.is_set()):
                    self.error("pipelined /translate: status %d" % status)

    def translate_client(self, seed):
        rnd = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while not self.stop.is_set():
            text = [rnd.choice(SENTENCES) for _ in range(rnd.choice((0, 1, 1, 3)))]
            req = {"text": text, "beam": rnd.choice((1, 3)), "alignments": rnd.random() < 0.5}
            got = self.ask(conn, "POST", "/translate", json.dumps(req))
            if got:
                self.check("/translate", got[0], got[1], len(text))


def listening_port(log, proc, limit):
    """The port of the 'listening on' line, once the server wrote it."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        with open(log, "rb") as f:
            m = re.search(rb"listening on http://\S+:(\d+)/", f.read())
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.005)
    return None


def threads_of(pid):
    """Each thread's name, state and kernel wait channel: where a hang is."""
    out = []
    for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
        base = "/proc/%d/task/%s/" % (pid, tid)
        try:
            name = open(base + "comm").read().strip()
            state = open(base + "stat").read().split(")")[-1].split()[0]
            wchan = open(base + "wchan").read().strip()
        except OSError:
            continue
        out.append("%s %s %s %s" % (tid, name, state, wchan))
    return "; ".join(out)


def one_run(k, rnd):
    """Run k: a list of failures (empty when it passed), the exit status and
    the run's tallies."""
    log = os.path.join(DIR, "stop.%d.log" % k)
    with open(log, "wb") as f:
        proc = subprocess.Popen([NMT, "serve", "-m", MODEL, "--port", "0", "--threads", "2",
                                 "--batch", "4"], stderr=f)
    port = listening_port(log, proc, TIMEOUT)
    if port is None:
        proc.kill()
        proc.wait()
        return ["run %d: did not start: %r" % (k, open(log, "rb").read()[-400:])], None, {}
    run = Run(port)
    clients = [threading.Thread(target=run.stats_client) for _ in range(2)]
    clients += [threading.Thread(target=run.burst_client) for _ in range(2)]
    clients += [threading.Thread(target=run.translate_client, args=(rnd.random(),)) for _ in range(2)]
    for c in clients:
        c.start()
    time.sleep(rnd.uniform(0, 0.15))
    sent = [signal.SIGINT if k % 4 == 3 else signal.SIGTERM]
    run.signalled.set()
    proc.send_signal(sent[0])
    if k % 2:
        time.sleep(rnd.uniform(0, 0.05))
        sent.append(rnd.choice((signal.SIGTERM, signal.SIGINT)))
        proc.send_signal(sent[1])  # the process is not reaped yet: never ESRCH
    for sig in sent:
        run.tally(sig.name)
    failures = []
    try:
        rc = proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        failures.append("run %d: still running %.0f s after the signal; threads: %s"
                        % (k, TIMEOUT, threads_of(proc.pid)))
        proc.kill()
        rc = proc.wait()
    run.stop.set()
    for c in clients:
        c.join()
    data = open(log, "rb").read()
    if rc != 0:
        failures.append("run %d: exit %d: %r" % (k, rc, data[-600:]))
    elif b"nmt serve: stopped" not in data:
        failures.append("run %d: no 'stopped' line: %r" % (k, data[-300:]))
    if SANITIZER.search(data):
        failures.append("run %d: sanitizer: %r" % (k, data[:3000]))
    failures += ["run %d: %s" % (k, e) for e in run.errors[:5]]
    return failures, rc, run.counts


def main():
    rnd = random.Random(int(os.environ.get("NMT_STOP_SEED", "1")))
    t0 = time.monotonic()
    failures, exits, totals = [], {}, {}
    for k in range(RUNS):
        f, rc, counts = one_run(k, rnd)
        failures += f
        exits[rc] = exits.get(rc, 0) + 1
        for key, n in counts.items():
            totals[key] = totals.get(key, 0) + n
        if f:
            print("\n".join(f), file=sys.stderr)
    took = time.monotonic() - t0
    signals = {name: totals.pop(name, 0) for name in ("SIGTERM", "SIGINT")}
    print("%d runs in %.1f s (%.2f s a run); signals sent %s; exit statuses %s; failed runs %d; "
          "answers %s" % (RUNS, took, took / RUNS, signals, dict(sorted(exits.items(), key=str)),
                          len({f.split(":")[0] for f in failures}), dict(sorted(totals.items()))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
