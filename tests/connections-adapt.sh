#!/usr/bin/env bash
# The connections to each server follow the servers
# (tools/lib/spread.h), without judging speed:
#  - against servers that serve 16 requests per connection at once,
#    each after 250 ms (nbdkit's delay filter in its default threads),
#    nbd-evcopy opens more connections than the two it starts with
#    once the depth is held at what they serve, -v says so, the depth
#    grows past it, and the copy is exact;
#  - a long pass from far servers goes on to 8;
#  - with -C 2 the count stays where it was asked, and so do the
#    requests in flight, within what two connections serve;
#  - against servers that answer at once it stays at two.
# The connections and the requests in flight are counted by nbdkit's
# log filter on the servers (server_saw), not taken from -v.
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
start_nbdkit src -r --filter=log --filter=delay pattern $size delay-read=250ms \
  logfile="$tmpdir/src.log"
start_nbdkit dst --filter=log --filter=delay memory $size delay-write=250ms \
  delay-zero=250ms logfile="$tmpdir/dst.log"
nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" ||
  fail "copy failed: $(grep -v slot "$tmpdir/v")"
grep -q "connections: opening up to 4 per server" "$tmpdir/v" ||
  fail "no more connections: $(grep 'connections\|depth:' "$tmpdir/v")"
grep -q "connections: 128 requests served at once" "$tmpdir/v" ||
  fail "the new connections did not serve: $(grep connections "$tmpdir/v")"
for end in src dst; do
  [ "$(server_saw connections "$tmpdir/$end.log")" -eq 4 ] ||
    fail "$end: $(server_saw connections "$tmpdir/$end.log") connections, not 4"
done
most=$(server_saw requests "$tmpdir/src.log" "$tmpdir/dst.log")
[ "$most" -gt 64 ] ||
  fail "the servers had $most requests in flight, what two connections serve"
stop_server src
start_nbdkit src -r pattern $size
read_back "$src" "$tmpdir/src.img"
read_back "$dst" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "the copy differs"
rm -f "$tmpdir/src.img" "$tmpdir/dst.img"
stop_server src dst

# A long pass from the same kind of far server: the doubling to 4
# brings twice the rate, and the read has more than 2 s left at it, so
# the count doubles once more, to 8 (LONG_CONNECTIONS).  The copy above,
# with less left, stays at 4.  null: keeps the pass to the source's
# reads.
rm "$tmpdir/src.log"
start_nbdkit src -r --filter=log --filter=delay pattern 3G delay-read=250ms \
  logfile="$tmpdir/src.log"
nbd-evcopy -v "$src" null: 2>"$tmpdir/v" ||
  fail "long copy failed: $(grep -v slot "$tmpdir/v")"
grep -q "connections: opening up to 8 per server" "$tmpdir/v" ||
  fail "a long pass stayed at 4: $(grep 'connections' "$tmpdir/v")"
[ "$(server_saw connections "$tmpdir/src.log")" -eq 8 ] ||
  fail "long pass: $(server_saw connections "$tmpdir/src.log") connections, not 8"
stop_server src

# -C fixes the count: the depth stays within what two connections to
# each server serve.  The server runs 64 threads (-t), so that it would
# take up more requests than that if they came.  (Servers are restarted
# for every copy: nbdkit 1.32 may abort when a client leaves with
# replies pending.)
rm "$tmpdir/src.log"
start_nbdkit src -r -t 64 --filter=log --filter=delay pattern 128M \
  delay-read=100ms logfile="$tmpdir/src.log"
nbd-evcopy -v -C 2 "$src" null: 2>"$tmpdir/v" || fail "copy with -C 2 failed"
! grep -q "connections: opening" "$tmpdir/v" ||
  fail "-C 2 opened more: $(grep connections "$tmpdir/v")"
[ "$(server_saw connections "$tmpdir/src.log")" -eq 2 ] ||
  fail "-C 2: $(server_saw connections "$tmpdir/src.log") connections"
most=$(server_saw requests "$tmpdir/src.log")
[ "$most" -le 32 ] ||
  fail "-C 2: the server had $most requests in flight, more than two connections serve"
stop_server src

# Servers that answer at once: the depth stays far below what two
# connections serve, and so does the count.
rm "$tmpdir/src.log" "$tmpdir/dst.log"
start_nbdkit src -r --filter=log pattern $size logfile="$tmpdir/src.log"
start_nbdkit dst --filter=log memory $size logfile="$tmpdir/dst.log"
nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" || fail "near copy failed"
grep -q "source: 2 connections" "$tmpdir/v" ||
  fail "not two connections to start with: $(grep connections "$tmpdir/v")"
! grep -q "connections: opening" "$tmpdir/v" ||
  fail "more connections to servers that answer at once: $(grep connections "$tmpdir/v")"
for end in src dst; do
  [ "$(server_saw connections "$tmpdir/$end.log")" -eq 2 ] ||
    fail "near $end: $(server_saw connections "$tmpdir/$end.log") connections, not 2"
done
