#!/usr/bin/env bash
# A server that is slow but keeps answering never trips --timeout,
# however long the whole run takes: every reply comes within 0.25 s of
# the last, the whole run takes several times the 1 s timeout, and the
# result is right.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_filter delay

# 8 requests one at a time, 0.25 s each way: about 4 s for a copy.
start_nbdkit src --filter=delay pattern 8M delay-read=250ms
for prog in copy-libev zero-extent-copy-libev; do
  start_nbdkit dst --filter=delay memory 8M delay-write=250ms
  start=$(date +%s)
  $prog --timeout=1 --requests=1 "$src" "$dst" || fail "$prog timed out"
  echo "$prog took $(( $(date +%s) - start )) s"
  read_back "$src" "$tmpdir/a"
  read_back "$dst" "$tmpdir/b"
  cmp "$tmpdir/a" "$tmpdir/b" || fail "$prog copied wrongly"
  stop_server dst
done
check_blkhash "$src" --timeout=1 --requests=1
