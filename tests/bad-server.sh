#!/usr/bin/env bash
# Servers that break the protocol (tests/bad-server.py, one fault per
# server): nbd-evsum and nbd-evcopy either stop in one line naming the
# server, with status 1, in seconds, having written into the
# destination nothing but the source's bytes, or, where libnbd lets the
# fault pass (a reply flag it does not know, a block status extent of
# length 0 or past the image's end), give the exact digest and copy.
# Exact is what a correct client reads (bad-server.py --image): where
# a read's reply says hole over what block status calls data, zeroes.
#   cookie, chunk-offset, chunk-oversize, cut-chunk: libnbd drops the
#     connection, and the message says so with libnbd's reason;
#   wrong-chunk: a read answered with a block status chunk, refused
#     by libnbd as a reply that does not fit its command;
#   handshake: the greeting and nothing more, "cannot connect";
#   handshake-stop: the greeting, then silence: --timeout ends the
#     wait for the handshake, as it ends the wait for a reply;
#   second-size: a second connection (-C 2, multi-conn advertised)
#     that says the image has another size is refused, naming both.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy

size=$((4 * 1024 * 1024))
# expect FAULT: the image a correct client reads from the server with
# FAULT into $tmpdir/expected, and its digest in $want.
expect ()
{
  python3 "$abs_top_srcdir/tests/bad-server.py" --image "$1" "$tmpdir/expected" ||
    fail "bad-server.py --image $1 failed"
  want=$(blkhash_ref "$tmpdir/expected") || fail "no reference digest"
}

# bad FAULT: the server with FAULT on $tmpdir/FAULT.sock, in $bad.
bad ()
{
  python3 "$abs_top_srcdir/tests/bad-server.py" "$tmpdir/$1.sock" "$1" &
  echo $! >"$tmpdir/$1.pid"
  server_pids="$server_pids $!"
  for _ in $(seq 1 200); do
    [ -S "$tmpdir/$1.sock" ] && break
    sleep 0.02
  done
  [ -S "$tmpdir/$1.sock" ] || fail "bad-server.py $1 did not start"
  bad="nbd+unix:///?socket=$tmpdir/$1.sock"
}

# refused FAULT TEXT OPTIONS...: both programs fail with one line
# holding TEXT; the copy wrote only the source's bytes.
refused ()
{
  _f=$1 _text=$2; shift 2
  expect "$_f"
  bad "$_f"
  expect_error "$_text" timeout 60 nbd-evsum --timeout=5 "$@" "$bad"
  grep -q "^nbd-evsum: $bad" "$tmpdir/err" || fail "$_f: the message names another image"
  start_nbdkit dst memory $size
  expect_error "$_text" timeout 60 nbd-evcopy --timeout=5 "$@" "$bad" "$dst"
  grep -q "^nbd-evcopy: source" "$tmpdir/err" || fail "$_f: the message does not name the source"
  read_back "$dst" "$tmpdir/got"
  python3 - "$tmpdir/got" "$tmpdir/expected" <<'PY' || fail "$_f: the destination holds bytes that are not the source's"
import sys
got, src = (open(p, "rb").read() for p in sys.argv[1:])
bad = next((i for i in range(0, len(got), 4096)
            if got[i:i + 4096] not in (src[i:i + 4096], bytes(len(got[i:i + 4096])))), None)
if bad is not None:
    sys.exit("block at %d" % bad)
PY
  stop_server dst
  echo "ok: $_f refused: $(cat "$tmpdir/err")"
}

# passed FAULT OPTIONS...: both programs give the exact result.
passed ()
{
  _f=$1; shift
  expect "$_f"
  bad "$_f"
  _got=$(timeout 60 nbd-evsum --timeout=5 "$@" "$bad") || fail "$_f: nbd-evsum failed"
  [ "$_got" = "$want  $bad" ] || fail "$_f: nbd-evsum printed '$_got'"
  start_nbdkit dst memory $size
  timeout 60 nbd-evcopy --timeout=5 "$@" "$bad" "$dst" || fail "$_f: nbd-evcopy failed"
  read_back "$dst" "$tmpdir/got"
  cmp "$tmpdir/expected" "$tmpdir/got" || fail "$_f: the copy differs"
  stop_server dst
  echo "ok: $_f passed, exact"
}

passed none
refused cookie "connection lost: nbd_aio_notify_read: no matching cookie"
refused chunk-offset "structured reply is out of bounds"
refused chunk-oversize "structured reply is out of bounds"
refused cut-chunk "connection lost"
refused wrong-chunk "connection lost: nbd_aio_notify_read: invalid command for receiving block-status chunk"
refused handshake "cannot connect"
refused handshake-stop "no NBD handshake" --timeout=1
refused second-size "connection 2: the server says the image is $((size + 4096)) bytes, where" -C 2
passed reply-flags
passed extent-zero
passed extent-past-end
passed hole
