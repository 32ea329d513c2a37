#!/usr/bin/env bash
# A file system that cannot zero a range and keep it allocated (tmpfs
# has no FALLOC_FL_ZERO_RANGE): --allocated falls back to writing
# buffers of zeroes, says so under -v, and the copy is exact and fully
# allocated.  Only root can mount the tmpfs: without root the test is
# skipped, and counted as such.
source "$abs_top_srcdir/tests/functions.sh"
requires cmp stat mount umount
requires_root "mounting a tmpfs"

mib=$((1024 * 1024))
# Not a multiple of 512: a byte of data at each end of a hole of 40 MiB.
odd=$tmpdir/odd.raw
odd_size=$((40 * mib + 4097))
truncate -s $odd_size "$odd"
printf 'A' | dd of="$odd" conv=notrunc status=none
printf 'Z' | dd of="$odd" bs=1 seek=$((odd_size - 1)) conv=notrunc status=none

mkdir "$tmpdir/tmpfs"
mount -t tmpfs -o size=128M tmpfs "$tmpdir/tmpfs" || fail "cannot mount a tmpfs"
at_exit umount --lazy "$tmpdir/tmpfs"

fill_file "$tmpdir/tmpfs/full.raw" $odd_size 252
nbd-evcopy -v --allocated "$odd" "$tmpdir/tmpfs/full.raw" 2>"$tmpdir/v" ||
  fail "--allocated onto tmpfs failed: $(grep -v '^slot' "$tmpdir/v")"
grep -q "destination cannot zero (Operation not supported)" "$tmpdir/v" ||
  fail "--allocated onto tmpfs: no fallback to writing zeroes said"
cmp "$odd" "$tmpdir/tmpfs/full.raw" || fail "--allocated onto tmpfs: differs"
allocated=$(( $(stat -c %b "$tmpdir/tmpfs/full.raw") * $(stat -c %B "$tmpdir/tmpfs/full.raw") ))
[ "$allocated" -ge $odd_size ] ||
  fail "--allocated onto tmpfs left holes: $allocated bytes allocated"
echo ok
