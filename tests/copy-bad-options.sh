#!/usr/bin/env bash
# Bad option values and bad command lines: each gives exactly one line
# on stderr saying what is wrong, a non-zero exit, and leaves the
# destination alone.  Source and destination are real servers, so a
# program that let a bad option through would copy and be caught by the
# comparison at the end.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit
requires_nbdkit_plugin random

mib=$((1024 * 1024))
start_nbdkit src random $((4 * mib)) seed=6
fill_file "$tmpdir/marker.img" $((4 * mib)) 252
cp "$tmpdir/marker.img" "$tmpdir/dst.img"
start_nbdkit dst file "$tmpdir/dst.img"

bad ()
{
  expect_error "$1" nbd-evcopy --no-extents --no-sparse "${@:2}"
  grep -q '^nbd-evcopy: ' "$tmpdir/err" || fail "message without the program's name"
}

bad "--requests: '0' is not a number from 1 to 256" --requests=0 "$src" "$dst"
bad "--requests: '257' is not a number"  --requests=257 "$src" "$dst"
bad "--requests: 'abc' is not a number" --requests=abc "$src" "$dst"
bad "--requests: '-1' is not a number"  --requests=-1 "$src" "$dst"
bad "--requests: '' is not a number"    --requests= "$src" "$dst"
bad "--request-size: '1x' is not a size" --request-size=1x "$src" "$dst"
bad "--request-size: '' is not a size"   --request-size= "$src" "$dst"
bad "--request-size: '-1M' is not a size" --request-size=-1M "$src" "$dst"
bad "--request-size: '100' is outside 512 bytes to 32 MiB" \
    --request-size=100 "$src" "$dst"
bad "--request-size: '64M' is outside 512 bytes to 32 MiB" \
    --request-size=64M "$src" "$dst"
bad "--request-size: '32M1' is not a size" --request-size=32M1 "$src" "$dst"
bad "--timeout: 'x' is not a number of seconds from 0 to 86400" --timeout=x "$src" "$dst"
bad "--timeout: '86401' is not a number of seconds" --timeout=86401 "$src" "$dst"
bad "--connections: '0' is not a number from 1 to 16" -C 0 "$src" "$dst"
bad "--connections: '17' is not a number from 1 to 16" --connections=17 "$src" "$dst"
bad "unknown or ambiguous option '--bogus'; try --help" --bogus "$src" "$dst"
bad "unknown option '-x'; try --help"  -x "$src" "$dst"
bad "option '--flush' takes no value"  --flush=yes "$src" "$dst"
bad "option '--requests' needs a value" --requests
bad "'--requests=4': options go before the first image" "$src" "$dst" --requests=4
bad "expected SOURCE and DESTINATION; try --help"
bad "expected SOURCE and DESTINATION; try --help" "$src"
bad "expected SOURCE and DESTINATION; try --help" "$src" "$dst" "$dst"
bad "'[' without a matching ']'" "$src" [ nbdkit memory 4M
bad "'[ ]' names no server command" "$src" [ ]

stop_server dst
cmp "$tmpdir/marker.img" "$tmpdir/dst.img" || fail "the destination was changed"
