#!/usr/bin/env bash
# The checksum-libev lesson: blkhash's published value, the same digest
# as tests/blkhash-ref.py on images with many extents and odd sizes,
# zero extents hashed without a read (nbdkit's log filter counts the
# reads), and a failed read reported with its offset and length, with
# no digest printed.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_plugin sh

# ref_check URI: the lesson agrees with the reference.
ref_check ()
{
  rm -f "$tmpdir/ref.img"
  read_back "$1" "$tmpdir/ref.img"
  want=$(python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$tmpdir/ref.img")
  got=$(checksum-libev "$1") || fail "checksum-libev $1 failed"
  [ "$got" = "$want  $1" ] || fail "$1: got '$got', expected '$want'"
}

start_nbdkit hello data '"hello"'
[ "$(checksum-libev "$hello")" = \
  "337355feb53a5309d5aba92796223c2c84ffab930e706c01fef573a2722545e6  $hello" ] ||
  fail "not blkhash's published digest of \"hello\""

start_nbdkit sr sparse-random 24M seed=2 percent=30 runlength=40000
start_nbdkit dense sparse-random 7777777 seed=5 percent=90 runlength=5000
start_nbdkit zero null 3M
start_nbdkit empty null 0
for uri in "$sr" "$dense" "$zero" "$empty"; do
  ref_check "$uri"
done
# An image of zero runs only: nothing but the prepare callback can move
# them, so a lesson that forgot to retire them would wait for libev's
# longest sleep (about a minute) before it went on.  Thirty seconds is
# far past any real run and far short of that.
timeout 30 checksum-libev "$zero" >/dev/null ||
  fail "an all-zero image hung (or failed)"

# One data byte in 64 MiB, 1024 blocks: only the block holding it is
# read.  (The reference reads every byte: in 1 GiB, it took seconds.)
start_nbdkit sparse --filter=log data '@33554432 1' size=64M \
  logfile="$tmpdir/sparse.log"
ref_check "$sparse"
reads=$(grep -c ' Read id=' "$tmpdir/sparse.log")
# One read for the lesson, and nbdcopy's reads of the data for the
# reference (it reads data extents only, too).
grep ' Read id=' "$tmpdir/sparse.log" | grep -q 'count=0x10000 ' ||
  fail "the data block was not read as one 64 KiB block"
[ "$reads" -le 4 ] || fail "$reads reads of an image with one data byte"

# -v shows slots going to the hash threads and being hashed in order.
checksum-libev -v "$sr" 2>"$tmpdir/v" >/dev/null || fail "-v failed"
grep -q ' hash ' "$tmpdir/v" && grep -q ' hashed ' "$tmpdir/v" ||
  fail "-v shows no hashing"

# A read that fails: one line, a non-zero exit, nothing on stdout.
mib=$((1024 * 1024))
head -c $((4 * mib)) /dev/urandom >"$tmpdir/data.img"
faulty_file_plugin "$tmpdir/bad.sh" "$tmpdir/data.img" $((4 * mib)) pread \
  $((2 * mib)) $((2 * mib + 1))
start_nbdkit faulty sh "$tmpdir/bad.sh"
expect_error "checksum-libev: read failed at offset $((2 * mib)) length $mib: Input/output error" \
  checksum-libev "$faulty"
alive "$(cat "$tmpdir/faulty.pid")" || fail "the server died"
expect_error "Usage: checksum-libev [-v] URI" checksum-libev

# The three lessons alike: --help prints the usage on stdout and exits
# 0, no image prints it on stderr and exits 1.
for lesson in copy-libev zero-extent-copy-libev checksum-libev; do
  $lesson --help >"$tmpdir/out" 2>"$tmpdir/err" || fail "$lesson --help failed"
  grep -q "^Usage: $lesson " "$tmpdir/out" && [ ! -s "$tmpdir/err" ] ||
    fail "$lesson --help: $(cat "$tmpdir/out" "$tmpdir/err")"
  expect_error "Usage: $lesson " $lesson
done
