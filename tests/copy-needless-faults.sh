#!/usr/bin/env bash
# Faults where a correct copy never goes must not matter; faults where
# it must go must stop it.  The cases of libnbd's copy-nbd-error.sh,
# run with nbd-evcopy against nbdkit's error filter failing every
# command of one kind:
#   - block status fails on the source: the copy reads everything as
#     data, and is exact;
#   - reads fail: fatal for a source with data, needless for a source
#     that is all zero extents (null);
#   - writes fail: fatal for a source with data, needless from an
#     all-zero source, which the copy zeroes instead (onto a
#     destination of 0xff bytes, so the zeroing is seen);
#   - zeroes and trims fail: needless where the destination's map says
#     it reads as zeroes already (a new memory disk), fatal where the
#     map is hidden (noextents), needless with --destination-is-zero
#     even when writes fail too;
#   - zeroes fail on a destination that does not offer them (nozero)
#     and hides its map: the copy writes zeroes as data over its 0xff
#     bytes.
# Every failure is one line naming the command, the offset and the
# server's error.  Each case has its own servers (nbdkit 1.32 may abort
# when a client leaves with replies pending).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_filter error
requires_nbdkit_filter noextents
requires_nbdkit_filter nozero

size=5M
# A destination whose every byte is 0xff: zeroing it must be seen.
ones="( 0xff )*$((5 * 1024 * 1024))"
nbdkit -U - pattern $size --run 'nbdcopy -- "$uri" '"$tmpdir/pattern.img" ||
  fail "cannot read the pattern"
truncate -s $size "$tmpdir/zero.img"

# copy WANT SRC-ARGS -- DST-ARGS [-- OPTIONS...]: nbd-evcopy OPTIONS from
# nbdkit SRC-ARGS to nbdkit DST-ARGS.  WANT "ok FILE": it exits 0 and
# the destination then holds FILE (read back through the same server,
# whose error filter fails no read); else it fails with one line
# holding WANT.
copy ()
{
  _want=$1; shift
  _src=() _dst=() _opts=()
  while [ "$1" != -- ]; do _src+=("$1"); shift; done; shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do _dst+=("$1"); shift; done
  [ $# -eq 0 ] || { shift; _opts=("$@"); }
  start_nbdkit s "${_src[@]}"
  start_nbdkit d "${_dst[@]}"
  _case="nbd-evcopy ${_opts[*]} from ${_src[*]} to ${_dst[*]}"
  case $_want in
    ok\ *)
      nbd-evcopy "${_opts[@]}" "$s" "$d" 2>"$tmpdir/err" ||
        fail "$_case: a needless fault failed the copy: $(cat "$tmpdir/err")"
      read_back "$d" "$tmpdir/got"
      cmp "${_want#ok }" "$tmpdir/got" || fail "$_case: the copy differs"
      echo "ok: $_case: exact" ;;
    *)
      expect_error "$_want" nbd-evcopy "${_opts[@]}" "$s" "$d"
      echo "ok: $_case: $(cat "$tmpdir/err")" ;;
  esac
  stop_server s d
}

pattern="ok $tmpdir/pattern.img"
zero="ok $tmpdir/zero.img"
copy "$pattern" --filter=error pattern $size error-extents-rate=1 -- memory $size
copy "read failed at offset " \
  --filter=error pattern $size error-pread-rate=1 -- memory $size
copy "$zero" --filter=error null $size error-pread-rate=1 -- memory $size
copy "write failed at offset " \
  pattern $size -- --filter=error --filter=noextents memory $size error-pwrite-rate=1
copy "$zero" \
  null $size -- --filter=error --filter=noextents data "$ones" error-pwrite-rate=1
copy "$zero" \
  null $size -- --filter=error memory $size error-zero-rate=1 error-trim-rate=1
copy "zero failed at offset " \
  null $size -- --filter=error --filter=noextents memory $size \
  error-zero-rate=1 error-trim-rate=1
copy "$zero" \
  null $size -- --filter=error --filter=noextents memory $size \
  error-pwrite-rate=1 error-zero-rate=1 error-trim-rate=1 -- --destination-is-zero
copy "$zero" \
  null $size -- --filter=nozero --filter=error --filter=noextents data "$ones" \
  error-zero-rate=1
