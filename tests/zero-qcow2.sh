#!/usr/bin/env bash
# qcow2 to qcow2 through qemu-nbd, checked with qemu-img compare: onto an
# empty image (zero extents skipped) and onto one full of other data
# (zero extents zeroed).  Then the fast path: an empty 1 TiB image costs
# no reads, writes or zero commands at all.
source "$abs_top_srcdir/tests/functions.sh"
source "$abs_top_srcdir/tests/zero-functions.sh"
requires qemu-img qemu-io qemu-nbd

# A source with data, an explicitly zeroed cluster and an unaligned
# size (not a multiple of 64 KiB or of 1 MiB).
size=$((96 * 1024 * 1024 + 3 * 512))
qemu-img create -q -f qcow2 "$tmpdir/src.qcow2" $size
qemu-io -f qcow2 -c 'write -P 0x55 0 64k' -c 'write -P 0xaa 3M 1M' \
  -c 'write -z 8M 1M' -c 'write -P 0x11 50M 4k' \
  -c "write -P 0x22 $((size - 512)) 512" "$tmpdir/src.qcow2" >/dev/null
start_qemu_nbd src -r -f qcow2 "$tmpdir/src.qcow2"

qemu-img create -q -f qcow2 "$tmpdir/empty.qcow2" $size
qemu-img create -q -f qcow2 "$tmpdir/full.qcow2" $size
qemu-io -f qcow2 -c "write -P 0xff 0 $size" "$tmpdir/full.qcow2" >/dev/null
start_qemu_nbd empty -f qcow2 "$tmpdir/empty.qcow2"
start_qemu_nbd full -f qcow2 "$tmpdir/full.qcow2"

nbd-evcopy --flush "$src" "$empty"
nbd-evcopy -v --flush "$src" "$full" 2>"$tmpdir/stderr"
grep -q ' [1-9][0-9]* zeroes' <<<"$(zero_copy_summary)" ||
  fail "no zero commands onto a full destination: $(zero_copy_summary)"
# -U: the servers still hold their images open; --flush made them
# write their qcow2 metadata out.
qemu-img compare -U -f qcow2 -F qcow2 "$tmpdir/src.qcow2" "$tmpdir/empty.qcow2"
qemu-img compare -U -f qcow2 -F qcow2 "$tmpdir/src.qcow2" "$tmpdir/full.qcow2"

# Empty 1 TiB onto empty 1 TiB: block status on both ends, nothing else.
qemu-img create -q -f qcow2 "$tmpdir/big-src.qcow2" 1T
qemu-img create -q -f qcow2 "$tmpdir/big-dst.qcow2" 1T
start_qemu_nbd bsrc -r -f qcow2 "$tmpdir/big-src.qcow2"
start_qemu_nbd bdst -f qcow2 "$tmpdir/big-dst.qcow2"
nbd-evcopy -v "$bsrc" "$bdst" 2>"$tmpdir/stderr"
summary=$(zero_copy_summary)
[ "$summary" = "257 + 257 block status, 0 reads, 0 writes, 0 zeroes, 1099511627776 bytes skipped" ] ||
  fail "1 TiB empty: $summary"

# Onto an image holding 64 KiB of data at 1 GiB, only what the
# destination's block status does not report as zeroes is zeroed: the
# first GiB is skipped, one zero command of 32 MiB (qemu-nbd's maximum
# block size) starts at 1 GiB, and the rest is skipped.  The result
# compares equal.
qemu-img create -q -f qcow2 "$tmpdir/mid-src.qcow2" 64G
qemu-img create -q -f qcow2 "$tmpdir/big-dirty.qcow2" 64G
qemu-io -f qcow2 -c 'write -P 1 1G 64k' "$tmpdir/big-dirty.qcow2" >/dev/null
start_qemu_nbd msrc -r -f qcow2 "$tmpdir/mid-src.qcow2"
start_qemu_nbd bdirty -f qcow2 "$tmpdir/big-dirty.qcow2"
nbd-evcopy -v --flush "$msrc" "$bdirty" 2>"$tmpdir/stderr"
summary=$(zero_copy_summary)
[ "$summary" = "17 + 17 block status, 0 reads, 0 writes, 1 zeroes, 68685922304 bytes skipped" ] ||
  fail "64 GiB onto data: $summary"
qemu-img compare -U -f qcow2 -F qcow2 "$tmpdir/mid-src.qcow2" \
  "$tmpdir/big-dirty.qcow2"
