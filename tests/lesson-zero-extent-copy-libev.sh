#!/usr/bin/env bash
# The zero-extent-copy-libev lesson: one zero command per zero extent,
# data written as data (nbdkit's log filter records every command the
# destination got, and the sorted list must match exactly), a buffer of
# zeroes sent as a zero command when the source has no extents, a
# destination that cannot zero written with zeroes, an empty 1 TiB
# qcow2 copied with 257 zero commands and no write, and exact copies.
source "$abs_top_srcdir/tests/functions.sh"
source "$abs_top_srcdir/tests/zero-functions.sh"
requires nbdkit nbdcopy qemu-img qemu-nbd

# copy NAME SRC NBDKIT-ARGS...: copy SRC into a logged destination.
copy ()
{
  log=$tmpdir/$1.log
  start_nbdkit "dst_$1" --filter=log "${@:3}" logfile="$log"
  eval "dst=\$dst_$1"
  zero-extent-copy-libev "$2" "$dst" || fail "copy $1 failed"
}

# Data pages at 0, 1 GiB - 32 KiB and 4 GiB - 32 KiB; the second zero
# extent straddles the 4 GiB block-status window, and still goes out
# as one command.
size=4294967297
start_nbdkit src data '1 @1073741823 1 @4294967295 1 @4294967296 1'
copy extents "$src" --filter=noextents memory $size
expect_commands "$log" "Write 0 32768
Zero 32768 1073676288 trim=1
Write 1073709056 32768
Zero 1073741824 3221192704 trim=1
Write 4294934528 32769"

# No extents from the source: every 1 MiB is read, and the chunks of
# zeroes become zero commands.
start_nbdkit noext --filter=noextents data '@2097152 1' size=4194304
copy noext "$noext" memory 4M
expect_commands "$log" "Zero 0 1048576 trim=1
Zero 1048576 1048576 trim=1
Write 2097152 1048576
Zero 3145728 1048576 trim=1"

# A destination that cannot zero gets the zero extents written.
start_nbdkit holes data '@524288 1' size=1048576
copy nozero "$holes" --filter=nozero memory 1M
[ -z "$(grep ' Zero id=' "$log")" ] || fail "zero commands to a server that cannot zero"
read_back "$holes" "$tmpdir/holes.img"
read_back "$dst_nozero" "$tmpdir/nozero.img"
cmp "$tmpdir/holes.img" "$tmpdir/nozero.img" || fail "nozero copy differs"

# An empty 1 TiB qcow2: block status alone, 257 zero commands of at
# most 4 GiB - 64 KiB, no read of data and no write.
qemu-img create -q -f qcow2 "$tmpdir/empty.qcow2" 1T
start_qemu_nbd empty -r -f qcow2 "$tmpdir/empty.qcow2"
copy tib "$empty" memory 1T
[ "$(grep -c ' Zero id=' "$log")" -eq 257 ] || fail "not 257 zero commands"
[ -z "$(grep ' Write id=' "$log")" ] || fail "an empty image was written"

# Exact copies of many short extents, with small requests too.
start_nbdkit sr sparse-random 16M seed=4 percent=40 runlength=60000
read_back "$sr" "$tmpdir/sr.img"
for opts in "" "--requests=2 --request-size=65536"; do
  start_nbdkit out memory 16M
  # shellcheck disable=SC2086
  zero-extent-copy-libev $opts "$sr" "$out" || fail "copy $opts failed"
  rm -f "$tmpdir/out.img"
  read_back "$out" "$tmpdir/out.img"
  cmp "$tmpdir/sr.img" "$tmpdir/out.img" || fail "copy $opts differs"
  stop_server out
done
