#!/usr/bin/env bash
# A destination larger than the source gets the source's bytes at the
# start, and the rest of it is left alone (nbd-evcopy --no-extents
# --no-sparse neither writes nor zeroes past the source's end).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin random

mib=$((1024 * 1024))
size=$((mib + 512))
dst_size=$((8 * mib))
start_nbdkit src random $size seed=3
fill_file "$tmpdir/marker.img" $dst_size 252
cp "$tmpdir/marker.img" "$tmpdir/dst.img"
start_nbdkit dst file "$tmpdir/dst.img"

nbd-evcopy --no-extents --no-sparse "$src" "$dst"
stop_server dst

read_back "$src" "$tmpdir/src.img"
extract "$tmpdir/dst.img" 0 $size | cmp "$tmpdir/src.img" - ||
  fail "the start of the destination is not the source"
cmp <(extract "$tmpdir/marker.img" $size $((dst_size - size))) \
    <(extract "$tmpdir/dst.img" $size $((dst_size - size))) ||
  fail "the destination was changed past the source's end"
