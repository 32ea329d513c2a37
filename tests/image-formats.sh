#!/usr/bin/env bash
# What a new user meets first with local images and names:
#  - a local file's format comes from its first bytes, as qemu probes
#    it: vmdk, vdi, vhdx, VHD (vpc) and qcow are served by qemu-nbd with
#    that format, and their contents, not their containers, are copied;
#  - a destination that does not exist and whose name says qcow2 is
#    refused, naming the qemu-img command that creates it, and nothing
#    is created; into the qcow2 that command makes, the copy works;
#  - the same file as source and destination is refused, however the
#    path is spelt;
#  - a mistyped URI scheme is said to be one;
#  - --checksum followed by a digest's name as a word says to write
#    --checksum=NAME;
#  - a qcow2 that another process has open for writing is said to be in
#    use, with qemu-nbd's words.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy qemu-img qemu-nbd python3

cd "$tmpdir"
nbdkit -U - sparse-random 8M seed=11 --run 'nbdcopy -- "$uri" disk.raw' ||
  fail "cannot make disk.raw"

for fmt in vmdk vdi vhdx vpc qcow qcow2; do
  qemu-img convert -q -f raw -O $fmt disk.raw "disk.$fmt" ||
    fail "cannot make disk.$fmt"
  rm -f out.raw
  nbd-evcopy "disk.$fmt" out.raw || fail "copy from disk.$fmt failed"
  # qemu may round the virtual size up (vpc's geometry): compare the
  # source's bytes, and zeroes after.
  cmp -n 8388608 disk.raw out.raw || fail "disk.$fmt: the contents differ"
  # The reference digest is that of qemu-img's own raw conversion.
  qemu-img convert -q -O raw "disk.$fmt" ref.raw || fail "cannot convert disk.$fmt"
  got=$(digest_of nbd-evsum "disk.$fmt") || fail "nbd-evsum disk.$fmt failed"
  [ "$got" = "$(blkhash_ref ref.raw)" ] ||
    fail "disk.$fmt: nbd-evsum does not read the contents"
  rm ref.raw
done

# A qcow2 destination that does not exist: refused, and the message
# says how to make it, with the source's size.
expect_error "destination: new.qcow2 does not exist, and this program creates only raw files: for a qcow2 image, run 'qemu-img create -f qcow2 new.qcow2 8388608' first" \
  nbd-evcopy disk.raw new.qcow2
[ ! -e new.qcow2 ] || fail "new.qcow2 was created"
qemu-img create -q -f qcow2 new.qcow2 8388608 || fail "qemu-img create failed"
nbd-evcopy disk.raw new.qcow2 || fail "copy into new.qcow2 failed"
[ "$(qemu-img info --output=json new.qcow2 | grep -c '"format": "qcow2"')" -ge 1 ] ||
  fail "new.qcow2 is no longer a qcow2"
qemu-img convert -f qcow2 -O raw new.qcow2 back.raw
cmp disk.raw back.raw || fail "new.qcow2 differs"

# The same file, by two names.
ln -s disk.raw link.raw
cp disk.raw keep.raw
expect_error "disk.raw and ./link.raw are the same file: nothing to copy" \
  nbd-evcopy disk.raw ./link.raw
cmp disk.raw keep.raw || fail "disk.raw changed"

# A mistyped scheme.
expect_error "nbdx://host/x: unknown URI scheme 'nbdx'" \
  nbd-evcopy disk.raw nbdx://host/x
[ ! -e nbdx: ] || fail "a directory was made for it"

# --checksum with a digest as the next word.
expect_error "--checksum takes its digest after '=': --checksum=md5" \
  nbd-evcopy --checksum md5 disk.raw out.raw

# A qcow2 another process has open for writing: the message leads with
# that, in qemu-nbd's words.
qemu-nbd --fork --persistent --pid-file="$tmpdir/lock.pid" \
  --socket="$tmpdir/lock.sock" new.qcow2 || fail "qemu-nbd did not start"
wait_pidfile "$tmpdir/lock.pid"
expect_error "destination: in use by another process (qemu-nbd: " \
  nbd-evcopy disk.raw new.qcow2
grep -q 'lock)$' "$tmpdir/err" || fail "the lock is not named"
expect_error "new.qcow2: in use by another process (qemu-nbd: " \
  nbd-evsum new.qcow2
kill "$(cat "$tmpdir/lock.pid")"
