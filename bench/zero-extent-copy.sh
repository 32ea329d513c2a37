#!/usr/bin/env bash
# bench/zero-extent-copy.sh: zero-extent-copy-libev against nbdcopy,
# qemu-img convert and copy-libev, side by side in hyperfine.  Opt-in,
# never part of make check.  Run it from a build directory:
#
#   /path/to/src/bench/zero-extent-copy.sh
#
# Only the copy is timed.  Sources are read-only and started once.  Each
# run gets a fresh destination: for qcow2, hyperfine's --prepare stops
# the previous qemu-nbd (which takes about a second to exit on SIGTERM,
# so it must stay out of the timing) and serves a new empty image; for
# nbdkit memory, a captive server (-U - --run) starts in milliseconds.
set -e
set -u

builddir=${builddir:-$PWD}
export PATH="$builddir/examples:$PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/zero-bench.XXXXXX")
export work
cleanup ()
{
  for f in "$work"/*.pid; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || :
  done
  sleep 1.5
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

for t in hyperfine nbdcopy qemu-img qemu-nbd nbdkit \
         zero-extent-copy-libev copy-libev; do
  command -v "$t" >/dev/null || { echo "$0: $t is needed" >&2; exit 1; }
done

# 1. An empty 1 TiB qcow2 onto another through qemu-nbd.
qemu-img create -q -f qcow2 "$work/src.qcow2" 1T
qemu-nbd --fork --persistent -r -f qcow2 --socket="$work/src.sock" \
  --pid-file="$work/src.pid" "$work/src.qcow2"
cat >"$work/fresh-dst.sh" <<'EOS'
# Replace the destination server with one serving a new empty image.
if [ -s "$work/dst.pid" ]; then
  p=$(cat "$work/dst.pid")
  kill "$p"
  while kill -0 "$p" 2>/dev/null; do sleep 0.01; done
  rm -f "$work/dst.pid"
fi
qemu-img create -q -f qcow2 "$work/dst.qcow2" 1T
qemu-nbd --fork --persistent -f qcow2 --socket="$work/dst.sock" \
  --pid-file="$work/dst.pid" "$work/dst.qcow2"
while [ ! -s "$work/dst.pid" ]; do sleep 0.01; done
EOS
export SRC="nbd+unix:///?socket=$work/src.sock"
export DST="nbd+unix:///?socket=$work/dst.sock"
hyperfine --warmup 1 --runs 5 --prepare "bash $work/fresh-dst.sh" \
  --export-markdown "$work/empty-1t.md" \
  -n zero-extent-copy-libev 'zero-extent-copy-libev "$SRC" "$DST"' \
  -n nbdcopy 'nbdcopy "$SRC" "$DST"' \
  -n 'qemu-img convert -n -W' \
     'qemu-img convert -n -W -f raw -O raw "$SRC" "$DST"'

# 2. nbdkit sparse-random 6G, half data, into a fresh nbdkit memory 6G.
nbdkit -U "$work/sr.sock" -P "$work/sr.pid" sparse-random 6G percent=50
while [ ! -s "$work/sr.pid" ]; do sleep 0.01; done
export SRC="nbd+unix:///?socket=$work/sr.sock"
dst='nbdkit -U - memory 6G --run'
hyperfine --warmup 1 --runs 5 \
  --export-markdown "$work/sparse-random-6g.md" \
  -n zero-extent-copy-libev "$dst 'zero-extent-copy-libev \"\$SRC\" \"\$uri\"'" \
  -n copy-libev "$dst 'copy-libev \"\$SRC\" \"\$uri\"'" \
  -n nbdcopy "$dst 'nbdcopy \"\$SRC\" \"\$uri\"'" \
  -n 'qemu-img convert -n -W' \
     "$dst 'qemu-img convert -n -W -f raw -O raw \"\$SRC\" \"\$uri\"'"

cat "$work/empty-1t.md"
echo
cat "$work/sparse-random-6g.md"
