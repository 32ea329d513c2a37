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

# The cases but the last spend most of their time waiting for delayed
# writes or reads, each on servers of its own: they wait at once.  Their
# servers are started in the test's shell, where cleanup knows them;
# each case runs in the background, where a failure ends its subshell,
# and the test waits for every one.  A copy case prefixes the lines of
# its program's stderr with its number.
pids=

# Writes take 200 ms each: a 128 MiB copy takes seconds, not a fraction of one.
# nbdkit's log filter, outside the delay, records each write as it
# arrives and as it completes: the signal comes once one has completed,
# so that some of the destination is done.  The four copies read one
# source, which each leaves with no reply pending (nbdkit 1.32 may abort
# when a client leaves with replies pending).
start_nbdkit src pattern 128M
read_back "$src" "$tmpdir/a"

# interrupted N PROG SIG: PROG (the program and its options) copies src
# onto dstN and is stopped by SIG once a write has completed.
interrupted ()
{
  _n=$1 _prog=$2 _sig=$3
  eval "_dst=\$dst$_n"
  # $_prog is split on purpose: the program and its options.
  env "$mark" $_prog "$src" "$_dst" 2>"$tmpdir/err$_n" &
  _pid=$!
  wait_log "$tmpdir/dst$_n.log" '\.\.\.Write id=[0-9]+ return=0'
  kill -$_sig $_pid
  wait_for $_pid 60
  _status=$waited
  sed "s/^/[$_n] /" "$tmpdir/err$_n"
  _want=$([ $_sig = INT ] && echo 130 || echo 143)
  [ $_status -eq "$_want" ] || fail "$_prog: exit status $_status after SIG$_sig, expected $_want"
  [ "$(wc -l <"$tmpdir/err$_n")" -eq 2 ] || fail "$_prog: not two lines"
  _again=$([ $_sig = INT ] && echo "press Ctrl-C" || echo "send it")
  head -n 1 "$tmpdir/err$_n" | grep -Eqx "nbd-evcopy: stopping on SIG$_sig: waiting for the [0-9]+ requests in flight; $_again again to stop at once" ||
    fail "$_prog: no line at once for the first signal"
  _off=$(sed -n "s/^nbd-evcopy: interrupted by SIG$_sig after [0-9]* bytes; the destination is complete below offset \\([0-9]*\\); to copy the rest: .*/\\1/p" "$tmpdir/err$_n")
  [ -n "$_off" ] || fail "$_prog: no offset reported"
  [ "$_off" -gt 0 ] && [ "$_off" -lt $((128 * 1024 * 1024)) ] || fail "$_prog: offset $_off"
  read_back "$_dst" "$tmpdir/b$_n"
  cmp -n "$_off" "$tmpdir/a" "$tmpdir/b$_n" || fail "$_prog: bytes below $_off differ"
  # The command printed copies the rest: once, it is the whole copy.
  _cmd=$(sed -n 's/.*; to copy the rest: //p' "$tmpdir/err$_n")
  echo "$_cmd" | grep -q -- " --resume=$_off " || fail "$_prog: $_cmd"
  if [ $_sig = INT ]; then
    eval "$_cmd" || fail "$_prog: the resumed copy failed: $_cmd"
    read_back "$_dst" "$tmpdir/b$_n"
    cmp "$tmpdir/a" "$tmpdir/b$_n" || fail "$_prog: the resumed copy differs"
  fi
  # The server is still there and answers.
  nbdcopy -- "$_dst" null: || fail "$_prog left the destination server dead"
}

n=0
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  for sig in INT TERM; do
    n=$((n + 1))
    start_nbdkit dst$n --filter=log --filter=delay memory 128M \
      delay-write=200ms logfile="$tmpdir/dst$n.log"
    interrupted $n "$prog" $sig &
    pids="$pids $!"
  done
done

# nbd-evsum: no digest on stdout.
start_nbdkit slow --filter=log --filter=delay pattern 128M delay-read=200ms \
  logfile="$tmpdir/slow.log"
{
  env "$mark" nbd-evsum "$slow" >"$tmpdir/sum.out" 2>"$tmpdir/sum.err" &
  pid=$!
  wait_log "$tmpdir/slow.log" ' Read id='
  kill -INT $pid
  wait_for $pid 60
  status=$waited
  cat "$tmpdir/sum.err"
  [ $status -eq 130 ] || fail "nbd-evsum: exit status $status"
  [ ! -s "$tmpdir/sum.out" ] || fail "nbd-evsum printed a digest"
  grep -Fqx "nbd-evsum: interrupted by SIGINT after hashing $(sed -n 's/.*after hashing \([0-9]*\) of.*/\1/p' "$tmpdir/sum.err") of 134217728 bytes of $slow; no digest" "$tmpdir/sum.err" ||
    fail "nbd-evsum: unexpected message"
} &
pids="$pids $!"

for p in $pids; do
  wait "$p" || fail "a case failed (its message is above)"
done

# A second signal while the commands in flight drain: each write now
# takes 6 s, so the first SIGINT, once a write is in flight, leaves the
# copy waiting for them, and the second must end it at once: within
# 3 s, half the wait, as a loaded machine (the sanitizer build, whose
# exit checks for leaks) may take a second or more to exit.  The
# second comes once the program has said it is draining (its first
# line), not after a guess at how long that takes.  This case runs
# alone, after the others: "at once" is timed.
start_nbdkit stuck --filter=log --filter=delay memory 128M delay-write=6 \
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
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 3) }' ||
  fail "the second SIGINT did not end the program at once"
# The stuck server still sleeps in the writes of the copy that left at
# once, which would hold the end of the test: nothing is left to see.
kill -KILL "$(cat "$tmpdir/stuck.pid")"
