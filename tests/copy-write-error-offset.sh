#!/usr/bin/env bash
# A destination whose writes fail at one known offset (an nbdkit sh
# plugin script over a file that fails the sixth MiB with EIO): a
# non-zero exit and one line naming exactly that offset and length.
# With --requests=1 the order is fixed, so the first five MiB hold the
# source and the rest still holds the marker: the copy stopped at the
# first error instead of going on.  Requests are 1 MiB
# (--request-size=1M), one per MiB of the layout.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin sh
requires_nbdkit_plugin random

mib=$((1024 * 1024))
size=$((8 * mib))
bad=$((5 * mib))
start_nbdkit src random $size seed=9
fill_file "$tmpdir/marker.img" $size 252

faulty_file_plugin "$tmpdir/dst.sh" "$tmpdir/dst.img" $size pwrite $bad $((bad + mib))

for requests in 16 1; do
  cp "$tmpdir/marker.img" "$tmpdir/dst.img"
  start_nbdkit dst sh "$tmpdir/dst.sh"
  expect_error "destination: write failed at offset $bad length $mib: Input/output error" \
    nbd-evcopy --no-extents --no-sparse --request-size=1M --requests=$requests \
      "$src" "$dst"
  stop_server dst
  extract "$tmpdir/dst.img" $bad $mib | cmp - <(extract "$tmpdir/marker.img" $bad $mib) ||
    fail "--requests=$requests: the failed range was written"
done

# The last run had --requests=1.
read_back "$src" "$tmpdir/src.img"
cmp <(extract "$tmpdir/src.img" 0 $bad) <(extract "$tmpdir/dst.img" 0 $bad) ||
  fail "the writes before the failed one are missing"
cmp <(extract "$tmpdir/marker.img" $bad $((size - bad))) \
    <(extract "$tmpdir/dst.img" $bad $((size - bad))) ||
  fail "something was written after the failed write"
