#!/usr/bin/env bash
# --requests=1: a ring of one slot still copies everything correctly,
# and never has more than one command in flight.  The log filter records
# each command when it starts and when it returns, so counting those
# lines gives the number in flight at every moment.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin sparse-random
requires_nbdkit_filter checkwrite
requires_nbdkit_filter log

size=$((64 * 1024 * 1024))
log="$tmpdir/log"
nbdkit -U - --filter=log --filter=checkwrite \
       sparse-random $size seed=7 percent=30 logfile="$log" \
       --run 'nbd-evcopy --no-extents --no-sparse --requests=1 --request-size=256k "$uri" "$uri"' ||
  fail "copy with --requests=1 failed"

# In pieces of the default request size, 256 KiB.
ranges $size $((256 * 1024)) >"$tmpdir/expected"
log_writes "$log" >"$tmpdir/writes"
cmp "$tmpdir/expected" "$tmpdir/writes" || fail "the writes do not cover the disk once"

max=$(awk '/ (Read|Write) id=/ { if (++n > max) max = n }
           /\.\.\.(Read|Write) id=/ { n-- }
           END { print max + 0 }' "$log")
[ "$max" -eq 1 ] || fail "--requests=1 had $max commands in flight"
