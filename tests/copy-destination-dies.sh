#!/usr/bin/env bash
# A destination server that stops during a copy: nbd-evcopy, copying
# every byte or by extents, reports the first failure in one line, never
# a write started on the dead handle.
# Killed (SIGKILL), the server leaves a lost connection; stopped cleanly
# (SIGTERM), nbdkit first answers the commands in flight with ESHUTDOWN,
# and the one at the lowest offset is reported, in the protocol's words.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_filter delay

start_nbdkit src pattern 1G
# Both ways of copying: every byte, and by extents.  $opts is split on
# purpose: whole options, no spaces inside.
for opts in "--no-extents --no-sparse" ""; do
  for sig in TERM KILL TERM KILL; do
    # Slow writes: the copy takes tens of seconds, and the server dies
    # once its log (nbdkit's log filter, outside the delay) shows a
    # write completed, with the others in flight.
    rm -f "$tmpdir/dst.log"
    start_nbdkit dst --filter=log --filter=delay memory 1G delay-write=10ms \
      logfile="$tmpdir/dst.log"
    ( wait_log "$tmpdir/dst.log" '\.\.\.Write id=[0-9]+ return=0'
      kill -$sig "$(cat "$tmpdir/dst.pid")" ) &
    killer=$!
    if [ $sig = KILL ]; then
      expect_error ": connection lost: " nbd-evcopy $opts "$src" "$dst"
      grep -Eq "^nbd-evcopy: destination( connection [0-9]+)?: connection lost: " \
        "$tmpdir/err" || fail "unexpected message"
    else
      expect_error "nbd-evcopy: destination" nbd-evcopy $opts "$src" "$dst"
      grep -Eq "^nbd-evcopy: destination( connection [0-9]+)?: (connection lost: the server closed it|write failed at offset [0-9]+ length [0-9]+: the server is shutting down)(; the destination is complete below offset [0-9]+; to copy the rest: .*)?\$" \
        "$tmpdir/err" || fail "unexpected message"
    fi
    wait_for $killer 60
    # A server stopped with SIGTERM finishes the writes in flight
    # first: the next case starts once it is gone, so that no message
    # can come from it.  stop_server waits for that, for a time.
    stop_server dst
  done
done
