#!/usr/bin/env bash
# servers.sh: start and stop the benchmark's NBD servers by name.
#
#   servers.sh start NAME nbdkit|qemu-nbd ARGS...
#   servers.sh start NAME tcp NETNS PORT nbdkit ARGS...
#   servers.sh stop NAME...
#   servers.sh stop-all
#
# Every server listens on $BENCH_STATE/NAME.sock (so its URI is
# nbd+unix:///?socket=$BENCH_STATE/NAME.sock, known before it starts)
# and writes $BENCH_STATE/NAME.pid; a "tcp" server listens instead on
# 127.0.0.1:PORT inside the network namespace NETNS (comparison 13's
# link), its URI nbd://127.0.0.1:PORT, run there with ip netns exec.  For each comparison bench/run.sh
# builds one prepare command, "stop-all", then the comparison's setup
# (creating qcow2 images, say), then "start" for each server, then the
# comparison's prime step, if any (filling a memory destination).  When
# each run needs fresh servers (a new qcow2, a new sparse file), that
# command is hyperfine's --prepare, so server start-up is not timed;
# when every run leaves the servers as it found them (they are only
# read, or a primed or null destination is written the same way each
# time), run.sh runs it once before the runs.  run.sh calls "stop-all"
# after each comparison and from its trap.
#
# Example:
#   export BENCH_STATE=$(mktemp -d)
#   bench/servers.sh start src nbdkit pattern 1G
#   nbdinfo "nbd+unix:///?socket=$BENCH_STATE/src.sock"
#   bench/servers.sh stop-all
set -e
set -u

: "${BENCH_STATE:?servers.sh: set BENCH_STATE to a directory}"
prog=servers.sh

die ()
{
  echo "$prog: $*" >&2
  exit 1
}

# alive PID: true while PID is a live process (a zombie counts as gone).
source "$(dirname "$(readlink -f "$0")")/alive.sh"

# stop NAME: SIGTERM, then wait until it has exited.  qemu-nbd must
# have closed its image before the next run recreates it, and nbdkit
# memory must have given its RAM back before the next one allocates.
# SIGKILL only if it ignores SIGTERM for 10 seconds.
stop ()
{
  local pidfile="$BENCH_STATE/$1.pid" pid
  [ -s "$pidfile" ] || { rm -f "$pidfile" "$BENCH_STATE/$1.sock"; return 0; }
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || :
  for _ in $(seq 1 1000); do
    alive "$pid" || break
    sleep 0.01
  done
  if alive "$pid"; then
    kill -9 "$pid" 2>/dev/null || :
    while alive "$pid"; do sleep 0.01; done
  fi
  rm -f "$pidfile" "$BENCH_STATE/$1.sock"
}

# start NAME SERVER ARGS...: both servers daemonise and write their pid
# file once they accept connections; wait for it.
start ()
{
  local name=$1 sock="$BENCH_STATE/$1.sock" pidfile="$BENCH_STATE/$1.pid"
  shift
  [ $# -ge 1 ] || die "start $name: no server given"
  [ ! -e "$pidfile" ] || die "start $name: already running (pid $(cat "$pidfile"))"
  rm -f "$sock"
  case $1 in
    tcp)
      [ $# -ge 4 ] && [ "$4" = nbdkit ] || die "start $name: tcp NETNS PORT nbdkit ARGS..."
      local ns=$2 port=$3
      shift 4
      ip netns exec "$ns" nbdkit -i 127.0.0.1 -p "$port" -P "$pidfile" "$@" ||
        die "nbdkit $* did not start in $ns"
      for _ in $(seq 1 500); do
        [ -s "$pidfile" ] && return 0
        sleep 0.01
      done
      die "nbdkit $* did not write $pidfile within 5 seconds" ;;
    nbdkit)
      shift
      nbdkit -U "$sock" -P "$pidfile" "$@" ||
        die "nbdkit $* did not start" ;;
    qemu-nbd)
      shift
      qemu-nbd --fork --persistent --socket="$sock" --pid-file="$pidfile" "$@" ||
        die "qemu-nbd $* did not start" ;;
    *) die "unknown server '$1' (nbdkit, qemu-nbd, or tcp NETNS PORT nbdkit)" ;;
  esac
  for _ in $(seq 1 500); do
    [ -s "$pidfile" ] && [ -S "$sock" ] && return 0
    sleep 0.01
  done
  die "$* did not write $pidfile within 5 seconds"
}

[ $# -ge 1 ] || die "usage: servers.sh start|stop|stop-all ..."
cmd=$1; shift
case $cmd in
  start) [ $# -ge 2 ] || die "usage: servers.sh start NAME SERVER ARGS..."
         start "$@" ;;
  stop) for n in "$@"; do stop "$n"; done ;;
  stop-all)
    for f in "$BENCH_STATE"/*.pid; do
      [ -e "$f" ] || continue
      n=${f##*/}; stop "${n%.pid}"
    done ;;
  *) die "unknown command '$cmd'" ;;
esac
