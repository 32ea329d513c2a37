#!/usr/bin/env bash
# --flush sends one NBD flush to the destination after the last write
# has returned; without it no flush is sent.  The log filter on the
# destination records the commands in the order the server saw them.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_filter log

start_nbdkit src pattern 8M
start_nbdkit flush --filter=log memory 8M logfile="$tmpdir/flush.log"
start_nbdkit noflush --filter=log memory 8M logfile="$tmpdir/noflush.log"

nbd-evcopy --no-extents --no-sparse --flush "$src" "$flush"
nbd-evcopy --no-extents --no-sparse "$src" "$noflush"
# Stopped servers have closed their logs, so every line is in the file.
stop_server flush noflush

[ "$(grep -c ' Flush id=' "$tmpdir/flush.log")" -eq 1 ] ||
  fail "--flush did not send exactly one flush"
last_write=$(grep -n '\.\.\.Write id=' "$tmpdir/flush.log" | tail -n 1 | cut -d: -f1)
flush=$(grep -n ' Flush id=' "$tmpdir/flush.log" | cut -d: -f1)
[ -n "$last_write" ] || fail "--flush: nothing was written"
[ "$flush" -gt "$last_write" ] || fail "the flush started before the last write returned"

grep -q ' Write id=' "$tmpdir/noflush.log" || fail "nothing was written"
! grep ' Flush id=' "$tmpdir/noflush.log" || fail "a flush was sent without --flush"
