#!/usr/bin/env bash
# TLS with X.509 certificates (tls-certificates=DIR in the URI, as
# libnbd takes it), from a PKI made here with certtool: nbd-evcopy and
# nbd-evsum copy and hash exactly over nbds+unix:// and over
# nbds://localhost:PORT; over TCP a client whose CA did not sign the
# server's certificate is refused in one line naming the TLS failure.
# Over a Unix socket libnbd 1.14 verifies nothing of the server's
# certificate (the URI names no host to check it against), so the same
# client is let in there: the man pages say so, and the case below
# shows it, so that a libnbd that starts checking is noticed.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit certtool nbdcopy python3

# pki DIR: a CA, and a certificate signed by it for the server
# (localhost, 127.0.0.1) and for the client, with their keys, in DIR as
# nbdkit's --tls-certificates and libnbd's tls-certificates= read them.
pki ()
{
  mkdir -p "$1"
  (
    cd "$1"
    printf 'cn = Test CA\nca\ncert_signing_key\nexpiration_days = 2\n' >ca.info
    printf 'organization = Test\ncn = localhost\ndns_name = localhost\nip_address = 127.0.0.1\ntls_www_server\nencryption_key\nsigning_key\nexpiration_days = 2\n' >server.info
    printf 'organization = Test\ncn = client\ntls_www_client\nencryption_key\nsigning_key\nexpiration_days = 2\n' >client.info
    for k in ca server client; do
      certtool --generate-privkey --outfile $k-key.pem 2>/dev/null
    done
    certtool --generate-self-signed --load-privkey ca-key.pem \
      --template ca.info --outfile ca-cert.pem 2>/dev/null
    for k in server client; do
      certtool --generate-certificate --load-ca-certificate ca-cert.pem \
        --load-ca-privkey ca-key.pem --load-privkey $k-key.pem \
        --template $k.info --outfile $k-cert.pem 2>/dev/null
    done
  ) || fail "certtool could not make the PKI in $1"
}
pki "$tmpdir/pki"
pki "$tmpdir/other"

start_nbdkit plain pattern 8M
nbdcopy -- "$plain" "$tmpdir/expected"
want=$(blkhash_ref "$tmpdir/expected") || fail "no reference digest"

start_nbdkit src --tls=require --tls-certificates="$tmpdir/pki" pattern 8M
start_nbdkit_tcp tcp --tls=require --tls-certificates="$tmpdir/pki" pattern 8M
port=${tcp##*:}

# unix NAME PKI: the TLS URI of server NAME on its Unix socket.
unix () { printf 'nbds+unix:///?socket=%s&tls-certificates=%s' "$tmpdir/$1.sock" "$2"; }
# tcp PKI: the TLS URI of the TCP server, by host name.
tcp () { printf 'nbds://localhost:%s/?tls-certificates=%s' "$port" "$1"; }

n=0
for s in "$(unix src "$tmpdir/pki")" "$(tcp "$tmpdir/pki")"; do
  n=$((n + 1))
  start_nbdkit dst$n --tls=require --tls-certificates="$tmpdir/pki" memory 8M
  d=$(unix dst$n "$tmpdir/pki")
  nbd-evcopy "$s" "$d" || fail "nbd-evcopy $s failed"
  nbdcopy -- "$d" "$tmpdir/got" || fail "cannot read back $d"
  cmp "$tmpdir/expected" "$tmpdir/got" || fail "$s: the copy differs"
  rm "$tmpdir/got"
  got=$(nbd-evsum "$s") || fail "nbd-evsum $s failed"
  [ "$got" = "$want  $s" ] || fail "nbd-evsum $s: got '$got'"
  echo "ok: $s"
done

# Another CA: refused over TCP, before anything is copied.
start_nbdkit dst3 memory 8M
expect_error "gnutls_handshake: Error in the certificate verification" nbd-evcopy "$(tcp "$tmpdir/other")" "$dst3"
cat "$tmpdir/err"
expect_error "gnutls_handshake: Error in the certificate verification" nbd-evsum "$(tcp "$tmpdir/other")"
nbdcopy -- "$dst3" "$tmpdir/got"
cmp -s "$tmpdir/got" <(head -c 8M /dev/zero) ||
  fail "a refused copy wrote to its destination"

# Over the Unix socket libnbd 1.14 lets the same client in.
got=$(nbd-evsum "$(unix src "$tmpdir/other")") ||
  fail "over a Unix socket, another CA was refused: libnbd now checks; update the man pages"
[ "$got" = "$want  $(unix src "$tmpdir/other")" ] || fail "nbd-evsum: got '$got'"
echo ok
