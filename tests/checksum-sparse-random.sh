#!/usr/bin/env bash
# nbdkit sparse-random images with several seeds and densities: many
# short data and zero extents, and data blocks that happen to be all
# zero (hashed with the precomputed zero-block digest).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3

for seed in 1 2 3 4; do
  start_nbdkit sr$seed sparse-random 8M seed=$seed percent=30 runlength=50000
done
# Dense data with short runs of zero bytes, and an odd size.
start_nbdkit dense sparse-random 7777777 seed=5 percent=90 runlength=5000
# Almost empty: long holes, few reads.
start_nbdkit thin sparse-random 32M seed=6 percent=2 runlength=300000

for uri in "$sr1" "$sr2" "$sr3" "$sr4" "$dense" "$thin"; do
  check_blkhash "$uri"
done
check_blkhash "$sr1" --digest=sha512 --block-size=16384
check_blkhash "$dense" --digest=md5 --block-size=4096
