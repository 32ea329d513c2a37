#!/usr/bin/env bash
# nbd-evsum adapts its reads in flight and their size to the server
# (tools/lib/depth.h), without judging speed:
#  - against a server that answers each read after 10 ms (nbdkit's
#    delay filter) the bytes in flight grow past the starting
#    8 x 256 KiB, -v says each change, and the digest is blkhash's;
#  - --requests and --request-size, given, fix the values: no change;
#  - against a server that answers at once the depth stays bounded, and
#    the memory touched far below the 256 MiB of buffers allocated
#    (tools/lib/buffers.h).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_filter delay

size=128M
start_nbdkit slow -r --filter=delay sparse-random $size seed=29 percent=90 delay-read=10ms
read_back "$slow" "$tmpdir/img"
want=$(python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$tmpdir/img") ||
  fail "blkhash-ref.py failed"

# check_sum OPTIONS...: nbd-evsum -v OPTIONS on the slow server prints
# the reference digest; its -v output is left in $tmpdir/v.
check_sum ()
{
  got=$(nbd-evsum -v "$@" "$slow" 2>"$tmpdir/v") ||
    fail "nbd-evsum $* failed: $(grep -v '^slot' "$tmpdir/v")"
  [ "$got" = "$want  $slow" ] || fail "nbd-evsum $*: got '$got', expected '$want'"
}

check_sum
served=$(served_at_once "$tmpdir/v")
grep -q "16 requests of 1048576 bytes (adapting up to $(served_at_start "$tmpdir/v") of 1048576)" "$tmpdir/v" ||
  fail "no -v line for the starting depth, up to $(served_at_start "$tmpdir/v"): $(grep hashing "$tmpdir/v")"
most=$(most_in_flight "$tmpdir/v")
[ "$most" -gt $((16 * 1024 * 1024)) ] ||
  fail "against a delayed server the depth did not grow: $(grep depth: "$tmpdir/v")"
[ "$most" -le $((served * 1024 * 1024)) ] ||
  fail "more in flight than the server serves at once: $most"
# Each dimension within its own bound, not only their product.
[ "$(most_requests "$tmpdir/v")" -le "$served" ] ||
  fail "more requests than the server serves at once: $(most_requests "$tmpdir/v")"
[ "$(largest_request "$tmpdir/v")" -le 1048576 ] ||
  fail "requests larger than 1 MiB: $(largest_request "$tmpdir/v")"

# Explicit options: fixed, and no change said.
check_sum --requests=4 --request-size=128k
grep -q '4 requests of 131072 bytes (fixed)' "$tmpdir/v" ||
  fail "no -v line for the fixed depth: $(grep hashing "$tmpdir/v")"
! grep -q ' depth: ' "$tmpdir/v" || fail "explicit options changed: $(grep depth: "$tmpdir/v")"

# One of the two given: only the other adapts.
check_sum --requests=4
sed -n 's/.* depth: \([0-9]*\) requests of .*/\1/p' "$tmpdir/v" | grep -v '^4$' &&
  fail "--requests=4 was not kept"
check_sum --request-size=64k
sed -n 's/.* depth: [0-9]* requests of \([0-9]*\) bytes.*/\1/p' "$tmpdir/v" |
  grep -v '^65536$' && fail "--request-size=64k was not kept"
# ... and the number of requests did adapt: it grew past the starting
# 16 against the delayed server, within what the server serves at once.
served=$(served_at_once "$tmpdir/v")
[ "$(most_requests "$tmpdir/v")" -gt 16 ] ||
  fail "--request-size=64k: the requests did not adapt: $(grep depth: "$tmpdir/v")"
[ "$(most_requests "$tmpdir/v")" -le "$served" ] ||
  fail "--request-size=64k: more requests than the server serves at once"

# A server that answers at once: the depth stays bounded, and so does
# the memory.
start_nbdkit fast -r sparse-random 512M seed=29 percent=90
nbd-evsum -v "$fast" >/dev/null 2>"$tmpdir/v" || fail "fast checksum failed"
most=$(most_in_flight "$tmpdir/v")
[ "$most" -le $((64 * 1048576)) ] ||
  fail "against a fast server the depth ran away to $most bytes: $(grep depth: "$tmpdir/v")"
served=$(served_at_once "$tmpdir/v")
[ "$(most_requests "$tmpdir/v")" -le "$served" ] ||
  fail "more requests than the server serves at once: $(most_requests "$tmpdir/v")"
[ "$(largest_request "$tmpdir/v")" -le 1048576 ] ||
  fail "requests larger than 1 MiB: $(largest_request "$tmpdir/v")"
rss=$(max_rss_kib nbd-evsum "$fast")
[ "$rss" -lt $((128 * 1024)) ] ||
  fail "against a fast server nbd-evsum had $rss KiB resident"
