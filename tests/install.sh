#!/usr/bin/env bash
# make install puts every tool in $(bindir) and its man page in
# $(mandir)/man1, and no lesson: the lessons in examples/ are built to
# be read and run from the build tree, not installed.  The installed
# tools print the package version, and make uninstall removes every
# file it installed.
source "$abs_top_srcdir/tests/functions.sh"

root="$tmpdir/root"
progs="nbd-evcopy nbd-evsum"
lessons="copy-libev zero-extent-copy-libev checksum-libev"

${MAKE:-make} -s --no-print-directory -C "$abs_top_builddir" \
  install DESTDIR="$root" prefix=/usr >/dev/null ||
  fail "make install failed"

for p in $progs; do
  [ -x "$root/usr/bin/$p" ] || fail "$p is not in bindir"
  [ -s "$root/usr/share/man/man1/$p.1" ] || fail "$p.1 is not in man1"
  "$root/usr/bin/$p" --version >"$tmpdir/out" || fail "$p --version failed"
  v=$(head -n 1 "$tmpdir/out")
  [ "$v" = "$p $PACKAGE_VERSION" ] ||
    fail "$p --version printed '$v', expected '$p $PACKAGE_VERSION'"
done
for p in $lessons; do
  [ ! -e "$root/usr/bin/$p" ] || fail "the lesson $p is in bindir"
  [ ! -e "$root/usr/share/man/man1/$p.1" ] ||
    fail "the lesson $p has a man page in man1"
done

${MAKE:-make} -s --no-print-directory -C "$abs_top_builddir" \
  uninstall DESTDIR="$root" prefix=/usr >/dev/null ||
  fail "make uninstall failed"
left=$(find "$root" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
