#!/usr/bin/env bash
# The same copy over TCP on 127.0.0.1 as over Unix sockets, in both
# directions of a mixed pair: nbd:// URIs work as source and as
# destination.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_plugin random

size=$((16 * 1024 * 1024 + 512))
start_nbdkit_tcp src random $size seed=2
start_nbdkit_tcp dst_tcp memory $size
start_nbdkit dst_unix memory $size

nbd-evcopy --no-extents --no-sparse "$src" "$dst_tcp"
read_back "$src" "$tmpdir/src.img"
read_back "$dst_tcp" "$tmpdir/dst.img"
cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "TCP to TCP: wrong copy"

# And from the TCP destination, now a copy of the source, back over a
# Unix socket.
nbd-evcopy --no-extents --no-sparse "$dst_tcp" "$dst_unix"
read_back "$dst_unix" "$tmpdir/dst2.img"
cmp "$tmpdir/src.img" "$tmpdir/dst2.img" || fail "TCP to Unix: wrong copy"
