#!/usr/bin/env bash
# A source or destination that cannot be reached, or a URI that libnbd
# cannot parse: one line on stderr that names the end and the URI, a
# non-zero exit, and a working destination left unchanged.
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
           "foo://bar" \
           "not a uri"; do
  expect_error "source: cannot connect to $bad: " copy-libev "$bad" "$dst"
  expect_error "destination: cannot connect to $bad: " copy-libev "$src" "$bad"
done

stop_server dst
cmp "$tmpdir/marker.img" "$tmpdir/dst.img" || fail "the destination was changed"
