#!/usr/bin/env bash
# bench/checksum.sh: how fast checksum-libev hashes, beside the tools a
# user would otherwise reach for.  Starts its own servers on Unix
# sockets, runs hyperfine (--warmup 1 --runs 5) once per table with all
# compared commands in the same run, and prints the tables as Markdown
# (they are pasted into docs/checksum.md).  Not part of make check.
#
#   bench/checksum.sh                    checksum-libev from PATH
#   CHECKSUM=/path/checksum-libev bench/checksum.sh
#
# Tables:
#   1. nbdkit pattern 1G: checksum-libev, nbdcopy | sha256sum, nbdcopy
#      to null: (reading alone, the floor for any checksum).
#   2. an empty 1 TiB qcow2 served by qemu-nbd (all zero runs).
#   3. the default ring against --requests=1 on a zero image, a data
#      image and a 50% sparse image, 1 GiB each.
set -e
set -u

checksum=${CHECKSUM:-checksum-libev}
# Named as typed in the tables; the full path is only for running.
export PATH="$(dirname "$(command -v "$checksum")"):$PATH"
checksum=$(basename "$checksum")
command -v "$checksum" >/dev/null ||
  { echo "$0: $checksum not found; set CHECKSUM" >&2; exit 1; }
for c in hyperfine nbdkit nbdcopy qemu-img qemu-nbd sha256sum; do
  command -v $c >/dev/null || { echo "$0: $c is not installed" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/checksum-bench.XXXXXX")
pids=
cleanup ()
{
  for p in $pids; do kill "$p" 2>/dev/null || :; done
  for p in $pids; do
    while kill -0 "$p" 2>/dev/null; do sleep 0.01; done
  done
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# serve NAME nbdkit|qemu-nbd ARGS...: start a server on $dir/NAME.sock
# and set the variable NAME to its URI.
serve ()
{
  local name=$1 server=$2; shift 2
  case $server in
    nbdkit) nbdkit -U "$dir/$name.sock" -P "$dir/$name.pid" "$@" ;;
    qemu-nbd) qemu-nbd --fork --persistent --socket="$dir/$name.sock" \
                --pid-file="$dir/$name.pid" "$@" ;;
  esac
  for _ in $(seq 1 500); do
    [ -s "$dir/$name.pid" ] && break
    sleep 0.01
  done
  pids="$pids $(cat "$dir/$name.pid")"
  printf -v "$name" '%s' "nbd+unix:///?socket=$dir/$name.sock"
}

# table TITLE COMMAND...: one hyperfine run, printed as Markdown.  The
# commands are named without the temporary directory of the sockets,
# which keeps the table readable.
table ()
{
  local title=$1 c; shift
  local args=()
  for c in "$@"; do
    args+=(-n "$(printf '%s' "$c" | sed "s|$dir/||g")" "$c")
  done
  echo
  echo "### $title"
  echo
  hyperfine --warmup 1 --runs 5 --style none \
    --export-markdown "$dir/table.md" "${args[@]}" >&2
  cat "$dir/table.md"
}

serve pattern nbdkit pattern 1G
qemu-img create -q -f qcow2 "$dir/empty.qcow2" 1T
serve empty qemu-nbd -r -f qcow2 "$dir/empty.qcow2"
serve zero nbdkit null 1G
serve sparse nbdkit sparse-random 1G percent=50

echo "## checksum-libev benchmark"
echo
echo "$(uname -srm), $(nproc) CPUs, $(date -u +%Y-%m-%d)."
echo "$("$checksum" --version), nbdkit $(nbdkit --version | cut -d' ' -f2)," \
     "$(qemu-nbd --version | head -1)."

table "nbdkit pattern 1G over a Unix socket" \
  "$checksum '$pattern'" \
  "nbdcopy '$pattern' - | sha256sum" \
  "nbdcopy '$pattern' null:"

table "Empty 1 TiB qcow2 served by qemu-nbd" \
  "$checksum '$empty'"

table "Default ring (8 x 1 MiB) against --requests=1, 1 GiB images" \
  "$checksum '$zero'" \
  "$checksum --requests=1 '$zero'" \
  "$checksum '$pattern'" \
  "$checksum --requests=1 '$pattern'" \
  "$checksum '$sparse'" \
  "$checksum --requests=1 '$sparse'"
