#!/usr/bin/env bash
# Local raw files read and written by the tools themselves, through
# io_uring in their loop, with no server: file to file, NBD to file and
# file to NBD, of sparse data, of an odd size with data at both ends of a
# large hole, and of nothing but zeroes; zeroes punched or, with
# --allocated, kept allocated; --cache=none; and the fallback to a
# captive nbdkit (NBD_EV_NO_IO_URING), which must give the same bytes,
# and which -v must say was taken.  Every copy is compared byte for byte
# with cmp, and every digest with tests/blkhash-ref.py's.  What needs
# root is in tests of its own, each skipped and counted as such without
# it: a block device (file-block-device.sh), a file system that fills up
# (file-enospc.sh) and one that cannot zero (file-zero-fallback.sh).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy cmp stat

mib=$((1024 * 1024))

# The source files, made with nbdcopy and dd, not with the tools.
sparse=$tmpdir/sparse.raw
sparse_raw "$sparse"
# Not a multiple of 512: a byte of data at each end of a hole of 40 MiB.
odd=$tmpdir/odd.raw
odd_size=$((40 * mib + 4097))
truncate -s $odd_size "$odd"
printf 'A' | dd of="$odd" conv=notrunc status=none
printf 'Z' | dd of="$odd" bs=1 seek=$((odd_size - 1)) conv=notrunc status=none
zero=$tmpdir/zero.raw
truncate -s $((32 * mib)) "$zero"

# allocated FILE: bytes the file system holds for FILE.
allocated ()
{
  echo $(( $(stat -c %b "$1") * $(stat -c %B "$1") ))
}

# File to a new file: no server at all (-v says so), the same bytes,
# the same size, and no more allocated than the source.
for src in "$sparse" "$odd" "$zero"; do
  new=$tmpdir/new.raw
  rm -f "$new"
  nbd-evcopy -v "$src" "$new" 2>"$tmpdir/v" || fail "copy $src to a new file"
  grep -q "source: .*through io_uring" "$tmpdir/v" ||
    fail "$src: the source was not read through io_uring"
  grep -q "destination: .*through io_uring" "$tmpdir/v" ||
    fail "$src: the destination was not written through io_uring"
  ! grep -q "served by" "$tmpdir/v" || fail "$src: a server was started"
  grep -q "with 4 requests of 1048576 bytes (fixed)" "$tmpdir/v" ||
    fail "$src: file to file without the fixed depth"
  cmp "$src" "$new" || fail "$src: the new file differs"
  [ "$(stat -c %s "$new")" -eq "$(stat -c %s "$src")" ] ||
    fail "$src: the new file is $(stat -c %s "$new") bytes"
  [ "$(allocated "$new")" -le "$(allocated "$src")" ] ||
    fail "$src: $(allocated "$new") bytes allocated, the source $(allocated "$src")"
done
# Nothing but zeroes: a file of holes alone.
[ "$(allocated "$tmpdir/new.raw")" -eq 0 ] ||
  fail "a copy of zeroes holds $(allocated "$tmpdir/new.raw") bytes"

# Onto an existing file full of 0xAA: the source's holes are zeroed, by
# punching holes; with --allocated they stay allocated.
for opts in "" --allocated; do
  fill_file "$tmpdir/full.raw" $odd_size 252
  nbd-evcopy $opts "$odd" "$tmpdir/full.raw" || fail "copy $opts onto full.raw"
  cmp "$odd" "$tmpdir/full.raw" || fail "$opts: full.raw differs"
  if [ -n "$opts" ]; then
    [ "$(allocated "$tmpdir/full.raw")" -ge $odd_size ] ||
      fail "--allocated left holes: $(allocated "$tmpdir/full.raw") bytes"
  else
    [ "$(allocated "$tmpdir/full.raw")" -lt $mib ] ||
      fail "zeroes were not punched: $(allocated "$tmpdir/full.raw") bytes"
  fi
done

# NBD to a file, and a file to NBD (the server's own file, read back).
rm -f "$tmpdir/new.raw"
nbd-evcopy [ nbdkit --readonly file "$sparse" ] "$tmpdir/new.raw" ||
  fail "NBD to a new file"
cmp "$sparse" "$tmpdir/new.raw" || fail "NBD to a file: differs"
fill_file "$tmpdir/served.raw" $((48 * mib)) 252
nbd-evcopy "$sparse" [ nbdkit file "$tmpdir/served.raw" ] ||
  fail "a file to NBD"
cmp "$sparse" "$tmpdir/served.raw" || fail "a file to NBD: differs"

# --cache=none: O_DIRECT, and the odd tail through the page cache.
for src in "$sparse" "$odd"; do
  rm -f "$tmpdir/new.raw"
  nbd-evcopy -v --cache=none "$src" "$tmpdir/new.raw" 2>"$tmpdir/v" ||
    fail "--cache=none $src"
  grep -q "O_DIRECT" "$tmpdir/v" || fail "--cache=none without O_DIRECT"
  cmp "$src" "$tmpdir/new.raw" || fail "--cache=none $src: differs"
done

# The block hash of a file, read by the tools, is tests/blkhash-ref.py's,
# and so is the one a server of the file gives; nbd-evcopy --checksum to
# null: is the same hash again, and so is --verify's, whose copy is the
# same bytes.
want=$(blkhash_ref "$sparse")
got=$(digest_of nbd-evsum [ nbdkit --readonly file "$sparse" ]) ||
  fail "nbd-evsum of a served file failed"
[ "$got" = "$want" ] || fail "nbd-evsum of a served file: $got, expected $want"
got=$(digest_of nbd-evsum "$sparse") || fail "nbd-evsum of a file failed"
[ "$got" = "$want" ] || fail "nbd-evsum of a file: $got, expected $want"
got=$(digest_of nbd-evcopy --checksum "$sparse" null:) ||
  fail "--checksum to null: failed"
[ "$got" = "$want" ] || fail "--checksum to null: $got, expected $want"
rm -f "$tmpdir/new.raw"
got=$(digest_of nbd-evcopy --verify "$sparse" "$tmpdir/new.raw") ||
  fail "--verify failed"
[ "$got" = "$want" ] || fail "--verify: $got, expected $want"
cmp "$sparse" "$tmpdir/new.raw" || fail "--verify: the copy differs"

# The fallback: a captive nbdkit for each file, the same bytes.
rm -f "$tmpdir/new.raw"
NBD_EV_NO_IO_URING=1 nbd-evcopy -v "$odd" "$tmpdir/new.raw" 2>"$tmpdir/v" ||
  fail "copy with NBD_EV_NO_IO_URING"
[ "$(grep -c "raw, served by nbdkit" "$tmpdir/v")" -eq 2 ] ||
  fail "NBD_EV_NO_IO_URING: not both files served by nbdkit"
cmp "$odd" "$tmpdir/new.raw" || fail "the fallback's copy differs"
got=$(NBD_EV_NO_IO_URING=1 digest_of nbd-evsum -v "$sparse" 2>"$tmpdir/v") ||
  fail "nbd-evsum with the fallback failed"
grep -q "sparse.raw: NBD_EV_NO_IO_URING is set: served by nbdkit" "$tmpdir/v" ||
  fail "nbd-evsum with NBD_EV_NO_IO_URING: the file was not served by nbdkit"
[ "$got" = "$want" ] || fail "nbd-evsum with the fallback: $got, expected $want"

# A destination file too small, and a directory: one line, nothing
# written.
truncate -s $mib "$tmpdir/small.raw"
expect_error "destination is smaller than the source" \
  nbd-evcopy "$sparse" "$tmpdir/small.raw"
cmp -s "$tmpdir/small.raw" <(head -c $mib /dev/zero) ||
  fail "small.raw was written"
expect_error "not a regular file, a block device, a pipe or a character device" \
  nbd-evcopy "$sparse" "$tmpdir"
