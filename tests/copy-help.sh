#!/usr/bin/env bash
# --help and --version (and -h, -V) print on stdout, nothing on stderr,
# and exit 0, so that "nbd-evcopy --help | less" works.  --help ends
# with an example and the man page; --version names libnbd too.
source "$abs_top_srcdir/tests/functions.sh"

for opt in --help -h; do
  nbd-evcopy --no-extents --no-sparse $opt >"$tmpdir/out" 2>"$tmpdir/err" ||
    fail "$opt exited non-zero"
  [ ! -s "$tmpdir/err" ] || fail "$opt printed on stderr"
  grep -q '^Usage: nbd-evcopy \[OPTIONS\] SOURCE DESTINATION$' "$tmpdir/out" ||
    fail "$opt: no usage line"
  # Every option that the program accepts is documented.
  for o in --requests= --request-size= --init --no-init --flush --progress \
           --cache= --verbose --help --version; do
    grep -q -- "$o" "$tmpdir/out" || fail "$opt does not mention $o"
  done
  # It ends with an example and the man page.
  tail -n 1 "$tmpdir/out" | grep -qx 'See nbd-evcopy(1) for more.' ||
    fail "$opt does not end by naming the man page"
  grep -q '^  nbd-evcopy --verify disk.qcow2 ' "$tmpdir/out" || fail "$opt: no example"
done

for opt in --version -V; do
  nbd-evcopy --no-extents --no-sparse $opt >"$tmpdir/out" 2>"$tmpdir/err" ||
    fail "$opt exited non-zero"
  [ ! -s "$tmpdir/err" ] || fail "$opt printed on stderr"
  [ "$(wc -l <"$tmpdir/out")" -eq 2 ] || fail "$opt: not two lines"
  grep -q '^nbd-evcopy [0-9][0-9.]*$' "$tmpdir/out" || fail "$opt: $(cat "$tmpdir/out")"
  # The libnbd the program runs with, as nbdcopy --version says it.
  want=$(nbdcopy --version | sed -n 's/^libnbd //p')
  grep -qx "libnbd $want" "$tmpdir/out" ||
    fail "$opt: no 'libnbd $want' line: $(cat "$tmpdir/out")"
done
