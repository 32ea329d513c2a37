#!/usr/bin/env bash
# nbd-evcopy onto and from a block device (a loop device over a file),
# read and written through io_uring like a file: the same bytes both
# ways.  Loop devices need root and the loop driver: without them the
# test is skipped, and counted as such.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy losetup cmp
requires_root "a loop device"

mib=$((1024 * 1024))
sparse=$tmpdir/sparse.raw
sparse_raw "$sparse"

truncate -s $((48 * mib)) "$tmpdir/disk"
if ! dev=$(losetup -f --show "$tmpdir/disk"); then
  echo "$0: SKIP: no loop device here (the loop driver is not loaded)"
  exit 77
fi
at_exit losetup -d "$dev"

nbd-evcopy "$sparse" "$dev" || fail "copy to the block device $dev"
cmp "$sparse" "$dev" || fail "the block device $dev differs"
nbd-evcopy "$dev" "$tmpdir/from-dev.raw" || fail "copy from $dev"
cmp "$sparse" "$tmpdir/from-dev.raw" || fail "the copy from $dev differs"
echo ok
