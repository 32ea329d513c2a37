#!/usr/bin/env bash
# A destination that fails every write (nbdkit's error filter): a
# non-zero exit and one line naming the failed write's offset and
# length.  The error filter fails writes before they reach the file, so
# the file must still be all marker.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin random
requires_nbdkit_filter error

mib=$((1024 * 1024))
size=$((8 * mib))
start_nbdkit src random $size seed=8
fill_file "$tmpdir/marker.img" $size 252
cp "$tmpdir/marker.img" "$tmpdir/dst.img"
start_nbdkit dst --filter=error file "$tmpdir/dst.img" \
             error-pwrite=EIO error-pwrite-rate=100%

expect_error "write failed at offset " \
  nbd-evcopy --no-extents --no-sparse --request-size=1M "$src" "$dst"
# Whichever write failed first, it is one of the copy's requests.
grep -qE ": destination( connection [0-9]+)?: write failed at offset [0-9]+ length $mib: Input/output error$" \
     "$tmpdir/err" || fail "the message does not name a request"
o=$(sed 's/.* offset \([0-9]*\) .*/\1/' "$tmpdir/err")
[ $((o % mib)) -eq 0 ] && [ "$o" -lt $size ] || fail "offset $o is not a request's"

stop_server dst
cmp "$tmpdir/marker.img" "$tmpdir/dst.img" || fail "the destination was changed"
