#!/usr/bin/env bash
# SIGINT and SIGTERM stop a program cleanly: one line says at once what
# it waits for, the commands in flight finish, one line says what was
# done, and the exit status is 128 + the signal number.  For nbd-evcopy
# every byte below the offset it reports reads back equal to the
# source, and the command it prints copies the rest.  nbd-evsum prints
# no digest and names the image.  A second signal ends the program at
# once, and still says the offset.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_filter delay

# Writes take 200 ms each: a 128 MiB copy takes seconds, not a fraction of one.
# nbdkit's log filter, outside the delay, records each write as it
# arrives and as it completes: the signal comes once one has completed,
# so that some of the destination is done.
start_nbdkit src pattern 128M
read_back "$src" "$tmpdir/a"
# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  for sig in INT TERM; do
    rm -f "$tmpdir/dst.log"
    start_nbdkit dst --filter=log --filter=delay memory 128M \
      delay-write=200ms logfile="$tmpdir/dst.log"
    env "$mark" $prog "$src" "$dst" 2>"$tmpdir/err" &
    pid=$!
    wait_log "$tmpdir/dst.log" '\.\.\.Write id=[0-9]+ return=0'
    kill -$sig $pid
    wait_for $pid 60
    status=$waited
    cat "$tmpdir/err"
    want=$([ $sig = INT ] && echo 130 || echo 143)
    [ $status -eq "$want" ] || fail "$prog: exit status $status after SIG$sig, expected $want"
    [ "$(wc -l <"$tmpdir/err")" -eq 2 ] || fail "$prog: not two lines"
    again=$([ $sig = INT ] && echo "press Ctrl-C" || echo "send it")
    head -n 1 "$tmpdir/err" | grep -Eqx "nbd-evcopy: stopping on SIG$sig: waiting for the [0-9]+ requests in flight; $again again to stop at once" ||
      fail "$prog: no line at once for the first signal"
    off=$(sed -n "s/^nbd-evcopy: interrupted by SIG$sig after [0-9]* bytes; the destination is complete below offset \\([0-9]*\\); to copy the rest: .*/\\1/p" "$tmpdir/err")
    [ -n "$off" ] || fail "$prog: no offset reported"
    [ "$off" -gt 0 ] && [ "$off" -lt $((128 * 1024 * 1024)) ] || fail "$prog: offset $off"
    read_back "$dst" "$tmpdir/b"
    cmp -n "$off" "$tmpdir/a" "$tmpdir/b" || fail "$prog: bytes below $off differ"
    # The command printed copies the rest: once, it is the whole copy.
    cmd=$(sed -n 's/.*; to copy the rest: //p' "$tmpdir/err")
    echo "$cmd" | grep -q -- " --resume=$off " || fail "$prog: $cmd"
    if [ $sig = INT ]; then
      eval "$cmd" || fail "$prog: the resumed copy failed: $cmd"
      read_back "$dst" "$tmpdir/b"
      cmp "$tmpdir/a" "$tmpdir/b" || fail "$prog: the resumed copy differs"
    fi
    # The server is still there and answers.
    nbdcopy -- "$dst" null: || fail "$prog left the destination server dead"
    stop_server dst
  done
done

# nbd-evsum: no digest on stdout.
start_nbdkit slow --filter=log --filter=delay pattern 128M delay-read=200ms \
  logfile="$tmpdir/slow.log"
env "$mark" nbd-evsum "$slow" >"$tmpdir/out" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/slow.log" ' Read id='
kill -INT $pid
wait_for $pid 60
status=$waited
cat "$tmpdir/err"
[ $status -eq 130 ] || fail "nbd-evsum: exit status $status"
[ ! -s "$tmpdir/out" ] || fail "nbd-evsum printed a digest"
grep -Fqx "nbd-evsum: interrupted by SIGINT after hashing $(sed -n 's/.*after hashing \([0-9]*\) of.*/\1/p' "$tmpdir/err") of 134217728 bytes of $slow; no digest" "$tmpdir/err" ||
  fail "nbd-evsum: unexpected message"

# A second signal while the commands in flight drain: each write now
# takes 3 s, so the first SIGINT, once a write is in flight, leaves the
# copy waiting for them, and the second must end it at once.  The
# second comes once the program has said it is draining (its first
# line), not after a guess at how long that takes.
start_nbdkit stuck --filter=log --filter=delay memory 128M delay-write=3 \
  logfile="$tmpdir/stuck.log"
env "$mark" nbd-evcopy --no-extents --no-sparse "$src" "$stuck" \
  2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/stuck.log" ' Write id='
kill -INT $pid
wait_log "$tmpdir/err" '^nbd-evcopy: stopping on SIGINT: '
t0=$(date +%s.%N)
kill -INT $pid
wait_for $pid 60
status=$waited
t1=$(date +%s.%N)
cat "$tmpdir/err"
[ $status -eq 130 ] || fail "exit status $status after two SIGINTs"
grep -q "^nbd-evcopy: interrupted again by SIGINT: exiting at once after [0-9]* bytes; the destination is complete below offset [0-9]*; to copy the rest: " "$tmpdir/err" ||
  fail "no message, with the offset, for the second SIGINT"
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 1) }' ||
  fail "the second SIGINT did not end the program at once"
