#!/usr/bin/env bash
# The copy-libev lesson: exact copies whatever the ring's shape, a failed
# read reported with its offset, length and error while the rest of the
# destination keeps its old data, bad input refused before anything is
# written, -v showing the ring at work, and servers left standing.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin sh

mib=$((1024 * 1024))
start_nbdkit src sparse-random 24M seed=7 percent=50 runlength=100000
read_back "$src" "$tmpdir/src.img"

# Exact copies: defaults, one request, small requests, --init, and an
# image whose size is not a multiple of the request size.
for opts in "" "--requests=1" "--request-size=65536 --requests=3" "--init"; do
  start_nbdkit dst memory 24M
  # shellcheck disable=SC2086
  copy-libev $opts "$src" "$dst" || fail "copy-libev $opts failed"
  read_back "$dst" "$tmpdir/dst.img"
  cmp "$tmpdir/src.img" "$tmpdir/dst.img" || fail "copy-libev $opts: differs"
  rm -f "$tmpdir/dst.img"
  stop_server dst
done
start_nbdkit odd pattern 1234567
start_nbdkit dst memory 2M
copy-libev "$odd" "$dst" || fail "copy of 1234567 bytes failed"
read_back "$odd" "$tmpdir/odd.img"
read_back "$dst" "$tmpdir/dst.img"
cmp -n 1234567 "$tmpdir/odd.img" "$tmpdir/dst.img" || fail "odd size differs"
stop_server dst

# -v: one line per slot event.
start_nbdkit dst memory 24M
copy-libev -v --requests=2 "$src" "$dst" 2>"$tmpdir/v" ||
  fail "copy-libev -v failed"
grep -q '^slot  1 seq 1 .* write ' "$tmpdir/v" || fail "-v shows no writes"
stop_server dst

# A failed read: one line naming it, a non-zero exit, the marker left in
# the failed MiB, and both servers still up afterwards.
size=$((8 * mib))
bad=$((3 * mib))
head -c $size /dev/urandom >"$tmpdir/data.img"
fill_file "$tmpdir/marker.img" $size 252
cp "$tmpdir/marker.img" "$tmpdir/out.img"
faulty_file_plugin "$tmpdir/bad.sh" "$tmpdir/data.img" $size pread $bad $((bad + mib))
start_nbdkit faulty sh "$tmpdir/bad.sh"
start_nbdkit out file "$tmpdir/out.img"
expect_error "copy-libev: source: read failed at offset $bad length $mib: Input/output error" \
  copy-libev --request-size=$mib "$faulty" "$out"
alive "$(cat "$tmpdir/faulty.pid")" && alive "$(cat "$tmpdir/out.pid")" ||
  fail "a server died after the failed copy"
stop_server out
cmp <(extract "$tmpdir/out.img" $bad $mib) <(extract "$tmpdir/marker.img" $bad $mib) ||
  fail "the failed read's MiB was written"

# Bad input is refused before the first write.
cp "$tmpdir/marker.img" "$tmpdir/out.img"
start_nbdkit out file "$tmpdir/out.img"
start_nbdkit big pattern 9M
expect_error "smaller than the source (9437184 bytes)" copy-libev "$big" "$out"
expect_error "--requests: '0' is not a number from 1 to 1024" \
  copy-libev --requests=0 "$src" "$out"
start_nbdkit small --filter=blocksize-policy memory 8M \
  blocksize-maximum=65536 blocksize-error-policy=error
expect_error "is larger than the maximum block size 65536" \
  copy-libev --request-size=131072 "$src" "$small"
start_nbdkit ro -r memory 24M
expect_error ": read-only" copy-libev "$src" "$ro"
stop_server out
cmp "$tmpdir/out.img" "$tmpdir/marker.img" || fail "a refused copy wrote"
