#!/usr/bin/env bash
# A server whose maximum block size is below the default request size:
# the tools use smaller requests by themselves (a multiple of its
# preferred block size, said under -v) and the result is exact; a
# --request-size above the maximum, asked for explicitly, is refused.
# The copy is read back and compared byte for byte with the source, and
# nbd-evsum's digest with tests/blkhash-ref.py's.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_filter blocksize-policy

# Half of the image is data, in runs of about 100 KB between holes, so
# that the copy has writes to get wrong.
data="percent=50 runlength=100000"
limits="blocksize-maximum=98304 blocksize-preferred=32768 blocksize-error-policy=error"
start_nbdkit plain sparse-random 4M seed=8 $data
start_nbdkit src --filter=blocksize-policy sparse-random 4M seed=8 $data $limits
# The destination's file is compared with the source's bytes: nbdcopy
# could not read it back through the limits.
truncate -s 4M "$tmpdir/dst.img"
start_nbdkit dst --filter=blocksize-policy file "$tmpdir/dst.img" $limits
read_back "$plain" "$tmpdir/plain.img"
want=$(blkhash_ref "$tmpdir/plain.img")

nbd-evcopy -v "$src" "$dst" 2>"$tmpdir/v" || fail "copy with the default failed"
grep -q 'source: request size 98304 instead of 262144' "$tmpdir/v" ||
  fail "no -v line for the smaller requests"
cmp "$tmpdir/plain.img" "$tmpdir/dst.img" || fail "the copy differs"

got=$(digest_of nbd-evsum -v "$src" 2>"$tmpdir/v") ||
  fail "nbd-evsum with the default failed"
[ "$got" = "$want" ] || fail "nbd-evsum: $got, expected $want"
grep -q 'request size 65536 instead of 262144' "$tmpdir/v" ||
  fail "nbd-evsum: no -v line for the smaller requests"

expect_error "source: request size 262144 is larger than the server's maximum block size 98304" \
  nbd-evcopy --request-size=256k "$src" "$dst"
expect_error "request size 262144 is larger than the server's maximum block size 98304" \
  nbd-evsum --request-size=256k "$src"
