#!/usr/bin/env bash
# A read that fails ends the copy: a non-zero exit, one line naming the
# failed request's offset and length, and the destination's range under
# that request still holds its old contents, because the buffer of a
# failed read is never written anywhere.  The source is an nbdkit sh
# plugin script whose pread fails with EIO for the fourth MiB only.
#
# With --requests=1 the order is fixed: the first three MiB are copied,
# the rest of the destination is untouched.  With the default ring the
# other requests race, so every MiB must be either the source's or the
# marker, never anything else (such as a stale buffer).  Requests are
# 1 MiB (--request-size=1M), so each covers one MiB of the layout.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin sh

mib=$((1024 * 1024))
size=$((8 * mib))
bad=$((3 * mib))
head -c $size /dev/urandom >"$tmpdir/src.img"
fill_file "$tmpdir/marker.img" $size 252

faulty_file_plugin "$tmpdir/src.sh" "$tmpdir/src.img" $size pread $bad $((bad + mib))
start_nbdkit src sh "$tmpdir/src.sh"

for requests in 1 16; do
  cp "$tmpdir/marker.img" "$tmpdir/dst$requests.img"
  start_nbdkit dst file "$tmpdir/dst$requests.img"
  expect_error "source: read failed at offset $bad length $mib: Input/output error" \
    nbd-evcopy --no-extents --no-sparse --request-size=1M --requests=$requests \
      "$src" "$dst"
  stop_server dst

  for i in $(seq 0 7); do
    o=$((i * mib))
    extract "$tmpdir/dst$requests.img" $o $mib >"$tmpdir/chunk"
    if cmp -s "$tmpdir/chunk" <(extract "$tmpdir/marker.img" $o $mib); then
      got=marker
    elif cmp -s "$tmpdir/chunk" <(extract "$tmpdir/src.img" $o $mib); then
      got=source
    else
      fail "--requests=$requests: MiB $i is neither the source nor the marker"
    fi
    if [ $o -eq $bad ]; then
      want=marker
    elif [ $requests -eq 1 ]; then
      want=$([ $o -lt $bad ] && echo source || echo marker)
    else
      want=$got
    fi
    [ $got = $want ] || fail "--requests=$requests: MiB $i is the $got, not the $want"
  done
done
