#!/usr/bin/env bash
# make demo: copy a 1 GiB nbdkit pattern image to an nbdkit memory disk
# with copy-libev, verify the copy, and report time and throughput.
# It starts and stops its own servers and needs nothing from the user.
source "$abs_top_srcdir/tests/functions.sh"

start_nbdkit src pattern 1G
start_nbdkit dst memory 1G

echo "demo: copying nbdkit pattern 1G to nbdkit memory 1G with copy-libev"
start=$(date +%s.%N)
copy-libev --progress "$src" "$dst"
end=$(date +%s.%N)

echo "demo: verifying the copy (nbdcopy both images through md5sum)"
a=$(nbdcopy -- "$src" - | md5sum)
b=$(nbdcopy -- "$dst" - | md5sum)
[ "$a" = "$b" ] || fail "the destination differs from the source"

awk -v s="$start" -v e="$end" 'BEGIN {
  t = e - s
  printf "demo: copied 1024 MiB in %.2f s (%.0f MiB/s); the copy matches the source\n", t, 1024 / t
}'
