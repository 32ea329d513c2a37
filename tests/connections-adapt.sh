#!/usr/bin/env bash
# The connections to each server follow the servers
# (tools/lib/spread.h), without judging speed:
#  - against servers that serve 16 requests per connection at once,
#    each after 250 ms (nbdkit's delay filter in its default threads),
#    nbd-evcopy opens more connections than the two it starts with
#    once the depth is held at what they serve, -v says so, the depth
#    grows past it, and the copy is exact;
#  - with -C 2 the count stays where it was asked;
#  - against servers that answer at once it stays at two.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_filter delay

# The rule takes a round trip at the cap within 1.1 of the drain's
# (SPREAD_HELD) for one that does not queue.  When other work keeps
# both CPUs busy, the servers answer 64 requests in flight tens of
# milliseconds later than 32: with 100 ms delays that passed for a
# queue in about one copy in three, and no connection opened; 250 ms
# leaves the CPUs' share within the tolerance.
size=512M
start_nbdkit src -r --filter=delay pattern $size delay-read=250ms
start_nbdkit dst --filter=delay memory $size delay-write=250ms \
  delay-zero=250ms
nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" ||
  fail "copy failed: $(grep -v slot "$tmpdir/v")"
grep -q "connections: opening up to 4 per server" "$tmpdir/v" ||
  fail "no more connections: $(grep 'connections\|depth:' "$tmpdir/v")"
grep -q "connections: 128 requests served at once" "$tmpdir/v" ||
  fail "the new connections did not serve: $(grep connections "$tmpdir/v")"
[ "$(most_requests "$tmpdir/v")" -gt 64 ] ||
  fail "the depth stayed at what two connections serve: $(grep depth: "$tmpdir/v")"
stop_server src
start_nbdkit src -r pattern $size
read_back "$src" "$tmpdir/src.img"
read_back "$dst" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "the copy differs"
rm -f "$tmpdir/src.img" "$tmpdir/dst.img"
stop_server src dst

# -C fixes the count: the depth stays within what two connections to
# each server serve.  (Servers are restarted for every copy: nbdkit
# 1.32 may abort when a client leaves with replies pending.)
start_nbdkit src -r --filter=delay pattern 128M delay-read=100ms
nbd-evcopy -v -C 2 "$src" null: 2>"$tmpdir/v" || fail "copy with -C 2 failed"
! grep -q "connections: opening" "$tmpdir/v" ||
  fail "-C 2 opened more: $(grep connections "$tmpdir/v")"
[ "$(most_requests "$tmpdir/v")" -le 32 ] ||
  fail "more requests than two connections serve: $(most_requests "$tmpdir/v")"
stop_server src

# Servers that answer at once: the depth stays far below what two
# connections serve, and so does the count.
start_nbdkit src -r pattern $size
start_nbdkit dst memory $size
nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" || fail "near copy failed"
grep -q "source: 2 connections" "$tmpdir/v" ||
  fail "not two connections to start with: $(grep connections "$tmpdir/v")"
! grep -q "connections: opening" "$tmpdir/v" ||
  fail "more connections to servers that answer at once: $(grep connections "$tmpdir/v")"
