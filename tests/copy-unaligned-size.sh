#!/usr/bin/env bash
# A destination whose minimum block size does not divide the source's
# size would refuse the last, short write: both copiers say so before
# writing anything (common/connect.c: check_copy).  The same copy with
# an aligned size succeeds.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy

start_nbdkit src pattern 1000
start_nbdkit src2 pattern 1536
start_nbdkit dst --filter=blocksize-policy memory 4096 \
  blocksize-minimum=512 blocksize-preferred=4096 blocksize-maximum=1M \
  blocksize-error-policy=error

for prog in copy-libev zero-extent-copy-libev; do
  nbdcopy -- [ nbdkit data '170' size=4096 ] "$dst"
  read_back "$dst" "$tmpdir/before"
  expect_error "the source's size (1000) is not a multiple of the server's minimum block size 512" \
    $prog --request-size=512 "$src" "$dst"
  read_back "$dst" "$tmpdir/after"
  cmp "$tmpdir/before" "$tmpdir/after" || fail "$prog wrote the destination"

  $prog --request-size=512 "$src2" "$dst"
  read_back "$src2" "$tmpdir/src2"
  read_back "$dst" "$tmpdir/dst2"
  cmp -n 1536 "$tmpdir/src2" "$tmpdir/dst2" || fail "$prog copied wrongly"
done
