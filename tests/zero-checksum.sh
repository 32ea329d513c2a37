#!/usr/bin/env bash
# nbd-evcopy --checksum prints the source's block hash while it copies:
# the same line as nbd-evsum and the digest that tests/blkhash-ref.py
# computes, under every option that changes how the image is cut into
# commands, and the copy itself stays exact.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy nbdinfo python3 qemu-img qemu-io qemu-nbd

# want NAME URI [REF-OPTIONS...]: the reference digest of the image,
# into $tmpdir/NAME.want, with its contents in $tmpdir/NAME.img.
want ()
{
  _name=$1 _uri=$2; shift 2
  nbdcopy -- "$_uri" "$tmpdir/$_name.img" || fail "cannot read $_uri"
  python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$@" "$tmpdir/$_name.img" \
    >"$tmpdir/$_name.want" || fail "blkhash-ref.py failed"
}

# copy_sum NAME URI DST OPTIONS...: copy with --checksum (OPTIONS may
# name another digest or block size, given to blkhash-ref.py through
# $ref) onto DST, a fresh destination; the line printed must be the
# reference digest and URI, and DST must read back as the source.
copy_sum ()
{
  _name=$1 _uri=$2 _dst=$3; shift 3
  _got=$(nbd-evcopy "$@" "$_uri" "$_dst") ||
    fail "nbd-evcopy $* failed"
  [ "$_got" = "$(cat "$tmpdir/$_name.want")  $_uri" ] ||
    fail "$_name $*: got '$_got', expected '$(cat "$tmpdir/$_name.want")'"
  rm -f "$tmpdir/back.img"
  nbdcopy -- "$_dst" "$tmpdir/back.img" || fail "cannot read back $_dst"
  cmp -n "$(stat -c %s "$tmpdir/$_name.img")" "$tmpdir/$_name.img" \
    "$tmpdir/back.img" || fail "$_name $*: the copy differs"
  echo "ok: $_name $*"
}

# fresh NAME SIZE [SERVER-ARGS...]: a new destination server NAME of
# SIZE bytes (nbdkit memory unless SERVER-ARGS say otherwise).
n=0
fresh ()
{
  n=$((n + 1))
  if [ $# -gt 2 ]; then
    start_nbdkit "d$n" "${@:3}"
  else
    start_nbdkit "d$n" memory "$2"
  fi
  eval "$1=\$d$n"
}

# Sources: short data and zero extents with an odd size; long zero
# extents and blocks of data; all data (pattern), odd size; a qcow2 with data, an explicitly zeroed
# cluster and an unaligned tail, through qemu-nbd.
start_nbdkit sr sparse-random 9999999 seed=3 percent=40 runlength=30000
start_nbdkit da data '1 @1048575 2 @5000000 3 @8388608 4' size=12345679
start_nbdkit pa pattern 5555555
size_q=$((24 * 1024 * 1024 + 3 * 512))
qemu-img create -q -f qcow2 "$tmpdir/q.qcow2" $size_q
qemu-io -f qcow2 -c 'write -P 0x55 0 64k' -c 'write -P 0xaa 3M 1M' \
  -c 'write -z 8M 1M' -c "write -P 0x22 $((size_q - 512)) 512" \
  "$tmpdir/q.qcow2" >/dev/null
start_qemu_nbd q -r -f qcow2 "$tmpdir/q.qcow2"

for s in sr da pa q; do
  eval "uri=\$$s"
  size=$(nbdinfo --size "$uri")
  want $s "$uri"
  # nbd-evsum agrees, so the two programs print the same line.
  [ "$(nbd-evsum "$uri")" = "$(cat "$tmpdir/$s.want")  $uri" ] ||
    fail "nbd-evsum disagrees with blkhash-ref.py on $s"

  # Request shapes, requests in flight and connections.
  for opts in "" "--requests=1" "--requests=3 --request-size=64k" \
              "--request-size=4M" "-C 1" "-C 4 --requests=5"; do
    fresh dst "$size"
    # $opts is split on purpose: whole options, no spaces inside.
    copy_sum $s "$uri" "$dst" --checksum $opts
  done
  # How zero extents are written: NO_HOLE, no skipping of all-zero
  # buffers, a destination promised to be zero.
  for opts in --allocated --no-sparse --destination-is-zero; do
    fresh dst "$size"
    copy_sum $s "$uri" "$dst" --checksum $opts
  done
  # Destinations without zero support, without extents (every zero
  # extent zeroed), and one holding data (zeroed from its data on).
  fresh dst "$size" --filter=nozero memory "$size"
  copy_sum $s "$uri" "$dst" --checksum
  fresh dst "$size" --filter=noextents memory "$size"
  copy_sum $s "$uri" "$dst" --checksum
  fresh dst "$size" data "@4096 1 @$((size / 2)) 1 @$((size - 1)) 1" \
    size="$size"
  copy_sum $s "$uri" "$dst" --checksum
done

# A source without extents: every byte is read, all-zero buffers are
# hashed as zero blocks.
start_nbdkit srx --filter=noextents sparse-random 9999999 seed=3 \
  percent=40 runlength=30000
cp "$tmpdir/sr.want" "$tmpdir/srx.want"
cp "$tmpdir/sr.img" "$tmpdir/srx.img"
fresh dst 9999999
copy_sum srx "$srx" "$dst" --checksum

# Another digest and block sizes: the pieces follow the hash's blocks.
want sr512 "$sr" --digest=sha512 --block-size=16384
cp "$tmpdir/sr.img" "$tmpdir/sr512.img"
fresh dst 9999999
copy_sum sr512 "$sr" "$dst" --checksum=sha512 --block-size=16k
want da1m "$da" --block-size=1048576
fresh dst 12345679
copy_sum da1m "$da" "$dst" --checksum --block-size=1M --request-size=2M
want da4m "$da" --block-size=4194304
fresh dst 12345679
# A block larger than the default request: requests grow to one block.
copy_sum da4m "$da" "$dst" --checksum --block-size=4M

# An empty 1 TiB qcow2 onto another: block status alone, and the digest
# of 16 Mi zero blocks, computed from blkhash-ref.py's construction
# without reading 1 TiB.
qemu-img create -q -f qcow2 "$tmpdir/e.qcow2" 1T
qemu-img create -q -f qcow2 "$tmpdir/f.qcow2" 1T
start_qemu_nbd e -r -f qcow2 "$tmpdir/e.qcow2"
start_qemu_nbd f -f qcow2 "$tmpdir/f.qcow2"
want=$(blkhash_zero_ref $((1024 * 1024 * 1024 * 1024))) || fail "no reference"
got=$(nbd-evcopy --checksum "$e" "$f") || fail "1 TiB copy"
[ "$got" = "$want  $e" ] || fail "1 TiB: got '$got', expected '$want'"

# Options that cannot work are refused before any I/O.
fresh dst 12345679
expect_error "--block-size needs --checksum" \
  nbd-evcopy --block-size=4k "$da" "$dst"
expect_error "--request-size: 64k is not a multiple of the block size (131072 bytes)" \
  nbd-evcopy --checksum --block-size=128k --request-size=64k \
  "$da" "$dst"
expect_error "nbd-evcopy: unknown digest 'no-such-digest'" \
  nbd-evcopy --checksum=no-such-digest "$da" "$dst"

# A failed copy prints no digest: a read error, a write error, and a
# destination that stops answering (SIGSTOP) until --timeout.
start_nbdkit rerr --filter=error data '1 @1048576 1' size=4M \
  error-pread=EIO error-pread-rate=100%
fresh dst 4M
expect_error "source: read failed at offset 0 length 65536: Input/output error" \
  nbd-evcopy --checksum -C 1 --requests=1 "$rerr" "$dst"
start_nbdkit small data '1 @1048576 1' size=4M
start_nbdkit werr --filter=error --filter=noextents memory 4M \
  error-pwrite=ENOSPC error-pwrite-rate=100%
expect_error "destination: write failed at offset 0 length 65536: No space left on device" \
  nbd-evcopy --checksum -C 1 --requests=1 "$small" "$werr"

# The destination is stopped once its log shows a write in flight.
start_nbdkit slow --filter=delay pattern 4G delay-read=5ms
fresh dst 4G --filter=log memory 4G logfile="$tmpdir/stopped.log"
env "$mark" nbd-evcopy --checksum --timeout=1 "$slow" "$dst" \
  >"$tmpdir/out" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/stopped.log" ' Write id='
kill -STOP "$(cat "$tmpdir/d$n.pid")"
# --timeout=1 ends it within seconds; a broken one must not hang here.
wait_for $pid 30
status=$waited
kill -CONT "$(cat "$tmpdir/d$n.pid")"
cat "$tmpdir/err"
[ $status -eq 1 ] || fail "stopped destination: exit status $status"
grep -q 'destination.*no reply from the server for 1 s' "$tmpdir/err" ||
  fail "stopped destination: no timeout message"
[ ! -s "$tmpdir/out" ] || fail "stopped destination: a digest was printed"
