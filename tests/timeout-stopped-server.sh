#!/usr/bin/env bash
# --timeout with a server that stops answering in the middle of the work
# (SIGSTOP): each program exits 1 once the server has been silent for
# the timeout, no sooner, with one line naming the side, the time and
# the oldest command still outstanding.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_filter delay

# stalled N NAME TEXT CMD...: run CMD, SIGSTOP server NAME once its
# log shows that CMD has started reading or writing (so that commands
# are in flight), and expect CMD to fail with TEXT 0.75 to 8 seconds
# after the stop: the --timeout of 1 s, no sooner, and no later than a
# loaded machine allows.  N names the case's files.
stalled ()
{
  _n=$1 _srv=$2 _text=$3; shift 3
  # (env, not the shell function: $! must be the program itself.)
  env "$mark" "$@" >"$tmpdir/out$_n" 2>"$tmpdir/err$_n" &
  _pid=$!
  wait_log "$tmpdir/$_srv.log" ' (Read|Write) id='
  kill -STOP "$(cat "$tmpdir/$_srv.pid")"
  _t0=$(date +%s.%N)
  # A --timeout that never fires fails here, not by hanging the test.
  wait_for $_pid 30
  _status=$waited
  _t1=$(date +%s.%N)
  kill -CONT "$(cat "$tmpdir/$_srv.pid")"
  cat "$tmpdir/err$_n"
  [ $_status -eq 1 ] || fail "$*: exit status $_status, expected 1"
  [ "$(wc -l <"$tmpdir/err$_n")" -eq 1 ] || fail "$*: not one line on stderr"
  grep -Eq "$_text" "$tmpdir/err$_n" || fail "$*: expected /$_text/"
  awk -v a="$_t0" -v b="$_t1" -v c="$*" 'BEGIN { t = b - a; printf "%s: exited %.2f s after the stop\n", c, t; exit !(t >= 0.75 && t < 8) }' ||
    fail "$*: did not exit 0.75 to 8 s after the server stopped"
}

# Reads take 5 ms each, so the work lasts far longer than the test.
# nbdkit's log filter, outside the delay, records each request as it
# arrives: stalled waits for the first.  Every case has fresh servers of
# its own, srcN and dstN (nbdkit 1.32 may abort when a client leaves
# with replies pending, as these programs do on error), all started
# here, where cleanup knows them; and the cases, which spend their time
# waiting out the timeout, wait at once: each runs in the background,
# where a failure ends its subshell, and the test waits for every one.
servers ()
{
  start_nbdkit src$1 --filter=log --filter=delay pattern 4G delay-read=5ms \
    logfile="$tmpdir/src$1.log"
  start_nbdkit dst$1 --filter=log memory 4G logfile="$tmpdir/dst$1.log"
}

read_msg='^[a-z-]+: source( connection [0-9]+)?: no reply from the server for 1 s; oldest command in flight: read at offset [0-9]+ length (262144|524288|1048576)(; the destination is complete below offset [0-9]+; to copy the rest: .*)?$'
write_msg='^[a-z-]+: destination( connection [0-9]+)?: no reply from the server for 1 s; oldest command in flight: write at offset [0-9]+ length (262144|524288|1048576)(; the destination is complete below offset [0-9]+; to copy the rest: .*)?$'

pids=
n=0
# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  n=$((n + 1))
  servers $n
  eval "s=\$src$n d=\$dst$n"
  stalled $n src$n "$read_msg" $prog --timeout=1 "$s" "$d" &
  pids="$pids $!"
  n=$((n + 1))
  servers $n
  eval "s=\$src$n d=\$dst$n"
  stalled $n dst$n "$write_msg" $prog --timeout=1 "$s" "$d" &
  pids="$pids $!"
done
n=$((n + 1))
servers $n
eval "s=\$src$n"
stalled $n src$n '^nbd-evsum: nbd\+unix:[^ ]*( connection [0-9]+)?: no reply from the server for 1 s; oldest command in flight: read at offset [0-9]+ length [0-9]+$' \
  nbd-evsum --timeout=1 "$s" &
pids="$pids $!"

for p in $pids; do
  wait "$p" || fail "a case failed (its message is above)"
done
