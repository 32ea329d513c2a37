#!/usr/bin/env bash
# The fallbacks: a source without base:allocation copies everything as
# data, a destination without zero support gets buffers of zeroes
# written, and a failing block status is read as data with a message
# under -v.  Each copy must read back equal to its source.  The commands
# are counted by nbdkit's log filter on the servers, not taken from
# what the program says it sent.
source "$abs_top_srcdir/tests/functions.sh"
source "$abs_top_srcdir/tests/zero-functions.sh"
requires nbdkit nbdcopy

data='1 @8388607 1 @16777216 1'
size=16777217
start_nbdkit src data "$data"
read_back "$src" "$tmpdir/src.raw"

# check NAME: the destination NAME reads back equal to the source.
check ()
{
  eval "read_back \"\$$1\" \"\$tmpdir/\$1.raw\""
  cmp "$tmpdir/src.raw" "$tmpdir/$1.raw" || fail "$1: contents differ"
}

# sent LOGFILE: the counts of the data commands a server was sent.
sent ()
{
  echo "$(log_count "$1" Extents) block status," \
       "$(log_count "$1" Read) reads, $(log_count "$1" Write) writes," \
       "$(log_count "$1" Zero) zeroes"
}

# No structured replies (--no-sr), so no block status: 65 reads of the
# whole image (256 KiB each, fixed so that the counts are exact), and
# the all-zero buffers become zero commands, since the destination's
# block status (noextents) says it is all data.  nbdkit answers that
# block status itself, above the filters, where a plugin has no
# extents: the log counts none.
start_nbdkit nosr --no-sr --filter=log data "$data" logfile="$tmpdir/nosr.log"
start_nbdkit d1 --filter=log --filter=noextents memory $size \
  logfile="$tmpdir/d1.log"
nbd-evcopy --request-size=256k "$nosr" "$d1"
[ "$(sent "$tmpdir/nosr.log")" = "0 block status, 65 reads, 0 writes, 0 zeroes" ] ||
  fail "--no-sr: the source was sent $(sent "$tmpdir/nosr.log")"
[ "$(sent "$tmpdir/d1.log")" = "0 block status, 0 reads, 3 writes, 62 zeroes" ] ||
  fail "--no-sr: the destination was sent $(sent "$tmpdir/d1.log")"
check d1

# A destination that cannot zero (nozero: can_zero is false) gets the
# zero extents written from a buffer of zeroes, request size at most,
# and never a zero command.  -v names each such write for what it is.
start_nbdkit d2 --filter=log --filter=nozero --filter=noextents \
  memory $size logfile="$tmpdir/d2.log"
nbd-evcopy -v --request-size=4M "$src" "$d2" 2>"$tmpdir/stderr"
grep -Eq '^slot +[0-9]+ seq [0-9]+ +busy +write zeroes +offset 32768 ' \
  "$tmpdir/stderr" || fail "-v shows no write zeroes at offset 32768"
expect_commands "$tmpdir/d2.log" "Write 0 32768
Write 32768 4194304
Write 4227072 4128768
Write 8355840 32768
Write 8388608 4194304
Write 12582912 4194304
Write 16777216 1"
check d2

# Block status that always fails: the copy is right, every range is
# read as data, and -v says why.
start_nbdkit err --filter=error data "$data" \
  error-extents=EIO error-extents-rate=100%
start_nbdkit d3 --filter=noextents memory $size
nbd-evcopy -v "$err" "$d3" 2>"$tmpdir/stderr"
grep -q 'source: block status at offset 0 length 16777217 failed' \
  "$tmpdir/stderr" || fail "no message about the failed block status"
check d3
