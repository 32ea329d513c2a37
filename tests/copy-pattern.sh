#!/usr/bin/env bash
# nbd-evcopy --no-extents --no-sparse (every byte read and written)
# copies nbdkit's pattern plugin to the memory plugin, and the
# destination then reads back byte for byte equal to the source.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy

start_nbdkit src pattern 64M
start_nbdkit dst memory 64M

nbd-evcopy --no-extents --no-sparse "$src" "$dst"

read_back "$src" "$tmpdir/src.img"
read_back "$dst" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img"
