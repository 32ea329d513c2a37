#!/usr/bin/env bash
# qcow2 to qcow2 through qemu-nbd, checked with qemu-img compare: onto an
# empty image (zero extents skipped) and onto one full of other data
# (zero extents zeroed).  Then the fast path: an empty 1 TiB image costs
# no reads, writes or zero commands at all.  The commands are counted
# by qemu-nbd's own trace of the requests it decodes, not taken from
# what the program says it sent.
source "$abs_top_srcdir/tests/functions.sh"
requires qemu-img qemu-io qemu-nbd

# A source with data, an explicitly zeroed cluster and an unaligned
# size (not a multiple of 64 KiB or of 1 MiB).
size=$((96 * 1024 * 1024 + 3 * 512))
qemu-img create -q -f qcow2 "$tmpdir/src.qcow2" $size
qemu-io -f qcow2 -c 'write -P 0x55 0 64k' -c 'write -P 0xaa 3M 1M' \
  -c 'write -z 8M 1M' -c 'write -P 0x11 50M 4k' \
  -c "write -P 0x22 $((size - 512)) 512" "$tmpdir/src.qcow2" >/dev/null
start_qemu_nbd src -r -f qcow2 "$tmpdir/src.qcow2"

# traced NAME: qemu-nbd options that trace each request NAME's server
# decodes into $tmpdir/NAME.trace.
traced ()
{
  echo "--trace=enable=nbd_co_receive_request_decode_type,file=$tmpdir/$1.trace"
}

# received NAME: the commands NAME's server decoded, one "COUNT TYPE"
# line per type, the disconnect left out.  Stop the server first
# (stop_server), so that the trace is complete.
received ()
{
  sed -n 's/.*Decoding type: .*(\(.*\))$/\1/p' "$tmpdir/$1.trace" |
    grep -v '^disconnect$' | sort | uniq -c | sed 's/^ *//'
}

qemu-img create -q -f qcow2 "$tmpdir/empty.qcow2" $size
qemu-img create -q -f qcow2 "$tmpdir/full.qcow2" $size
qemu-io -f qcow2 -c "write -P 0xff 0 $size" "$tmpdir/full.qcow2" >/dev/null
start_qemu_nbd empty -f qcow2 "$tmpdir/empty.qcow2"
start_qemu_nbd full "$(traced full)" -f qcow2 "$tmpdir/full.qcow2"

nbd-evcopy --flush "$src" "$empty"
nbd-evcopy --flush "$src" "$full"
stop_server full
grep -q '^[1-9][0-9]* write zeroes$' <<<"$(received full)" ||
  fail "no zero commands onto a full destination: $(received full | tr '\n' ' ')"
# -U: the server of empty.qcow2 still holds it open; --flush made it
# write its qcow2 metadata out.
qemu-img compare -U -f qcow2 -F qcow2 "$tmpdir/src.qcow2" "$tmpdir/empty.qcow2"
qemu-img compare -f qcow2 -F qcow2 "$tmpdir/src.qcow2" "$tmpdir/full.qcow2"

# Empty 1 TiB onto empty 1 TiB: block status on both ends, nothing else.
qemu-img create -q -f qcow2 "$tmpdir/big-src.qcow2" 1T
qemu-img create -q -f qcow2 "$tmpdir/big-dst.qcow2" 1T
start_qemu_nbd bsrc "$(traced bsrc)" -r -f qcow2 "$tmpdir/big-src.qcow2"
start_qemu_nbd bdst "$(traced bdst)" -f qcow2 "$tmpdir/big-dst.qcow2"
nbd-evcopy "$bsrc" "$bdst"
stop_server bsrc bdst
for n in bsrc bdst; do
  [ "$(received $n)" = "257 block status" ] ||
    fail "1 TiB empty: $n received $(received $n | tr '\n' ' ')"
done

# Onto an image holding 64 KiB of data at 1 GiB, only what the
# destination's block status does not report as zeroes is zeroed: the
# first GiB is skipped, one zero command of 32 MiB (qemu-nbd's maximum
# block size) starts at 1 GiB, and the rest is skipped.  The result
# compares equal.
qemu-img create -q -f qcow2 "$tmpdir/mid-src.qcow2" 64G
qemu-img create -q -f qcow2 "$tmpdir/big-dirty.qcow2" 64G
qemu-io -f qcow2 -c 'write -P 1 1G 64k' "$tmpdir/big-dirty.qcow2" >/dev/null
start_qemu_nbd msrc "$(traced msrc)" -r -f qcow2 "$tmpdir/mid-src.qcow2"
start_qemu_nbd bdirty "$(traced bdirty)" -f qcow2 "$tmpdir/big-dirty.qcow2"
nbd-evcopy --flush "$msrc" "$bdirty"
stop_server msrc bdirty
[ "$(received msrc)" = "17 block status" ] ||
  fail "64 GiB onto data: the source received $(received msrc | tr '\n' ' ')"
[ "$(received bdirty)" = "17 block status
1 flush
1 write zeroes" ] ||
  fail "64 GiB onto data: the destination received $(received bdirty | tr '\n' ' ')"
qemu-img compare -f qcow2 -F qcow2 "$tmpdir/mid-src.qcow2" \
  "$tmpdir/big-dirty.qcow2"
