#!/usr/bin/env bash
# The benchmarks' blksum rows (bench/comparisons.sh's blksum_ready):
# none without BLKSUM; a blksum that runs is run as it is; one whose
# ../lib/libblkhash.so.0 does not load (a symlink saved as a text file)
# is run through a wrapper that puts a proper symlink to the
# ../lib/libblkhash.so.0.* beside it on LD_LIBRARY_PATH; one that cannot
# be made to run is refused with a message.  The blksum here is a
# script that behaves as the real one does on each of those, so the
# test needs no blkhash.
source "$abs_top_srcdir/tests/functions.sh"

quick=1 only=
source "$abs_top_srcdir/bench/comparisons.sh"
BENCH_STATE=$tmpdir/state
mkdir "$BENCH_STATE"

# fake DIR: DIR/bin/blksum, which loads DIR/lib/libblkhash.so.0 the
# way the loader would: from LD_LIBRARY_PATH first, then from ../lib
# beside it (its RUNPATH), and stops at a file that is not the library.
fake ()
{
  mkdir -p "$1/bin" "$1/lib"
  cat >"$1/bin/blksum" <<'EOF2'
#!/bin/sh
lib=
for d in $(echo "${LD_LIBRARY_PATH:-}" | tr : ' ') "$(dirname "$0")/../lib"; do
  [ -e "$d/libblkhash.so.0" ] && { lib=$d/libblkhash.so.0; break; }
done
if [ -z "$lib" ] || ! grep -q 'the library' "$lib"; then
  echo "$0: error while loading shared libraries: $lib: file too short" >&2
  exit 127
fi
echo "blksum $*"
EOF2
  chmod +x "$1/bin/blksum"
  echo 'the library' >"$1/lib/libblkhash.so.0.11.0"
}

# No BLKSUM: no row, a note that says why.
unset BLKSUM
blksum_ready || fail "blksum_ready failed without BLKSUM"
[ -z "$blksum" ] || fail "blksum set without BLKSUM: $blksum"
begin t "test"
blksum_row blksum '"$SRC"'
[ ${#labels[@]} -eq 0 ] || fail "a blksum row without BLKSUM"
case ${notes[0]} in
  *"BLKSUM is unset"*) ;;
  *) fail "no note on the missing row: ${notes[*]}" ;;
esac

# A blksum that loads: run as it is.
fake "$tmpdir/good"
ln -s libblkhash.so.0.11.0 "$tmpdir/good/lib/libblkhash.so.0"
BLKSUM=$tmpdir/good/bin/blksum
blksum_ready || fail "blksum_ready refused a blksum that runs"
[ "$BLKSUM" = "$tmpdir/good/bin/blksum" ] || fail "BLKSUM changed to $BLKSUM"
[ -z "$blksum_fix" ] || fail "a fix for a blksum that runs: $blksum_fix"
begin t "test"
blksum_row blksum '"$SRC"'
[ "${commands[0]}" = '"$BLKSUM" "$SRC"' ] || fail "row: ${commands[0]}"

# The broken one: lib/libblkhash.so.0 a 20-byte text file.
fake "$tmpdir/broken"
printf 'libblkhash.so.0.11.0' >"$tmpdir/broken/lib/libblkhash.so.0"
! "$tmpdir/broken/bin/blksum" --help 2>/dev/null || fail "the fake is not broken"
BLKSUM=$tmpdir/broken/bin/blksum
blksum_ready 2>"$tmpdir/err" || fail "blksum_ready: $(cat "$tmpdir/err")"
[ "$blksum" = "$tmpdir/broken/bin/blksum" ] || fail "blksum is $blksum"
[ "$BLKSUM" != "$blksum" ] || fail "BLKSUM not wrapped"
out=$("$BLKSUM" "nbd://x") ||
  fail "the wrapped blksum does not run"
[ "$out" = "blksum nbd://x" ] || fail "the wrapped blksum printed: $out"
[ "$(readlink "$BENCH_STATE/blksum-lib/libblkhash.so.0")" = \
  "$tmpdir/broken/lib/libblkhash.so.0.11.0" ] || fail "wrong symlink"
case $blksum_fix in
  *LD_LIBRARY_PATH*) ;;
  *) fail "the fix is not said: $blksum_fix" ;;
esac

# Broken, with no library beside it: refused, with the loader's words.
rm "$tmpdir/broken/lib/libblkhash.so.0.11.0"
rm -rf "$BENCH_STATE"/*
BLKSUM=$tmpdir/broken/bin/blksum
! blksum_ready 2>"$tmpdir/err" || fail "blksum_ready took a blksum that cannot run"
grep -q "file too short" "$tmpdir/err" || fail "message: $(cat "$tmpdir/err")"
BLKSUM=$tmpdir/no-such-blksum
! blksum_ready 2>"$tmpdir/err" || fail "blksum_ready took a missing blksum"
grep -q "no such program" "$tmpdir/err" || fail "message: $(cat "$tmpdir/err")"
echo ok
