#!/usr/bin/env bash
# nbd-evcopy sends exactly one zero command per zero extent and writes
# only data: nbdkit's log filter records every command the destination
# received, and the sorted list must match exactly.
source "$abs_top_srcdir/tests/functions.sh"
source "$abs_top_srcdir/tests/zero-functions.sh"
requires nbdkit

# Data pages at 0, 1 GiB - 32 KiB and 4 GiB - 32 KiB; the second zero
# extent straddles the 4 GiB block-status window.  The destination has
# no extents (noextents), so it cannot be known to read as zero and
# every zero extent needs its command.
data='1 @1073741823 1 @4294967295 1 @4294967296 1'
size=4294967297
start_nbdkit src data "$data"

copy ()
{
  log=$tmpdir/$1.log
  start_nbdkit "dst_$1" --filter=log --filter=noextents memory $size \
    logfile="$log"
  eval "dst=\$dst_$1"
  shift
  nbd-evcopy "$@" "$dst"
}

# Default: zero commands may punch holes (trim=1).
copy default "$src"
expect_commands "$log" "Write 0 32768
Zero 32768 1073676288 trim=1
Write 1073709056 32768
Zero 1073741824 3221192704 trim=1
Write 4294934528 32769"

# --allocated: the same commands with NO_HOLE (trim=0).
copy allocated --allocated "$src"
expect_commands "$log" "Write 0 32768
Zero 32768 1073676288 trim=0
Write 1073709056 32768
Zero 1073741824 3221192704 trim=0
Write 4294934528 32769"

# A source without extents: every 4 MiB chunk is read, the two that
# hold a non-zero byte are written, the rest become zero commands.  A
# smaller image keeps the memory plugin's written pages few.
data2='1 @16777215 1 @33554432 1'
size=33554433
start_nbdkit noext --filter=noextents data "$data2"
expected=
for i in $(seq 0 7); do
  case $i in
    0|3) expected+="Write $((i * 4194304)) 4194304"$'\n' ;;
    *) expected+="Zero $((i * 4194304)) 4194304 trim=1"$'\n' ;;
  esac
done
expected+="Write 33554432 1"
copy noext --request-size=4M "$noext"
expect_commands "$log" "$expected"

# --no-sparse: the same source is written whole, zero buffers included.
copy nosparse --no-sparse --request-size=4M "$noext"
expect_commands "$log" "$(for i in $(seq 0 7); do
                            echo "Write $((i * 4194304)) 4194304"
                          done; echo "Write 33554432 1")"

# A destination whose block status says it reads as zeroes gets the
# data writes and nothing else.
start_nbdkit zdst --filter=log memory 4294967297 logfile=$tmpdir/zdst.log
nbd-evcopy "$src" "$zdst"
expect_commands "$tmpdir/zdst.log" "Write 0 32768
Write 1073709056 32768
Write 4294934528 32769"

# A destination that holds data in places (the data plugin, which
# reports its pages through block status): a zero extent of the source
# is skipped while the destination reads as zeroes, and zeroed from the
# first destination data on, to the extent's end.
start_nbdkit pdst --filter=log data '@536870912 1 @3221225472 1' \
  size=4294967297 logfile=$tmpdir/pdst.log
nbd-evcopy "$src" "$pdst"
expect_commands "$tmpdir/pdst.log" "Write 0 32768
Zero 536870912 536838144 trim=1
Write 1073709056 32768
Zero 3221225472 1073709056 trim=1
Write 4294934528 32769"

# The same for all-zero buffers from a source without extents: skipped
# where the destination reads as zeroes, zeroed where it holds data.
start_nbdkit pdst2 --filter=log data '@8388608 1' size=33554433 \
  logfile=$tmpdir/pdst2.log
nbd-evcopy --request-size=4M "$noext" "$pdst2"
expect_commands "$tmpdir/pdst2.log" "Write 0 4194304
Zero 8388608 4194304 trim=1
Write 12582912 4194304
Write 33554432 1"

# --destination-is-zero onto those same destinations, which hold data:
# the promise is taken as given (docs/nbd-evcopy.pod), so nothing is
# sent for zero extents or all-zero buffers, and the destination's own
# data stays where the source has zeroes.  Onto a fresh destination,
# which does read as zeroes, a program ignoring the option would give
# the same result; here only one that honours it leaves the data.
start_nbdkit pdst3 --filter=log data '@536870912 1 @3221225472 1' \
  size=4294967297 logfile=$tmpdir/pdst3.log
nbd-evcopy --destination-is-zero "$src" "$pdst3"
expect_commands "$tmpdir/pdst3.log" "Write 0 32768
Write 1073709056 32768
Write 4294934528 32769"
start_nbdkit pdst4 --filter=log data '@8388608 1' size=33554433 \
  logfile=$tmpdir/pdst4.log
nbd-evcopy --destination-is-zero --request-size=4M "$noext" "$pdst4"
expect_commands "$tmpdir/pdst4.log" "Write 0 4194304
Write 12582912 4194304
Write 33554432 1"
read_back "$pdst4" "$tmpdir/pdst4.img"
[ "$(extract "$tmpdir/pdst4.img" 8388608 1 | od -An -tu1 | tr -d ' ')" = 1 ] ||
  fail "--destination-is-zero: the destination's byte at 8 MiB was written"
read_back "$noext" "$tmpdir/noext.img"
cmp -n 8388608 "$tmpdir/noext.img" "$tmpdir/pdst4.img" ||
  fail "--destination-is-zero: the data below 8 MiB differs"

# A 1 TiB hole costs 257 zero commands of just under 4 GiB, split on
# 64 KiB boundaries, not a million 1 MiB ones.
start_nbdkit hole data '1' size=1T
start_nbdkit big --filter=log --filter=noextents memory 1T \
  logfile=$tmpdir/big.log
nbd-evcopy "$hole" "$big"
log_commands "$tmpdir/big.log" >"$tmpdir/big.cmds"
[ "$(grep -c '^Write' "$tmpdir/big.cmds")" -eq 1 ] || fail "1 TiB: writes"
[ "$(grep -c '^Zero' "$tmpdir/big.cmds")" -eq 257 ] || fail "1 TiB: zeroes"
grep -qx 'Zero 32768 4294868992 trim=1' "$tmpdir/big.cmds" ||
  fail "1 TiB: first zero command"
grep -qx 'Zero 4294901760 4294901760 trim=1' "$tmpdir/big.cmds" ||
  fail "1 TiB: second zero command"
grep -qx 'Zero 1099494850560 16777216 trim=1' "$tmpdir/big.cmds" ||
  fail "1 TiB: last zero command"
