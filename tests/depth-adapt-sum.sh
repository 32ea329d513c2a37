#!/usr/bin/env bash
# nbd-evsum adapts its reads in flight and their size to the server
# (tools/lib/depth.h), without judging speed:
#  - against a server that answers each read after 100 ms (nbdkit's
#    delay filter) the bytes in flight grow past the starting
#    16 x 1 MiB, to no more requests than the server serves at once (16
#    per connection), -v says each change, and the digest is right;
#  - with --request-size=64k the number of requests grows past 16
#    against a server that answers after 20 ms;
#  - --requests and --request-size, given, fix the values: no change,
#    and the digest is tests/blkhash-ref.py's;
#  - against a server that answers at once the depth stays bounded, the
#    request size comes down from the 1 MiB it starts at, and the
#    memory touched stays far below the 256 MiB of buffers allocated
#    (tools/lib/buffers.h).
# What was in flight, and how large the reads were, is what nbdkit's
# log filter saw on the server (server_saw), not what -v says.  The
# servers run 64 threads per connection (-t), so that they would take
# up more reads than the bounds allow if the program sent them.
#
# Where the depth must grow, the server's data is zeroes that its block
# status calls data (the noextents filter): every byte is read, and a
# zero block costs the hash threads a comparison, not a digest.  So the
# program's rate is bound by the round trip, not by two CPUs that other
# work may share, and the depth it needs is past the starting one by a
# wide margin even on a loaded machine.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_filter delay
requires_nbdkit_filter log
requires_nbdkit_filter noextents

# in_flight_bounds WHAT LOGFILE: the server of LOGFILE saw no more reads
# in flight than 16 per connection it had, and none larger than 1 MiB.
in_flight_bounds ()
{
  local conns most largest
  read -r conns most largest <<<"$(server_saw 'connections requests largest' "$2")"
  [ "$most" -le $((16 * conns)) ] ||
    fail "$1: $most reads in flight on $conns connections"
  [ "$largest" -le 1048576 ] || fail "$1: reads of $largest bytes"
}

# 100 ms away: the bytes in flight grow past 16 x 1 MiB.
far_size=256M
start_nbdkit far -r -t 64 --filter=log --filter=noextents --filter=delay \
  null $far_size delay-read=100ms logfile="$tmpdir/far.log"
got=$(nbd-evsum -v "$far" 2>"$tmpdir/v") ||
  fail "nbd-evsum $far failed: $(grep -v '^slot' "$tmpdir/v")"
want=$(blkhash_zero_ref $((256 * 1024 * 1024)))
[ "$got" = "$want  $far" ] || fail "nbd-evsum $far: got '$got', expected '$want'"
grep -q "16 requests of 1048576 bytes (adapting up to $(served_at_start "$tmpdir/v") of 1048576)" "$tmpdir/v" ||
  fail "no -v line for the starting depth, up to $(served_at_start "$tmpdir/v"): $(grep hashing "$tmpdir/v")"
grep -q ' depth: ' "$tmpdir/v" || fail "-v said no change of the depth"
bytes=$(server_saw bytes "$tmpdir/far.log")
[ "$bytes" -gt $((16 * 1024 * 1024)) ] ||
  fail "against a delayed server the depth did not grow: $bytes bytes in flight"
in_flight_bounds "a delayed server" "$tmpdir/far.log"

# --request-size=64k, 20 ms away: the size is kept, and the number of
# requests adapts: it grows past the starting 16.
start_nbdkit near -r -t 64 --filter=log --filter=noextents --filter=delay \
  null 32M delay-read=20ms logfile="$tmpdir/near.log"
nbd-evsum --request-size=64k "$near" >/dev/null ||
  fail "nbd-evsum --request-size=64k failed"
read -r conns most largest smallest \
  <<<"$(server_saw 'connections requests largest smallest' "$tmpdir/near.log")"
[ "$largest" -eq 65536 ] && [ "$smallest" -eq 65536 ] ||
  fail "--request-size=64k was not kept: reads of $smallest to $largest bytes"
[ "$most" -gt 16 ] ||
  fail "--request-size=64k: the requests did not adapt: $most in flight"
[ "$most" -le $((16 * conns)) ] ||
  fail "--request-size=64k: $most reads in flight on $conns connections"

# Explicit options on real data, 10 ms away: fixed, no change said, and
# the reference digest.
size=128M
start_nbdkit slow -r -t 64 --filter=log --filter=delay \
  sparse-random $size seed=29 percent=90 delay-read=10ms \
  logfile="$tmpdir/slow.log"
nbdkit -U - sparse-random $size seed=29 percent=90 \
  --run "nbdcopy \"\$uri\" $tmpdir/img" || fail "cannot make img"
want=$(blkhash_ref "$tmpdir/img")
rm "$tmpdir/img"

# check_sum OPTIONS...: nbd-evsum -v OPTIONS on the slow server prints
# the reference digest; its -v output is left in $tmpdir/v, and its
# server's log in $tmpdir/slow.log.
check_sum ()
{
  : >"$tmpdir/slow.log"
  got=$(nbd-evsum -v "$@" "$slow" 2>"$tmpdir/v") ||
    fail "nbd-evsum $* failed: $(grep -v '^slot' "$tmpdir/v")"
  [ "$got" = "$want  $slow" ] || fail "nbd-evsum $*: got '$got', expected '$want'"
}

check_sum --requests=4 --request-size=128k
grep -q '4 requests of 131072 bytes (fixed)' "$tmpdir/v" ||
  fail "no -v line for the fixed depth: $(grep hashing "$tmpdir/v")"
! grep -q ' depth: ' "$tmpdir/v" || fail "explicit options changed: $(grep depth: "$tmpdir/v")"
read -r most largest <<<"$(server_saw 'requests largest' "$tmpdir/slow.log")"
[ "$most" -le 4 ] || fail "--requests=4: $most reads in flight"
[ "$largest" -le 131072 ] || fail "--request-size=128k: reads of $largest bytes"

# One of the two given: it is kept.
check_sum --requests=4
most=$(server_saw requests "$tmpdir/slow.log")
[ "$most" -le 4 ] || fail "--requests=4 was not kept: $most reads in flight"

# A server that answers at once: the depth stays bounded, the request
# size comes down (every byte is data to block status, and the size a
# multiple of 1 MiB, so a read under 1 MiB is one the depth made
# smaller), and so does the memory.
start_nbdkit fast -r -t 64 --filter=log --filter=noextents \
  sparse-random 512M seed=29 percent=90 logfile="$tmpdir/fast.log"
rss=$(max_rss_kib nbd-evsum "$fast")
[ "$rss" -lt $((128 * 1024)) ] ||
  fail "against a fast server nbd-evsum had $rss KiB resident"
read -r conns most bytes largest smallest \
  <<<"$(server_saw 'connections requests bytes largest smallest' "$tmpdir/fast.log")"
[ "$bytes" -le $((64 * 1048576)) ] ||
  fail "against a fast server the depth ran away to $bytes bytes"
[ "$most" -le $((16 * conns)) ] ||
  fail "a fast server: $most reads in flight on $conns connections"
[ "$largest" -eq 1048576 ] ||
  fail "against a fast server: the largest read $largest bytes, not the 1 MiB it starts at"
[ "$smallest" -lt 1048576 ] ||
  fail "against a fast server the request size did not adapt: reads of $smallest bytes at least"
