#!/usr/bin/env bash
# A failed read, write or zero command ends nbd-evcopy with a non-zero
# status and one line on stderr naming the offset, the length and the
# server's error; bad options do the same before any I/O.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit

start_nbdkit src data '1 @1048576 1' size=4M
start_nbdkit dst memory 4M

start_nbdkit rerr --filter=error data '1 @1048576 1' size=4M \
  error-pread=EIO error-pread-rate=100%
# One request at a time, on one connection, so that the message is
# known exactly: with more, the read at 1 MiB may fail first.
expect_error "source: read failed at offset 0 length 32768: Input/output error" \
  nbd-evcopy -C 1 --requests=1 "$rerr" "$dst"

start_nbdkit werr --filter=error --filter=noextents memory 4M \
  error-pwrite=ENOSPC error-pwrite-rate=100%
expect_error "destination: write failed at offset 0 length 32768: No space left on device" \
  nbd-evcopy -C 1 --requests=1 "$src" "$werr"

start_nbdkit zerr --filter=error --filter=noextents memory 4M \
  error-zero=EIO error-zero-rate=100%
expect_error "destination: zero failed at offset 32768 length 1015808: Input/output error" \
  nbd-evcopy -C 1 --requests=1 "$src" "$zerr"

expect_error "cannot be used together" \
  nbd-evcopy --allocated --destination-is-zero "$src" "$dst"
# The whole message: "unknown option '--request-size=1G'" would name
# the option too.
expect_error "nbd-evcopy: --request-size: '1G' is outside 512 bytes to 32 MiB" \
  nbd-evcopy --request-size=1G "$src" "$dst"
start_nbdkit small memory 1M
expect_error "destination is smaller than the source" \
  nbd-evcopy "$src" "$small"

# The status too: output to a file, not through a pipe that drops it.
nbd-evcopy --help >"$tmpdir/out" || fail "--help failed"
grep -q -- --allocated "$tmpdir/out" || fail "--help"
nbd-evcopy --version >"$tmpdir/out" || fail "--version failed"
grep -q '^nbd-evcopy ' "$tmpdir/out" || fail "--version"
