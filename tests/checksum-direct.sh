#!/usr/bin/env bash
# nbd-evsum --cache=none on a qcow2 image: qemu-nbd opens it with
# O_DIRECT, and the digest is the one of the same image read through
# the page cache.  The file system of $TMPDIR must support O_DIRECT:
# without it the test is skipped, and counted as such.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit python3 qemu-img qemu-io qemu-nbd

if ! dd if=/dev/zero of="$tmpdir/direct" bs=4096 count=1 oflag=direct \
     status=none; then
  echo "$0: SKIP: ${TMPDIR:-/tmp} has no O_DIRECT"
  exit 77
fi

size=$((5 * 1024 * 1024 + 1536))
raw_and_qcow2 "$tmpdir/img.raw" "$tmpdir/img.qcow2" $size \
  'write -P 0xaa 64k 1M' \
  'write -P 0x55 3000000 100000' \
  "write -P 0x77 $((size - 512)) 512"
want=$(blkhash_ref "$tmpdir/img.raw") || fail "no reference digest"

cd "$tmpdir"
nbd-evsum -v --cache=none img.qcow2 >"$tmpdir/out" 2>"$tmpdir/v" ||
  fail "--cache=none qcow2: $(cat "$tmpdir/v")"
[ "$(cat "$tmpdir/out")" = "$want  img.qcow2" ] ||
  fail "--cache=none qcow2 digest: $(cat "$tmpdir/out")"
echo "ok: $want"
