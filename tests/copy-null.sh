#!/usr/bin/env bash
# null: as the destination, as nbdcopy's: nothing is connected to and
# everything is dropped.  The source is read as for any copy: its data
# only, or every byte with --no-extents; --checksum then prints the
# source's block hash, the same as nbd-evsum.  null: cannot be a source
# or an image to hash, and --verify has nothing to read back.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit python3

mib=$((1024 * 1024))
start_nbdkit pattern pattern $((8 * mib))
start_nbdkit sparse sparse-random 9999999 seed=4 percent=30 runlength=40000

# The block hash of what was read is the source's: tests/blkhash-ref.py's.
for src in "$pattern" "$sparse"; do
  want="$(blkhash_ref "$src")  $src" || fail "no reference digest"
  got=$(nbd-evcopy --checksum "$src" null:) || fail "--checksum $src null:"
  [ "$got" = "$want" ] || fail "$src: '$got', expected '$want'"
  got=$(nbd-evcopy --checksum --no-extents --no-sparse "$src" null:) ||
    fail "--no-extents --no-sparse --checksum $src null:"
  [ "$got" = "$want" ] || fail "every byte of $src: '$got'"
done

# Without --checksum nothing is printed, and nothing is written: every
# byte read with --no-extents, in requests of the size fixed here.
out=$(nbd-evcopy -v --no-extents --no-sparse --request-size=1M \
        "$pattern" null: 2>"$tmpdir/v") || fail "copy to null:"
[ -z "$out" ] || fail "printed '$out'"
grep -q 'done: .* 8 reads, 0 writes, 0 zeroes' "$tmpdir/v" ||
  fail "not 8 reads and nothing else: $(grep 'done:' "$tmpdir/v")"
# --flush has nothing to flush.
nbd-evcopy --flush "$sparse" null: || fail "--flush to null:"

# With extents, holes are not read: a byte at each end of 64 MiB is two
# reads.
start_nbdkit ends data '1 @67108863 1'
nbd-evcopy -v "$ends" null: 2>"$tmpdir/v" || fail "copy of two bytes to null:"
grep -q 'done: .* 2 reads, 0 writes, 0 zeroes' "$tmpdir/v" ||
  fail "not 2 reads and nothing else: $(grep 'done:' "$tmpdir/v")"

expect_error "--verify: null: keeps nothing to read back" \
  nbd-evcopy --verify "$pattern" null:
expect_error "source: null: can only be a destination" \
  nbd-evcopy null: "$pattern"
expect_error "null: can only be a destination" nbd-evsum null:
