#!/usr/bin/env bash
# A source or destination that cannot be reached, a URI that libnbd
# cannot parse, or a path that is no image: one line on stderr that
# names the end and the image, a non-zero exit, and a working
# destination left unchanged.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit python3
requires_nbdkit_plugin random

mib=$((1024 * 1024))
start_nbdkit src random $((4 * mib)) seed=5
fill_file "$tmpdir/marker.img" $((4 * mib)) 252
cp "$tmpdir/marker.img" "$tmpdir/dst.img"
start_nbdkit dst file "$tmpdir/dst.img"

# A port that was free a moment ago and that nobody listens on.
closed_port=$(free_port)

for bad in "nbd+unix:///?socket=$tmpdir/nobody.sock" \
           "nbd://127.0.0.1:$closed_port" \
           "nbd://[::1" \
           "nbd+vsock:///"; do
  expect_error "source: cannot connect to $bad: " \
    nbd-evcopy --no-extents --no-sparse "$bad" "$dst"
  expect_error "destination: cannot connect to $bad: " \
    nbd-evcopy --no-extents --no-sparse "$src" "$bad"
done

# SCHEME://... with another scheme is a mistyped URI, said so.
expect_error "foo://bar: unknown URI scheme 'foo'" \
  nbd-evcopy --no-extents --no-sparse foo://bar "$dst"
# Anything else that is not an NBD URI is a local path.  A source must
# exist; a destination that does not is created, so one that cannot be
# created is the error.
for bad in "not a file" "$tmpdir/no/such/dir"; do
  expect_error "source: $bad: No such file or directory" \
    nbd-evcopy --no-extents --no-sparse "$bad" "$dst"
done
expect_error "destination: $tmpdir/no/such/dir: cannot create: No such file or directory" \
  nbd-evcopy --no-extents --no-sparse "$src" "$tmpdir/no/such/dir"
expect_error "source: $tmpdir: not a regular file, a block device, a pipe or a character device" \
  nbd-evcopy --no-extents --no-sparse "$tmpdir" "$dst"

stop_server dst
cmp "$tmpdir/marker.img" "$tmpdir/dst.img" || fail "the destination was changed"
