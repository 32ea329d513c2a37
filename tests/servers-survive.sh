#!/usr/bin/env bash
# After a failed command the programs stop issuing, wait for the
# commands still in flight and disconnect cleanly, so a server shared
# with other clients keeps running: nbdkit 1.32 aborts when a client
# goes away with replies pending, which these error paths used to do.
# Each case runs five times against the same servers, with 16 requests
# in flight, and the servers must answer afterwards.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdinfo
requires_nbdkit_filter error

start_nbdkit badread --filter=error pattern 64M error-pread=EIO error-pread-rate=20%
start_nbdkit badwrite --filter=error memory 64M error-pwrite=EIO error-pwrite-rate=20%
start_nbdkit good pattern 64M
start_nbdkit dst memory 64M

answers ()
{
  nbdinfo --size "$1" >/dev/null || fail "the server at $1 died after: $2"
}

for i in 1 2 3 4 5; do
  # $prog is split on purpose: the program and its options.
  for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
    expect_error "read failed at offset" $prog --requests=16 "$badread" "$dst"
    answers "$badread" "$prog, read error"
    answers "$dst" "$prog, read error"
    expect_error "write failed at offset" $prog --requests=16 "$good" "$badwrite"
    answers "$good" "$prog, write error"
    answers "$badwrite" "$prog, write error"
  done
  expect_error "read failed at offset" nbd-evsum --requests=16 "$badread"
  answers "$badread" "nbd-evsum, read error"
done
