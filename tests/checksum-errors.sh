#!/usr/bin/env bash
# Every failure prints one line on stderr, exits non-zero and prints no
# digest: bad options, a server that is not there, and read errors,
# whether every read fails or only one in the middle of the image.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit

start_nbdkit good pattern 8M

expect_error "unknown digest 'nosuch'" nbd-evsum --digest=nosuch "$good"
expect_error "digest 'shake128' has no fixed output size" \
  nbd-evsum --digest=shake128 "$good"
expect_error "--block-size: 3000 is not a power of two" \
  nbd-evsum --block-size=3000 "$good"
expect_error "--request-size: 96k is not a multiple of the block size" \
  nbd-evsum --request-size=96k "$good"
expect_error "--requests: '0'" nbd-evsum --requests=0 "$good"
expect_error "expected an image" nbd-evsum
# Digest areas are bounded before anything is allocated or connected.
expect_error "256 requests of 33554432 bytes in 512-byte blocks need 512 MiB for block digests, more than 256 MiB" \
  nbd-evsum --block-size=512 --request-size=32M --requests=256 "$good"
expect_error "need 1024 MiB for block digests" \
  nbd-evsum --block-size=1 --request-size=32M --requests=1 "$good"
# The largest shape with 2 KiB blocks and SHA-512 fits.
nbd-evsum --block-size=2k --request-size=32M --requests=256 \
  --digest=sha512 "$good" >/dev/null || fail "2 KiB blocks were refused"
expect_error "cannot connect" \
  nbd-evsum "nbd+unix:///?socket=$tmpdir/nothing.sock"

# Every read fails: the first one in offset order is reported, with
# the size reads start at.
start_nbdkit allbad --filter=error pattern 8M \
  error-pread=EIO error-pread-rate=100%
expect_error "read failed at offset 0 length 1048576: Input/output error" \
  nbd-evsum "$allbad"
# The message names the image as given, and the connection.
grep -qF "nbd-evsum: $allbad connection " "$tmpdir/err" ||
  fail "the message does not name the image and its connection"

# One bad megabyte in the middle, after reads that succeeded and were
# hashed already: still no digest.
start_nbdkit onebad eval \
  get_size='echo 8388608' \
  thread_model='echo parallel' \
  pread='if [ $4 -ge 4194304 ] && [ $4 -lt 5242880 ]; then
           echo "EIO bad sector" >&2; exit 1
         fi
         head -c $3 /dev/zero'
# The read size is fixed, so that the message is exact: by default it
# grows as the reads are measured.
expect_error "read failed at offset 4194304 length 262144: Input/output error" \
  nbd-evsum --request-size=256k "$onebad"
