#!/usr/bin/env bash
# A file system that fills up: ENOSPC on a write is one line with the
# offset and the length, and the status says the copy failed.  On a
# tmpfs of 1 MiB, which only root can mount: without root the test is
# skipped, and counted as such.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy mount umount
requires_root "mounting a tmpfs"

sparse=$tmpdir/sparse.raw
sparse_raw "$sparse"

mkdir "$tmpdir/full"
mount -t tmpfs -o size=1M tmpfs "$tmpdir/full" || fail "cannot mount a tmpfs"
at_exit umount --lazy "$tmpdir/full"

expect_error "destination: write failed at offset" \
  nbd-evcopy "$sparse" "$tmpdir/full/new.raw"
grep -Eq "^nbd-evcopy: destination: write failed at offset [0-9]+ length [0-9]+: No space left on device" \
  "$tmpdir/err" || fail "ENOSPC: $(cat "$tmpdir/err")"
echo ok
