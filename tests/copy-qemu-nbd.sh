#!/usr/bin/env bash
# qemu-nbd serving a raw file is a real destination: after the copy
# (with --flush, which qemu-nbd honours) the file is byte for byte the
# source.  The file starts filled with 0xAA so that any range the copy
# missed shows up in the comparison.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit qemu-nbd nbdcopy
requires_nbdkit_plugin random

size=$((16 * 1024 * 1024 + 512))
start_nbdkit src random $size seed=1
fill_file "$tmpdir/dst.img" $size 252
start_qemu_nbd dst -f raw "$tmpdir/dst.img"

nbd-evcopy --no-extents --no-sparse --flush "$src" "$dst"
stop_server dst

read_back "$src" "$tmpdir/src.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "the file differs from the source"
