#!/usr/bin/env bash
# Local image files as sources and destinations of nbd-evcopy, copying
# every byte or by extents: raw and qcow2, sparse and with data, of a
# size that is a multiple of 512 and of nothing larger.  Every copy is
# checked with qemu-img compare.  A destination that does not exist is
# created raw, as large as the source (sparse, when copying by
# extents); one that exists keeps its format; one created before a check
# fails is removed again.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit qemu-img qemu-io qemu-nbd
requires_nbdkit_filter blocksize-policy

size=$((10 * 1024 * 1024 + 512))
src_raw=$tmpdir/src.raw
# Data at unaligned offsets, data that is all zero, and the last sector.
raw_and_qcow2 "$src_raw" "$tmpdir/src.qcow2" $size \
  'write -P 0xaa 1M 3M' \
  'write -P 0x55 7000064 1536' \
  'write -P 0 8M 64k' \
  "write -P 0x11 $((size - 512)) 512"

# same SRC DST: the guest view of both images is the same, byte for byte.
same ()
{
  qemu-img compare -q "$1" "$2" || fail "$1 and $2 differ"
}

# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  for src in "$src_raw" "$tmpdir/src.qcow2"; do
    # A destination that does not exist yet.
    new=$tmpdir/new.raw
    rm -f "$new"
    $prog "$src" "$new" || fail "$prog $src $new"
    [ "$(stat -c %s "$new")" -eq $size ] ||
      fail "$prog made $new $(stat -c %s "$new") bytes, not $size"
    qemu-img info "$new" | grep -q '^file format: raw$' ||
      fail "$prog made $new other than raw"
    same "$src" "$new"
    # Copying by extents leaves the holes unwritten: the file holds
    # about 3 MiB of data, so under 4 MiB of it is allocated.
    if [ "$prog" = nbd-evcopy ] &&
       [ $(( $(stat -c %b "$new") * 512 )) -ge $((4 * 1024 * 1024)) ]; then
      fail "$prog did not keep $new sparse: $(du -h "$new")"
    fi

    # An existing qcow2 destination stays qcow2.
    rm -f "$tmpdir/dst.qcow2"
    qemu-img create -q -f qcow2 "$tmpdir/dst.qcow2" $size
    $prog "$src" "$tmpdir/dst.qcow2" || fail "$prog $src dst.qcow2"
    qemu-img info "$tmpdir/dst.qcow2" | grep -q '^file format: qcow2$' ||
      fail "$prog changed the format of dst.qcow2"
    same "$src" "$tmpdir/dst.qcow2"

    # An existing raw destination, larger and full of 0xAA: the source
    # is copied over it, and the bytes past the source stay.
    fill_file "$tmpdir/big.raw" $((size + 4096)) 252
    $prog "$src" "$tmpdir/big.raw" || fail "$prog $src big.raw"
    extract "$tmpdir/big.raw" 0 $size >"$tmpdir/head.raw"
    same "$src_raw" "$tmpdir/head.raw"
    extract "$tmpdir/big.raw" $size 4096 | cmp -s - <(head -c 4096 /dev/zero |
      tr '\0' '\252') || fail "$prog wrote past the source's end"
  done

  # A check that fails after the new destination was made (the
  # source's minimum block size does not divide the request size):
  # the file is removed again, and the message names the source.
  rm -f "$new"
  expect_error "is not a multiple of the server's minimum block size 4096" \
    $prog --request-size=6k -- \
    [ nbdkit --filter=blocksize-policy pattern 1M blocksize-minimum=4096 ] \
    "$new"
  [ ! -e "$new" ] || fail "$prog left $new behind after a failed check"

  # A destination too small for the source: nothing is written.
  qemu-img create -q -f qcow2 "$tmpdir/small.qcow2" 1M
  cp "$tmpdir/small.qcow2" "$tmpdir/small-before.qcow2"
  expect_error "destination is smaller than the source" \
    $prog "$src_raw" "$tmpdir/small.qcow2"
  cmp "$tmpdir/small.qcow2" "$tmpdir/small-before.qcow2" ||
    fail "$prog changed a destination that is too small"
done
echo "ok"
