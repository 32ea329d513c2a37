#!/usr/bin/env bash
# Image sizes that are not a multiple of the request size or of 64 KiB,
# an empty image, and a destination with a 64 KiB minimum block size:
# every piece sent to it must be whole blocks, so the zero extent edges
# that fall inside a block are copied as data.
source "$abs_top_srcdir/tests/functions.sh"
source "$abs_top_srcdir/tests/zero-functions.sh"
requires nbdkit nbdcopy

n=0
for size in 0 1 511 65535 65537 1048575 3000001; do
  n=$((n + 1))
  start_nbdkit "s$n" sparse-random $size seed=$n percent=30
  start_nbdkit "d$n" --filter=noextents memory $size
  eval "s=\$s$n d=\$d$n"
  nbd-evcopy --request-size=64k "$s" "$d"
  read_back "$s" "$tmpdir/s.raw"
  read_back "$d" "$tmpdir/d.raw"
  cmp "$tmpdir/s.raw" "$tmpdir/d.raw" || fail "size $size: contents differ"
done

# The data plugin's 32 KiB pages: data at [0, 32K), zero to 1 MiB, a
# last byte.  With 4 KiB blocks the edges align and the hole is one zero
# command; with the blocksize-policy filter claiming 64 KiB blocks the
# first data page is read as a whole 64 KiB block and the zero command
# starts at 64 KiB.
start_nbdkit src data '1 @1048576 1' size=1114112
start_nbdkit b64 --filter=log --filter=blocksize-policy --filter=noextents \
  memory 1114112 blocksize-minimum=65536 blocksize-preferred=65536 \
  blocksize-maximum=1048576 blocksize-error-policy=error \
  logfile="$tmpdir/b64.log"
nbd-evcopy "$src" "$b64"
expect_commands "$tmpdir/b64.log" "Write 0 65536
Zero 65536 983040 trim=1
Write 1048576 65536"
read_back "$src" "$tmpdir/src.raw"
read_back "$b64" "$tmpdir/b64.raw"
cmp "$tmpdir/src.raw" "$tmpdir/b64.raw"
