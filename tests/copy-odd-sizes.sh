#!/usr/bin/env bash
# Sizes that are not a multiple of the request size, or smaller than
# one request: the last request is short, nothing is written past the
# end, and the destination reads back equal to the source.  The random
# plugin is the source because its first bytes are not zero (the
# pattern plugin's first 8 bytes are, which would hide a 7-byte copy
# that wrote nothing).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin random
requires_nbdkit_filter log

mib=$((1024 * 1024))
req=$((256 * 1024))     # the request size, given: the depth would grow it
sizes="7 511 512 $((mib + 512)) $((3 * mib - 1))"
for size in $sizes; do
  # One pair of servers per size, each under its own name.
  start_nbdkit src$size random $size seed=$size
  start_nbdkit dst$size --filter=log memory $size logfile="$tmpdir/log.$size"
  eval "src=\$src$size dst=\$dst$size"

  nbd-evcopy --no-extents --no-sparse --request-size=$req "$src" "$dst" ||
    fail "copy of $size bytes failed"

  read_back "$src" "$tmpdir/src.img"
  read_back "$dst" "$tmpdir/dst.img"
  [ "$(stat -c %s "$tmpdir/dst.img")" -eq $size ] ||
    fail "destination of $size bytes read back at the wrong size"
  cmp "$tmpdir/src.img" "$tmpdir/dst.img" ||
    fail "$size bytes: the destination differs from the source"
done

# Stopped servers have closed their logs, so every line is in the file.
stop_server $(for size in $sizes; do echo dst$size; done)
for size in $sizes; do
  ranges $size $req >"$tmpdir/expected"
  log_writes "$tmpdir/log.$size" >"$tmpdir/writes"
  cmp "$tmpdir/expected" "$tmpdir/writes" ||
    fail "$size bytes: unexpected writes: $(cat "$tmpdir/writes")"
done
