#!/usr/bin/env bash
# A flush that fails is an error, not a warning: with --flush and a
# destination whose flush fails with EIO (an nbdkit sh plugin script
# over a file), nbd-evcopy --no-extents --no-sparse exits non-zero with
# one line that says so, after every write has been made, and still
# disconnects cleanly.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin sh
requires_nbdkit_plugin random

size=$((4 * 1024 * 1024))
start_nbdkit src random $size seed=10
fill_file "$tmpdir/dst.img" $size 252

faulty_file_plugin "$tmpdir/dst.sh" "$tmpdir/dst.img" $size flush
start_nbdkit dst -v sh "$tmpdir/dst.sh" 2>"$tmpdir/dst.err"

expect_error "destination: flush failed: Input/output error" \
  nbd-evcopy --no-extents --no-sparse --flush "$src" "$dst"
# It still leaves the server with a clean disconnect (NBD_CMD_DISC).
for i in $(seq 50); do
  grep -a -q 'client sent NBD_CMD_DISC' "$tmpdir/dst.err" && break
  sleep 0.1
done
grep -a -q 'client sent NBD_CMD_DISC' "$tmpdir/dst.err" ||
  fail "no NBD_CMD_DISC after the failed flush"

# The flush was sent only after every write had returned, so the
# destination already holds the whole copy.
read_back "$src" "$tmpdir/src.img"
read_back "$dst" "$tmpdir/dst-read.img"
cmp "$tmpdir/src.img" "$tmpdir/dst-read.img" || fail "writes are missing"

# Without --flush the same destination works: only the flush failed.
nbd-evcopy --no-extents --no-sparse "$src" "$dst"
