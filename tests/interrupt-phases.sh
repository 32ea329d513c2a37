#!/usr/bin/env bash
# SIGINT outside the copy's main pass (tests/interrupt.sh has that):
#   - while the program waits for a server's handshake, before any
#     request: both programs stop at once, in one line, status 130,
#     and nbd-evsum prints no digest;
#   - while nbd-evcopy --flush waits for the destination's flush: one
#     line says at once what it waits for; the flush completes, then
#     the program says the destination is complete below its size,
#     status 130, and the destination holds the source;
#   - in nbd-evcopy --verify's pass: status 130, and the program says
#     that the copy itself is complete, which it is;
#   - in a run with --resume: the offset it reports is past the one it
#     resumed from, and its own --resume command completes the copy.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin sh
requires_nbdkit_filter delay
requires_nbdkit_filter log

mib=$((1024 * 1024))
start_nbdkit src pattern 64M
read_back "$src" "$tmpdir/a"
start_nbdkit small pattern 4M
head -c $((4 * mib)) "$tmpdir/a" >"$tmpdir/a4"

# interrupt PID SECONDS: send the program PID SIGINT; it must exit with
# status 130 within SECONDS.  Its stderr, $tmpdir/err, is shown.
interrupt ()
{
  kill -INT "$1"
  wait_for "$1" "$2"
  [ "$waited" -eq 130 ] || fail "exit status $waited after SIGINT, expected 130"
  cat "$tmpdir/err"
}

# While connecting: a source whose every open takes 8 s, and no
# --timeout, so nothing but the signal ends the wait.
start_nbdkit slowopen --filter=log --filter=delay pattern 4M delay-open=8 \
  logfile="$tmpdir/slowopen.log"
start_nbdkit dst memory 64M
env "$mark" nbd-evcopy "$slowopen" "$dst" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/slowopen.log" 'Preconnect id=1 '
interrupt $pid 3
grep -qx "nbd-evcopy: interrupted by SIGINT while starting, before any request was sent" "$tmpdir/err" ||
  fail "nbd-evcopy: not the one line for a signal while connecting"
: >"$tmpdir/slowopen.log"
env "$mark" nbd-evsum "$slowopen" >"$tmpdir/out" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/slowopen.log" 'Preconnect id=[0-9]+ '
interrupt $pid 3
grep -qx "nbd-evsum: interrupted by SIGINT while starting, before any request was sent" "$tmpdir/err" ||
  fail "nbd-evsum: not the one line for a signal while connecting"
[ ! -s "$tmpdir/out" ] || fail "nbd-evsum printed a digest after SIGINT"

# During the final flush: a destination (nbdkit's sh plugin on a file)
# whose flush takes 3 s.
truncate -s 4M "$tmpdir/flush.img"
cat >"$tmpdir/slow-flush.sh" <<EOF
#!/bin/sh
case "\$1" in
  get_size) echo $((4 * mib)) ;;
  can_write | can_flush) exit 0 ;;
  pread) dd if="$tmpdir/flush.img" iflag=skip_bytes,count_bytes skip="\$4" count="\$3" status=none ;;
  pwrite) dd of="$tmpdir/flush.img" oflag=seek_bytes conv=notrunc seek="\$4" status=none ;;
  flush) sleep 3 ;;
  *) exit 2 ;;
esac
EOF
chmod +x "$tmpdir/slow-flush.sh"
start_nbdkit fdst --filter=log sh "$tmpdir/slow-flush.sh" logfile="$tmpdir/fdst.log"
env "$mark" nbd-evcopy --flush "$small" "$fdst" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/fdst.log" ' Flush id='
kill -INT $pid
for _ in $(seq 1 200); do
  [ ! -s "$tmpdir/err" ] || break
  sleep 0.01
done
grep -qx "nbd-evcopy: stopping on SIGINT: waiting for the commands in flight on destination; press Ctrl-C again to stop at once" "$tmpdir/err" ||
  fail "no line at once for a signal during the flush: $(cat "$tmpdir/err")"
alive $pid || fail "the program did not wait for the flush"
wait_for $pid 30
[ "$waited" -eq 130 ] || fail "exit status $waited after SIGINT in the flush"
cat "$tmpdir/err"
grep -q '\.\.\.Flush id=[0-9]* return=0' "$tmpdir/fdst.log" ||
  fail "the flush did not complete"
tail -n 1 "$tmpdir/err" | grep -qx "nbd-evcopy: interrupted by SIGINT after $((4 * mib)) bytes; the destination is complete below offset $((4 * mib))" ||
  fail "not the last line for a signal during the flush"
cmp "$tmpdir/a4" "$tmpdir/flush.img" || fail "the flushed destination differs"
stop_server fdst

# During --verify: a destination whose reads take 200 ms.
start_nbdkit vdst --filter=log --filter=delay memory 4M delay-read=200ms \
  logfile="$tmpdir/vdst.log"
env "$mark" nbd-evcopy --verify "$small" "$vdst" >"$tmpdir/out" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/vdst.log" ' Read id='
interrupt $pid 30
tail -n 1 "$tmpdir/err" | grep -Eqx "nbd-evcopy: interrupted by SIGINT during the verify pass, after [0-9]+ bytes; the copy itself is complete" ||
  fail "not the last line for a signal during --verify"
read_back "$vdst" "$tmpdir/b"
cmp "$tmpdir/a4" "$tmpdir/b" || fail "the copy is said complete, and differs"
stop_server vdst

# In a resumed run: a destination file that holds the source's first
# 16 MiB, served with writes that take 100 ms.
head -c $((16 * mib)) "$tmpdir/a" >"$tmpdir/r.img"
truncate -s 64M "$tmpdir/r.img"
start_nbdkit rdst --filter=log --filter=delay file "$tmpdir/r.img" \
  delay-write=100ms logfile="$tmpdir/rdst.log"
env "$mark" nbd-evcopy --resume=$((16 * mib)) "$src" "$rdst" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/rdst.log" '\.\.\.Write id=[0-9]+ return=0'
interrupt $pid 30
off=$(sed -n 's/.*the destination is complete below offset \([0-9]*\); to copy the rest: .*/\1/p' "$tmpdir/err")
[ -n "$off" ] && [ "$off" -gt $((16 * mib)) ] && [ "$off" -lt $((64 * mib)) ] ||
  fail "the resumed run reports offset '$off'"
cmd=$(sed -n 's/.*; to copy the rest: //p' "$tmpdir/err")
echo "$cmd" | grep -q -- " --resume=$off " || fail "not a command resuming at $off: $cmd"
eval "$cmd" || fail "the second resumed run failed: $cmd"
cmp "$tmpdir/a" "$tmpdir/r.img" || fail "the twice resumed copy differs"
