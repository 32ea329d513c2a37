#!/usr/bin/env bash
# The figures between claims markers in README.md, docs/benchmarks.md
# and docs/techniques.md are what bench/claims.py computes from the runs
# of the reports that bench/claims.spec names: a figure typed over, or a
# report's runs changed, fails here.  Then the check is shown to fail:
# a copy of README.md with one figure of its table edited by hand is
# refused, and the refusal shows the line.  Last, --use points a table
# at a report only where the report has all the table's comparisons.
source "$abs_top_srcdir/tests/functions.sh"
requires python3

cd "$abs_top_srcdir"
docs=(README.md docs/benchmarks.md docs/techniques.md)
for d in "${docs[@]}"; do
  grep -q '^<!-- claims [a-z]*: ' "$d" || fail "$d has no claims table"
done
python3 bench/claims.py --check bench/claims.spec "${docs[@]}" ||
  fail "figures above differ from the reports' (make claims writes them)"

# The same check on a copy of the tree's README.md whose first figure
# of the form 0.123 inside its table is one thousandth off.
t=$tmpdir/tree
mkdir -p "$t/docs"
ln -s "$abs_top_srcdir/bench" "$t/bench"
python3 - README.md "$t/README.md" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
start = text.index("<!-- claims readme:")
m = re.compile(r"\b(\d+)\.(\d{3})\b").search(text, start)
figure = int(m.group(1)) * 1000 + int(m.group(2)) + 1
edited = "%d.%03d" % divmod(figure, 1000)
open(sys.argv[2], "w", encoding="utf-8").write(
    text[:m.start()] + edited + text[m.end():])
print("edited %s to %s" % (m.group(0), edited))
PY
! python3 bench/claims.py --check "$t/bench/claims.spec" "$t/README.md" \
    >"$tmpdir/out" 2>&1 || fail "a figure edited by hand passed the check"
cat "$tmpdir/out"
grep -q '^+| ' "$tmpdir/out" ||
  fail "the refusal does not show the edited line"
grep -q "make claims writes them" "$tmpdir/out" || fail "no message saying what to do"

# --use with the report of the readme table: every table whose
# comparisons it has is pointed at it, and a table with a comparison it
# lacks keeps its own report.
spec=$tmpdir/spec/bench/claims.spec
mkdir -p "${spec%/*}"
ln -s "$abs_top_srcdir/bench/results" "${spec%/*}/results"
cp bench/claims.spec "$spec"
report_of () { awk -F '\t' -v t="$1" '$1 == "table" { n = $2 } $1 == "report" && n == t { print $2 }' "$2"; }
readme=$(report_of readme bench/claims.spec)
effects=$(report_of effects bench/claims.spec)
[ "$readme" != "$effects" ] ||
  fail "the tables readme and effects come from one report: nothing to check"
# A spec whose readme table comes from the effects run's report.
sed -i "0,\|^report\t$readme\$|s||report\t$effects|" "$spec"
[ "$(report_of readme "$spec")" = "$effects" ] || fail "could not edit $spec"
python3 bench/claims.py --use "$tmpdir/spec/$readme" "$spec" >"$tmpdir/use" ||
  fail "claims.py --use failed"
cat "$tmpdir/use"
[ "$(report_of readme "$spec")" = "$readme" ] || fail "--use left the readme table"
[ "$(report_of effects "$spec")" = "$effects" ] ||
  fail "--use pointed the effects table at a report without its comparisons"
echo ok
