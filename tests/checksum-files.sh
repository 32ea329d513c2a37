#!/usr/bin/env bash
# nbd-evsum on local files: raw and qcow2 give the digest of the same
# image served by a server the test started, and of the hashlib
# reference; several images in one run give one line each, in order,
# named as given, with a missing file among them costing only its own
# line; --cache=none gives the same digest for raw.  (qcow2 with
# --cache=none, which needs O_DIRECT, is checksum-direct.sh; a block
# device, which needs root, checksum-block-device.sh: each skips where
# it cannot run, and the skip is counted.)
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit python3 qemu-img qemu-io qemu-nbd

# 5 MiB and a bit: a multiple of 512, not of 64 KiB.
size=$((5 * 1024 * 1024 + 1536))
raw=$tmpdir/img.raw
raw_and_qcow2 "$raw" "$tmpdir/img.qcow2" $size \
  'write -P 0xaa 64k 1M' \
  'write -P 0x55 3000000 100000' \
  'write -P 0 4M 64k' \
  "write -P 0x77 $((size - 512)) 512"
want=$(python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$raw") ||
  fail "blkhash-ref.py"

# The same images on servers started here.
start_nbdkit nraw --readonly file "$raw"
start_qemu_nbd qq -r -f qcow2 "$tmpdir/img.qcow2"
for uri in "$nraw" "$qq"; do
  [ "$(nbd-evsum "$uri")" = "$want  $uri" ] ||
    fail "nbd-evsum $uri is not $want"
done

# The files themselves, several in one run, and a missing one between
# them: its line goes to stderr, the others are printed in order.
cd "$tmpdir"
if nbd-evsum img.raw missing.raw img.qcow2 "$raw" \
     >"$tmpdir/out" 2>"$tmpdir/err"; then
  fail "a missing file did not make the exit status 1"
fi
printf '%s  %s\n' "$want" img.raw "$want" img.qcow2 "$want" "$raw" \
  >"$tmpdir/expected"
diff -u "$tmpdir/expected" "$tmpdir/out" || fail "wrong lines on stdout"
[ "$(cat "$tmpdir/err")" = "nbd-evsum: missing.raw: No such file or directory" ] ||
  fail "stderr: $(cat "$tmpdir/err")"

# All good: status 0.
nbd-evsum img.raw img.qcow2 >"$tmpdir/out" || fail "exit status not 0"
[ "$(wc -l <"$tmpdir/out")" -eq 2 ] || fail "not two lines"

# --cache=none for raw.
nbd-evsum --cache=none img.raw >"$tmpdir/out" || fail "--cache=none raw"
[ "$(cat "$tmpdir/out")" = "$want  img.raw" ] || fail "--cache=none raw digest"

# Things that are no image.
expect_error "nbd-evsum: $tmpdir: not a regular file, a block device, a pipe or a character device" \
  nbd-evsum "$tmpdir"
# A character device is a stream, as blksum reads it: /dev/null gives
# nothing, the digest of an empty image.
got=$(nbd-evsum /dev/null) || fail "nbd-evsum /dev/null failed"
[ "$got" = "$(blkhash_ref /dev/null)  /dev/null" ] ||
  fail "nbd-evsum /dev/null is not the digest of nothing: $got"

echo "ok: $want"
