#!/usr/bin/env bash
# A server that is slow but keeps answering never trips --timeout,
# however long the whole run takes: every reply comes within 0.25 s of
# the last, the whole run takes several times the 1 s timeout, and the
# result is right.  Slow block status before the copy, and a slow close
# after it, are covered too.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_filter delay

# 8 requests one at a time, 0.25 s each way: about 4 s for a copy.
start_nbdkit src --filter=delay pattern 8M delay-read=250ms
read_back "$src" "$tmpdir/a"
# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  start_nbdkit dst --filter=delay memory 8M delay-write=250ms
  t0=$(date +%s.%N)
  $prog --timeout=1 --requests=1 "$src" "$dst" || fail "$prog timed out"
  t1=$(date +%s.%N)
  # The run must outlast the timeout several times over, or it shows
  # nothing (the requests were not one at a time, or not delayed); the
  # upper bound is wide, for a loaded machine.
  awk -v a="$t0" -v b="$t1" 'BEGIN { t = b - a; printf "took %.2f s\n", t; exit !(t >= 3 && t < 60) }' ||
    fail "$prog: the copy did not take 3 to 60 s"
  read_back "$dst" "$tmpdir/b"
  cmp "$tmpdir/a" "$tmpdir/b" || fail "$prog copied wrongly"
  stop_server dst
done
check_blkhash "$src" --timeout=1 --requests=1

# A destination whose block status takes 1 s a reply: the zero scan
# before the copy takes 3 s of 1 s replies (one for each 4 GiB, less
# 64 KiB, that a reply may describe), longer than the timeout, which
# is no reason to time out once the copy starts.
start_nbdkit sparse data '1' size=8G
start_nbdkit slowext --filter=delay memory 8G delay-extents=1
nbd-evcopy --timeout=2 "$sparse" "$slowext" ||
  fail "a slow zero scan made the copy time out"

# A server that takes 10 s to close the connection: the copy is done,
# so the program waits at most the timeout for the goodbye.
start_nbdkit slowclose --filter=delay memory 8M delay-close=10
start=$(date +%s)
nbd-evcopy --no-extents --no-sparse --timeout=1 "$src" "$slowclose" ||
  fail "nbd-evcopy failed"
[ $(( $(date +%s) - start )) -lt 8 ] || fail "nbd-evcopy waited for a slow close"
