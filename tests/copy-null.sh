#!/usr/bin/env bash
# null: as the destination, as nbdcopy's: nothing is connected to and
# everything is dropped.  The source is read as for any copy: its data
# only, or every byte with --no-extents; --checksum then prints the
# source's block hash, the same as nbd-evsum.  null: cannot be a source
# or an image to hash, and --verify has nothing to read back.  The
# reads are counted by nbdkit's log filter on the source.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit python3

mib=$((1024 * 1024))
start_nbdkit pattern --filter=log pattern $((8 * mib)) \
  logfile="$tmpdir/pattern.log"
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

# Without --checksum nothing is printed: every byte is read with
# --no-extents, in 8 requests of the size fixed here.
: >"$tmpdir/pattern.log"
out=$(nbd-evcopy --no-extents --no-sparse --request-size=1M \
        "$pattern" null:) || fail "copy to null:"
[ -z "$out" ] || fail "printed '$out'"
[ "$(log_count "$tmpdir/pattern.log" Read)" -eq 8 ] &&
  [ "$(server_saw largest "$tmpdir/pattern.log")" -eq $mib ] ||
  fail "not 8 reads of 1 MiB: $(log_count "$tmpdir/pattern.log" Read) reads, the largest $(server_saw largest "$tmpdir/pattern.log") bytes"
# --flush has nothing to flush.
nbd-evcopy --flush "$sparse" null: || fail "--flush to null:"

# With extents, holes are not read: a byte at each end of 64 MiB is two
# reads.
start_nbdkit ends --filter=log data '1 @67108863 1' logfile="$tmpdir/ends.log"
nbd-evcopy "$ends" null: || fail "copy of two bytes to null:"
[ "$(log_count "$tmpdir/ends.log" Read)" -eq 2 ] ||
  fail "not 2 reads: $(log_count "$tmpdir/ends.log" Read)"

expect_error "--verify: null: keeps nothing to read back" \
  nbd-evcopy --verify "$pattern" null:
expect_error "source: null: can only be a destination" \
  nbd-evcopy null: "$pattern"
expect_error "null: can only be a destination" nbd-evsum null:
