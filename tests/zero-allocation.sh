#!/usr/bin/env bash
# Zero extents punch holes in a file-backed destination by default and
# keep it allocated with --allocated: stat's block count of the file
# nbdkit serves tells which happened.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit stat

# 64 MiB with one data page at 0 and one at 32 MiB.
start_nbdkit src data '1 @33554432 1' size=64M

# copy NAME FILL OPTIONS...: copy the source onto a 64 MiB file that is
# either a fresh hole (FILL=hole) or full of 0xff bytes (FILL=full),
# then set blocks to the number of 512-byte blocks the file has
# allocated.  Not run in $(...): the server's pid must reach cleanup.
copy ()
{
  name=$1 fill=$2; shift 2
  f=$tmpdir/$name.img
  if [ "$fill" = hole ]; then
    truncate -s 64M "$f"
  else
    head -c 64M /dev/zero | tr '\0' '\377' >"$f"
  fi
  start_nbdkit "$name" file "$f"
  eval "nbd-evcopy \"\$@\" \"\$src\" \"\$$name\""
  blocks=$(stat -c %b "$f")
}

full=$((64 * 2048))

# A hole stays a hole: block status says the destination reads as
# zeroes, so only the two data pages are written.
copy hole_default hole
[ "$blocks" -lt $((full / 8)) ] || fail "hole, default: $blocks blocks"

# A full file gets holes punched for the zero extents.
copy full_default full
[ "$blocks" -lt $((full / 8)) ] || fail "full, default: $blocks blocks"

# --allocated: both end up fully allocated.
copy hole_alloc hole --allocated
[ "$blocks" -ge "$full" ] || fail "hole, --allocated: $blocks blocks"
copy full_alloc full --allocated
[ "$blocks" -ge "$full" ] || fail "full, --allocated: $blocks blocks"

# The contents are right in every case.
read_back "$src" "$tmpdir/src.raw"
for f in hole_default full_default hole_alloc full_alloc; do
  cmp "$tmpdir/src.raw" "$tmpdir/$f.img" || fail "$f: contents differ"
done
