#!/usr/bin/env bash
# --init (libnbd zeroes each read buffer first) only costs time: the
# copy is the same as with the default --no-init, byte for byte.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin random

size=$((16 * 1024 * 1024 + 4096))
start_nbdkit src random $size seed=42
start_nbdkit with memory $size
start_nbdkit without memory $size

nbd-evcopy --no-extents --no-sparse --init "$src" "$with"
nbd-evcopy --no-extents --no-sparse --init --no-init "$src" "$without"

read_back "$src" "$tmpdir/src.img"
read_back "$with" "$tmpdir/with.img"
read_back "$without" "$tmpdir/without.img"
cmp "$tmpdir/src.img" "$tmpdir/with.img" || fail "--init: wrong copy"
cmp "$tmpdir/src.img" "$tmpdir/without.img" || fail "--no-init: wrong copy"
