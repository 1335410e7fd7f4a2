#!/usr/bin/env python3
"""verdicts_judge: judges the scenarios recorded by tests/gpu/verdicts.sh with tlview's report.

For every folder OUTDIR/<scenario> holding an `expected` file it runs
    TLVIEW report --format json [ARGS] [--baseline FILE]... OUTDIR/<scenario>/{*.db,*.json}
(the baseline files: those of the folders the `expected` file names) and prints a table:
    scenario | expected | verdict | stretch | overlap | pass
verdict and stretch are the first GPU's (the JSON view's names are in REPORT_* below, in one
place); overlap is its overlap share of busy time, for reading only.
The `expected` file, one `key: value` a line (# starts a comment):
    verdict: time-sliced                allowed verdicts, `|` between them; `any`: record only
    stretch: 1.7 2.3                    optional: bounds the stretch must lie within
    baseline: solo-spin [solo-burst]    optional: folders under OUTDIR with the solo references
    args: --assume-mps on               optional: more arguments of tlview report (what a user who
                                        knows the setup would say of files that do not)
A row passes when the verdict is allowed and the stretch (when bounded) lies within the bounds.
Exit status: 0 when every row passed, 1 when one failed, 2 for a usage error.
Usage: verdicts_judge.py [--save DIR] [--only NAME]... TLVIEW OUTDIR
  --save DIR   keep each report as DIR/<scenario>.json
  --only NAME  judge only these scenarios (repeatable)
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys

# Where the verdict and the stretch stand in `tlview report --format json` (view/README.md).
REPORT_DEVICES = "devices"
REPORT_VERDICT = "verdict"
REPORT_STRETCH = "stretch"
REPORT_OVERLAP = "overlap_of_busy"
ANY = "any"


def read_expected(path):
    """The `expected` file as {key: value}; raises ValueError naming a bad line."""
    exp = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, sep, value = line.partition(":")
            if not sep or not key.strip():
                raise ValueError(f"{path}:{n}: not `key: value`: {line!r}")
            exp[key.strip()] = value.strip()
    if "verdict" not in exp:
        raise ValueError(f"{path}: no `verdict:` line")
    if "stretch" in exp:
        lo, hi = (float(x) for x in exp["stretch"].split())
        exp["stretch"] = (lo, hi)
    return exp


def trace_files(folder):
    """The trace files of a folder: tlview files, and Chrome traces (gzipped ones too)."""
    return [f for pat in ("*.db", "*.json", "*.json.gz")
            for f in sorted(glob.glob(os.path.join(folder, pat)))]


def fmt(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def judge(tlview, outdir, name, save):
    """One row: (scenario, expected, verdict, stretch, overlap, pass text, passed)."""
    folder = os.path.join(outdir, name)
    try:
        exp = read_expected(os.path.join(folder, "expected"))
    except (OSError, ValueError) as e:
        return (name, "?", "-", "-", "-", f"FAIL: {e}", False)
    want = exp["verdict"]
    # `|` would split a Markdown table's cell
    shown = want.replace("|", " or ") + (" {:g}-{:g}".format(*exp["stretch"])
                                         if "stretch" in exp else "")
    if exp.get("args"):
        shown += f" ({exp['args']})"
    files = trace_files(folder)
    if not files:
        return (name, shown, "-", "-", "-", "FAIL: no trace files", False)
    cmd = [tlview, "report", "--format", "json"] + exp.get("args", "").split()
    for base in exp.get("baseline", "").split():
        bfiles = trace_files(os.path.join(outdir, base))
        if not bfiles:
            return (name, shown, "-", "-", "-", f"FAIL: baseline {base} has no trace files", False)
        for f in bfiles:
            cmd += ["--baseline", f]
    cmd += files
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rep = json.loads(res.stdout)
    except ValueError:
        err = (res.stderr.strip().splitlines() or ["no output"])[-1]
        return (name, shown, "-", "-", "-", f"FAIL: report exit {res.returncode}: {err}", False)
    if save:
        with open(os.path.join(save, f"{name}.json"), "w") as f:
            json.dump(rep, f, indent=1)
    devs = rep.get(REPORT_DEVICES) or [{}]
    dev = devs[0]
    verdict = dev.get(REPORT_VERDICT, "-")
    stretch = dev.get(REPORT_STRETCH)
    overlap = dev.get(REPORT_OVERLAP)
    problems = []
    if want != ANY and verdict not in want.split("|"):
        problems.append(f"verdict {verdict}, {want.replace('|', ' or ')} wanted")
    if "stretch" in exp:
        lo, hi = exp["stretch"]
        if stretch is None or math.isnan(stretch) or not lo <= stretch <= hi:
            problems.append(f"stretch {fmt(stretch)} outside {lo:g}-{hi:g}")
    if len(devs) > 1:
        problems.append(f"{len(devs)} GPUs in the report, 1 expected")
    problems += physics_contradictions(rep)
    if problems:
        text = "FAIL: " + "; ".join(problems)
    else:
        text = "record" if want == ANY else "PASS"
    return (name, shown, verdict, fmt(stretch), fmt(overlap), text, not problems)


# Window verdicts the physics of their contexts rules out: contexts that cannot share the GPU
# (no MPS, not green contexts of one process) are never side by side; contexts of one share
# group (MPS clients, green contexts with their parent) are never time-sliced.
RULED_OUT = {"sliced": ("concurrent", "contended", "queued"), "shared": ("time-sliced",)}


def physics_contradictions(rep):
    """Problems where a window's verdict contradicts what its contexts allowed, and windows
    judged without physics on a GPU whose every context's MPS state is known."""
    out = []
    devices = rep.get(REPORT_DEVICES) or []
    for w in rep.get("windows") or []:
        gpu = w.get("gpu", 0)
        mps = devices[gpu].get("mps") if gpu < len(devices) else None
        if w.get("verdict") in RULED_OUT.get(w.get("physics"), ()):
            out.append(f"window {w.get('id')} is {w.get('verdict')} with {w.get('physics')} "
                       "physics")
        if mps in ("off", "on") and w.get("physics") == "unknown":
            out.append(f"window {w.get('id')}: physics unknown on a GPU with MPS {mps}")
    return out[:3]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("tlview")
    p.add_argument("outdir")
    p.add_argument("--save")
    p.add_argument("--only", action="append")
    a = p.parse_args()
    if not os.path.isdir(a.outdir):
        p.error(f"{a.outdir}: no such folder")
    if a.save:
        os.makedirs(a.save, exist_ok=True)
    names = sorted(os.path.basename(os.path.dirname(e))
                   for e in glob.glob(os.path.join(a.outdir, "*", "expected")))
    if a.only:
        missing = sorted(set(a.only) - set(names))
        if missing:
            p.error(f"no scenario folder with an `expected` file: {', '.join(missing)}")
        names = [n for n in names if n in a.only]
    if not names:
        p.error(f"{a.outdir}: no scenario folders (<scenario>/expected)")
    rows = [judge(a.tlview, a.outdir, n, a.save) for n in names]
    head = ("scenario", "expected", "verdict", "stretch", "overlap", "pass")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r[:6]) + " |")
    failed = sum(not r[6] for r in rows)
    print(f"verdicts_judge: {len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
