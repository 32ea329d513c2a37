#!/usr/bin/env bash
# A server whose maximum block size is below the default request size:
# the tools use smaller requests by themselves (a multiple of its
# preferred block size, said under -v) and the result is exact; a
# --request-size above the maximum, asked for explicitly, is refused.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_filter blocksize-policy

limits="blocksize-maximum=98304 blocksize-preferred=32768 blocksize-error-policy=error"
start_nbdkit plain sparse-random 4M seed=8
start_nbdkit src --filter=blocksize-policy sparse-random 4M seed=8 $limits
start_nbdkit dst --filter=blocksize-policy memory 4M $limits
want=$(digest_of nbd-evsum "$plain") || fail "nbd-evsum $plain failed"

nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" || fail "copy with the default failed"
grep -q 'source: request size 98304 instead of 262144' "$tmpdir/v" ||
  fail "no -v line for the smaller requests"
got=$(digest_of nbd-evsum "$dst") || fail "nbd-evsum $dst failed"
[ "$got" = "$want" ] || fail "the copy differs"

got=$(digest_of nbd-evsum -v "$src" 2>"$tmpdir/v") ||
  fail "nbd-evsum with the default failed"
[ "$got" = "$want" ] || fail "nbd-evsum: $got, expected $want"
grep -q 'request size 65536 instead of 262144' "$tmpdir/v" ||
  fail "nbd-evsum: no -v line for the smaller requests"

expect_error "source: request size 262144 is larger than the server's maximum block size 98304" \
  nbd-evcopy --request-size=256k "$src" "$dst"
expect_error "request size 262144 is larger than the server's maximum block size 98304" \
  nbd-evsum --request-size=256k "$src"
