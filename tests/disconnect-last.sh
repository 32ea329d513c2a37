#!/usr/bin/env bash
# A client "SHOULD wait until there are no inflight requests" before
# NBD_CMD_DISC (the NBD protocol): a read fails while a block-status
# command is still in flight, and every program that reads extents
# waits for its reply before it disconnects.  The source is an nbdkit sh
# plugin whose first extents reply comes at once and covers 1 MiB, whose
# later ones take half a second, and whose read at offset 0 fails;
# nbdkit -v records the order, and the server must still be alive.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin sh

cat >"$tmpdir/slow.sh" <<'EOF2'
#!/bin/sh
case "$1" in
  thread_model) echo parallel ;;
  get_size) echo 33554432 ;;
  can_extents) exit 0 ;;
  pread) if [ "$4" -eq 0 ]; then echo "EIO injected read error" >&2; exit 1; fi
         head -c "$3" /dev/zero ;;
  extents) [ "$4" -eq 0 ] || sleep 0.5
           echo "$4 1048576 0" ;;
  *) exit 2 ;;
esac
EOF2
chmod +x "$tmpdir/slow.sh"

for prog in zero-extent-copy-libev checksum-libev nbd-evcopy nbd-evsum; do
  # nbdkit -v says when the plugin's extents start and complete, and
  # when the client's NBD_CMD_DISC arrives.
  start_nbdkit src -v sh "$tmpdir/slow.sh" 2>"$tmpdir/src.err"
  start_nbdkit dst memory 32M
  case $prog in
    *copy*) expect_error "read failed at offset 0" $prog "$src" "$dst" ;;
    *) expect_error "read failed at offset 0" $prog "$src" ;;
  esac
  for i in $(seq 50); do
    grep -a -q 'client sent NBD_CMD_DISC' "$tmpdir/src.err" && break
    sleep 0.1
  done
  grep -a -n 'client sent NBD_CMD_DISC\|slow.sh extents' "$tmpdir/src.err" |
    sed -n '/NBD_CMD_DISC/q;p' >"$tmpdir/before"
  grep -a -q 'client sent NBD_CMD_DISC' "$tmpdir/src.err" ||
    fail "$prog: no NBD_CMD_DISC"
  sent=$(grep -c 'calling: .*extents' "$tmpdir/before")
  replied=$(grep -c 'completed: .*extents' "$tmpdir/before")
  [ "$sent" -ge 2 ] || fail "$prog: only $sent block status: the test shows nothing"
  [ "$sent" = "$replied" ] ||
    fail "$prog: NBD_CMD_DISC with $((sent - replied)) block status in flight"
  alive "$(cat "$tmpdir/src.pid")" || fail "$prog: the source server died"
  stop_server src dst
done
