#!/usr/bin/env python3
"""bench_job_serve.py TLVIEW JOB...: `tlview serve --job` against `tlview job` on the same files.

For each job (a folder of tlview files, e.g. written by bench_job_gen): starts `tlview serve --job
--port 0 JOB`, times the URL line and the first GET /api/job answer (the overview: the index,
no kernel read), polls GET /api/job?index=0 until the job report is there (every GPU's summary
made, one group at a time), reads the server's peak RSS (VmHWM), then runs `tlview job --format
json JOB` under GNU time. Prints one table row per job. Needs /usr/bin/time (Debian: time)."""
import json
import re
import subprocess
import sys
import time
import urllib.request


def get(port, token, path):
    """The body of GET path, with the token the server printed (Authorization: Bearer)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                 headers={"Authorization": f"Bearer {token}"})
    return urllib.request.urlopen(req, timeout=60).read()


def measure(tl, job):
    t0 = time.monotonic()
    p = subprocess.Popen([tl, "serve", "--job", "--port", "0", job], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        line = p.stdout.readline()
        t_url = time.monotonic() - t0
        m = re.search(r"127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+)", line)
        if not m:
            raise SystemExit(f"bench_job_serve: {job}: no URL from tlview serve --job ({line!r})")
        port, token = m.group(1), m.group(2)
        size = len(get(port, token, "/api/job"))
        t_api = time.monotonic() - t0
        while json.loads(get(port, token, "/api/job?index=0"))["report"] is None:
            time.sleep(0.05)
        t_done = time.monotonic() - t0
        with open(f"/proc/{p.pid}/status") as f:
            hwm = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))
    finally:
        p.terminate()
        p.wait()
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", tl, "job", "--format", "json", job],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    e, mk = r.stderr.split()[-2:]
    return t_url, t_api, size, t_done, hwm / 1024, float(e), int(mk) / 1024


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    tl = sys.argv[1]
    print("| job | URL line s | /api/job s (bytes) | every summary s | peak RSS MB | tlview job s, MB |")
    print("|---|---|---|---|---|---|")
    for job in sys.argv[2:]:
        u, a, n, d, rss, je, jm = measure(tl, job)
        print(f"| {job} | {u:.2f} | {a:.2f} ({n}) | {d:.2f} | {rss:.1f} | {je:.2f}, {jm:.1f} |")


if __name__ == "__main__":
    main()
