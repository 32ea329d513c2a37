#!/usr/bin/env bash
# A block-status reply shorter than asked that ends off the server's
# minimum block size ("the server MAY return less data than requested",
# the NBD protocol): the next request starts on the next block, the
# part of a block in between is read as data, nothing fails, and the
# rest of the zero image is still known as zeroes (so it is not read).
# An nbdkit sh plugin answers block status at offset 0 with 1000 bytes
# of zeroes, behind a 4 KiB minimum block size.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_plugin sh
requires_nbdkit_filter blocksize-policy

size=1048576
cat >"$tmpdir/short.sh" <<EOF2
#!/bin/sh
case "\$1" in
  get_size) echo $size ;;
  can_extents|can_write|can_zero) exit 0 ;;
  pread) head -c "\$3" /dev/zero ;;
  extents) if [ "\$4" -eq 0 ]; then echo "0 1000 hole,zero"
           else echo "\$4 \$3 hole,zero"; fi ;;
  *) exit 2 ;;
esac
EOF2
chmod +x "$tmpdir/short.sh"
start_nbdkit src --filter=log --filter=blocksize-policy sh "$tmpdir/short.sh" \
  blocksize-minimum=4096 logfile="$tmpdir/src.log"
head -c $size /dev/zero >"$tmpdir/zero.img"
want=$(python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$tmpdir/zero.img")

# bytes_read: what the source served since the log was last emptied.
bytes_read ()
{
  grep -a ' Read id=' "$tmpdir/src.log" |
    sed 's/.* count=\(0x[0-9a-f]*\) .*/\1/' |
    while read -r c; do echo $((c)); done | awk '{ s += $1 } END { print s + 0 }'
}

: >"$tmpdir/src.log"
got=$(nbd-evsum -v "$src" 2>"$tmpdir/v") || fail "nbd-evsum failed"
[ "$got" = "$want  $src" ] || fail "nbd-evsum: '$got'"
! grep -q 'failed' "$tmpdir/v" || fail "nbd-evsum: a block-status command failed"
[ "$(bytes_read)" -le 65536 ] || fail "nbd-evsum read $(bytes_read) bytes of zeroes"

: >"$tmpdir/src.log"
got=$(checksum-libev "$src") || fail "checksum-libev failed"
[ "$got" = "$want  $src" ] || fail "checksum-libev: '$got'"
[ "$(bytes_read)" -le 65536 ] || fail "checksum-libev read $(bytes_read) bytes of zeroes"

for prog in nbd-evcopy zero-extent-copy-libev; do
  start_nbdkit dst memory $size
  nbdcopy -- [ nbdkit pattern $size ] "$dst" || fail "cannot fill the destination"
  : >"$tmpdir/src.log"
  $prog -v "$src" "$dst" 2>"$tmpdir/v" || fail "$prog failed"
  # Only the tool says under -v that a block-status command failed.
  [ $prog != nbd-evcopy ] || ! grep -q 'failed' "$tmpdir/v" ||
    fail "$prog: a block-status command failed"
  [ "$(bytes_read)" -le 262144 ] || fail "$prog read $(bytes_read) bytes of zeroes"
  read_back "$dst" "$tmpdir/dst.img"
  cmp "$tmpdir/zero.img" "$tmpdir/dst.img" || fail "$prog: the copy differs"
  rm -f "$tmpdir/dst.img"
  stop_server dst
done
