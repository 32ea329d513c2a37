#!/usr/bin/env bash
# with-servers.sh 'SRC-SERVER' 'DST-SERVER' 'COMMAND'
#
# Start two captive NBD servers on Unix sockets in a temporary directory,
# run COMMAND with $SRC and $DST set to their URIs, then stop them.  Each
# server is "nbdkit ARGS..." or "qemu-nbd ARGS..." (a word list, as it
# would be typed), or "-" for none.  One invocation is one benchmark run:
# servers start fresh, so a memory destination is empty every time.
#
# Example:
#   bench/with-servers.sh 'nbdkit pattern 1G' 'nbdkit memory 1G' \
#     'copy-libev "$SRC" "$DST"'
set -e
set -u

dir=$(mktemp -d "${TMPDIR:-/tmp}/nbd-libev-bench.XXXXXX")
pids=
cleanup ()
{
  for p in $pids; do kill "$p" 2>/dev/null || :; done
  # qemu-nbd may take a moment to release its image after SIGTERM.
  for p in $pids; do
    while kill -0 "$p" 2>/dev/null; do sleep 0.01; done
  done
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# start VAR SERVER-WORDS: start one server, set VAR to its URI.  Not
# run in $(...): the pid must be recorded in this shell for cleanup.
start ()
{
  local var=$1 words=$2 sock="$dir/$1.sock" pid="$dir/$1.pid"
  # shellcheck disable=SC2086
  set -- $words
  case "$1" in
    nbdkit) shift; nbdkit -U "$sock" -P "$pid" "$@" ;;
    qemu-nbd) shift; qemu-nbd --fork --persistent --socket="$sock" \
                       --pid-file="$pid" "$@" ;;
    *) echo "with-servers.sh: unknown server '$1'" >&2; exit 1 ;;
  esac
  for _ in $(seq 1 500); do
    [ -s "$pid" ] && break
    sleep 0.01
  done
  [ -s "$pid" ] || { echo "with-servers.sh: $words did not start" >&2; exit 1; }
  pids="$pids $(cat "$pid")"
  printf -v "$var" '%s' "nbd+unix:///?socket=$sock"
}

SRC=; DST=
[ "$1" = - ] || start SRC "$1"
[ "$2" = - ] || start DST "$2"
export SRC DST
bash -c "$3"
