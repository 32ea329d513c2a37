#!/usr/bin/env bash
# nbd-evsum gives the digests that blkhash publishes for its own test
# images, and so does the reference, tests/blkhash-ref.py: both
# implement the construction of blksum (and of nbdcopy --blkhash in
# libnbd after 1.22; the nbdcopy installed here has no such option).
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy python3

# expect DIGEST URI [OPTIONS...]
expect ()
{
  want=$1; uri=$2; shift 2
  got=$(nbd-evsum "$@" "$uri") || fail "nbd-evsum $* failed"
  [ "$got" = "$want  $uri" ] ||
    fail "nbd-evsum $*: got '$got', expected '$want  $uri'"
  check_blkhash "$uri" "$@"
}

start_nbdkit empty data ''
expect af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc \
       "$empty"

start_nbdkit hello data '"hello"'
expect 337355feb53a5309d5aba92796223c2c84ffab930e706c01fef573a2722545e6 \
       "$hello"
expect f741ac9ce55f5325906bb14e9c05d467 "$hello" --digest=md5
expect 8262896de34125dec173722c920e8bd0 "$hello" --digest=md5 --block-size=4
