#!/usr/bin/env python3
"""serve.py TLVIEW GEN WORK: `tlview serve --job` end to end on a synthetic job written by GEN
(bench_job_gen: 2 hosts x 2 GPUs x 2 ranks, one big group so that its summary takes a while).
GET /api/job just after start (the index as `tlview job --index` prints it, no report yet, each
summary absent or final) and once every group is analysed (its report = `tlview job --format
json`, field for field; each summary's GPU = the report's); a group opened (GET /api/job/open,
then /g/N/api/runs) = `tlview job --group N --format json` (`tlview report` of its files): kernels,
every device's verdict and figures; the third group opened lets the least recently used go
(WEB_JOB_OPEN_MAX = 2); bad groups are 400 or 404; the run API outside a group is 404; the URL
printed carries a token, without which the overview, the API and a group's page are 403."""
import json
import math
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

tl, gen, work = sys.argv[1:4]
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


TOKEN = None  # the token of the URL the server printed, sent with every get()


def get(port, path, token=True):
    """(status, parsed JSON body) of GET path, with the server's token (Authorization: Bearer)
    unless token is False; the body None when it is not JSON."""
    headers = {"Authorization": f"Bearer {TOKEN}"} if token else {}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


def same(a, b, path="", tol=1e-9):
    """'' when a and b hold the same values (reals to tol, relative), else where they differ."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
                math.isclose(a, b, rel_tol=tol, abs_tol=1e-12):
            return ""
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a.keys() ^ b.keys())} differ"
        for k in a:
            d = same(a[k], b[k], f"{path}.{k}", tol)
            if d:
                return d
        return ""
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} != {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, f"{path}[{i}]", tol)
            if d:
                return d
        return ""
    return "" if a == b else f"{path}: {a!r} != {b!r}"


def run_json(*args):
    return json.loads(subprocess.run([tl, *args], check=True, capture_output=True).stdout)


subprocess.run(["rm", "-rf", work], check=True)
subprocess.run(["mkdir", "-p", work], check=True)
subprocess.run([gen, f"{work}/job", "-H", "2", "-g", "2", "-r", "2", "-k", "60", "-m", "2",
                "-b", "400000"], check=True, capture_output=True)
job = f"{work}/job"
want_index = run_json("job", "--index", job)
want_report = run_json("job", "--format", "json", job)

srv = subprocess.Popen([tl, "serve", "--job", "--port", "0", job], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
try:
    line = srv.stdout.readline()
    m = re.search(r"a job of (\d+) files, (\d+) GPU groups, (\d+) kernels at "
                  r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{48}) ", line)
    check(m is not None, f"the URL line, with the token: {line.strip()!r}")
    port, TOKEN = int(m.group(4)), m.group(5)
    for path in ("/", "/api/job", "/g/0/", "/main.js"):
        st, body = get(port, path, token=False)
        check(st == 403 and "token" in body["error"], f"{path} without the token: {st} {body}")
    check((int(m.group(1)), int(m.group(2)), int(m.group(3))) ==
          (want_index["files"], len(want_index["groups"]), want_index["kernels"]),
          "the URL line counts the index's files, groups and kernels")

    # just after start: the index, the big group (0) still being analysed
    st, early = get(port, "/api/job")
    check(st == 200, f"GET /api/job: {st}")
    idx = dict(early["index"])
    note = idx.pop("note", None)
    d = same(idx, want_index)
    check(not d, f"/api/job index = tlview job --index {d}")
    check(note == want_report["job"]["note"], f"the note: {note!r}")
    check(early["groups"] == 4 and early["analysed"] < 4 and early["report"] is None,
          f"before the summaries are done: {early['analysed']} of {early['groups']} analysed, report {early['report'] is not None}")
    check(len(early["summaries"]) == 4 and sum(s is not None for s in early["summaries"]) == early["analysed"],
          f"summaries ready: {[s is not None for s in early['summaries']]}")
    st, small = get(port, "/api/job?index=0")
    check(st == 200 and small["index"] is None, "index=0 leaves the index out")

    # every group analysed
    for _ in range(600):
        st, done = get(port, "/api/job?index=0")
        if done["analysed"] == done["groups"] and done["report"] is not None:
            break
        time.sleep(0.1)
    check(done["analysed"] == 4, f"every group analysed: {done['analysed']}")
    d = same(done["report"], want_report)
    check(not d, f"/api/job report = tlview job --format json {d}")
    for g, s in enumerate(early["summaries"]):
        if s is not None:
            d = same(s, done["summaries"][g])
            check(not d, f"group {g}'s early summary is its final one {d}")
    for gpu in want_report["gpus"]:
        s = done["summaries"][gpu["group"]]
        dev = next(x for x in s["gpus"] if x["uuid"] == gpu["uuid"])
        diffs = [k for k in ("verdict", "rule", "kernels", "stretch", "predicted_gain",
                             "predicted_gain_low", "by_verdict", "ranks", "pids", "host", "index")
                 if same(dev.get(k), gpu.get(k), tol=1e-7)]  # the report: 8 digits
        check(not diffs, f"group {gpu['group']} ({gpu['verdict']}): summary = report gpus[] {diffs}")

    # bad groups
    for path, code in (("/api/job/open?group=4", 404), ("/api/job/open?group=-1", 400),
                       ("/api/job/open?group=x", 400), ("/api/job/open", 400),
                       ("/api/job/open?group=1&group=1", 400), ("/api/job/open?group=1&x=2", 400),
                       ("/api/job?index=2", 400), ("/g/4/api/runs", 404), ("/g/01/api/runs", 404),
                       ("/g/x/api/runs", 404), ("/g/1/api/runs", 404), ("/api/runs", 404),
                       ("/api/timeline?run=0&t0=0&t1=1&width=1", 404)):
        st, body = get(port, path)
        check(st == code and "error" in body, f"{path}: {st} (want {code}) {body.get('error')!r}")

    # open group 1: the same as tlview job --group 1 (tlview report of its files)
    def open_group(g):
        for _ in range(600):
            st, o = get(port, f"/api/job/open?group={g}")
            if o.get("state") == "open":
                return True
            time.sleep(0.05)
        return False

    for g in (1, 0):
        check(open_group(g), f"group {g} opens")
        st, runs = get(port, f"/g/{g}/api/runs")
        rep = run_json("job", "--group", str(g), "--format", "json", job)
        run = runs["runs"][0]
        check(st == 200 and run["summary"]["kernels"] == rep["summary"]["kernels"],
              f"group {g}: {run['summary']['kernels']} kernels, report {rep['summary']['kernels']}")
        # the page's additions to the view's device: lane, par_max (web/API.md)
        lanes = [{k: v for k, v in lane.items() if k not in ("lane", "par_max")} for lane in run["lanes"]]
        d = same(lanes, rep["devices"], tol=1e-5)  # the API: 6 digits, the report 8
        check(not d, f"group {g}: every device = tlview job --group {g} {d}")
        check(run["headline"] == rep["headline"], f"group {g}: headline {run['headline']!r}")
    st, body = get(port, "/g/1/api/stats?run=0")
    check(st in (200, 503), f"group 1's stats: {st}")
    st, _ = get(port, "/g/0/api/runs")
    # a third group: 1 was used least recently (0 after it), so 1 goes
    check(open_group(3), "group 3 opens")
    st, body = get(port, "/g/1/api/runs")
    check(st == 404 and body.get("state") == "closed", f"group 1 let go: {st} {body}")
    st, _ = get(port, "/g/0/api/runs")
    check(st == 200, f"group 0 still held: {st}")
    st, j = get(port, "/api/job?index=0")
    check(sorted((o["group"], o["state"]) for o in j["open"]) == [(0, "open"), (3, "open")],
          f"open groups: {j['open']}")
finally:
    srv.terminate()
    rc = srv.wait(timeout=60)
    check(rc == 0, f"tlview serve --job stops on SIGTERM with 0 (got {rc})")
    err = srv.stderr.read()
    if err.strip() != "tlview serve: stopping":
        print(err)

# usage errors
for args, what in ((["--job"], "needs the job's FILES"),
                   (["--job", "--follow", job], "does not go with"),
                   (["--job", "--compare", job, job], "does not go with")):
    p = subprocess.run([tl, "serve", *args], capture_output=True, text=True)
    check(p.returncode == 2 and what in p.stderr, f"serve {' '.join(args[:2])}: {p.returncode} {p.stderr.splitlines()[0] if p.stderr else ''}")
p = subprocess.run([tl, "serve", "--job", "--port", "0", f"{work}/nothing"], capture_output=True, text=True)
check(p.returncode == 1 and "nothing" in p.stderr, f"a missing folder: {p.returncode} {p.stderr.strip()}")
print(f"{failures} failed")
sys.exit(1 if failures else 0)
