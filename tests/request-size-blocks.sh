#!/usr/bin/env bash
# Both tools cut requests into hash blocks by one rule: a --request-size
# that the block size does not divide is refused, before any connection,
# with the same line from either; without --request-size, requests start
# at the block size where it is above the default, and both print the
# reference digest.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3

# Nothing listens there: the options are checked before connecting.
none="nbd+unix:///?socket=$tmpdir/none.sock"
refused="--request-size: 96k is not a multiple of the block size (65536 bytes)"
expect_error "nbd-evsum: $refused" nbd-evsum --request-size=96k "$none"
expect_error "nbd-evcopy: $refused" \
  nbd-evcopy --checksum --request-size=96k "$none" "$tmpdir/dst"
refused="--request-size: 1M is not a multiple of the block size (2097152 bytes)"
expect_error "nbd-evsum: $refused" \
  nbd-evsum --block-size=2M --request-size=1M "$none"
expect_error "nbd-evcopy: $refused" \
  nbd-evcopy --verify --block-size=2M --request-size=1M "$none" "$tmpdir/dst"

# Blocks of 2 MiB, above the default request size: every request holds
# whole blocks, the image's last block a short one.
start_nbdkit src pattern 5M
start_nbdkit dst memory 5M
want=$(blkhash_ref "$src" --block-size=2097152) || fail "no reference digest"
got=$(digest_of nbd-evsum -v --block-size=2M "$src" 2>"$tmpdir/v")
[ "$got" = "$want" ] || fail "nbd-evsum: $got, expected $want"
grep -q 'requests of 2097152 bytes' "$tmpdir/v" ||
  fail "nbd-evsum: requests do not start at the block size"
got=$(digest_of nbd-evcopy -v --checksum --block-size=2M "$src" "$dst" \
        2>"$tmpdir/v")
[ "$got" = "$want" ] || fail "nbd-evcopy --checksum: $got, expected $want"
grep -q 'requests of 2097152 bytes' "$tmpdir/v" ||
  fail "nbd-evcopy: requests do not start at the block size"
