#!/usr/bin/env bash
# nbd-evcopy adapts the requests in flight and their size to the servers
# (tools/lib/depth.h), without judging speed:
#  - against servers that answer each read and write after 10 ms
#    (nbdkit's delay filter) the bytes in flight grow past the starting
#    16 x 1 MiB, but to no more requests than the servers serve at
#    once (16 per connection each), -v says each change, and the copy
#    is exact;
#  - against servers that answer at once they stay within the bound
#    (ADAPT_MEMORY, 256 MiB of buffers) and do not run away, and the
#    memory touched stays far below the buffers allocated
#    (tools/lib/buffers.h);
#  - --requests and --request-size, given, fix the values: no change.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_filter delay

size=256M
start_nbdkit src -r --filter=delay sparse-random $size seed=23 percent=90 delay-read=10ms
start_nbdkit dst --filter=delay memory $size delay-write=10ms delay-zero=10ms
read_back "$src" "$tmpdir/src.img"
# Filled first, with other data: a fresh memory server is slow while it
# faults in its pages, and against a slow destination the depth rightly
# stays.
nbdkit -U - pattern $size --run "nbdcopy --requests=64 -- \"\$uri\" \"$dst\"" ||
  fail "cannot fill the destination"

nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" || fail "copy failed: $(grep -v slot "$tmpdir/v")"
read_back "$dst" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "the copy differs"
served=$(served_at_once "$tmpdir/v")
grep -q "with 16 requests of 1048576 bytes (adapting up to $(served_at_start "$tmpdir/v") of 1048576)" "$tmpdir/v" ||
  fail "no -v line for the starting depth, up to $(served_at_start "$tmpdir/v"): $(grep copying "$tmpdir/v")"
most=$(most_in_flight "$tmpdir/v")
[ "$most" -gt $((16 * 1024 * 1024)) ] ||
  fail "against a delayed server the depth did not grow: $(grep depth: "$tmpdir/v")"
[ "$most" -le $((served * 1024 * 1024)) ] ||
  fail "more in flight than the servers serve at once: $most"
# Each dimension within its own bound, not only their product.
[ "$(most_requests "$tmpdir/v")" -le "$served" ] ||
  fail "more requests than the servers serve at once: $(most_requests "$tmpdir/v")"
[ "$(largest_request "$tmpdir/v")" -le 1048576 ] ||
  fail "requests larger than 1 MiB: $(largest_request "$tmpdir/v")"

# Explicit options: fixed, and no change said.  8 requests of 64 KiB
# move a small part of what the adapted depth does, so a smaller image
# is enough: 32 MiB still takes over a second against these servers,
# and the copy above changed its depth within its first tenth.
stop_server dst
small=32M
start_nbdkit fsrc -r --filter=delay sparse-random $small seed=23 percent=90 delay-read=10ms
start_nbdkit dst --filter=delay memory $small delay-write=10ms delay-zero=10ms
read_back "$fsrc" "$tmpdir/fsrc.img"
nbd-evcopy -v --requests=8 --request-size=64k "$fsrc" "$dst" 2>"$tmpdir/v" ||
  fail "copy with explicit options failed"
grep -q 'with 8 requests of 65536 bytes (fixed)' "$tmpdir/v" ||
  fail "no -v line for the fixed depth"
! grep -q ' depth: ' "$tmpdir/v" || fail "explicit options changed: $(grep depth: "$tmpdir/v")"
read_back "$dst" "$tmpdir/fdst.img"
cmp "$tmpdir/fsrc.img" "$tmpdir/fdst.img" || fail "the copy with explicit options differs"

# One of the two given: only the other adapts.
stop_server dst
start_nbdkit dst --filter=delay memory $size delay-write=10ms delay-zero=10ms
nbd-evcopy -v --requests=8 "$src" "$dst" 2>"$tmpdir/v" || fail "copy with --requests failed"
sed -n 's/.* depth: \([0-9]*\) requests of .*/\1/p' "$tmpdir/v" | grep -v '^8$' &&
  fail "--requests=8 was not kept"

# Servers that answer at once: the depth stays bounded.
stop_server src dst
start_nbdkit src -r sparse-random $size seed=23 percent=90
start_nbdkit dst memory $size
nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" || fail "fast copy failed"
most=$(most_in_flight "$tmpdir/v")
[ "$most" -le $((64 * 1048576)) ] ||
  fail "against fast servers the depth ran away to $most bytes: $(grep depth: "$tmpdir/v")"
served=$(served_at_once "$tmpdir/v")
[ "$(most_requests "$tmpdir/v")" -le "$served" ] ||
  fail "more requests than the servers serve at once: $(most_requests "$tmpdir/v")"
[ "$(largest_request "$tmpdir/v")" -le 1048576 ] ||
  fail "requests larger than 1 MiB: $(largest_request "$tmpdir/v")"
read_back "$dst" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "the fast copy differs"

# 256 MiB of buffers are allocated, but only those of the slots in use
# at once are ever touched: far less resident than 256 MiB.
rss=$(max_rss_kib nbd-evcopy "$src" "$dst")
[ "$rss" -lt $((128 * 1024)) ] ||
  fail "against fast servers nbd-evcopy had $rss KiB resident"
