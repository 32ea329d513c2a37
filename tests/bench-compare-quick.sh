#!/usr/bin/env bash
# make bench-compare's machinery, in seconds (it judges no numbers):
# both sides from this build tree, one given as "." and one as its
# tools/ directory with an environment of its own, comparison 6 in
# quick mode; the report has a row per command and metric with a
# ratio, an interval and a verdict, and a verdict per command; the exit
# status is 0 or 1, and 1 for runs written here that regressed 20% in
# every metric.  A revision that does not exist gives 125 (git bisect's
# "cannot test"), a directory without built programs 255 (the harness
# cannot run), and so does a directory that lacks a program a command
# needs (the lessons alone, for the tools' comparison 6).
#
# Then the command that bench/bench.mk and docs/benchmarks.md give for a bisect,
# with bench/compare.sh called directly from a copy (make would turn
# its exit status into 2): git bisect run over a scratch repository
# whose revisions are "built" beforehand (their copy-libev a wrapper
# around this build's, slower or not), but for one that does not
# build.  Its verdict shows that 0, 1 and 125 reach git unchanged.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit qemu-nbd qemu-img nbdcopy python3 /usr/bin/time

compare ()
{
  env BENCH_RESULTS="$tmpdir" QUICK=1 "$@" \
    bash "$abs_top_srcdir/bench/compare.sh"
}

all="nbd-evcopy --no-extents --no-sparse"
status=0
(cd "$abs_top_builddir" &&
   compare BENCH_ONLY=6 OLD=. NEW="$abs_top_builddir/tools" \
     NEW_ENV='LIBNBD_DEBUG=0') >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
cat "$tmpdir/err"
cat "$tmpdir/out"
[ $status -le 1 ] || fail "exit status $status"
for label in "$all" "$all --timeout=0" nbd-evsum "nbd-evsum --timeout=0"; do
  for metric in wall "client CPU"; do
    grep -Eq "^\| 6 \| \`$label\` \| 2 \| $metric \| [0-9.]+ s \| [0-9.]+ s \| [0-9.]+ \| [0-9.]+-[0-9.]+ \| (regression|improvement|no significant change) \|$" \
      "$tmpdir/out" || fail "no $metric row for $label"
  done
  grep -Eq "^- 6 \`$label\`: (regression|improvement|no significant change)$" \
    "$tmpdir/out" || fail "no verdict for $label"
done
grep -q "with \`LIBNBD_DEBUG=0\`" "$tmpdir/out" || fail "NEW_ENV not in the report"
grep -qF -- "- OLD: \`.\` ($abs_top_builddir/tools:$abs_top_builddir/examples)" \
  "$tmpdir/out" || fail "OLD=. is not this build's tools/ and examples/"
ls "$tmpdir"/compare-*-quick.md >/dev/null || fail "no report file"

# The report's arithmetic on runs written here, with instruction counts
# (which perf gives on some machines only) and NEW 20% slower in every
# round: each metric gets its row, the verdict is a regression, and the
# exit status says so.
for r in 1 2 3 4; do
  printf '3a\tcopy-libev\told\t%d\t1.00 0.40 0.10\t1000000\n' $r
  printf '3a\tcopy-libev\tnew\t%d\t1.20 0.48 0.12\t1200000\n' $r
done >"$tmpdir/record"
status=0
python3 "$abs_top_srcdir/bench/compare.py" --old A --new B --old-dir a \
  --new-dir b --output "$tmpdir/synthetic.md" "$tmpdir/record" \
  >"$tmpdir/out" || status=$?
cat "$tmpdir/out"
[ $status -eq 1 ] || fail "a 20% regression gave exit status $status, not 1"
for row in "wall | 1.000 s | 1.200 s | 1.200 | 1.200-1.200 | regression" \
           "client CPU | 0.500 s | 0.600 s | 1.200 | 1.200-1.200 | regression" \
           "instructions | 1e+06 | 1.2e+06 | 1.200 | 1.200-1.200 | regression"; do
  grep -qF "| 3a | \`copy-libev\` | 4 | $row |" "$tmpdir/out" ||
    fail "no row '$row'"
done
grep -qx -- '- 3a `copy-libev`: regression' "$tmpdir/out" || fail "no verdict"

status=0
compare OLD=no-such-revision-here NEW="$abs_top_builddir" \
  >/dev/null 2>"$tmpdir/err" || status=$?
[ $status -eq 125 ] || fail "a missing revision gave $status, not 125"
status=0
mkdir "$tmpdir/empty"
compare OLD="$tmpdir/empty" NEW="$abs_top_builddir" \
  >/dev/null 2>"$tmpdir/err" || status=$?
[ $status -eq 255 ] || fail "a directory without programs gave $status, not 255"
status=0
compare BENCH_ONLY=6 OLD="$abs_top_builddir/examples" NEW="$abs_top_builddir" \
  >/dev/null 2>"$tmpdir/err" || status=$?
cat "$tmpdir/err"
[ $status -eq 255 ] || fail "the lessons alone for comparison 6 gave $status, not 255"
grep -q "needs nbd-evcopy" "$tmpdir/err" || fail "no message naming nbd-evcopy"

# The bisect.  Revisions A (good) to E (bad) of a scratch repository;
# each "build" in $BENCH_BUILDS but C's is a copy-libev that burns some
# CPU time, sleeps and runs this build's: A sleeps 0.1 s, B is this
# build's own (faster than A in wall and CPU time: 0), D and E sleep
# 0.6 s (slower than A: 1); C has no configure.ac, so it does not build
# (125).  The stamp is the one compare.sh leaves after a build.
harness=$tmpdir/harness
cp -r "$abs_top_srcdir/bench" "$harness"
repo=$tmpdir/repo
git init -q "$repo"
for r in A B C D E; do
  git -C "$repo" -c user.name=bench -c user.email=bench@example.invalid \
    commit -q --allow-empty -m "$r"
  eval "rev_$r=\$(git -C \"\$repo\" rev-parse HEAD)"
done
real=$abs_top_builddir/examples/copy-libev
builds=$tmpdir/builds
fake_build ()
{
  local d=$builds/$1
  mkdir -p "$d/examples"
  if [ -z "$2" ]; then
    ln -s "$real" "$d/examples/copy-libev"
  else
    printf '#!/bin/sh\ni=0\nwhile [ $i -lt 50000 ]; do i=$((i + 1)); done\nsleep %s\nexec %s "$@"\n' \
      "$2" "$real" >"$d/examples/copy-libev"
    chmod +x "$d/examples/copy-libev"
  fi
  touch "$d/.bench-built"
}
fake_build "$rev_A" 0.1
fake_build "$rev_B" ""
fake_build "$rev_D" 0.6
fake_build "$rev_E" 0.6

# Each exit status first, as the documented command gives it.
bisect_env=(BENCH_BUILDS="$builds" BENCH_RESULTS="$tmpdir" QUICK=1
            BENCH_ONLY=1 BENCH_COMMANDS=copy-libev OLD="$rev_A")
for case in C:125 B:0 D:1; do
  eval "rev=\$rev_${case%:*}"
  status=0
  (cd "$repo" && env "${bisect_env[@]}" NEW="$rev" "$harness/compare.sh") \
    >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
  [ $status -eq "${case#*:}" ] || {
    cat "$tmpdir/err" "$tmpdir/out"
    fail "revision ${case%:*} gave $status, not ${case#*:}"
  }
done

# git bisect run: B good, C skipped, D bad leave C or D as the first bad
# commit, and nothing else would.
status=0
(cd "$repo" && git bisect start "$rev_E" "$rev_A" &&
   git bisect run env "${bisect_env[@]}" NEW=HEAD "$harness/compare.sh") \
  >"$tmpdir/bisect" 2>&1 || status=$?
cat "$tmpdir/bisect"
grep -q "only 'skip'ped commits left to test" "$tmpdir/bisect" ||
  fail "git bisect run did not end on the skipped commit (status $status)"
sed -n '/could be any of:/,/^We cannot bisect more/p' "$tmpdir/bisect" |
  grep -o '^[0-9a-f]\{40\}' | sort >"$tmpdir/first-bad"
printf '%s\n' "$rev_C" "$rev_D" | sort >"$tmpdir/expected-bad"
diff -u "$tmpdir/expected-bad" "$tmpdir/first-bad" ||
  fail "git bisect run's first bad commit is not C or D"
echo ok
