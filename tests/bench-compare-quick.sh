#!/usr/bin/env bash
# make bench-compare's machinery, in seconds (it judges no numbers):
# both sides from this build tree, one with an environment of its own,
# comparison 6 in quick mode; the report has a row per command and
# metric with a ratio, an interval and a verdict, and a verdict per
# command; the exit status is 0 or 1.  A revision that does not exist
# gives 125 (git bisect's "cannot test"), a directory without built
# examples 255 (the harness cannot run).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit qemu-nbd qemu-img nbdcopy python3 /usr/bin/time

compare ()
{
  env BENCH_RESULTS="$tmpdir" QUICK=1 "$@" \
    bash "$abs_top_srcdir/bench/compare.sh"
}

status=0
compare BENCH_ONLY=6 OLD="$abs_top_builddir" NEW="$abs_top_builddir/examples" \
  NEW_ENV='LIBNBD_DEBUG=0' >"$tmpdir/out" 2>"$tmpdir/err" || status=$?
cat "$tmpdir/err"
cat "$tmpdir/out"
[ $status -le 1 ] || fail "exit status $status"
for label in copy-libev "copy-libev --timeout=0" checksum-libev \
             "checksum-libev --timeout=0"; do
  for metric in wall "client CPU"; do
    grep -Eq "^\| 6 \| \`$label\` \| 2 \| $metric \| [0-9.]+ s \| [0-9.]+ s \| [0-9.]+ \| [0-9.]+-[0-9.]+ \| (regression|improvement|no significant change) \|$" \
      "$tmpdir/out" || fail "no $metric row for $label"
  done
  grep -Eq "^- 6 \`$label\`: (regression|improvement|no significant change)$" \
    "$tmpdir/out" || fail "no verdict for $label"
done
grep -q "with \`LIBNBD_DEBUG=0\`" "$tmpdir/out" || fail "NEW_ENV not in the report"
ls "$tmpdir"/compare-*-quick.md >/dev/null || fail "no report file"

status=0
compare OLD=no-such-revision-here NEW="$abs_top_builddir" \
  >/dev/null 2>"$tmpdir/err" || status=$?
[ $status -eq 125 ] || fail "a missing revision gave $status, not 125"
status=0
mkdir "$tmpdir/empty"
compare OLD="$tmpdir/empty" NEW="$abs_top_builddir" \
  >/dev/null 2>"$tmpdir/err" || status=$?
[ $status -eq 255 ] || fail "a directory without examples gave $status, not 255"
echo ok
