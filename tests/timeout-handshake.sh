#!/usr/bin/env bash
# The handshake happens inside the loop and is covered by --timeout: a
# TCP peer that accepts the connection and never speaks times out with a
# clear message, where nbd_connect_uri would block for ever; a peer that
# answers with garbage is refused at once.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit

start_nbdkit dst memory 1M

# listener MODE: a peer on 127.0.0.1 that accepts connections and says
# nothing (silent) or sends bytes that are not NBD (garbage).  It exits
# by itself after 30 s.  Sets $peer to its URI.
listener ()
{
  _port=$(free_port)
  python3 - "$1" "$_port" <<'PY' &
import socket, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(8)
s.settimeout(30)
held = []
end = time.time() + 30
try:
    while time.time() < end:
        c, _ = s.accept()
        if mode == "garbage":
            c.sendall(b"HTTP/1.0 200 OK\r\n\r\nthis is not NBD\r\n" * 8)
        held.append(c)
except OSError:
    pass
PY
  server_pids="$server_pids $!"
  peer="nbd://127.0.0.1:$_port"
  for _ in $(seq 1 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $_port)).close()" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "the listener did not start"
}

listener silent
# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy nbd-evsum; do
  if [ "$prog" = nbd-evsum ]; then
    msg="$prog: $peer: no NBD handshake within 1 s"
    args=("$peer")
  else
    msg="nbd-evcopy: source: no NBD handshake from $peer within 1 s"
    args=("$peer" "$dst")
  fi
  start=$(date +%s)
  expect_error "$msg" $prog --timeout=1 "${args[@]}"
  [ $(( $(date +%s) - start )) -lt 10 ] || fail "$prog took too long"
done

listener garbage
start=$(date +%s)
expect_error "cannot connect" nbd-evsum --timeout=20 "$peer"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "garbage was not refused at once"
