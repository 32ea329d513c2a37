#!/usr/bin/env bash
# The man pages are reproducible: built twice with the same
# SOURCE_DATE_EPOCH but different time zones (one where the local date
# differs from the UTC date), they are identical and carry the UTC date;
# a different epoch changes only the date.
source "$abs_top_srcdir/tests/functions.sh"
requires pod2man

build="$abs_top_srcdir/docs/build-man.sh"
# 2026-03-01 23:30:00 UTC: already 2 March in Tokyo, still 1 March in
# Honolulu.
epoch=1772407800

for pod in "$abs_top_srcdir"/docs/*.pod; do
  name=$(basename "$pod" .pod)
  SOURCE_DATE_EPOCH=$epoch TZ=Asia/Tokyo LOGNAME=alice USER=alice \
    sh "$build" "$abs_top_srcdir" "$pod" "$tmpdir/a-$name.1" 1.0
  SOURCE_DATE_EPOCH=$epoch TZ=Pacific/Honolulu LOGNAME=bob USER=bob \
    sh "$build" "$abs_top_srcdir" "$pod" "$tmpdir/b-$name.1" 1.0
  cmp "$tmpdir/a-$name.1" "$tmpdir/b-$name.1" ||
    fail "$name.1 differs between time zones with the same epoch"
  grep -q '2026-03-01' "$tmpdir/a-$name.1" ||
    fail "$name.1 does not carry the UTC date 2026-03-01"

  # A day later: only the date line may change.
  SOURCE_DATE_EPOCH=$((epoch + 86400)) TZ=UTC \
    sh "$build" "$abs_top_srcdir" "$pod" "$tmpdir/c-$name.1" 1.0
  grep -q '2026-03-02' "$tmpdir/c-$name.1" ||
    fail "$name.1 does not follow SOURCE_DATE_EPOCH"
  diff "$tmpdir/a-$name.1" "$tmpdir/c-$name.1" | grep '^[<>]' |
    grep -v '2026-03-0[12]' && fail "$name.1 changed in more than its date"

  # Without SOURCE_DATE_EPOCH the date comes from git or .release-date,
  # and again the time zone changes nothing.
  (unset SOURCE_DATE_EPOCH; TZ=Asia/Tokyo \
    sh "$build" "$abs_top_srcdir" "$pod" "$tmpdir/d-$name.1" 1.0)
  (unset SOURCE_DATE_EPOCH; TZ=America/Los_Angeles \
    sh "$build" "$abs_top_srcdir" "$pod" "$tmpdir/e-$name.1" 1.0)
  cmp "$tmpdir/d-$name.1" "$tmpdir/e-$name.1" ||
    fail "$name.1 without SOURCE_DATE_EPOCH depends on the time zone"
done
:
