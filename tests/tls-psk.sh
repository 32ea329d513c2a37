#!/usr/bin/env bash
# TLS with a pre-shared key file named in the URI (tls-psk-file=), as
# nbdinfo and nbdcopy take it: nbd-evcopy, copying every byte or by
# extents, and nbd-evsum connect, copy and hash through TLS,
# --socket-buffer included, and a wrong key is refused in one line.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit psktool nbdcopy python3

psktool -u alice -p "$tmpdir/keys.psk" >/dev/null || fail "psktool failed"
psktool -u alice -p "$tmpdir/other.psk" >/dev/null || fail "psktool failed"
start_nbdkit src --tls=require --tls-psk="$tmpdir/keys.psk" pattern 8M
start_nbdkit plain pattern 8M

# nbds+unix://alice@/?socket=S&tls-psk-file=KEYS
tls_uri ()
{
  printf 'nbds+unix://alice@/?socket=%s&tls-psk-file=%s' "$tmpdir/$1.sock" "$2"
}
s=$(tls_uri src "$tmpdir/keys.psk")

# Each way of copying writes to a new, empty destination of its own.
nbdcopy -- "$plain" "$tmpdir/expected"
n=0
# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  n=$((n + 1))
  start_nbdkit dst$n --tls=require --tls-psk="$tmpdir/keys.psk" memory 8M
  d=$(tls_uri dst$n "$tmpdir/keys.psk")
  $prog "$s" "$d" || fail "$prog over TLS failed"
  nbdcopy -- "$d" "$tmpdir/got" || fail "cannot read back the destination"
  cmp "$tmpdir/expected" "$tmpdir/got" || fail "$prog: the copy differs"
  rm "$tmpdir/got"
done
nbd-evcopy --no-extents --no-sparse --socket-buffer=64k "$s" "$d" ||
  fail "--socket-buffer over TLS failed"

want=$(blkhash_ref "$tmpdir/expected") || fail "no reference digest"
got=$(nbd-evsum "$s") || fail "nbd-evsum over TLS failed"
[ "$got" = "$want  $s" ] || fail "nbd-evsum over TLS: got '$got', expected '$want  $s'"

bad=$(tls_uri src "$tmpdir/other.psk")
expect_error "$bad: cannot connect: " nbd-evsum "$bad"
