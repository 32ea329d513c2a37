#!/usr/bin/env bash
# An empty source is copied at once: exit 0, nothing on stderr, and no
# write reaches the destination, whether it is empty too or larger.
# The timeout catches a loop that waits forever for work that never
# comes.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit timeout
requires_nbdkit_filter log

start_nbdkit src memory 0
start_nbdkit empty --filter=log memory 0 logfile="$tmpdir/empty.log"
start_nbdkit big --filter=log memory 1M logfile="$tmpdir/big.log"

for dst in "$empty" "$big"; do
  timeout 30 nbd-evcopy --no-extents --no-sparse "$src" "$dst" \
    2>"$tmpdir/err" ||
    fail "copy from an empty source to $dst failed: $(cat "$tmpdir/err")"
  [ ! -s "$tmpdir/err" ] || fail "unexpected stderr: $(cat "$tmpdir/err")"
done

# Stopped servers have closed their logs, so every line is in the file.
stop_server empty big

# The log filter records each connection, so an empty write list means
# the copies connected and wrote nothing, not that they never ran.
for log in "$tmpdir/empty.log" "$tmpdir/big.log"; do
  grep -q ' Connect ' "$log" || fail "$log: nbd-evcopy never connected"
  ! grep -E ' (Write|Zero|Trim) ' "$log" || fail "$log: something was written"
done
