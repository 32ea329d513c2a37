#!/usr/bin/env bash
# Raw and qcow2 images served by qemu-nbd, with holes, zeroed ranges,
# data and data that is all zero: the zero extents come from qemu-nbd's
# block status and are hashed without reading.  The same image through
# nbdkit's noextents filter (every block read) gives the same digest.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3 qemu-img qemu-io qemu-nbd

# 20 MiB and a bit: a multiple of 512, not of 64 KiB.
img_size=20972032

for fmt in raw qcow2; do
  img=$tmpdir/img.$fmt
  qemu-img create -q -f $fmt "$img" $img_size
  # Data at unaligned offsets, explicit zeroes written as data, a range
  # zeroed after it held data, and data up to the last byte.
  qemu-io -f $fmt \
    -c 'write -P 0xaa 1M 3M' \
    -c 'write -P 0x55 9000000 100000' \
    -c 'write -P 0 6M 1M' \
    -c 'write -z 2M 512k' \
    -c 'write -P 0x11 14680064 70144' \
    -c 'write -P 0x77 20971520 512' \
    "$img" >/dev/null || fail "qemu-io on $img"

  start_qemu_nbd q$fmt -r -f $fmt "$img"
  eval uri=\$q$fmt
  check_blkhash "$uri"
  check_blkhash "$uri" --digest=sha512 --block-size=4096

  # Block status must have turned holes into zero runs.
  nbd-evsum -v "$uri" >/dev/null 2>"$tmpdir/log" || fail "nbd-evsum -v"
  grep -q 'zero run' "$tmpdir/log" || fail "$fmt: no zero run from block status"

  # The same bytes with every block read.
  start_nbdkit n$fmt --filter=noextents nbd socket="$tmpdir/q$fmt.sock"
  eval nouri=\$n$fmt
  want=$(nbd-evsum "$uri") || fail "nbd-evsum $uri"
  got=$(nbd-evsum "$nouri") || fail "nbd-evsum $nouri"
  [ "${got%% *}" = "${want%% *}" ] ||
    fail "$fmt: noextents gives ${got%% *}, block status ${want%% *}"
  nbd-evsum -v "$nouri" >/dev/null 2>"$tmpdir/log" || fail "nbd-evsum -v"
  ! grep -q 'zero run' "$tmpdir/log" || fail "$fmt: zero run without extents"
done
