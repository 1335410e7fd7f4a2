#!/usr/bin/env python3
"""skips.py: prints every test a ctest run skipped, with the reason its output gave.

Usage: skips.py JUNIT.xml [LABEL]   (the file of `ctest --output-junit`; LABEL names the build in
the lines). One line per skipped test: "skipped (LABEL): NAME: REASON", the reason being the last
line the test printed that says it skips ("skip: ...", "SKIP: ...", "...: skipped"; the tests
print their reason so, on one line), else its last line; then a count. Exit status 0, or 2 when
the file cannot be read.
"""
import re
import sys
import xml.etree.ElementTree as ET

SKIP_LINE = re.compile(r"\bskip", re.IGNORECASE)


def reason(lines):
    """The line of `lines` (stripped, none empty) that gives the reason of a skip."""
    said = [line for line in lines if SKIP_LINE.search(line)]
    return (said or lines or ["(no output)"])[-1]


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    label = sys.argv[2] if len(sys.argv) == 3 else "ctest"
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"skips.py: {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    n = 0
    for case in root.iter("testcase"):
        if case.find("skipped") is None:
            continue
        out = (case.findtext("system-out") or "").splitlines()
        why = reason([line.strip() for line in out if line.strip()])
        print(f"skipped ({label}): {case.get('name')}: {why}")
        n += 1
    print(f"{label}: {n} test(s) skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
