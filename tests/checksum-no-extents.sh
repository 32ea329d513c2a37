#!/usr/bin/env bash
# Without usable block status the image is read in full and the digest
# does not change: a server whose block status always fails, and one
# without base:allocation at all (nbdkit --no-sr).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3

spec='1 @100000 2 @3000000 3 @5000001 4'
start_nbdkit plain data "$spec"
start_nbdkit failing --filter=error data "$spec" \
  error-extents=EIO error-extents-rate=100%
start_nbdkit nosr --no-sr data "$spec"

check_blkhash "$plain"
want=$(nbd-evsum "$plain") || fail "nbd-evsum $plain"
# nbdcopy gives up on failing block status, so compare with the plain
# server, which the reference has just vouched for.
for uri in "$failing" "$nosr"; do
  got=$(nbd-evsum -v "$uri" 2>"$tmpdir/debug") || fail "nbd-evsum $uri"
  [ "${got%% *}" = "${want%% *}" ] ||
    fail "$uri: got ${got%% *}, expected ${want%% *}"
  ! grep -q 'zero run' "$tmpdir/debug" || fail "$uri: zero run without extents"
  if [ "$uri" = "$failing" ]; then
    grep -q 'failed .*reading that range as data' "$tmpdir/debug" ||
      fail "$uri: block status did not fail; the test proves nothing"
  fi
done
