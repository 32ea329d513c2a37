#!/usr/bin/env bash
# -p / --progress[=FD] in nbd-evcopy, copying every byte or by extents,
# and nbd-evsum.  In a terminal (script(1) gives one) the bar is redrawn
# in place and its last frame shows no leftovers of a longer frame
# before it; nbd-evcopy labels each pass ("copy", "verify") and keeps
# each last frame; an error starts on a line of its own; nbd-evsum
# clears the bar before it prints the digest.
# When stderr is not a terminal no frame is printed, only one line that
# names --progress=2.  --progress=FD writes nbdcopy's "N/100" lines,
# rising to 100/100.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit script python3
requires_nbdkit_filter error

start_nbdkit src pattern 64M
start_nbdkit dst memory 64M

# in_terminal OUTPUT CMD...: run CMD in a pseudo-terminal, write what
# the screen shows to OUTPUT; returns CMD's exit status.
in_terminal ()
{
  _out=$1; shift
  printf -v _cmd '%q ' "$@"
  script -qec "$_cmd" /dev/null >"$tmpdir/typescript" </dev/null
  _status=$?
  python3 "$abs_top_srcdir/tests/screen.py" "$tmpdir/typescript" >"$_out"
  return $_status
}

# A bar frame: "PCT%  DONE / TOTAL  RATE/s  SECONDS s", with units.
frame='100\.0%  64\.0 MiB / 64\.0 MiB  [0-9.]+ (bytes|KiB|MiB|GiB|TiB)/s  [0-9.]+ s$'

# $prog is split on purpose: the program and its options.
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  in_terminal "$tmpdir/screen" $prog -p "$src" "$dst" ||
    fail "$prog -p failed"
  cat "$tmpdir/screen"
  [ "$(wc -l <"$tmpdir/screen")" -eq 1 ] || fail "$prog: more than the bar"
  grep -Eq "^copy: $frame" "$tmpdir/screen" || fail "$prog: last frame is not a clean line"
done

# --verify: both passes' last frames stay, labelled, then the word on
# stderr and the digest.
in_terminal "$tmpdir/screen" nbd-evcopy -p --verify "$src" "$dst" ||
  fail "nbd-evcopy -p --verify failed"
cat "$tmpdir/screen"
[ "$(wc -l <"$tmpdir/screen")" -eq 4 ] &&
  sed -n 1p "$tmpdir/screen" | grep -Eq "^copy: $frame" &&
  sed -n 2p "$tmpdir/screen" | grep -Eq "^verify: $frame" &&
  sed -n 3p "$tmpdir/screen" | grep -q "^nbd-evcopy: verified: " &&
  sed -n 4p "$tmpdir/screen" | grep -Eq "^[0-9a-f]{64}  " ||
  fail "nbd-evcopy -p --verify: not the two frames, the word and the digest"

in_terminal "$tmpdir/screen" nbd-evsum -p "$src" || fail "nbd-evsum -p failed"
cat "$tmpdir/screen"
[ "$(wc -l <"$tmpdir/screen")" -eq 1 ] && grep -Eq '^[0-9a-f]{64}  ' "$tmpdir/screen" &&
  [ "$(cut -c67- "$tmpdir/screen")" = "$src" ] ||
  fail "nbd-evsum: the digest line is not alone on the screen"
! grep -q '%' "$tmpdir/screen" || fail "nbd-evsum left the bar on screen"

# Several images: each frame names the image it is hashing.
in_terminal "$tmpdir/screen" nbd-evsum -p "$src" "$dst" ||
  fail "nbd-evsum -p of two images failed"
grep -qF "$src: " "$tmpdir/typescript" && grep -qF "$dst: " "$tmpdir/typescript" ||
  fail "nbd-evsum -p of two images: the frames do not name them"

# An error while the bar is shown: the message has a line of its own.
start_nbdkit bad --filter=error pattern 64M error-pread=EIO error-pread-rate=100%
for prog in "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  ! in_terminal "$tmpdir/screen" $prog -p "$bad" "$dst" || fail "$prog did not fail"
  cat "$tmpdir/screen"
  grep -Eq "^nbd-evcopy: source( connection [0-9]+)?: read failed at offset" "$tmpdir/screen" ||
    fail "$prog: the error does not start a line"
done
! in_terminal "$tmpdir/screen" nbd-evsum -p "$bad" || fail "nbd-evsum did not fail"
grep -q "^nbd-evsum: .*read failed at offset" "$tmpdir/screen" ||
  fail "nbd-evsum: the error does not start a line"

# Not a terminal: no frames in the log, one line that says why.
nbd-evcopy --no-extents --no-sparse -p "$src" "$dst" 2>"$tmpdir/log"
[ "$(cat "$tmpdir/log")" = "nbd-evcopy: -p: standard error is not a terminal, so no bar is drawn; --progress=2 writes progress lines there" ] ||
  fail "nbd-evcopy -p wrote to a log file: $(od -c "$tmpdir/log" | head -3)"

# --progress=FD: N/100 lines, never falling, ending at 100/100.
check_fd_lines ()
{
  python3 - "$1" <<'PY' || fail "bad --progress=FD output from $2"
import re, sys
lines = open(sys.argv[1]).read().split('\n')
assert lines[-1] == '', 'no final newline'
ns = [int(re.fullmatch(r'(\d+)/100', l).group(1)) for l in lines[:-1]]
assert ns == sorted(ns) and ns[-1] == 100 and len(ns) == len(set(ns)), ns
PY
}
nbd-evcopy --no-extents --no-sparse --progress=3 "$src" "$dst" 3>"$tmpdir/fd"
check_fd_lines "$tmpdir/fd" "nbd-evcopy --no-extents --no-sparse"
nbd-evcopy --progress=3 "$src" "$dst" 3>"$tmpdir/fd"
check_fd_lines "$tmpdir/fd" nbd-evcopy
nbd-evsum --progress=3 "$src" 3>"$tmpdir/fd" >/dev/null
check_fd_lines "$tmpdir/fd" nbd-evsum

expect_error "--progress: file descriptor 9 is not open" \
  nbd-evcopy --no-extents --no-sparse --progress=9 "$src" "$dst"
expect_error "--progress: 'x' is not a file descriptor number" \
  nbd-evsum --progress=x "$src"
