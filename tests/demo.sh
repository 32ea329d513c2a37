#!/usr/bin/env bash
# make demo: copy a 1 GiB nbdkit pattern image to an nbdkit memory disk
# with nbd-evcopy, reading and writing every byte (--no-extents
# --no-sparse), then the same copy with nbdcopy on the same setup, and
# check each copy with nbd-evsum.  It starts and stops its own servers
# and needs nothing from the user.
#
# What the times measure: nbdkit's memory plugin allocates its pages as
# the first data arrives, which costs it more CPU than the client spends
# copying; a timed copy into an empty memory disk would measure that.  So
# the destination is filled with random data first, untimed, and each
# timed copy overwrites allocated memory.  The random data also makes a
# copy that wrote nothing fail the check.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy

start_nbdkit src pattern 1G
start_nbdkit dst memory 1G
start_nbdkit random random 1G seed=1

# time_copy NAME CMD...: fill the destination with random data, then
# run CMD and print how long it took.
time_copy ()
{
  _name=$1; shift
  nbdcopy -- "$random" "$dst" || fail "cannot fill the destination"
  _start=$(date +%s.%N)
  "$@" || fail "$_name failed"
  _end=$(date +%s.%N)
  awk -v n="$_name" -v s="$_start" -v e="$_end" 'BEGIN {
    t = e - s
    printf "demo: %-10s copied 1.0 GiB in %.2f s (%.2f GiB/s)\n", n, t, 1 / t
  }'
}

# verify NAME: the destination's block hash must be the source's.
verify ()
{
  _want=$(nbd-evsum "$src" | cut -d' ' -f1) || fail "nbd-evsum failed"
  _got=$(nbd-evsum "$dst" | cut -d' ' -f1) || fail "nbd-evsum failed"
  [ "$_got" = "$_want" ] || fail "$1's copy differs from the source"
  echo "demo: nbd-evsum: the copy by $1 matches the source (${_want:0:16}...)"
}

echo "demo: nbdkit pattern 1G to nbdkit memory 1G (memory allocated first, not timed)"
time_copy nbd-evcopy nbd-evcopy --no-extents --no-sparse "$src" "$dst"
verify nbd-evcopy
time_copy nbdcopy nbdcopy -- "$src" "$dst"
verify nbdcopy
echo "demo: one run each, so expect some spread; make bench compares them properly"
