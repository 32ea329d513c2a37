#!/usr/bin/env bash
# A writeback that fails under write-behind (tools/lib/file.c) is one
# line with the range written back, and a failed status: without
# write-behind the copy would end as if all were well, the pages
# failing later in the kernel's own writeback.  A block device over a
# file on a tmpfs too small for it: the writes fit in the page cache,
# their writeback fails once the tmpfs is full.  Loop devices and
# mounts need root and the loop driver: without them the test is
# skipped, and counted as such.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy losetup mount umount
requires_root "a loop device"
mib=$((1024 * 1024))

nbdcopy -- [ nbdkit pattern $((512 * mib)) ] "$tmpdir/src.raw"
mkdir "$tmpdir/full"
mount -t tmpfs -o size=64M tmpfs "$tmpdir/full" || fail "cannot mount a tmpfs"
at_exit umount --lazy "$tmpdir/full"
truncate -s $((512 * mib)) "$tmpdir/full/disk"
if ! dev=$(losetup -f --show "$tmpdir/full/disk"); then
  echo "$0: SKIP: no loop device here (the loop driver is not loaded)"
  exit 77
fi
at_exit losetup -d "$dev"

expect_error "destination: writing back to the disk failed" \
  nbd-evcopy "$tmpdir/src.raw" "$dev"
grep -Eq "^nbd-evcopy: destination: writing back to the disk failed \(seen on [0-9]+ bytes at offset [0-9]+\): " \
  "$tmpdir/err" || fail "writeback error: $(cat "$tmpdir/err")"
# Which pages were lost is not known (one error for the whole file), so
# no offset to resume from may be offered above 0, and any offered is
# checked against what the disk (the file under the loop device) holds.
if grep -Eq "complete below offset [1-9]|--resume=[1-9]" "$tmpdir/err"; then
  fail "an offset to resume from after a failed writeback: $(cat "$tmpdir/err")"
fi
if grep -q "complete below offset" "$tmpdir/err"; then
  below=$(sed -nE 's/.*complete below offset ([0-9]+).*/\1/p' "$tmpdir/err")
  cmp -n "$below" "$tmpdir/src.raw" "$tmpdir/full/disk" ||
    fail "the device does not hold the source below offset $below"
fi
echo ok
