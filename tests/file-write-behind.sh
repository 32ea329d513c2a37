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

# 512 MiB of data, written one request at a time so that the ranges
# written are one run: once 256 MiB are cached, each 16 MiB more
# starts an eviction of 16 MiB, up to four at a time, and the copy
# waits for those in flight as it closes the file.  So at least 64 MiB
# are given back, however slow the disk.
nbdcopy -- [ nbdkit pattern $((512 * mib)) ] "$tmpdir/src.raw"
nbd-evcopy -v --requests=1 "$tmpdir/src.raw" "$tmpdir/dst.raw" \
  2>"$tmpdir/v" || { cat "$tmpdir/v"; fail "the copy failed"; }
grep -q "destination: .*through io_uring" "$tmpdir/v" ||
  fail "the destination was not written through io_uring"
# Before anything reads the new file back into the page cache.
cached=$(fincore --bytes --noheadings --output RES "$tmpdir/dst.raw")
[ "$cached" -le $((448 * mib)) ] ||
  fail "$cached bytes of the new file are still cached; at most $((448 * mib))"
cmp "$tmpdir/src.raw" "$tmpdir/dst.raw" || fail "the copy differs"
echo ok
