#!/usr/bin/env bash
# A destination smaller than the source is refused before anything is
# read or written: one line naming both sizes, a non-zero exit, and the
# destination's file is unchanged.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin random

mib=$((1024 * 1024))
start_nbdkit src random $((8 * mib)) seed=4
fill_file "$tmpdir/marker.img" $((8 * mib - 512)) 252
cp "$tmpdir/marker.img" "$tmpdir/dst.img"
start_nbdkit dst file "$tmpdir/dst.img"

expect_error "destination is smaller than the source (8388096 < 8388608 bytes)" \
  nbd-evcopy --no-extents --no-sparse "$src" "$dst"
stop_server dst
cmp "$tmpdir/marker.img" "$tmpdir/dst.img" || fail "the destination was changed"
