"""Drives Debian's chromium headless for the explorer page of nmt align
--format html (tests/browser/explorer.sh, scripts/bench/explorer-bench,
scripts/experiments/explorer-screenshot) and the page of nmt serve
(tests/browser/serve.sh). Python's standard library only.

The page checks itself when its address ends in #selftest (see the end of
src/cli/align/explorer.html): it chooses a sentence, clicks, sorts and filters
through its own event handlers, and writes what it found as JSON into
<pre id="selftest">, which --dump-dom prints with the rest of the DOM after
the page has loaded. Console messages of the page are read from chromium's
own log (--enable-logging=stderr), where each one is a line with
"CONSOLE"."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def browser():
    """The chromium to run: $NMT_CHROMIUM, else chromium or chromium-browser."""
    for name in (os.environ.get("NMT_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    sys.exit("no chromium found (Debian: apt-get install chromium; or set NMT_CHROMIUM)")


def run(url_or_path, extra, timeout=60):
    """Runs chromium headless on a file with extra arguments; returns
    (stdout, the page's console lines, seconds)."""
    url = url_or_path if "://" in url_or_path else "file://" + os.path.abspath(url_or_path)
    profile = tempfile.mkdtemp(prefix="nmt-chromium-")
    cmd = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
           "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"] + extra + [url]
    try:
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        seconds = time.monotonic() - t0
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    err = p.stderr.decode("utf-8", "replace")
    console = [l for l in err.split("\n") if "CONSOLE" in l]
    if p.returncode != 0:
        raise RuntimeError("chromium exit %d: %s" % (p.returncode, err[-2000:]))
    return p.stdout.decode("utf-8", "replace"), console, seconds


def selftest(path, line=None, window="1400,900"):
    """The page's self-check (a dict), its console lines, the DOM and the
    seconds chromium ran."""
    hashpart = "#selftest" + (";line=%d" % line if line else "")
    dom, console, seconds = run(path + hashpart if "://" in path else
                                "file://" + os.path.abspath(path) + hashpart,
                                ["--window-size=" + window, "--dump-dom"])
    m = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S)
    if not m or not m.group(1).strip():
        raise RuntimeError("the page wrote no self-check (did its script run?): %s" % dom[-500:])
    text = m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(text), console, dom, seconds


def served_selftest(url, window="1400,900", budget_ms=20000):
    """The self-check of nmt serve's page at url (which ends in
    #selftest;text=...): the page types the text, waits for its translation
    and writes what it shows. The page works over the network, so chromium
    runs on virtual time (--virtual-time-budget), which waits while the
    page's request is pending. Returns as selftest does."""
    dom, console, seconds = run(url, ["--window-size=" + window, "--dump-dom",
                                      "--virtual-time-budget=%d" % budget_ms])
    m = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S)
    if not m or not m.group(1).strip():
        raise RuntimeError("the page wrote no self-check (no translation came?): %s" % dom[-800:])
    text = m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(text), console, dom, seconds


def screenshot(path, out, line=None, window="1400,900"):
    """A PNG of the page as a person first sees it (at #line=N if given)."""
    url = "file://" + os.path.abspath(path) + ("#line=%d" % line if line else "")
    _, console, _ = run(url, ["--window-size=" + window, "--screenshot=" + os.path.abspath(out)])
    return console
