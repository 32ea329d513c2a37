#!/usr/bin/env bash
# --socket-buffer: nbd-evcopy --no-extents --no-sparse sets
# SO_SNDBUF/SO_RCVBUF of the sockets libnbd connected (Unix and TCP) to
# the size asked for, and the copy is still exact; 1 MiB without the
# option, and the kernel's sizes with --socket-buffer=0.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3

start_nbdkit src pattern 8M
start_nbdkit_tcp dst memory 8M

nbd-evcopy --no-extents --no-sparse -v --socket-buffer=256k "$src" "$dst" \
  2>"$tmpdir/log"
# Linux reports twice the size set (it counts its own overhead too).
grep -q 'source: asked for 262144 byte socket buffers, kernel reports SO_SNDBUF 524288, SO_RCVBUF 524288' "$tmpdir/log" ||
  { cat "$tmpdir/log"; fail "source socket buffers not set"; }
grep -q 'destination: asked for 262144 byte socket buffers, kernel reports SO_SNDBUF 524288' "$tmpdir/log" ||
  fail "destination socket buffers not set"

read_back "$src" "$tmpdir/a"
read_back "$dst" "$tmpdir/b"
cmp "$tmpdir/a" "$tmpdir/b"

nbd-evcopy --no-extents --no-sparse -v "$src" "$dst" 2>"$tmpdir/log"
grep -q 'source: asked for 1048576 byte socket buffers' "$tmpdir/log" ||
  fail "no 1 MiB socket buffers by default: $(grep socket "$tmpdir/log")"
nbd-evcopy --no-extents --no-sparse -v --socket-buffer=0 "$src" "$dst" \
  2>"$tmpdir/log"
! grep -q 'socket buffers' "$tmpdir/log" ||
  fail "--socket-buffer=0 set the sizes: $(grep socket "$tmpdir/log")"

# An export name in the URI reaches the server.
start_nbdkit named --filter=exportname memory 8M exportname=disk exportname-strict=true
nbd-evcopy --no-extents --no-sparse --socket-buffer=64k "$src" \
  "${named/\/\?/\/disk?}"
# A user name in the URI (used by TLS) is libnbd's to parse, not ours.
nbd-evcopy --no-extents --no-sparse --socket-buffer=64k "$src" \
  "${dst/nbd:\/\//nbd://user@}"

# The whole message: a program that did not know the option at all
# would name it too, as unknown.
expect_error "nbd-evcopy: --socket-buffer: '1' is not 0 or a size from 4.0 KiB to 1.0 GiB" \
  nbd-evcopy --no-extents --no-sparse --socket-buffer=1 "$src" "$dst"
