#!/usr/bin/env bash
# The smallest (512 bytes) and the largest (32 MiB) request size both
# copy correctly (checkwrite), and every write has exactly that size
# except a short last one.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin sparse-random
requires_nbdkit_filter checkwrite
requires_nbdkit_filter log

mib=$((1024 * 1024))
# SIZE of the disk and request SIZE, with and without a short tail.
for sizes in "$((4 * mib)) 512" "$((4 * mib + 100)) 512" \
             "$((64 * mib)) 32M" "$((80 * mib)) 32M"; do
  set -- $sizes
  log="$tmpdir/log"
  rm -f "$log"
  nbdkit -U - --filter=log --filter=checkwrite \
         sparse-random $1 seed=$1 percent=50 logfile="$log" \
         --run "nbd-evcopy --no-extents --no-sparse --request-size=$2 \
                \"\$uri\" \"\$uri\"" ||
    fail "copy of $1 bytes with --request-size=$2 failed"
  case $2 in
    512) step=512 ;;
    32M) step=$((32 * mib)) ;;
  esac
  ranges $1 $step >"$tmpdir/expected"
  log_writes "$log" >"$tmpdir/writes"
  cmp "$tmpdir/expected" "$tmpdir/writes" ||
    fail "$1 bytes with --request-size=$2: unexpected writes"
done
