#!/usr/bin/env bash
# Every relative link of the Markdown docs leads somewhere: the file
# exists, and a #fragment names a heading of that file, spelled as
# GitHub spells a heading's anchor (lower case, punctuation dropped but
# for - and _, spaces as -).  A fact told in one place and linked from
# the others stays reachable when a heading is renamed.  A linked
# report under bench/results/ is also listed in bench/bench.mk's
# EXTRA_DIST, so that the tarball holds it (make distcheck runs this
# test there too).
source "$abs_top_srcdir/tests/functions.sh"
requires python3

cd "$abs_top_srcdir"
python3 - README.md HACKING.md docs/*.md <<'PY' || fail "broken links above"
import os, re, sys

def anchors(path):
    found, seen = set(), {}
    fence = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} (.*)", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
        slug = slug.replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else "%s-%d" % (slug, n))
    return found

dist = set(re.findall(r"^\t(bench/results/\S+) \\$",
                      open("bench/bench.mk", encoding="utf-8").read(), re.M))
bad = 0
for doc in sys.argv[1:]:
    text = open(doc, encoding="utf-8").read()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, frag = target.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(doc), path)) \
            if path else doc
        if not os.path.exists(path):
            print("%s: no such file: %s" % (doc, target))
            bad += 1
        elif path.startswith("bench/results/") and path not in dist:
            print("%s: not in bench/bench.mk's EXTRA_DIST: %s" % (doc, path))
            bad += 1
        elif frag and path.endswith(".md") and frag not in anchors(path):
            print("%s: no such heading: %s" % (doc, target))
            bad += 1
sys.exit(1 if bad else 0)
PY
