#!/usr/bin/env bash
# --help and --version (and -h, -V) print on stdout, nothing on stderr,
# and exit 0, so that "nbd-evcopy --help | less" works.
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
done

for opt in --version -V; do
  nbd-evcopy --no-extents --no-sparse $opt >"$tmpdir/out" 2>"$tmpdir/err" ||
    fail "$opt exited non-zero"
  [ ! -s "$tmpdir/err" ] || fail "$opt printed on stderr"
  [ "$(wc -l <"$tmpdir/out")" -eq 1 ] || fail "$opt printed more than one line"
  grep -q '^nbd-evcopy [0-9][0-9.]*' "$tmpdir/out" || fail "$opt: $(cat "$tmpdir/out")"
done
