#!/usr/bin/env bash
# nbd-evcopy --verify hashes the destination after the copy and
# compares: a good copy prints the source's digest line, and "verified"
# on stderr; a destination that silently drops or alters one write fails
# with exit status 2 and one line naming both digests and the first
# block that differs, and prints no digest; a destination whose reads
# fail after the copy fails too, with status 1.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy qemu-img qemu-nbd python3
requires_nbdkit_plugin sh

mib=$((1024 * 1024))
size=$((8 * mib))
start_nbdkit src pattern $size
line="$(blkhash_ref "$src")  $src" || fail "no reference digest"

# Good copies: onto memory, onto a larger destination, onto a qcow2
# through qemu-nbd whose block status reports the holes.
start_nbdkit mem memory $size
got=$(nbd-evcopy --verify "$src" "$mem" 2>"$tmpdir/err") || fail "--verify onto memory"
[ "$got" = "$line" ] || fail "--verify onto memory printed '$got'"
[ "$(cat "$tmpdir/err")" = "nbd-evcopy: verified: the destination's first $size bytes have the source's digest" ] ||
  fail "--verify onto memory said: $(cat "$tmpdir/err")"
start_nbdkit big memory $((3 * size))
got=$(nbd-evcopy --verify -C 1 --requests=3 "$src" "$big") ||
  fail "--verify onto a larger destination"
[ "$got" = "$line" ] || fail "larger destination: '$got'"
start_nbdkit sparse sparse-random 9999999 seed=4 percent=30 runlength=40000
qemu-img create -q -f qcow2 "$tmpdir/d.qcow2" 9999999
start_qemu_nbd q -f qcow2 "$tmpdir/d.qcow2"
got=$(nbd-evcopy --verify "$sparse" "$q") || fail "--verify onto qcow2"
want="$(blkhash_ref "$sparse")  $sparse" || fail "no reference digest"
[ "$got" = "$want" ] || fail "qcow2: '$got', expected '$want'"

# sh_plugin SCRIPT FILE HOOK: an nbdkit sh plugin serving FILE ($size
# bytes) whose pwrite runs HOOK (shell code with $off and $len) after
# storing the data; it says it stored what it got, whatever HOOK did.
sh_plugin ()
{
  cat >"$1" <<EOF
#!/bin/sh
case "\$1" in
  get_size) echo $size ;;
  can_write) exit 0 ;;
  pread) dd if="$2" iflag=skip_bytes,count_bytes skip="\$4" count="\$3" status=none ;;
  pwrite)
    off=\$4 len=\$3
    dd of="$2" oflag=seek_bytes conv=notrunc seek="\$off" status=none
    $3 ;;
  *) exit 2 ;;
esac
EOF
  chmod +x "$1"
}

# A destination that drops the write at 1 MiB (it puts the old bytes
# back), and one that alters one byte of it.
fill_file "$tmpdir/drop.img" $size 252
sh_plugin "$tmpdir/drop.sh" "$tmpdir/drop.img" \
  "[ \$off != $mib ] || head -c \$len /dev/zero | tr '\\0' '\\374' | dd of=$tmpdir/drop.img oflag=seek_bytes conv=notrunc seek=\$off status=none"
start_nbdkit drop sh "$tmpdir/drop.sh"
expect_error "the first block that differs is at offset $mib length 65536" \
  nbd-evcopy --verify "$src" "$drop"
status=0
nbd-evcopy --verify "$src" "$drop" 2>/dev/null || status=$?
[ $status -eq 2 ] || fail "a mismatch exited with $status, not 2"
grep -Eq 'verify failed: the destination.s digest [0-9a-f]{64} is not the source.s [0-9a-f]{64}' \
  "$tmpdir/err" || fail "the message does not name both digests"
# The copy itself went wrong only there.
cmp -s -n $mib "$tmpdir/drop.img" <(nbdcopy -- "$src" -) ||
  fail "drop: the destination differs before 1 MiB"

fill_file "$tmpdir/alter.img" $size 0
sh_plugin "$tmpdir/alter.sh" "$tmpdir/alter.img" \
  "[ \$off != $((2 * mib)) ] || printf '\\377' | dd of=$tmpdir/alter.img oflag=seek_bytes conv=notrunc seek=\$((off + 70000)) status=none"
start_nbdkit alter sh "$tmpdir/alter.sh"
expect_error "the first block that differs is at offset $((2 * mib + 65536)) length 65536" \
  nbd-evcopy --verify "$src" "$alter"

# The copy succeeds, then reading the destination back fails.
fill_file "$tmpdir/rd.img" $size 0
faulty_file_plugin "$tmpdir/rd.sh" "$tmpdir/rd.img" $size pread
start_nbdkit rd sh "$tmpdir/rd.sh"
expect_error "destination: read failed at offset 0 length 262144: Input/output error" \
  nbd-evcopy --verify -C 1 --requests=1 --request-size=256k "$src" "$rd"

# The verify pass needs no outside event to make progress: with
# --timeout=0 and one request there is nothing else to wake the loop, so
# a slot left waiting for a wake-up would hang the program for ever.
start_nbdkit p64 pattern 64M
start_nbdkit m64 memory 64M
timeout 60 nbd-evcopy --verify --timeout=0 --requests=1 "$p64" "$m64" \
  >/dev/null || fail "--verify --timeout=0 did not finish within 60 s"

# The writes are flushed before they are read back: multi-conn makes
# them visible to the other connections' reads only after a flush.
start_nbdkit logged --filter=log memory $size logfile="$tmpdir/verify.log"
got=$(nbd-evcopy --verify -C 2 "$src" "$logged") || fail "--verify, logged"
[ "$got" = "$line" ] || fail "logged destination: '$got'"
flush=$(grep -n ' Flush id=' "$tmpdir/verify.log" | head -1 | cut -d: -f1)
last_write=$(grep -n ' Write id=' "$tmpdir/verify.log" | tail -1 | cut -d: -f1)
first_read=$(grep -n ' Read id=' "$tmpdir/verify.log" | head -1 | cut -d: -f1)
[ -n "$flush" ] || fail "--verify sent no flush"
[ "$last_write" -lt "$flush" ] && [ "$flush" -lt "$first_read" ] ||
  fail "--verify: the flush is not between the writes and the reads"
