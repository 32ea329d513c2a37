#!/usr/bin/env bash
# Every option a program's --help lists appears in its man page, and
# every option the man page documents appears in --help.
source "$abs_top_srcdir/tests/functions.sh"

checked=0
for pod in "$abs_top_srcdir"/docs/*.pod; do
  prog=$(basename "$pod" .pod)
  command -v "$prog" >/dev/null || fail "$prog is not built"
  "$prog" --help >"$tmpdir/help" || fail "$prog --help failed"

  # Options in --help: the words starting with - at the start of a line
  # of the options list ("  -v, --verbose   ...").
  grep -E '^  -' "$tmpdir/help" |
    grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' |
    tr -d ' ,' | sort -u >"$tmpdir/help-opts"

  # Options in the man page: the =item lines of OPTIONS.
  sed -n '/^=head1 OPTIONS/,/^=head1 /p' "$pod" | grep '^=item' |
    grep -oE 'B<--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^B<//' |
    sort -u >"$tmpdir/man-opts"

  [ -s "$tmpdir/help-opts" ] || fail "$prog --help lists no options"
  if ! diff -u "$tmpdir/help-opts" "$tmpdir/man-opts"; then
    fail "$prog: --help (-) and $prog.pod (+) list different options"
  fi
  checked=$((checked + 1))
done
[ "$checked" -gt 0 ] || fail "no man page was checked"
