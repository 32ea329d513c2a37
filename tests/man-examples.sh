#!/usr/bin/env bash
# Every command of the man pages' EXAMPLES sections runs as written, in
# the order given (an example may use a file an earlier one made), with
# sizes made smaller: 1G becomes 64M, 1T becomes 256M, still four times
# the other.  A command whose exit status is not zero fails the test.
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

cd "$tmpdir"
ran=0
for pod in "$abs_top_srcdir"/docs/*.pod; do
  name=$(basename "$pod" .pod)
  examples "$pod" >"$tmpdir/$name.examples"
  [ -s "$tmpdir/$name.examples" ] || fail "$name.pod has no examples"
  while IFS= read -r cmd; do
    echo "$name: $cmd"
    # pipefail: a failing program before a pipe fails the example.
    (set -o pipefail; eval "$cmd" </dev/null >"$tmpdir/out" 2>&1) ||
      { cat "$tmpdir/out"; fail "$name: example failed: $cmd"; }
    ran=$((ran + 1))
  done <"$tmpdir/$name.examples"
done
[ "$ran" -gt 0 ] || fail "no example ran"
