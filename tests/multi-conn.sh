#!/usr/bin/env bash
# Several connections per server (-C, --connections): exact copies with
# 1, 2, 4 and 8 connections and odd request counts, into a destination
# that checks every write (nbdkit's checkwrite filter) and into memory;
# the digest of tests/blkhash-ref.py from nbd-evsum whatever the number;
# the default (2 to start with) to a server that advertises multi-conn
# and 1 to one that does not, counted by nbdkit's log filter; -C 2
# refused for a destination without multi-conn; fewer connections, not a
# failure, from a server that limits them; and an error on one
# connection named in the message.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_filter checkwrite
requires_nbdkit_filter log
requires_nbdkit_filter multi-conn
requires_nbdkit_filter limit
requires_nbdkit_filter error

size=$((16 * 1024 * 1024 + 4096))
start_nbdkit src pattern $size
start_nbdkit sparse data '1 @1048576 1 @8388608 "hello"' size=$size
read_back "$src" "$tmpdir/src.img"
want=$(blkhash_ref "$tmpdir/src.img")

for n in 1 2 4 8; do
  for r in 3 7 16; do
    # checkwrite serves the pattern too and fails any write that differs.
    start_nbdkit chk --filter=checkwrite pattern $size
    nbd-evcopy --no-extents --no-sparse -C $n --requests=$r "$src" "$chk" ||
      fail "nbd-evcopy --no-extents --no-sparse -C $n --requests=$r"
    nbd-evcopy -C $n --requests=$r "$src" "$chk" ||
      fail "nbd-evcopy -C $n --requests=$r"
    stop_server chk
  done
  start_nbdkit mem memory $size
  nbd-evcopy -C $n --requests=5 "$sparse" "$mem" || fail "sparse -C $n"
  read_back "$sparse" "$tmpdir/a"
  read_back "$mem" "$tmpdir/b"
  cmp "$tmpdir/a" "$tmpdir/b" || fail "nbd-evcopy -C $n copied wrongly"
  stop_server mem
  got=$(digest_of nbd-evsum -C $n --requests=5 "$src") ||
    fail "nbd-evsum -C $n failed"
  [ "$got" = "$want" ] || fail "nbd-evsum -C $n: $got, expected $want"
done

# connections LOGFILE: how many connections the server saw.
connections ()
{
  grep -c ' Connect ' "$1"
}

start_nbdkit lsrc --filter=log pattern 16M logfile="$tmpdir/src.log"
start_nbdkit ldst --filter=log memory 16M logfile="$tmpdir/dst.log"
# The default: 2 to start with, whatever the CPUs; against servers that
# answer at once no more (tests/connections-adapt.sh has the others).
want=2
nbd-evcopy --no-extents --no-sparse -v "$lsrc" "$ldst" 2>"$tmpdir/v"
grep -q "source: $want connections (the server advertises multi-conn; more if they bring more rate)" "$tmpdir/v" ||
  fail "no -v line for the default"
[ "$(connections "$tmpdir/src.log")" -eq $want ] || fail "source: not $want connections"
[ "$(connections "$tmpdir/dst.log")" -eq $want ] || fail "destination: not $want connections"
# Asked for, four it is.
stop_server lsrc
rm "$tmpdir/src.log"
start_nbdkit lsrc --filter=log pattern 16M logfile="$tmpdir/src.log"
nbd-evcopy --no-extents --no-sparse -C 4 "$lsrc" "$ldst"
[ "$(connections "$tmpdir/src.log")" -eq 4 ] || fail "-C 4: not 4 connections"

start_nbdkit nsrc --filter=log --filter=multi-conn pattern 16M \
  multi-conn-mode=disable logfile="$tmpdir/nsrc.log"
start_nbdkit ndst --filter=log --filter=multi-conn memory 16M \
  multi-conn-mode=disable logfile="$tmpdir/ndst.log"
nbd-evcopy --no-extents --no-sparse -v "$nsrc" "$ndst" 2>"$tmpdir/v"
grep -q 'destination: 1 connection (the server does not advertise multi-conn)' "$tmpdir/v" ||
  fail "no -v line for a server without multi-conn"
[ "$(connections "$tmpdir/nsrc.log")" -eq 1 ] || fail "source without multi-conn: not 1"
[ "$(connections "$tmpdir/ndst.log")" -eq 1 ] || fail "destination without multi-conn: not 1"
expect_error "the server does not advertise multi-conn" \
  nbd-evcopy --no-extents --no-sparse -C 2 "$src" "$ndst"
# A source is only read, but the protocol still says a client SHOULD
# NOT multiplex over several connections without multi-conn: one, and
# a -v line saying why.
: >"$tmpdir/nsrc.log"
nbd-evcopy --no-extents --no-sparse -v -C 2 "$nsrc" "$ldst" 2>"$tmpdir/v" ||
  fail "-C 2 from a source without multi-conn"
grep -q 'source: 1 connection (not the ones asked for: the server does not advertise multi-conn)' \
  "$tmpdir/v" || fail "no -v line for -C 2 turned into one connection"
[ "$(connections "$tmpdir/nsrc.log")" -eq 1 ] ||
  fail "-C 2 from a source without multi-conn: not 1 connection"

# A server that takes one connection at a time: one, and a -v line.
start_nbdkit one --filter=limit pattern 16M limit=1
nbd-evcopy --no-extents --no-sparse -v "$one" "$ldst" 2>"$tmpdir/v" ||
  fail "copy from a limited server"
grep -q 'going on with fewer connections' "$tmpdir/v" || fail "no -v line for refused connections"

# An error on the connections: the message names the connection.
start_nbdkit bad --filter=error pattern 16M error-pread=EIO error-pread-rate=100%
expect_error "read failed at offset" \
  nbd-evcopy --no-extents --no-sparse -C 4 "$bad" "$ldst"
grep -Eq '^nbd-evcopy: source connection [1-4]: read failed at offset [0-9]+ length [0-9]+: Input/output error$' \
  "$tmpdir/err" || fail "the message does not name the connection"

# qemu-nbd --shared=2 advertises multi-conn but takes two clients at a
# time: it stops accepting, and the kernel completes the third connect
# anyway, so that connection never gets its greeting.  It is given up
# after its handshake time and the copy goes on with two.
requires qemu-nbd
truncate -s 16M "$tmpdir/q.raw"
start_qemu_nbd q -r -f raw --shared=2 "$tmpdir/q.raw"
start=$(date +%s)
nbd-evcopy --no-extents --no-sparse -v -C 3 --timeout=1 "$q" "$ldst" \
  2>"$tmpdir/v" ||
  { cat "$tmpdir/v"; fail "copy from qemu-nbd with -C 3 failed"; }
grep -q 'source connection 3: no NBD handshake within 1 s; going on with fewer connections' "$tmpdir/v" ||
  { cat "$tmpdir/v"; fail "no -v line for the connection qemu-nbd did not greet"; }
[ $(( $(date +%s) - start )) -lt 10 ] || fail "the extra connection held the copy up"
