#!/usr/bin/env bash
# A read that fails ends the copy: a non-zero exit, one line naming the
# failed request's offset and length, and the destination's range under
# that request still holds its old contents, because the buffer of a
# failed read is never written anywhere.  The source is an nbdkit sh
# plugin script whose pread fails with EIO for the fourth MiB only.
#
# The line says below which offset the destination is complete, and
# every MiB below it must hold the source's bytes.  The plugin serves
# one request at a time (the sh plugin's default thread model), so the
# first MiB is read, and its write sent, before the fourth MiB fails:
# the complete part is never empty.  With --requests=1 the order is
# fixed: the first three MiB are copied, the rest of the destination is
# untouched.  With --requests=16 the other requests race, so every MiB
# above the complete part must be either the source's or the marker,
# never anything else (such as a stale buffer).  Requests are 1 MiB
# (--request-size=1M), so each covers one MiB of the layout.
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
  below=$(sed -n 's/.*; the destination is complete below offset \([0-9]*\).*/\1/p' \
            "$tmpdir/err")
  [ -n "$below" ] && [ "$below" -gt 0 ] ||
    fail "--requests=$requests: no complete part said: $(cat "$tmpdir/err")"
  [ $((below % mib)) -eq 0 ] && [ "$below" -le $bad ] ||
    fail "--requests=$requests: complete below $below, past the failed MiB or within one"
  [ $requests -ne 1 ] || [ "$below" -eq $bad ] ||
    fail "--requests=1: complete below $below, not $bad"

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
    elif [ $o -lt "$below" ]; then
      want=source
    elif [ $requests -eq 1 ]; then
      want=marker
    else
      want=$got
    fi
    [ $got = $want ] || fail "--requests=$requests: MiB $i is the $got, not the $want"
  done
done
