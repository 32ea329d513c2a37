#!/usr/bin/env bash
# Write-behind (tools/lib/file.c): a copy into a new local file gives
# back the pages it wrote once they are on the disk, so that it does
# not end with the whole image cached.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy fincore cmp stat
mib=$((1024 * 1024))

# A file system that keeps no page cache of its own (tmpfs) has no
# pages to give back.
if [ "$(stat -f -c %T "$tmpdir")" = tmpfs ]; then
  echo "$0: SKIP: $tmpdir is on a tmpfs"
  exit 77
fi

# 512 MiB of data: 256 MiB past the window that stays cached, so the
# first four evictions, which the copy waits for as it closes the
# file, give back at least 64 MiB, however slow the disk.
nbdcopy -- [ nbdkit pattern $((512 * mib)) ] "$tmpdir/src.raw"
nbd-evcopy "$tmpdir/src.raw" "$tmpdir/dst.raw" || fail "the copy failed"
# Before anything reads the new file back into the page cache.
cached=$(fincore --bytes --noheadings --output RES "$tmpdir/dst.raw")
[ "$cached" -le $((448 * mib)) ] ||
  fail "$cached bytes of the new file are still cached; at most $((448 * mib))"
cmp "$tmpdir/src.raw" "$tmpdir/dst.raw" || fail "the copy differs"

echo ok
