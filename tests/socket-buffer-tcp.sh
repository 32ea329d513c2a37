#!/usr/bin/env bash
# Socket buffers: by default the tools set 1 MiB on Unix sockets and
# leave TCP sockets to the kernel, whose autotuning a set size would
# turn off; --socket-buffer sets both kinds.  What the kernel holds is
# read with ss(8) from the client's TCP sockets while they are open:
# a size set shows as twice itself in rb and tb (the kernel doubles it
# for its overhead), which 1536k makes a figure autotuning does not
# land on.  -v says which was done.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit ss

mib=$((1024 * 1024))
# Reads of 300 ms keep the connections open while ss looks.
start_nbdkit_tcp tsrc --filter=delay pattern 64M delay-read=300ms
port=${tsrc##*:}
start_nbdkit usrc pattern 64M
start_nbdkit_tcp tdst --filter=delay memory 64M delay-write=300ms
dport=${tdst##*:}

# buffers PORT: the rb and tb of each client socket connected to PORT,
# one "RB TB" line each, into $tmpdir/buffers, once there are two (the
# default connections to a server that advertises multi-conn, as these
# do), within 10 s.
buffers ()
{
  for _ in $(seq 1 500); do
    ss -tmn state established dst "127.0.0.1:$1" >"$tmpdir/ss"
    grep -o 'rb[0-9]*,t[0-9]*,tb[0-9]*' "$tmpdir/ss" |
      sed 's/rb\([0-9]*\),t[0-9]*,tb\([0-9]*\)/\1 \2/' >"$tmpdir/buffers"
    [ "$(wc -l <"$tmpdir/buffers")" -lt 2 ] || return 0
    sleep 0.02
  done
  fail "not two client sockets connected to port $1 within 10 s"
}

# run PORT SIDE CMD...: run CMD in the background until both its
# connections to PORT have been set up, SIDE's two -v lines about socket
# buffers printed (the sizes are set after the handshake, so ss could
# see a socket before), then leave their buffers in $tmpdir/buffers and
# stop it.
run ()
{
  _port=$1 _side=$2; shift 2
  env "$mark" "$@" >/dev/null 2>"$tmpdir/err" &
  _pid=$!
  for _ in $(seq 1 500); do
    [ "$(grep -c "$_side.*socket buffers" "$tmpdir/err")" -lt 2 ] || break
    sleep 0.02
  done
  [ "$(grep -c "$_side.*socket buffers" "$tmpdir/err")" -ge 2 ] ||
    fail "$*: no two -v lines about $_side's socket buffers within 10 s"
  buffers "$_port"
  kill -INT $_pid
  wait_for $_pid 30
  [ "$waited" -eq 130 ] || fail "$*: exit status $waited after SIGINT"
  cat "$tmpdir/err"
}

# buffers_are OP SIZE WHO: every socket of $tmpdir/buffers has rb and
# tb OP (-eq or -ne) SIZE, the kernel's double of a size set.
buffers_are ()
{
  while read -r _rb _tb; do
    [ "$_rb" "$1" "$2" ] && [ "$_tb" "$1" "$2" ] ||
      fail "$3: rb $_rb tb $_tb, wanted $1 $2"
  done <"$tmpdir/buffers"
}

# The default on TCP: the kernel's.
run "$port" "$tsrc" nbd-evsum -v "$tsrc"
buffers_are -ne $((2 * mib)) "nbd-evsum"
grep -q "^nbd-evsum: .*$tsrc: TCP: socket buffers left to the kernel's autotuning (--socket-buffer sets them)$" "$tmpdir/err" ||
  fail "nbd-evsum: no -v line for the kernel's buffers"
! grep -q "asked for" "$tmpdir/err" || fail "nbd-evsum: set buffers on TCP"

# Asked for: set on TCP too.
run "$port" "$tsrc" nbd-evsum -v --socket-buffer=1536k "$tsrc"
buffers_are -eq $((3 * mib)) "nbd-evsum --socket-buffer=1536k"
grep -q "asked for 1572864 byte socket buffers" "$tmpdir/err" ||
  fail "nbd-evsum --socket-buffer=1536k: no -v line"

# A copy from a Unix socket to TCP: the default on the first only.
run "$dport" destination nbd-evcopy -v "$usrc" "$tdst"
buffers_are -ne $((2 * mib)) "nbd-evcopy"
grep -q "^nbd-evcopy: .*source: asked for 1048576 byte socket buffers" "$tmpdir/err" ||
  fail "nbd-evcopy: the Unix socket did not get the default"
grep -q "^nbd-evcopy: .*destination: TCP: socket buffers left to the kernel's autotuning" "$tmpdir/err" ||
  fail "nbd-evcopy: no -v line for the destination's kernel buffers"
run "$dport" destination nbd-evcopy -v --socket-buffer=1536k "$usrc" "$tdst"
buffers_are -eq $((3 * mib)) "nbd-evcopy --socket-buffer=1536k"
