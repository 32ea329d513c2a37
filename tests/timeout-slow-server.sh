#!/usr/bin/env bash
# A server that is slow but keeps answering never trips --timeout,
# however long the whole run takes: every reply comes within 0.25 s of
# the last, the whole run takes several times the 1 s timeout, and the
# result is right.  Slow block status before the copy, and a slow close
# after it, are covered too.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_filter delay

# The cases spend their time waiting for delayed replies, each from
# servers of its own: they wait at once.  Every server is started here,
# where cleanup knows it; each case runs in the background, where a
# failure ends its subshell, and the test waits for every one.
pids=

# 8 requests one at a time, 0.25 s each way: about 4 s for a copy.
for n in 1 2 3 4; do
  start_nbdkit src$n --filter=delay pattern 8M delay-read=250ms
done
start_nbdkit ref pattern 8M
read_back "$ref" "$tmpdir/a"

# slow_copy N PROG...: PROG (the program and its options) copies srcN
# onto a new dstN one request at a time, and the copy is exact.
slow_copy ()
{
  _n=$1; shift
  eval "_src=\$src$_n _dst=\$dst$_n"
  t0=$(date +%s.%N)
  "$@" --timeout=1 --requests=1 "$_src" "$_dst" || fail "$* timed out"
  t1=$(date +%s.%N)
  # The run must outlast the timeout several times over, or it shows
  # nothing (the requests were not one at a time, or not delayed); the
  # upper bound is wide, for a loaded machine.
  awk -v a="$t0" -v b="$t1" -v p="$*" 'BEGIN { t = b - a; printf "%s: took %.2f s\n", p, t; exit !(t >= 3 && t < 60) }' ||
    fail "$*: the copy did not take 3 to 60 s"
  read_back "$_dst" "$tmpdir/b$_n"
  cmp "$tmpdir/a" "$tmpdir/b$_n" || fail "$* copied wrongly"
}
start_nbdkit dst1 --filter=delay memory 8M delay-write=250ms
slow_copy 1 nbd-evcopy --no-extents --no-sparse &
pids="$pids $!"
start_nbdkit dst2 --filter=delay memory 8M delay-write=250ms
slow_copy 2 nbd-evcopy &
pids="$pids $!"
check_blkhash "$src3" --timeout=1 --requests=1 &
pids="$pids $!"

# A destination whose block status takes 1 s a reply: the zero scan
# before the copy takes 3 s of 1 s replies (one for each 4 GiB, less
# 64 KiB, that a reply may describe), longer than the timeout, which
# is no reason to time out once the copy starts.
start_nbdkit sparse data '1' size=8G
start_nbdkit slowext --filter=delay memory 8G delay-extents=1
{
  nbd-evcopy --timeout=2 "$sparse" "$slowext" ||
    fail "a slow zero scan made the copy time out"
} &
pids="$pids $!"

# A server that takes 10 s to close the connection: the copy is done,
# so the program waits at most the timeout for the goodbye.
start_nbdkit slowclose --filter=delay memory 8M delay-close=10
{
  start=$(date +%s)
  nbd-evcopy --no-extents --no-sparse --timeout=1 "$src4" "$slowclose" ||
    fail "nbd-evcopy failed"
  [ $(( $(date +%s) - start )) -lt 8 ] || fail "nbd-evcopy waited for a slow close"
} &
pids="$pids $!"

for p in $pids; do
  wait "$p" || fail "a case failed (its message is above)"
done
# The slow close is still going on in its server, which would hold the
# end of the test until its 10 s are up: nothing is left to see there.
kill -KILL "$(cat "$tmpdir/slowclose.pid")"
