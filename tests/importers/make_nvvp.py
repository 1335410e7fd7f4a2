#!/usr/bin/env python3
"""make_nvvp.py SPEC OUT: writes an NVIDIA Visual Profiler session file, as NVVP saves one (a
.nvvp that is XML, each nvprof database in it gzip-compressed and base64-encoded), from the nvprof
fixtures of tests/importers (their input.sql), so that no binary is committed.

The shape follows sessions NVVP wrote (2013 GPUSPH/gpusph profile.nvvp, version 1; 2020
xstupi00/N-Body-OpenACC profile.nvvp, version 2):
  version 2: <session version="2" ...> header elements <timelinepdm><pdm><split>BASE64</split>
             </pdm></timelinepdm> <analysispdm>...</analysispdm> </session>
  version 1: <session version="1" ...> header elements <pdm>\\nBASE64</pdm> </session>

SPEC lines (a # starts a comment; paths are relative to SPEC's folder):
  version V         the <session>'s version attribute (default 2)
  layout 1          version 1's layout: each <pdm> straight under <session>, its text inside
  split N           base64 characters per <split> of the databases that follow (default: one)
  members N         gzip members per database that follows (default 1)
  nogzip            the payloads that follow are not gzip-compressed
  damage crc        the gzip CRC-32 of the payloads that follow is wrong
  timeline SQL...   a <pdm> of <timelinepdm>: the nvprof database the SQL files build, in order
  analysis SQL...   a <pdm> of <analysispdm>, built the same way
  file DB           a <pdm> of <timelinepdm> whose payload is the file DB as it is
  bytes HEX         a <pdm> of <timelinepdm> whose payload is these bytes, not a database
  cdata             the splits that follow are wrapped in <![CDATA[...]]>
  raw TEXT          TEXT (\\n: a newline) put as it is where the next <pdm> would go
  cut N             the file ends N bytes early
The output depends only on SPEC, the SQL files and zlib (gzip's mtime is 0)."""
import base64
import gzip
import os
import sqlite3
import sys
import tempfile


def build_db(sql_paths):
    """The bytes of the SQLite database that running the SQL files builds."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "db")
        con = sqlite3.connect(path)
        for sql in sql_paths:
            with open(sql, encoding="utf-8") as f:
                con.executescript(f.read())
        con.commit()
        con.close()
        with open(path, "rb") as f:
            return f.read()


def encode(payload, opts):
    """payload gzip-compressed (unless nogzip) and base64-encoded, cut into splits."""
    data = payload
    if not opts["nogzip"]:
        n = opts["members"]
        step = max(1, -(-len(payload) // n))
        parts = [payload[i:i + step] for i in range(0, len(payload), step)] or [b""]
        data = b"".join(gzip.compress(p, mtime=0) for p in parts)
        if opts["damage_crc"]:
            data = bytearray(data)
            data[-8] ^= 0xFF  # the last member's CRC-32 (RFC 1952: CRC32, then ISIZE)
            data = bytes(data)
    text = base64.b64encode(data).decode("ascii")
    size = opts["split"] or len(text) or 1
    splits = [text[i:i + size] for i in range(0, len(text), size)] or [""]
    return ["<![CDATA[%s]]>" % t for t in splits] if opts["cdata"] else splits


def pdm_xml(splits, layout):
    if layout == 1:
        return "<pdm>\n" + "".join(splits) + "</pdm>\n"
    return "<pdm>" + "".join("<split>%s</split>" % s for s in splits) + "</pdm>\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_nvvp.py SPEC OUT")
    spec, out = sys.argv[1], sys.argv[2]
    base = os.path.dirname(os.path.abspath(spec))
    opts = {"version": "2", "layout": 2, "split": 0, "members": 1, "nogzip": False,
            "damage_crc": False, "cdata": False}
    timeline, analysis, cut = [], [], 0
    with open(spec, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip() if not line.startswith("raw ") else line
            if not line.strip():
                continue
            word, _, rest = line.partition(" ")
            args = rest.split()
            if word == "version":
                opts["version"] = args[0]
            elif word == "layout":
                opts["layout"] = int(args[0])
            elif word in ("split", "members"):
                opts[word] = int(args[0])
            elif word == "nogzip":
                opts["nogzip"] = True
            elif word == "damage" and args == ["crc"]:
                opts["damage_crc"] = True
            elif word in ("timeline", "analysis"):
                db = build_db([os.path.join(base, a) for a in args])
                xml = pdm_xml(encode(db, opts), opts["layout"])
                (timeline if word == "timeline" else analysis).append(xml)
            elif word == "file":
                with open(os.path.join(base, args[0]), "rb") as db:
                    timeline.append(pdm_xml(encode(db.read(), opts), opts["layout"]))
            elif word == "cdata":
                opts["cdata"] = True
            elif word == "bytes":
                timeline.append(pdm_xml(encode(bytes.fromhex(args[0]), opts), opts["layout"]))
            elif word == "raw":
                timeline.append(rest.rstrip("\n").replace("\\n", "\n"))
            elif word == "cut":
                cut = int(args[0])
            else:
                sys.exit("%s: unknown line: %s" % (spec, line.strip()))
    head = ('<?xml version="1.0"?>\n'
            '<session version="%s" name="fixture.nvvp" hscale="1.0E-6" normalize="false">\n'
            '<timelineoptions enabletimerange="false" start="-1" end="-1"/>\n'
            '<executable file="/opt/app/bin/app" cwd="/opt/app" args="--size 64 &#38; more" '
            'profileonstart="true" concurrentkernels="true"><envs></envs></executable>\n'
            '<expert><columnprops></columnprops>\n</expert>\n'
            '<timelinestate>\n'
            '<timeline pathname="app/Runtime API" kind="RUNTIME" containerstate="OPEN_ALL" '
            'filtered="false"/>\n'
            '<timeline pathname="GPU/1/Compute/void k&#60;int=1&#62;(float*)" kind="KERNEL" '
            'containerstate="OPEN_ALL" filtered="false"/>\n'
            '</timelinestate>\n') % opts["version"]
    if opts["layout"] == 1:
        body = "".join(timeline)
    else:
        body = ("<timelinepdm>\n" + "".join(timeline) + "</timelinepdm>\n<analysispdm>\n" +
                "".join(analysis) + "</analysispdm>\n")
    text = (head + body + "</session>\n").encode("utf-8")
    with open(out, "wb") as f:
        f.write(text[:len(text) - cut] if cut else text)


if __name__ == "__main__":
    main()
