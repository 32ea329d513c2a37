#!/usr/bin/env bash
# Zero commands and the destination's limits (the NBD protocol, "Block
# size constraints" and "Error values").  A destination served by an
# nbdkit sh plugin from a file of random bytes, whose zero refuses more
# than 64 KiB with EOVERFLOW:
#  - when it says 64 KiB is its maximum block size, no zero command is
#    longer (nbd-evcopy and the zero-extent-copy-libev lesson);
#  - when it says no maximum, the first long zero is refused, and the
#    copy goes on in shorter ones, said under -v;
# Each copy must be exact, and no longer zero may follow the refusal;
# with --checksum, the digest printed is tests/blkhash-ref.py's of the
# source.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin sh
requires_nbdkit_filter log

# Zero runs of hundreds of KiB between bytes of data, each more than a
# 64 KiB zero: every zero command of the sh plugin costs processes.
size=2097152
start_nbdkit src data "1 @1048576 2 @1500000 3" size=$size
read_back "$src" "$tmpdir/src.img"

# dst_plugin NAME BLOCK-SIZE-LINE ZERO-CONDITION ERROR: a destination
# plugin over $tmpdir/NAME.img, whose zero fails with ERROR where the
# shell test ZERO-CONDITION on the count ($3) holds.
dst_plugin ()
{
  cat >"$tmpdir/$1.sh" <<EOF2
#!/bin/sh
f="$tmpdir/$1.img"
case "\$1" in
  get_size) echo $size ;;
  can_write|can_zero|can_flush) exit 0 ;;
  $2
  pread) dd if="\$f" iflag=skip_bytes,count_bytes skip="\$4" count="\$3" status=none ;;
  pwrite) dd of="\$f" oflag=seek_bytes conv=notrunc seek="\$4" status=none ;;
  zero) if $3; then echo "$4 refused zero of \$3 bytes" >&2; exit 1; fi
        head -c "\$3" /dev/zero |
          dd of="\$f" oflag=seek_bytes conv=notrunc seek="\$4" status=none ;;
  flush) ;;
  *) exit 2 ;;
esac
EOF2
  chmod +x "$tmpdir/$1.sh"
  head -c $size /dev/urandom >"$tmpdir/$1.img"
  start_nbdkit "$1" --filter=log sh "$tmpdir/$1.sh" logfile="$tmpdir/$1.log"
}

# longest_zero NAME: the longest zero command in NAME's log.
longest_zero ()
{
  grep -a ' Zero id=' "$tmpdir/$1.log" |
    sed 's/.* count=\(0x[0-9a-f]*\) .*/\1/' |
    while read -r c; do echo $((c)); done | sort -n | tail -1
}

# 1. The maximum block size bounds zero commands.
dst_plugin max 'block_size) echo 1 4096 65536 ;;' '[ "$3" -gt 65536 ]' EOVERFLOW
nbd-evcopy -v "$src" "$max" 2>"$tmpdir/v" || fail "copy to max: $(cat "$tmpdir/v")"
cmp "$tmpdir/src.img" "$tmpdir/max.img" || fail "copy to max differs"
[ "$(longest_zero max)" = 65536 ] ||
  fail "longest zero to max: $(longest_zero max), expected 65536"
grep -q 'destination: zero commands of at most 65536 bytes' "$tmpdir/v" ||
  fail "no -v line for the maximum"

# The lesson keeps to the maximum too.
dst_plugin lmax 'block_size) echo 1 4096 65536 ;;' '[ "$3" -gt 65536 ]' EOVERFLOW
zero-extent-copy-libev --request-size=65536 "$src" "$lmax" ||
  fail "zero-extent-copy-libev to lmax failed"
cmp "$tmpdir/src.img" "$tmpdir/lmax.img" || fail "lesson copy to lmax differs"
[ "$(longest_zero lmax)" = 65536 ] ||
  fail "lesson: longest zero to lmax: $(longest_zero lmax), expected 65536"

# 2. No maximum said, but a long zero refused: split, and go on.
dst_plugin over '' '[ "$3" -gt 65536 ]' EOVERFLOW
nbd-evcopy -v "$src" "$over" 2>"$tmpdir/v" || fail "copy to over: $(cat "$tmpdir/v")"
cmp "$tmpdir/src.img" "$tmpdir/over.img" || fail "copy to over differs"
grep -q 'destination refused a zero of [0-9]* bytes (\(Value too large\|Invalid argument\)' "$tmpdir/v" ||
  fail "no -v line for the refused zero: $(grep -v slot "$tmpdir/v")"
# Every zero sent after the last refusal fits.
last=$(grep -a -n 'Zero id=.*error=' "$tmpdir/over.log" | tail -1 | cut -d: -f1)
[ -n "$last" ] || fail "the server refused no zero: the test shows nothing"
tail -n +"$last" "$tmpdir/over.log" | grep -a ' Zero id=' |
  sed 's/.* count=\(0x[0-9a-f]*\) .*/\1/' |
  while read -r c; do [ $((c)) -le 65536 ] || echo $((c)); done >"$tmpdir/long"
[ ! -s "$tmpdir/long" ] || fail "zeroes longer than 64 KiB after a refusal: $(cat "$tmpdir/long")"

# The same with --checksum: the digest is the source's, as
# tests/blkhash-ref.py computes it.
dst_plugin nosum '' '[ "$3" -gt 65536 ]' EOVERFLOW
got=$(digest_of nbd-evcopy --checksum "$src" "$nosum") ||
  fail "copy --checksum failed"
want=$(blkhash_ref "$tmpdir/src.img")
[ "$got" = "$want" ] || fail "--checksum: $got, expected $want"
cmp "$tmpdir/src.img" "$tmpdir/nosum.img" || fail "copy --checksum differs"
