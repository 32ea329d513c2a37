#!/usr/bin/env bash
# Data and holes at offsets that are not block aligned, in images whose
# size is not a multiple of the block size: the partial blocks at the
# edges of each hole are read, the whole zero blocks inside it are not,
# and the short last block is hashed at its real length.  Checked
# against the reference for several digests and block sizes.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3

# nbdkit's data plugin reports each 32 KiB page as data or zero, so the
# holes below have zero extents that start and end mid-block for block
# sizes above 32 KiB.  The last image ends on a whole zero block.
start_nbdkit a data '1 @100000 2 @500000 3 @4194305 "tail"' size=4500001
start_nbdkit b data '@65535 0xff @131071 0xff' size=200000
start_nbdkit c data '0xff*70000' size=1048576
start_nbdkit d data '"x" @8388607 "y"'
start_nbdkit e data '1' size=65537

for uri in "$a" "$b" "$c" "$d" "$e"; do
  check_blkhash "$uri"
  check_blkhash "$uri" --digest=md5 --block-size=32768
  check_blkhash "$uri" --digest=sha1 --block-size=262144
  check_blkhash "$uri" --digest=sha512 --block-size=1048576
  check_blkhash "$uri" --block-size=4096
done
# Tiny blocks with the smallest request size: many blocks per read.
check_blkhash "$b" --digest=md5 --block-size=512 --request-size=512
check_blkhash "$b" --block-size=8 --request-size=4096
