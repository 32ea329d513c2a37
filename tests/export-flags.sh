#!/usr/bin/env bash
# The export-flag matrix: a server that does not advertise one of
# write, flush, FUA, trim, zero, fast zero and multi-conn, as the
# source and as the destination of nbd-evcopy (the source of nbd-evsum
# too).  The server is nbdkit's eval plugin over a file, every
# capability on but the one taken away, behind the log filter, so the
# commands it received are what is checked (each case has servers of
# its own, left running: this nbdkit takes seconds to stop):
#   - a read-only destination is refused before anything is sent to
#     it, in one line naming it, and keeps its bytes;
#   - without flush, --flush sends none and says so under -v;
#   - without zero, no zero command reaches it: the zero extents arrive
#     as writes of zeroes;
#   - the tools send no FUA, trim or fast zero to any server (the case
#     with every capability checks it), so without them the copy only
#     has to be exact;
#   - without multi-conn, one connection;
# and every copy reads back equal to the source, every digest is
# tests/blkhash-ref.py's.  With every capability, the copy uses zero
# commands and several connections, so each case can tell.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3
requires_nbdkit_plugin eval
requires_nbdkit_filter log

mib=$((1024 * 1024))
size=$((3 * mib))
# Data at the start, at 1 MiB and at the end; the rest reads as zeroes
# and, from the data plugin, is reported as holes.
start_nbdkit src data '1 2 3 @1048576 4*65536 @3145727 5'
read_back "$src" "$tmpdir/src.raw"
[ "$(stat -c %s "$tmpdir/src.raw")" -eq $size ] || fail "the source is not $size bytes"
want=$(python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$tmpdir/src.raw") ||
  fail "no reference digest"

# eval_server NAME IMAGE OFF: nbdkit's eval plugin serving IMAGE, with
# the capability OFF (write, flush, fua, trim, zero, fast_zero,
# multi_conn, or none) taken away, logged to $tmpdir/NAME.log.
eval_server ()
{
  _name=$1 _img=$2 _off=$3
  _yes='exit 0' _no='exit 3'
  _caps=()
  for _c in write flush trim zero fast_zero multi_conn; do
    if [ "$_c" = "$_off" ]; then _caps+=("can_$_c=$_no"); else _caps+=("can_$_c=$_yes"); fi
  done
  if [ "$_off" = fua ]; then _caps+=('can_fua=echo none'); else _caps+=('can_fua=echo native'); fi
  rm -f "$tmpdir/$_name.log"
  start_nbdkit "$_name" --filter=log eval \
    thread_model='echo parallel' \
    get_size="stat -L -c %s $_img" \
    pread="dd if=$_img iflag=skip_bytes,count_bytes skip=\$4 count=\$3 status=none" \
    pwrite="dd of=$_img oflag=seek_bytes conv=notrunc seek=\$4 status=none" \
    zero="fallocate -z -o \$4 -l \$3 $_img" \
    trim="fallocate -p -k -o \$4 -l \$3 $_img" \
    flush='exit 0' \
    "${_caps[@]}" \
    logfile="$tmpdir/$_name.log"
}

# requests NAME OP: how many OP requests (Write, Zero, Trim, Flush) the
# log of NAME records.
requests () { grep -c " $2 id=" "$tmpdir/$1.log" || :; }
connections () { grep -c ' Connect ' "$tmpdir/$1.log" || :; }

for off in none write flush fua trim zero fast_zero multi_conn; do
  echo "== without $off"

  # As the destination: a file of 0xee bytes, so that every byte the
  # copy leaves out shows.
  d=d_$off s=s_$off
  head -c $size /dev/zero | tr '\0' '\356' >"$tmpdir/$d.img"
  eval_server $d "$tmpdir/$d.img" "$off"
  dst=${!d}
  if [ "$off" = write ]; then
    expect_error "read-only" nbd-evcopy "$src" "$dst"
    [ "$(requests $d Write)" -eq 0 ] && [ "$(requests $d Zero)" -eq 0 ] ||
      fail "without write: a command reached the destination"
    cmp -s "$tmpdir/$d.img" <(head -c $size /dev/zero | tr '\0' '\356') ||
      fail "without write: the destination changed"
  else
    nbd-evcopy -v --flush "$src" "$dst" 2>"$tmpdir/err" ||
      { cat "$tmpdir/err"; fail "without $off: the copy failed"; }
    cmp "$tmpdir/src.raw" "$tmpdir/$d.img" || fail "without $off: the copy differs"
    case $off in
      flush)
        [ "$(requests $d Flush)" -eq 0 ] || fail "a flush sent to a server without flush"
        grep -q 'does not advertise flush; none sent' "$tmpdir/err" ||
          fail "-v does not say that no flush was sent" ;;
      fua)
        ! grep -q 'fua=1' "$tmpdir/$d.log" || fail "FUA sent to a server without it" ;;
      trim)
        [ "$(requests $d Trim)" -eq 0 ] || fail "a trim sent to a server without trim" ;;
      zero)
        [ "$(requests $d Zero)" -eq 0 ] || fail "a zero sent to a server without zero" ;;
      fast_zero)
        ! grep -q 'fast=1' "$tmpdir/$d.log" ||
          fail "a fast zero sent to a server without it" ;;
      multi_conn)
        [ "$(connections $d)" -eq 1 ] ||
          fail "$(connections $d) connections to a server without multi-conn" ;;
      none)
        [ "$(requests $d Zero)" -gt 0 ] || fail "no zero command with every capability"
        [ "$(requests $d Trim)" -eq 0 ] && ! grep -q 'fua=1\|fast=1' "$tmpdir/$d.log" ||
          fail "a trim, FUA or fast zero: the cases without them now show something" 
        [ "$(requests $d Flush)" -gt 0 ] || fail "no flush with --flush"
        [ "$(connections $d)" -gt 1 ] ||
          fail "one connection with multi-conn: the multi_conn case shows nothing" ;;
    esac
  fi

  # As the source: the same checks of what reaches it, and the copy
  # and the digest exact.
  cp "$tmpdir/src.raw" "$tmpdir/$s.img"
  eval_server $s "$tmpdir/$s.img" "$off"
  src2=${!s}
  start_nbdkit out memory $size
  nbd-evcopy "$src2" "$out" || fail "from a source without $off: the copy failed"
  read_back "$out" "$tmpdir/out.raw"
  cmp "$tmpdir/src.raw" "$tmpdir/out.raw" || fail "from a source without $off: the copy differs"
  [ "$(nbd-evsum "$src2")" = "$want  $src2" ] ||
    fail "from a source without $off: the digest differs"
  [ "$(requests $s Write)" -eq 0 ] && [ "$(requests $s Zero)" -eq 0 ] &&
    [ "$(requests $s Trim)" -eq 0 ] || fail "the source was written to"
  if [ "$off" = multi_conn ]; then
    # The copy and nbd-evsum, one each.
    [ "$(connections $s)" -eq 2 ] ||
      fail "$(connections $s) connections to a source without multi-conn, not 2"
  fi
  stop_server out
done
echo ok
