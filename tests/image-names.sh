#!/usr/bin/env bash
# Local files whose names hold '=' or ':' are files: nbdkit would take
# "x=y.img" for a parameter, qemu-nbd "a:b.qcow2" for protocol "a".
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy qemu-img qemu-nbd python3

cd "$tmpdir"
nbdkit -U - sparse-random 4M seed=3 --run 'nbdcopy -- "$uri" x=y.img' ||
  fail "cannot make x=y.img"
qemu-img convert -f raw -O qcow2 x=y.img ./a:b.qcow2 ||
  fail "cannot make a:b.qcow2"
want=$(python3 "$abs_top_srcdir/tests/blkhash-ref.py" x=y.img)
nbd-evsum x=y.img a:b.qcow2 >sums || fail "nbd-evsum failed"
[ "$(cat sums)" = "$want  x=y.img
$want  a:b.qcow2" ] || fail "unexpected digests: $(cat sums)"
nbd-evcopy a:b.qcow2 c=d:e.img || fail "copy from a:b.qcow2 failed"
cmp x=y.img c=d:e.img || fail "c=d:e.img differs"
qemu-img create -q -f qcow2 ./f:g.qcow2 4M
nbd-evcopy x=y.img f:g.qcow2 || fail "copy into f:g.qcow2 failed"
qemu-img convert -f qcow2 -O raw ./f:g.qcow2 back.img
cmp x=y.img back.img || fail "f:g.qcow2 differs"
