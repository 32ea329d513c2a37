#!/usr/bin/env bash
# nbd-evcopy adapts the requests in flight and their size to the servers
# (tools/lib/depth.h), without judging speed:
#  - against servers that answer each read and write after 50 ms
#    (nbdkit's delay filter) the bytes in flight grow past the starting
#    16 x 1 MiB, but to no more requests than the servers serve at
#    once (16 per connection to each), -v says each change, and the
#    copy is exact;
#  - against servers that answer at once they stay within the bound
#    (ADAPT_MEMORY, 256 MiB of buffers) and do not run away, and the
#    memory touched stays far below the buffers allocated
#    (tools/lib/buffers.h);
#  - --requests and --request-size, given, fix the values: no change;
#    with --requests alone the request size still adapts: against
#    servers that answer at once it comes down from the 1 MiB it
#    starts at.
# What was in flight, and how large the requests were, is what nbdkit's
# log filter saw on the servers (server_saw), not what -v says.  The
# servers run 64 threads per connection (-t), so that they would take
# up more requests than the bounds allow if the program sent them.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_filter delay
requires_nbdkit_filter log

# in_flight_bounds WHAT LOGFILE...: the servers of LOGFILE saw no more
# requests in flight than 16 per connection they had, and no read or
# write larger than 1 MiB.
in_flight_bounds ()
{
  local what=$1 conns most largest
  shift
  read -r conns most largest <<<"$(server_saw 'connections requests largest' "$@")"
  [ "$most" -le $((16 * conns)) ] ||
    fail "$what: $most requests in flight on $conns connections"
  [ "$largest" -le 1048576 ] || fail "$what: requests of $largest bytes"
}

# The servers answer after 50 ms: long beside the time a request's
# bytes take to cross, even on a loaded machine, so the servers hold
# what the program keeps in flight.  (Against 10 ms on two busy CPUs
# the requests queued in the program and the sockets, not the servers.)
size=256M
start_nbdkit src -r -t 64 --filter=log --filter=delay \
  sparse-random $size seed=23 percent=90 delay-read=50ms \
  logfile="$tmpdir/src.log"
start_nbdkit dst -t 64 --filter=log --filter=delay memory $size \
  delay-write=50ms delay-zero=50ms logfile="$tmpdir/dst.log"
# The source's bytes, from the same plugin without the delays.
nbdkit -U - sparse-random $size seed=23 percent=90 \
  --run "nbdcopy \"\$uri\" $tmpdir/src.img" || fail "cannot make src.img"
# Filled first, with other data: a fresh memory server is slow while it
# faults in its pages, and against a slow destination the depth rightly
# stays.
nbdkit -U - pattern $size --run "nbdcopy --requests=64 -- \"\$uri\" \"$dst\"" ||
  fail "cannot fill the destination"
: >"$tmpdir/dst.log"

nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" || fail "copy failed: $(grep -v slot "$tmpdir/v")"
read_back "$dst" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "the copy differs"
grep -q "with 16 requests of 1048576 bytes (adapting up to $(served_at_start "$tmpdir/v") of 1048576)" "$tmpdir/v" ||
  fail "no -v line for the starting depth, up to $(served_at_start "$tmpdir/v"): $(grep copying "$tmpdir/v")"
grep -q ' depth: ' "$tmpdir/v" || fail "-v said no change of the depth"
bytes=$(server_saw bytes "$tmpdir/src.log" "$tmpdir/dst.log")
[ "$bytes" -gt $((16 * 1024 * 1024)) ] ||
  fail "against delayed servers the depth did not grow: $bytes bytes in flight"
in_flight_bounds "delayed servers" "$tmpdir/src.log" "$tmpdir/dst.log"

# Explicit options: fixed, and no change said.  8 requests of 64 KiB
# move a small part of what the adapted depth does, so a smaller image
# is enough.
stop_server src dst
small=32M
rm "$tmpdir/src.log" "$tmpdir/dst.log"
start_nbdkit fsrc -r -t 64 --filter=log --filter=delay \
  sparse-random $small seed=23 percent=90 delay-read=10ms \
  logfile="$tmpdir/src.log"
start_nbdkit dst -t 64 --filter=log --filter=delay memory $small \
  delay-write=10ms delay-zero=10ms logfile="$tmpdir/dst.log"
read_back "$fsrc" "$tmpdir/fsrc.img"
: >"$tmpdir/src.log"
nbd-evcopy -v --requests=8 --request-size=64k "$fsrc" "$dst" 2>"$tmpdir/v" ||
  fail "copy with explicit options failed"
grep -q 'with 8 requests of 65536 bytes (fixed)' "$tmpdir/v" ||
  fail "no -v line for the fixed depth"
! grep -q ' depth: ' "$tmpdir/v" || fail "explicit options changed: $(grep depth: "$tmpdir/v")"
read -r most largest \
  <<<"$(server_saw 'requests largest' "$tmpdir/src.log" "$tmpdir/dst.log")"
[ "$most" -le 8 ] || fail "--requests=8: $most requests in flight"
[ "$largest" -le 65536 ] || fail "--request-size=64k: requests of $largest bytes"
read_back "$dst" "$tmpdir/fdst.img"
cmp "$tmpdir/fsrc.img" "$tmpdir/fdst.img" || fail "the copy with explicit options differs"

# Servers that answer at once: the depth stays bounded.  256 MiB of
# buffers are allocated, but only those of the slots in use at once are
# ever touched: far less resident than 256 MiB.
stop_server fsrc dst
rm "$tmpdir/src.log" "$tmpdir/dst.log"
start_nbdkit src -r -t 64 --filter=log sparse-random $size seed=23 percent=90 \
  logfile="$tmpdir/src.log"
start_nbdkit dst -t 64 --filter=log memory $size logfile="$tmpdir/dst.log"
rss=$(max_rss_kib nbd-evcopy "$src" "$dst")
[ "$rss" -lt $((128 * 1024)) ] ||
  fail "against fast servers nbd-evcopy had $rss KiB resident"
bytes=$(server_saw bytes "$tmpdir/src.log" "$tmpdir/dst.log")
[ "$bytes" -le $((64 * 1048576)) ] ||
  fail "against fast servers the depth ran away to $bytes bytes"
in_flight_bounds "fast servers" "$tmpdir/src.log" "$tmpdir/dst.log"
read_back "$dst" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "the fast copy differs"

# --requests alone: that many at most, and the request size adapts:
# against servers that answer at once it comes down from the 1 MiB it
# starts at.  The source is all data (pattern) and its size a multiple
# of 1 MiB, so a read smaller than 1 MiB is one the depth made smaller.
stop_server src dst
rm "$tmpdir/src.log" "$tmpdir/dst.log"
start_nbdkit src -r -t 64 --filter=log pattern $size logfile="$tmpdir/src.log"
start_nbdkit dst -t 64 --filter=log memory $size logfile="$tmpdir/dst.log"
nbd-evcopy --requests=8 "$src" "$dst" || fail "copy with --requests failed"
most=$(server_saw requests "$tmpdir/src.log" "$tmpdir/dst.log")
[ "$most" -le 8 ] || fail "--requests=8 was not kept: $most requests in flight"
read -r largest smallest <<<"$(server_saw 'largest smallest' "$tmpdir/src.log")"
[ "$largest" -eq 1048576 ] ||
  fail "--requests=8: the largest read $largest bytes, not the 1 MiB it starts at"
[ "$smallest" -lt 1048576 ] ||
  fail "--requests=8: the request size did not adapt: reads of $smallest bytes at least"
