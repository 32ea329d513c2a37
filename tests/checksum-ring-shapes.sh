#!/usr/bin/env bash
# The digest does not depend on how the ring is shaped: one request or
# many, small or large requests, a request size that is not a power of
# two, block sizes above the default request size, and --progress.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3

start_nbdkit sr sparse-random 12000000 seed=7 percent=50 runlength=400000

check_blkhash "$sr" --requests=1
check_blkhash "$sr" --requests=3 --request-size=192k
check_blkhash "$sr" --requests=64 --request-size=64k
check_blkhash "$sr" --requests=2 --request-size=32M
check_blkhash "$sr" --block-size=4194304

# nbdkit sparse-random makes up its data per request, and requests below
# 4 KiB get different bytes (nbdcopy refuses them for that reason).  For
# the smallest requests, serve a copy from a file: nbdcopy keeps the
# holes, and the file plugin reports them through block status.
nbdcopy -- "$sr" "$tmpdir/sr.img" || fail "cannot copy $sr"
start_nbdkit file file "$tmpdir/sr.img"
check_blkhash "$file" --block-size=512 --request-size=512 --requests=16
check_blkhash "$file" --block-size=1024 --request-size=3k
check_blkhash "$sr" --progress

# The status too: output to a file, not through a pipe that drops it.
nbd-evsum --help >"$tmpdir/out" || fail "--help failed"
grep -q '^Usage: nbd-evsum' "$tmpdir/out" || fail "--help"
nbd-evsum --version >"$tmpdir/out" || fail "--version failed"
grep -q '^nbd-evsum ' "$tmpdir/out" || fail "--version"
