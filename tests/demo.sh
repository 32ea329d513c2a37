#!/usr/bin/env bash
# make demo: copy a 1 GiB nbdkit pattern image to an nbdkit memory disk
# with nbd-evcopy and with nbdcopy, each with its defaults, three times
# each in turn, check every copy with nbd-evsum against the digest
# tests/blkhash-ref.py computes for the source, and print each time
# and each program's median.  It starts and stops its own servers and
# needs nothing from the user.  Every block of the pattern image is
# data, so neither program has anything to skip: comparison 3a of make
# bench measures this copy in rounds.
#
# What the times measure: nbdkit's memory plugin allocates its pages as
# the first data arrives, which costs it more CPU than the client spends
# copying; a timed copy into an empty memory disk would measure that.  So
# the destination is filled with random data first, untimed, before
# each copy, and each timed copy overwrites allocated memory.  The
# random data also makes a copy that wrote nothing fail the check.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy

start_nbdkit src pattern 1G
start_nbdkit dst memory 1G
start_nbdkit random random 1G seed=1

# The digest every copy must have, from the independent reference: a
# digest of nbd-evsum's own would pass a fault both runs share.
want=$(blkhash_ref "$src")
rm -f "$tmpdir/blkhash.img"

# time_copy NAME CMD...: fill the destination with random data, run
# CMD, check the copy, print how long it took and keep the time.
time_copy ()
{
  local name=$1 start end t got
  shift
  nbdcopy -- "$random" "$dst" || fail "cannot fill the destination"
  start=$(date +%s.%N)
  "$@" || fail "$name failed"
  end=$(date +%s.%N)
  # digest_of fails the test when nbd-evsum fails, where an empty
  # digest could otherwise be compared.
  got=$(digest_of nbd-evsum "$dst") || fail "nbd-evsum $dst failed"
  [ "$got" = "$want" ] ||
    fail "$name's copy differs from the source: $got, expected $want"
  t=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
  echo "$t" >>"$tmpdir/$name.times"
  echo "demo: $name copied 1 GiB in $t s; the copy matches the source"
}

echo "demo: nbdkit pattern 1G to nbdkit memory 1G, both programs with their defaults"
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then
    time_copy nbd-evcopy nbd-evcopy "$src" "$dst"
    time_copy nbdcopy nbdcopy -- "$src" "$dst"
  else
    time_copy nbdcopy nbdcopy -- "$src" "$dst"
    time_copy nbd-evcopy nbd-evcopy "$src" "$dst"
  fi
done
for name in nbd-evcopy nbdcopy; do
  echo "demo: $name: median $(sort -n "$tmpdir/$name.times" | sed -n 2p) s of 3 runs"
done
echo "demo: 3 runs each on a shared machine; make bench compares them in rounds, with intervals"
