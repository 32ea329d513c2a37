#!/usr/bin/env bash
# --timeout with a server that stops answering in the middle of the work
# (SIGSTOP): each program exits 1 once the server has been silent for
# the timeout, no sooner, with one line naming the side, the time and
# the oldest command still outstanding.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_filter delay

# stalled NAME TEXT CMD...: run CMD, SIGSTOP server NAME once its log
# shows that CMD has started reading or writing (so that commands are in
# flight), and expect CMD to fail with TEXT 0.75 to 8 seconds after the
# stop: the --timeout of 1 s, no sooner, and no later than a loaded
# machine allows.
stalled ()
{
  _srv=$1 _text=$2; shift 2
  # (env, not the shell function: $! must be the program itself.)
  env "$mark" "$@" >"$tmpdir/out" 2>"$tmpdir/err" &
  _pid=$!
  wait_log "$tmpdir/$_srv.log" ' (Read|Write) id='
  kill -STOP "$(cat "$tmpdir/$_srv.pid")"
  _t0=$(date +%s.%N)
  # A --timeout that never fires fails here, not by hanging the test.
  wait_for $_pid 30
  _status=$waited
  _t1=$(date +%s.%N)
  kill -CONT "$(cat "$tmpdir/$_srv.pid")"
  cat "$tmpdir/err"
  [ $_status -eq 1 ] || fail "$*: exit status $_status, expected 1"
  [ "$(wc -l <"$tmpdir/err")" -eq 1 ] || fail "$*: not one line on stderr"
  grep -Eq "$_text" "$tmpdir/err" || fail "$*: expected /$_text/"
  awk -v a="$_t0" -v b="$_t1" 'BEGIN { t = b - a; printf "exited %.2f s after the stop\n", t; exit !(t >= 0.75 && t < 8) }' ||
    fail "$*: did not exit 0.75 to 8 s after the server stopped"
}

# Reads take 5 ms each, so the work lasts far longer than the test.
# nbdkit's log filter, outside the delay, records each request as it
# arrives: stalled waits for the first.
restart ()
{
  [ ! -e "$tmpdir/src.pid" ] || stop_server src dst
  rm -f "$tmpdir/src.log" "$tmpdir/dst.log"
  start_nbdkit src --filter=log --filter=delay pattern 4G delay-read=5ms \
    logfile="$tmpdir/src.log"
  start_nbdkit dst --filter=log memory 4G logfile="$tmpdir/dst.log"
}

read_msg='^[a-z-]+: source( connection [0-9]+)?: no reply from the server for 1 s; oldest command in flight: read at offset [0-9]+ length (262144|524288|1048576)(; the destination is complete below offset [0-9]+; to copy the rest: .*)?$'
write_msg='^[a-z-]+: destination( connection [0-9]+)?: no reply from the server for 1 s; oldest command in flight: write at offset [0-9]+ length (262144|524288|1048576)(; the destination is complete below offset [0-9]+; to copy the rest: .*)?$'

# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  restart
  stalled src "$read_msg" $prog --timeout=1 "$src" "$dst"
  restart
  stalled dst "$write_msg" $prog --timeout=1 "$src" "$dst"
done
restart
stalled src '^nbd-evsum: nbd\+unix:[^ ]*( connection [0-9]+)?: no reply from the server for 1 s; oldest command in flight: read at offset [0-9]+ length [0-9]+$' \
  nbd-evsum --timeout=1 "$src"
