#!/usr/bin/env bash
# nbd-evsum of a block device (a loop device over a raw file) gives the
# digest of the file, and nbd-evcopy reads the device as it reads a
# file.  Loop devices need root and the loop driver: without them the
# test is skipped, and counted as such.
source "$abs_top_srcdir/tests/functions.sh"
requires losetup python3 qemu-img qemu-io cmp
requires_root "a loop device"

# 5 MiB and a bit: a multiple of 512, not of 64 KiB.
size=$((5 * 1024 * 1024 + 1536))
raw=$tmpdir/img.raw
raw_and_qcow2 "$raw" "$tmpdir/img.qcow2" $size \
  'write -P 0xaa 64k 1M' \
  'write -P 0x55 3000000 100000' \
  "write -P 0x77 $((size - 512)) 512"
want=$(blkhash_ref "$raw") || fail "no reference digest"

if ! loopdev=$(losetup --find --show --read-only "$raw"); then
  echo "$0: SKIP: no loop device here (the loop driver is not loaded)"
  exit 77
fi
at_exit losetup -d "$loopdev"

got=$(nbd-evsum "$loopdev") || fail "nbd-evsum $loopdev failed"
[ "$got" = "$want  $loopdev" ] || fail "nbd-evsum $loopdev: '$got'"
nbd-evcopy --no-extents --no-sparse "$loopdev" "$tmpdir/from-dev.raw" ||
  fail "nbd-evcopy $loopdev"
cmp "$raw" "$tmpdir/from-dev.raw" || fail "copy of $loopdev differs"
echo "ok: $want"
