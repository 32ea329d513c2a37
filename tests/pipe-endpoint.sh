#!/usr/bin/env bash
# Pipes and standard streams: "-" as source or destination, a FIFO by
# its path, and a character device.  A destination stream gets every
# byte in offset order, holes as zeroes, however the reads complete; a
# source stream is read to its end, which sets the size (a new file
# grows to it, an NBD destination must hold it); nbd-evsum - hashes
# standard input as blksum does, the digest of tests/blkhash-ref.py.
# Faults: a source longer than the destination, a reader that goes away
# (EPIPE, not SIGPIPE), SIGINT, and the options a stream cannot honour.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy cmp sha256sum stat mkfifo head timeout python3

mib=$((1024 * 1024))

# The images, made with nbdcopy and dd, not with the tools: sparse data
# (zero extents the copy reads as holes), and an odd size.
sparse=$tmpdir/sparse.raw
nbdkit -U - sparse-random $((24 * mib)) seed=7 percent=30 runlength=100000 \
  --run "nbdcopy \"\$uri\" $sparse" || fail "cannot make $sparse"
odd=$tmpdir/odd.raw
head -c $((3 * mib + 4097)) "$sparse" >"$odd"
want_sum=$(sha256sum <"$sparse" | cut -d' ' -f1)

allocated ()
{
  echo $(( $(stat -c %b "$1") * $(stat -c %B "$1") ))
}

# NBD (with block status: zero extents, written as zeroes) and a file to
# standard output, with the reads at their full depth: the bytes in
# order.  --requests=64 --request-size=64k puts many reads in flight.
for src in "[ nbdkit --readonly file $sparse ]" "$sparse"; do
  for opts in "" "--requests=64 --request-size=64k" "-C 2"; do
    [ "$src" = "$sparse" ] && [ "$opts" = "-C 2" ] && continue
    # shellcheck disable=SC2086
    nbd-evcopy $opts $src - >"$tmpdir/out" || fail "$src $opts to - failed"
    got=$(sha256sum <"$tmpdir/out" | cut -d' ' -f1)
    [ "$got" = "$want_sum" ] || fail "$src $opts to -: sha256 $got"
  done
done

# A FIFO by its path, read by cat as it is written.
mkfifo "$tmpdir/fifo"
cat "$tmpdir/fifo" >"$tmpdir/from-fifo" &
reader=$!
nbd-evcopy "$odd" "$tmpdir/fifo" || fail "copy to a FIFO"
wait_for $reader 30
cmp "$odd" "$tmpdir/from-fifo" || fail "the FIFO's bytes differ"

# Standard input to a new file: it grows to what the pipe gave, and the
# source's zeroes stay holes.  An odd size, and nothing at all.
for src in "$sparse" "$odd"; do
  rm -f "$tmpdir/new.raw"
  cat "$src" | nbd-evcopy - "$tmpdir/new.raw" || fail "cat $src | - to a file"
  cmp "$src" "$tmpdir/new.raw" || fail "cat $src | -: the file differs"
done
[ "$(allocated "$tmpdir/new.raw")" -lt "$(stat -c %s "$odd")" ] ||
  fail "from a pipe: zeroes were written, not left as holes"
rm -f "$tmpdir/new.raw"
nbd-evcopy - "$tmpdir/new.raw" </dev/null || fail "an empty stream"
[ "$(stat -c %s "$tmpdir/new.raw")" -eq 0 ] || fail "an empty stream: not empty"
# A file ending in zeroes: the file is made that long all the same.
truncate -s $((2 * mib)) "$tmpdir/tail.raw"
printf 'A' | dd of="$tmpdir/tail.raw" conv=notrunc status=none
rm -f "$tmpdir/new.raw"
cat "$tmpdir/tail.raw" | nbd-evcopy - "$tmpdir/new.raw" || fail "zeroes at the end"
cmp "$tmpdir/tail.raw" "$tmpdir/new.raw" || fail "zeroes at the end: differs"

# Standard input to an NBD server, as large as the stream or larger;
# and from a FIFO.
fill_file "$tmpdir/served.raw" $((24 * mib)) 252
cat "$sparse" | nbd-evcopy - [ nbdkit file "$tmpdir/served.raw" ] ||
  fail "cat | - to NBD"
cmp "$sparse" "$tmpdir/served.raw" || fail "cat | - to NBD: differs"
fill_file "$tmpdir/served.raw" $((24 * mib)) 252
cat "$odd" >"$tmpdir/fifo" &
writer=$!
nbd-evcopy "$tmpdir/fifo" [ nbdkit file "$tmpdir/served.raw" ] ||
  fail "a FIFO to NBD"
wait_for $writer 30
cmp -n "$(stat -c %s "$odd")" "$odd" "$tmpdir/served.raw" ||
  fail "a FIFO to NBD: differs"

# A stream longer than the destination: one line naming the size, and
# an error status.  Exactly as long is fine.
expect_error "more data than the destination holds (2097152 bytes)" \
  nbd-evcopy - [ nbdkit memory 2M ] <"$sparse"
head -c $((2 * mib)) "$sparse" | nbd-evcopy - [ nbdkit memory 2M ] ||
  fail "a stream as long as the destination"

# nbd-evsum - is the hash of the same bytes as a file, from a pipe and
# from a file given as standard input, tests/blkhash-ref.py's; and
# --checksum - null: is too.
want=$(blkhash_ref "$odd")
[ "$(nbd-evsum "$odd")" = "$want  $odd" ] || fail "nbd-evsum $odd"
[ "$(cat "$odd" | nbd-evsum -)" = "$want  -" ] || fail "cat | nbd-evsum -"
[ "$(nbd-evsum - <"$odd")" = "$want  -" ] || fail "nbd-evsum - < file"
[ "$(cat "$odd" | nbd-evcopy --checksum - null:)" = "$want  -" ] ||
  fail "cat | nbd-evcopy --checksum - null:"
rm -f "$tmpdir/new.raw"
[ "$(cat "$odd" | nbd-evcopy --checksum - "$tmpdir/new.raw")" = "$want  -" ] ||
  fail "cat | nbd-evcopy --checksum - FILE"
cmp "$odd" "$tmpdir/new.raw" || fail "--checksum from a pipe: differs"

# A reader that goes away: EPIPE, with the offset, and status 1 (not
# 141, a death by SIGPIPE).
set +e
nbd-evcopy "$sparse" - 2>"$tmpdir/err" | head -c $mib >"$tmpdir/head"
status=${PIPESTATUS[0]}
set -e
cat "$tmpdir/err" >&2
[ "$status" -eq 1 ] || fail "| head -c: exit status $status"
grep -q "destination: write failed at offset [0-9]* length [0-9]*: Broken pipe" \
  "$tmpdir/err" || fail "| head -c: no EPIPE message"
[ "$(wc -l <"$tmpdir/err")" -eq 1 ] || fail "| head -c: more than one line"
cmp "$tmpdir/head" <(head -c $mib "$sparse") || fail "| head -c: differs"

# SIGINT while writing to a FIFO: the offset said is the number of bytes
# the reader got.  The source answers late, with two small reads in
# flight (2.5 MiB/s), so the copy is still going when the signal comes,
# once the reader has got some of it (at 0 the check proves little).
cat "$tmpdir/fifo" >"$tmpdir/got" &
reader=$!
env "$mark" nbd-evcopy --requests=2 --request-size=64k \
  [ nbdkit --filter=delay pattern 1G rdelay=50ms ] "$tmpdir/fifo" \
  2>"$tmpdir/err" &
copier=$!
wait_nonempty "$tmpdir/got"
kill -INT $copier
wait_for $copier 60
status=$waited
wait_for $reader 30
cat "$tmpdir/err" >&2
[ "$status" -eq 130 ] || fail "SIGINT: exit status $status"
got=$(stat -c %s "$tmpdir/got")
[ "$got" -gt 0 ] || fail "SIGINT: the reader got nothing"
grep -q "the destination is complete below offset $got\$" "$tmpdir/err" ||
  fail "SIGINT: the reader got $got bytes"

# What a stream destination cannot do: one line each, before anything
# is read.
expect_error "--verify: destination cannot be read back" \
  nbd-evcopy --verify "$odd" -
expect_error "--checksum: the digest goes to standard output" \
  nbd-evcopy --checksum "$odd" -
expect_error "--destination-is-zero: destination has no holes to leave" \
  nbd-evcopy --destination-is-zero "$odd" -

# A failure with stream commands queued ends the copy, with its line:
# a read that fails late while the writes after it wait for its bytes,
# and a write that fails while the next read waits for a producer that
# sends nothing more.
cat >"$tmpdir/late.sh" <<'EOF2'
#!/bin/sh
case "$1" in
  get_size) echo 1048576 ;;
  thread_model) echo parallel ;;
  pread)
    if [ "$4" = 0 ]; then sleep 1; echo "EIO late failure at 0" >&2; exit 1; fi
    head -c "$3" /dev/zero ;;
  *) exit 2 ;;
esac
EOF2
chmod +x "$tmpdir/late.sh"
expect_error "source: read failed at offset 0 length 65536" \
  timeout 60 nbd-evcopy --requests=4 --request-size=64k \
    [ nbdkit sh "$tmpdir/late.sh" ] -
nbdkit -U - pattern 1M --run "nbdcopy \"\$uri\" $tmpdir/pattern.raw" ||
  fail "cannot make pattern.raw"
rm -f "$tmpdir/fifo2"
mkfifo "$tmpdir/fifo2"
( head -c 65536 "$tmpdir/pattern.raw"; exec sleep 120 ) >"$tmpdir/fifo2" &
producer=$!
status=0
expect_error "destination: write failed at offset 0 length 65536" \
  timeout 60 nbd-evcopy --requests=2 --request-size=64k "$tmpdir/fifo2" \
    [ nbdkit --filter=error memory 1M error-pwrite=EIO error-pwrite-rate=100% ] ||
  status=1
kill $producer
[ $status -eq 0 ] || fail "a write failure with a read waiting"

# A destination of nothing: a stream with a byte is too long, an empty
# one fits.
expect_error "more data than the destination holds (0 bytes)" \
  nbd-evcopy - [ nbdkit memory 0 ] <"$odd"
nbd-evcopy - [ nbdkit memory 0 ] </dev/null || fail "an empty stream to 0 bytes"

# Standard input or output closed: one line, and no file left behind.
rm -f "$tmpdir/new.raw"
expect_error "source: standard input is closed" \
  nbd-evcopy - "$tmpdir/new.raw" <&-
[ ! -e "$tmpdir/new.raw" ] || fail "closed standard input left new.raw"
set +e
nbd-evcopy "$odd" - >&- 2>"$tmpdir/err"
status=$?
set -e
[ $status -eq 1 ] && [ "$(wc -l <"$tmpdir/err")" -eq 1 ] &&
  grep -q "destination: standard output is closed" "$tmpdir/err" ||
  fail "closed standard output: status $status, $(cat "$tmpdir/err")"
expect_error "nbd-evsum: standard input is closed" nbd-evsum - <&-

# A file served by nbdkit cannot grow to what a stream gives: refused,
# and the new file removed again.
expect_error "new.raw is served by nbdkit here (no io_uring), which cannot make it grow" \
  env NBD_EV_NO_IO_URING=1 nbd-evcopy - "$tmpdir/new.raw" <"$odd"
[ ! -e "$tmpdir/new.raw" ] || fail "the refused copy left new.raw"

# A FIFO nobody opens: the wait for it ends with SIGINT (timeout sends
# it after 1 s, long after the program has started waiting; 124 means
# the program went, 137 that it had to be killed).
rm -f "$tmpdir/fifo3"
mkfifo "$tmpdir/fifo3"
set +e
timeout -s INT -k 20 1 nbd-evcopy "$odd" "$tmpdir/fifo3"
status=$?
set -e
[ $status -eq 124 ] || fail "waiting for a FIFO's reader: status $status after SIGINT"

# --checksum to a FIFO or a character device: the digest still goes to
# standard output, which is not the destination.
[ "$(nbd-evcopy --checksum "$odd" /dev/null)" = "$want  $odd" ] ||
  fail "--checksum to /dev/null"

# A Unix socket's path is not an image: the message says how to name
# the server on it.
python3 -c "import socket, sys; socket.socket (socket.AF_UNIX).bind (sys.argv[1])" \
  "$tmpdir/s.sock"
expect_error "a socket: for an NBD server listening there, give nbd+unix:///?socket=$tmpdir/s.sock" \
  nbd-evcopy "$tmpdir/s.sock" "$tmpdir/new.raw"
