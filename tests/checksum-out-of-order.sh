#!/usr/bin/env bash
# Reads that complete in reverse order are still hashed in offset
# order.  The eval plugin makes each read at a lower offset sleep
# longer, and logs the order in which reads finished.  Reads are 1 MiB
# (--request-size=1M), one per step of the sleeps.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit python3

head -c 8388608 /dev/urandom >"$tmpdir/img"
start_nbdkit slow eval \
  get_size='echo 8388608' \
  thread_model='echo parallel' \
  pread='sleep 0.$(( 7 - $4 / 1048576 ))
         dd if='"$tmpdir/img"' iflag=skip_bytes,count_bytes \
            skip=$4 count=$3 status=none
         echo $4 >>'"$tmpdir/order"

want=$(python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$tmpdir/img")
got=$(nbd-evsum -v --request-size=1M "$slow" 2>"$tmpdir/debug") || fail "nbd-evsum"
[ "$got" = "$want  $slow" ] || fail "got '$got', expected '$want  $slow'"

# The server finished the reads out of order ...
sort -n "$tmpdir/order" | cmp -s - "$tmpdir/order" &&
  fail "reads completed in order; the test proves nothing"
# ... and the slots went to the hash in offset order all the same.
grep ' hashing  *offset ' "$tmpdir/debug" | sed 's/.* offset \([0-9]*\) .*/\1/' \
  >"$tmpdir/hashed"
[ "$(wc -l <"$tmpdir/hashed")" -eq 8 ] || fail "expected 8 hashed slots"
sort -n "$tmpdir/hashed" | cmp -s - "$tmpdir/hashed" ||
  fail "slots were hashed out of offset order: $(echo $(cat "$tmpdir/hashed"))"
