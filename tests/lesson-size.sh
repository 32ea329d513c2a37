#!/usr/bin/env bash
# Each lesson stays a read of one sitting: its own lines, and its own
# plus those of every common/ module its cc line names (.c and .h, and
# common/ headers it includes that have no .c), within its budget; and
# zero-extent-copy-libev differs from copy-libev by the extent technique
# alone, at most 300 changed lines of diff.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 diff

cd "$abs_top_srcdir"
python3 - <<'PY' || fail "a lesson is over its budget"
import os, re, sys

budgets = {                     # own lines, total lines
    "copy-libev": (350, 700),
    "zero-extent-copy-libev": (500, 1100),
    "checksum-libev": (450, 1400),
}

def lines(path):
    with open(path) as f:
        return sum(1 for _ in f)

ok = True
for name, (own_max, total_max) in budgets.items():
    src = "examples/%s.c" % name
    text = open(src).read()
    m = re.search(r"^ \*   (cc .*?[^\\])$", text, re.M | re.S)
    cc = re.sub(r"\\\n \*\s*", " ", m.group(1)).split()
    mods = [w for w in cc if w.startswith("common/") and w.endswith(".c")]
    files = set()
    for c in mods:
        files.add(c)
        if os.path.exists(c[:-2] + ".h"):
            files.add(c[:-2] + ".h")
    for h in re.findall(r'^#include "([^"]+)"', text, re.M):
        if os.path.exists("common/" + h):
            files.add("common/" + h)
    own = lines(src)
    total = own + sum(lines(f) for f in files)
    print("%s: own %d (at most %d), total %d (at most %d)"
          % (name, own, own_max, total, total_max))
    if own > own_max or total > total_max:
        ok = False
sys.exit(0 if ok else 1)
PY

changed=$(diff examples/copy-libev.c examples/zero-extent-copy-libev.c |
          grep -c '^[<>]' || :)
echo "diff copy-libev zero-extent-copy-libev: $changed changed lines"
[ "$changed" -le 300 ] || fail "the two copiers differ by $changed lines"
