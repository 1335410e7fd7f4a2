#!/bin/sh
# help2man.sh TLVIEW VERSION OUT [COMMAND]: writes the man page OUT (roff, section 1) of
# `tlview` (no COMMAND) or `tlview COMMAND` from its --help text, so the pages say exactly what
# the binary says. Run by docs/man/CMakeLists.txt at build time; needs only sh and awk.
# tlview(1)'s FILES section names the installed files by their paths from the binary's folder:
# $TLVIEW_REL_COLLECTORDIR, $TLVIEW_REL_DEMODIR, $TLVIEW_REL_PKGCONFIGDIR (default: ../lib/tlview,
# ../share/tlview/traces, ../lib/pkgconfig).
# The --help texts follow cli/README.md: usage lines, then paragraphs; a line indented by 1 to 8
# spaces starts an item (an option, a command, a format) whose text goes on in lines indented by
# more than 8; "Environment:" and "Exit status:" start those sections.
set -eu
tlview=$1 version=$2 out=$3 cmd=${4:-}
collectordir=${TLVIEW_REL_COLLECTORDIR:-../lib/tlview}
demodir=${TLVIEW_REL_DEMODIR:-../share/tlview/traces}
pcdir=${TLVIEW_REL_PKGCONFIGDIR:-../lib/pkgconfig}
if [ -n "$cmd" ]; then
    help=$("$tlview" "$cmd" --help)
    # the command's summary: its item in `tlview --help` (continuation lines joined)
    summary=$("$tlview" --help | awk -v c="$cmd" '
        $1 == c && /^  [^ ]/ { s = $0; sub(/^  [^ ]+ +/, "", s); on = 1; next }
        on && /^             +[^ ]/ { t = $0; sub(/^ +/, "", t); s = s " " t; next }
        { on = 0 }
        END { print s }')
    name="tlview-$cmd" seealso='.BR tlview (1)'
else
    help=$("$tlview" --help)
    summary="see what several CUDA processes really do on one GPU"
    name=tlview seealso=$("$tlview" --help | awk '
        /^Commands:/ { on = 1; next }
        on && /^  [^ ]/ { printf "%s.BR tlview\\-%s (1)", sep, $1; sep = ",\n" }
        on && /^$/ { on = 0 }')
fi
[ -n "$summary" ] || { echo "help2man.sh: no summary for '$cmd' in tlview --help" >&2; exit 1; }
printf '%s\n' "$help" | awk -v name="$name" -v summary="$summary" -v version="$version" \
    -v seealso="$seealso" -v top="$([ -n "$cmd" ] || echo 1)" -v collectordir="$collectordir" \
    -v demodir="$demodir" -v pcdir="$pcdir" '
# esc: text made safe for roff: backslashes, hyphens (options stay copyable), control characters
# at the start of a line
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.'"'"']/)
        s = "\\&" s
    return s
}
# tag: an item name in bold, its arguments (words that are not options) in italics
function tag(s,    n, w, i, r, word, comma) {
    n = split(s, w, " ")
    r = ""
    for (i = 1; i <= n; i++) {
        word = w[i]
        comma = ""
        if (word ~ /,$/) {
            comma = ","
            word = substr(word, 1, length(word) - 1)
        }
        if (word ~ /^-/ || (i == 1 && s !~ /^-/))
            r = r (i > 1 ? " " : "") "\\fB" esc(word) "\\fR" comma
        else
            r = r (i > 1 ? " " : "") "\\fI" esc(word) "\\fR" comma
    }
    return r
}
{ line[++n] = $0 }
END {
    print ".\\\" Generated from the --help text of tlview " version " by docs/man/help2man.sh."
    print ".TH " toupper(name) " 1 \"\" \"tlview " version "\" \"tlview manual\""
    print ".SH NAME"
    print esc(name) " \\- " esc(summary)
    print ".SH SYNOPSIS"
    print ".nf"
    for (i = 1; i <= n && line[i] != ""; i++) {
        l = line[i]
        sub(/^usage: /, "", l)
        sub(/^       /, "", l)
        print esc(l)
    }
    print ".fi"
    print ".SH DESCRIPTION"
    while (i <= n && line[i] == "")
        i++
    pp = 0   # the next prose line starts a paragraph
    item = 0 # inside an item: lines indented by more than 8 go on with its text
    for (; i <= n; i++) {
        l = line[i]
        match(l, /^ */)
        indent = RLENGTH
        if (l == "") {
            pp = 1
            item = 0
            continue
        }
        if (match(l, /^(Environment|Exit status): */)) {
            head = substr(l, 1, RLENGTH)
            sub(/: *$/, "", head)
            print ".SH " toupper(head)
            l = substr(l, RLENGTH + 1)
            if (l != "")
                print esc(l)
            pp = item = 0
            continue
        }
        if (indent >= 1 && indent <= 8) {
            # the text starts after a gap of two spaces or more, else at the column where the
            # next line goes on (an option with a long argument leaves one space only)
            col = 0
            if (i < n && match(line[i + 1], /^ +[^ ]/) && RLENGTH - 1 > 8)
                col = RLENGTH - 1
            body = ""
            if (match(l, /[^ ]  +[^ ]/)) {
                t = substr(l, 1, RSTART)
                body = substr(l, RSTART + RLENGTH - 1)
            } else if (col > 0 && length(l) > col) {
                t = substr(l, 1, col)
                body = substr(l, col + 1)
            } else
                t = l
            gsub(/^ +| +$/, "", t)
            print ".TP"
            print tag(t)
            if (body != "")
                print esc(body)
            item = 1
            pp = 0
            continue
        }
        if (item && indent > 8) {
            sub(/^ +/, "", l)
            print esc(l)
            continue
        }
        if (pp || item)
            print ".PP"
        pp = item = 0
        sub(/^ +/, "", l)
        print esc(l)
    }
    if (top) {
        print ".SH FILES"
        print "Found from the location of the \\fBtlview\\fR binary, so an installed tree works"
        print "under any prefix and after it is moved:"
        print ".TP"
        print ".I " esc(collectordir "/libcollect.so")
        print "the collector that \\fBtlview record\\fR injects (\\fBCUDA_INJECTION64_PATH\\fR);"
        print "\\fBTLVIEW_COLLECTOR\\fR overrides it"
        print ".TP"
        print ".I " esc(demodir)
        print "the demo traces that \\fBtlview serve\\fR shows when given no files;"
        print "\\fBTLVIEW_DEMO_DIR\\fR overrides it"
        print ".TP"
        print ".I " esc(pcdir "/tlview.pc")
        print "\\fBpkg\\-config \\-\\-variable=collector tlview\\fR prints the collector'"'"'s path"
    }
    print ".SH SEE ALSO"
    print seealso
}' >"$out.tmp"
mv "$out.tmp" "$out"
