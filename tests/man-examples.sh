#!/usr/bin/env bash
# Every command of the man pages' EXAMPLES sections runs as written, in
# the order given (an example may use a file an earlier one made), with
# sizes made smaller: 1G becomes 64M, 1T becomes 256M, still four times
# the other.  A command whose exit status is not zero fails the test,
# and so does one whose output is not what its page promises: the
# published digest of "hello", a block hash that is
# tests/blkhash-ref.py's of the image, the same digest from the
# commands a page says print the same, copies that hold their source's
# bytes, and a copy of empty images that is block status alone.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires qemu-img
requires qemu-io
requires qemu-nbd
requires gzip
requires_nbdkit_plugin sparse-random
requires_nbdkit_plugin data
requires_nbdkit_plugin pattern
requires_nbdkit_filter noextents

# The commands of a page's EXAMPLES: its verbatim lines (they start
# with a space), a line ending in \ joined to the next.
examples ()
{
  sed -n '/^=head1 EXAMPLES/,/^=head1 /p' "$1" | grep '^ ' |
    sed 's/^ //' | sed -e ':a' -e '/\\$/N; s/\\\n */ /; ta' |
    sed -e 's/\b1G\b/64M/g' -e 's/\b1T\b/256M/g'
}

# Each example's standard output and error are kept, numbered in the
# order run, for the checks of what it printed.
cd "$tmpdir"
ran=0
for pod in "$abs_top_srcdir"/docs/*.pod; do
  name=$(basename "$pod" .pod)
  examples "$pod" >"$tmpdir/$name.examples"
  [ -s "$tmpdir/$name.examples" ] || fail "$name.pod has no examples"
  while IFS= read -r cmd; do
    echo "$name: $cmd"
    ran=$((ran + 1))
    echo "$ran $cmd" >>"$tmpdir/ran"
    # pipefail: a failing program before a pipe fails the example.
    (set -o pipefail
     eval "$cmd" </dev/null >"$tmpdir/$ran.out" 2>"$tmpdir/$ran.err") ||
      { cat "$tmpdir/$ran.out" "$tmpdir/$ran.err"
        fail "$name: example failed: $cmd"; }
  done <"$tmpdir/$name.examples"
done
[ "$ran" -gt 0 ] || fail "no example ran"

# out COMMAND [err]: the standard output (or error) of the example that
# ran as COMMAND, as the page gives it after the sizes' change, with
# runs of spaces as one.
out ()
{
  _n=$(awk -v c="$1" '
         BEGIN { gsub(/ +/, " ", c) }
         { n = $1; sub(/^[0-9]+ /, ""); gsub(/ +/, " ") }
         $0 == c { print n; exit }' "$tmpdir/ran")
  [ -n "$_n" ] || fail "no example ran as: $1"
  cat "$tmpdir/$_n.${2:-out}"
}

# digest_in COMMAND [LINE]: the digest of the LINEth line (the first by
# default) that the example COMMAND printed.
digest_in ()
{
  _line=$(out "$1" | sed -n "${2:-1}p")
  [ -n "$_line" ] || fail "no line ${2:-1} from: $1"
  echo "${_line%% *}"
}

# expect_digest WANT COMMAND [LINE]
expect_digest ()
{
  _got=$(digest_in "$2" "${3:-1}")
  [ "$_got" = "$1" ] || fail "$2: printed $_got, expected $1"
}

# The image the sparse-random examples name, and a file of "hello",
# made with nbdcopy and printf, not with the tools.
nbdkit -U - sparse-random 64M seed=1 --run "nbdcopy \"\$uri\" ref.raw" ||
  fail "cannot make ref.raw"
printf hello >hello.raw
ref=$(blkhash_ref ref.raw)

# nbd-evsum(1): the value blkhash publishes for "hello", as the page
# gives it; with MD5 and 4-byte blocks, the reference's.
published=$(sed -n 's/^C<\([0-9a-f]\{64\}\)>:$/\1/p' \
              "$abs_top_srcdir/docs/nbd-evsum.pod")
[ -n "$published" ] || fail "nbd-evsum.pod publishes no digest"
expect_digest "$published" "nbd-evsum [ nbdkit data '\"hello\"' ]"
expect_digest "$(blkhash_ref hello.raw)" \
  "nbd-evsum [ nbdkit data '\"hello\"' ]"
expect_digest "$(blkhash_ref --digest=md5 --block-size=4 hello.raw)" \
  "nbd-evsum --digest=md5 --block-size=4 [ nbdkit data '\"hello\"' ]"
# The same digest with and without block status: the reference's.
c="nbd-evsum [ nbdkit sparse-random 64M seed=1 ] [ nbdkit --filter=noextents sparse-random 64M seed=1 ]"
expect_digest "$ref" "$c" 1
expect_digest "$ref" "$c" 2
# The qcow2 image and the raw one: the same block hash, the
# reference's of the raw file; and so from a server's URI and from
# standard input.
disk=$(blkhash_ref disk.raw)
expect_digest "$disk" "nbd-evsum --progress disk.qcow2 disk.raw" 1
expect_digest "$disk" "nbd-evsum --progress disk.qcow2 disk.raw" 2
expect_digest "$disk" "nbdkit -U - file disk.raw --run 'nbd-evsum \"\$uri\"'"
expect_digest "$disk" "nbd-evsum - < disk.raw"

# nbd-evcopy(1): --checksum to null: prints the pattern's block hash.
nbdkit -U - pattern 64M --run "nbdcopy \"\$uri\" pattern.raw" ||
  fail "cannot make pattern.raw"
expect_digest "$(blkhash_ref pattern.raw)" \
  "nbd-evcopy --checksum [ nbdkit pattern 64M ] null:"
# The sparse random copy holds the source's bytes, and its
# --checksum prints the digest nbd-evsum prints, the source's.
cmp ref.raw sparse.raw || fail "sparse.raw is not the source's bytes"
expect_digest "$ref" "nbd-evcopy --allocated --checksum --flush [ nbdkit sparse-random 64M seed=1 ] sparse.raw"
expect_digest "$ref" "nbd-evsum [ nbdkit sparse-random 64M seed=1 ]"
# The empty 256 MiB qcow2 image onto another: block status alone.
out "nbd-evcopy -v --verify src.qcow2 dst.qcow2" err |
  grep -q 'done: .* 0 reads, 0 writes, 0 zeroes' ||
  fail "the copy of empty images was not block status alone"
# Through gzip and back: the source's bytes.
cmp ref.raw copy.raw || fail "copy.raw is not the source's bytes"
