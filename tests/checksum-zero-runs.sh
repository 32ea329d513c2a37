#!/usr/bin/env bash
# Zero extents are hashed without reading: a 1 TiB image with one byte
# of data costs exactly one 64 KiB read, and its digest matches the
# construction computed in Python (16 Mi copies of the zero-block
# digest, which the reference would take minutes to read and hash).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit python3

start_nbdkit big --filter=log data '1' size=1T logfile="$tmpdir/log"
got=$(nbd-evsum "$big") || fail "nbd-evsum $big"

want=$(python3 -c '
import hashlib
h = hashlib.sha256
zero = h(bytes(65536)).digest()
outer = h(h(b"\x01" + bytes(65535)).digest())
n = (1 << 24) - 1                     # zero blocks after the first
run = zero * 65536
for _ in range(n // 65536):
    outer.update(run)
outer.update(zero * (n % 65536))
outer.update((1 << 40).to_bytes(8, "little"))
print(outer.hexdigest())')
[ "$got" = "$want  $big" ] || fail "got '$got', expected '$want  $big'"

# The log filter writes one line per command; only one may be a read.
grep -c ' Read ' "$tmpdir/log" | grep -qx 1 || {
  grep ' Read ' "$tmpdir/log" >&2; fail "more than one read"; }
grep ' Read ' "$tmpdir/log" | grep -q 'offset=0x0 count=0x10000 ' ||
  fail "the one read is not the first 64 KiB"
