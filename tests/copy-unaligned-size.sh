#!/usr/bin/env bash
# A destination whose minimum block size does not divide the source's
# size would refuse the last, short write, and a source whose own does
# not divide its size would refuse the last read: nbd-evcopy says so
# before writing anything, whether it copies every byte or by extents
# (tools/lib/block-size.c: check_image_end), and nbd-evsum says the same
# before reading.  The same copy with an aligned size succeeds.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy

start_nbdkit src pattern 1000
start_nbdkit src2 pattern 1536
start_nbdkit dst --filter=blocksize-policy memory 4096 \
  blocksize-minimum=512 blocksize-preferred=4096 blocksize-maximum=1M \
  blocksize-error-policy=error

# $opts is split on purpose: whole options, no spaces inside.
for opts in "--no-extents --no-sparse" ""; do
  nbdcopy -- [ nbdkit data '170' size=4096 ] "$dst"
  read_back "$dst" "$tmpdir/before"
  expect_error "destination: the image ends at 1000, not on a multiple of the server's minimum block size 512, so the server would refuse its last 488 bytes" \
    nbd-evcopy $opts --request-size=512 "$src" "$dst"
  read_back "$dst" "$tmpdir/after"
  cmp "$tmpdir/before" "$tmpdir/after" ||
    fail "nbd-evcopy $opts wrote the destination"

  nbd-evcopy $opts --request-size=512 "$src2" "$dst"
  read_back "$src2" "$tmpdir/src2"
  read_back "$dst" "$tmpdir/dst2"
  cmp -n 1536 "$tmpdir/src2" "$tmpdir/dst2" ||
    fail "nbd-evcopy $opts copied wrongly"
done

# The source's own minimum block size does not divide its size (64 MiB
# and 512 bytes, minimum 4096), with and without block status.
start_nbdkit odd --filter=blocksize-policy random 67109376 \
  blocksize-minimum=4096 blocksize-preferred=4096 blocksize-maximum=1M \
  blocksize-error-policy=error
start_nbdkit oddnosr --no-sr --filter=blocksize-policy random 67109376 \
  blocksize-minimum=4096 blocksize-preferred=4096 blocksize-maximum=1M \
  blocksize-error-policy=error
fill_file "$tmpdir/marker.img" 67112960 252
msg="source: the image ends at 67109376, not on a multiple of the server's minimum block size 4096, so the server would refuse its last 512 bytes"
for opts in "--no-extents --no-sparse" ""; do
  for s in "$odd" "$oddnosr"; do
    cp "$tmpdir/marker.img" "$tmpdir/big.img"
    start_nbdkit big file "$tmpdir/big.img"
    expect_error "$msg" nbd-evcopy $opts "$s" "$big"
    stop_server big
    cmp "$tmpdir/marker.img" "$tmpdir/big.img" ||
      fail "nbd-evcopy $opts wrote the destination"
  done
done
expect_error "$odd: the image ends at 67109376, not on a multiple" nbd-evsum "$odd"
