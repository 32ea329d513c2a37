#!/usr/bin/env bash
# nbd-evcopy --no-extents --no-sparse (every byte read and written)
# copies nbdkit's sparse-random plugin onto itself through the
# checkwrite filter, which fails any write whose data differs from what
# the plugin reads at that offset.  The log filter on top records every
# write, and the writes must cover the whole disk exactly once: a copy
# that skipped a request would pass checkwrite but not this.  The seeds
# and densities run from all zero to all data.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin sparse-random
requires_nbdkit_filter checkwrite
requires_nbdkit_filter log

size=$((1024 * 1024 * 1024))
# In pieces of the default request size, 256 KiB.
ranges $size $((256 * 1024)) >"$tmpdir/expected"

for sp in "1 0" "2 1" "3 10" "4 50" "5 100"; do
  set -- $sp
  log="$tmpdir/log.$1"
  nbdkit -U - --filter=log --filter=checkwrite \
         sparse-random $size seed=$1 percent=$2 logfile="$log" \
         --run 'nbd-evcopy --no-extents --no-sparse --request-size=256k "$uri" "$uri"' ||
    fail "copy of sparse-random seed=$1 percent=$2 failed"
  log_writes "$log" >"$tmpdir/writes"
  cmp "$tmpdir/expected" "$tmpdir/writes" ||
    fail "seed=$1 percent=$2: the writes do not cover the disk once"
done
