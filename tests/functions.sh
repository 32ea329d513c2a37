# nbd-libev-examples: helpers sourced by the shell tests.
#
# Each test starts its own servers (nbdkit, qemu-nbd) on Unix sockets or
# loopback TCP in a temporary directory; an EXIT trap stops them and
# removes the directory, whatever the test's outcome.

set -e
set -u

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/nbd-libev-test.XXXXXX")
server_pids=
at_exit_cmds=

# Every run of the suite's programs from a test carries this mark in its
# environment, and so does every process a program starts.  A captive
# server still running when the test ends (a program that did not stop
# it) is found by its mark, and fails the test, whatever else happened.
# The programs' names, the tools' and the lessons', are shell functions
# that add the mark; a test that needs a program's own pid in $! runs it
# as env "$mark" PROGRAM ... &.  timeout and valgrind run the program
# they are given by its path, not as the shell function: they are
# shell functions too, that add the mark to what they run.
mark="NBD_LIBEV_TEST_MARK=$tmpdir"
for _p in nbd-evcopy nbd-evsum \
          copy-libev zero-extent-copy-libev checksum-libev \
          timeout valgrind; do
  eval "$_p () { env \"\$mark\" $_p \"\$@\"; }"
done

# In a build configured with --enable-sanitizers (SANITIZERS=yes from
# make check), every report of AddressSanitizer, LeakSanitizer or
# UndefinedBehaviorSanitizer goes to a file of this test's, which
# cleanup prints and fails the test on.  A report on stderr alone
# could pass unseen: a test that expects a program to fail, or that
# sends its stderr to a file, would take a program stopped by a
# report for one that failed as it should.  The exit status 86 is one
# no program of the suite uses, for the tests that look at the status.
if [ "${SANITIZERS:-no}" = yes ]; then
  export ASAN_OPTIONS="exitcode=86:log_path=$tmpdir/sanitizer"
  export UBSAN_OPTIONS="exitcode=86:print_stacktrace=1:log_path=$tmpdir/sanitizer"
fi

# requires_no_sanitizers REASON: skip (exit 77) in a sanitizer build,
# for a test that cannot run under it (valgrind cannot run a program
# built with AddressSanitizer; an address-space limit is smaller than
# the shadow memory it reserves).
requires_no_sanitizers ()
{
  if [ "${SANITIZERS:-no}" = yes ]; then
    echo "$0: SKIP: sanitizer build: $1"
    exit 77
  fi
}

# leftovers: the pids of live processes with this test's mark.
leftovers ()
{
  grep -lzxF "$mark" /proc/[0-9]*/environ 2>/dev/null |
    sed 's|^/proc/\([0-9]*\)/environ$|\1|' || :
}

cleanup ()
{
  status=$?
  # The test's own background jobs (a reader of a FIFO, a program it
  # signals, a watcher of a log), left running when a failure ended
  # the test early, and what each runs in the foreground.
  for _p in $(jobs -p); do
    kill $(ps -o pid= --ppid "$_p") "$_p" 2>/dev/null || :
  done
  for p in $server_pids; do
    kill "$p" 2>/dev/null || :
  done
  # A program waits for its captive servers before it exits, but a
  # killed one leaves nbdkit --exit-with-parent a moment to go.
  for _ in $(seq 1 50); do
    [ -n "$(leftovers)" ] || break
    sleep 0.1
  done
  _left=$(leftovers)
  if [ -n "$_left" ]; then
    echo "FAIL: left running by a program:" >&2
    ps -o pid=,args= -p "$(echo $_left | tr ' ' ,)" >&2 || :
    kill $_left 2>/dev/null || :
    status=1
  fi
  # What at_exit registered, the last first.
  eval "$at_exit_cmds"
  for _f in "$tmpdir"/sanitizer.*; do
    [ -e "$_f" ] || continue
    echo "FAIL: sanitizer report in $_f:" >&2
    cat "$_f" >&2
    status=1
  done
  rm -rf "$tmpdir"
  exit $status
}
trap cleanup EXIT INT TERM

# at_exit COMMAND...: run COMMAND when the test ends, however it ends,
# before its directory is removed: a loop device to detach, a file
# system to unmount.  Register it as soon as the thing exists, so that
# a failure in between cannot leave it behind.  The servers have only
# been signalled by then: unmount with --lazy, in case one still has a
# file open there.
at_exit ()
{
  at_exit_cmds="$(printf '%q ' "$@") || :
$at_exit_cmds"
}

# requires_root WHAT: skip (exit 77) unless the test runs as root,
# which WHAT needs (loop devices, mounts).
requires_root ()
{
  if [ "$(id -u)" -ne 0 ]; then
    echo "$0: SKIP: $1 needs root"
    exit 77
  fi
}

fail ()
{
  echo "FAIL: $*" >&2
  exit 1
}

# requires CMD...: skip (exit 77) when a tool is truly absent.  In CI
# every tool is installed by autogen.sh, so nothing skips there.
requires ()
{
  for c in "$@"; do
    # type -P: a program on PATH, not a shell function of this file.
    if ! type -P "$c" >/dev/null 2>&1; then
      echo "$0: SKIP: $c is not installed"
      exit 77
    fi
  done
}

# raw_and_qcow2 RAW QCOW2 SIZE QEMU-IO-COMMAND...: a raw image of SIZE
# bytes written by the qemu-io commands ('write -P 0xaa 1M 64k'), and
# the same image converted to qcow2.
raw_and_qcow2 ()
{
  local raw=$1 qcow2=$2 size=$3 c args=()
  shift 3
  for c in "$@"; do args+=(-c "$c"); done
  qemu-img create -q -f raw "$raw" "$size"
  qemu-io -f raw "${args[@]}" "$raw" >/dev/null || fail "qemu-io on $raw"
  qemu-img convert -f raw -O qcow2 "$raw" "$qcow2" ||
    fail "qemu-img convert $raw"
}

# Wait for a pid file written by a daemonising server; record the pid.
# A server is up within a few milliseconds, so look often: every
# server a test starts costs what is left of a step.
wait_pidfile ()
{
  for _ in $(seq 1 1000); do
    if [ -s "$1" ]; then
      server_pids="$server_pids $(cat "$1")"
      return 0
    fi
    sleep 0.01
  done
  fail "server did not write $1"
}

# alive PID, shared with the benchmark's servers.sh.
source "$abs_top_srcdir/bench/alive.sh"

# start_nbdkit NAME NBDKIT-ARGS...: serve on $tmpdir/NAME.sock and set
# the variable NAME to the server's URI.
start_nbdkit ()
{
  _name=$1; shift
  nbdkit -U "$tmpdir/$_name.sock" -P "$tmpdir/$_name.pid" "$@" ||
    fail "nbdkit $* did not start"
  wait_pidfile "$tmpdir/$_name.pid"
  eval "$_name='nbd+unix:///?socket=$tmpdir/$_name.sock'"
}

# start_nbdkit_tcp NAME NBDKIT-ARGS...: the same on 127.0.0.1, on a
# port the kernel picked as free.
start_nbdkit_tcp ()
{
  _name=$1; shift
  _port=$(free_port)
  nbdkit -i 127.0.0.1 -p "$_port" -P "$tmpdir/$_name.pid" "$@" ||
    fail "nbdkit $* did not start"
  wait_pidfile "$tmpdir/$_name.pid"
  eval "$_name='nbd://127.0.0.1:$_port'"
}

# start_qemu_nbd NAME QEMU-NBD-ARGS... FILE: qemu-nbd on $tmpdir/NAME.sock,
# persistent so that the test can connect again to check the result.
start_qemu_nbd ()
{
  _name=$1; shift
  qemu-nbd --fork --persistent --pid-file="$tmpdir/$_name.pid" \
           --socket="$tmpdir/$_name.sock" "$@" ||
    fail "qemu-nbd $* did not start"
  wait_pidfile "$tmpdir/$_name.pid"
  eval "$_name='nbd+unix:///?socket=$tmpdir/$_name.sock'"
}

free_port ()
{
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# sparse_raw FILE: a raw file of 48 MiB, 30 % of it data in runs of
# about 100 KB between holes (nbdkit's sparse-random, seed 5), the
# local source of the file endpoint's tests.
sparse_raw ()
{
  nbdkit -U - sparse-random $((48 * 1024 * 1024)) seed=5 percent=30 \
    runlength=100000 --run "nbdcopy \"\$uri\" $1" ||
    fail "cannot make $1"
}

# read_back URI FILE: the whole export into a file, for cmp.
read_back ()
{
  nbdcopy -- "$1" "$2" || fail "cannot read back $1"
}

# expect_error TEXT CMD...: CMD must exit non-zero with exactly one line
# on stderr, and that line must contain TEXT.
expect_error ()
{
  _text=$1; shift
  if "$@" >"$tmpdir/out" 2>"$tmpdir/err"; then
    fail "$* succeeded; expected an error containing '$_text'"
  fi
  cat "$tmpdir/err" >&2
  [ "$(wc -l <"$tmpdir/err")" -eq 1 ] ||
    fail "$*: expected one line on stderr, got $(wc -l <"$tmpdir/err")"
  grep -qF -- "$_text" "$tmpdir/err" ||
    fail "$*: stderr does not contain '$_text'"
  [ ! -s "$tmpdir/out" ] || fail "$*: printed something on stdout"
}

# requires_nbdkit_plugin NAME / requires_nbdkit_filter NAME: skip when
# nbdkit lacks a plugin or a filter (some distributions package the
# script plugins separately).
requires_nbdkit_plugin ()
{
  requires nbdkit
  if ! nbdkit "$1" --version >/dev/null 2>&1; then
    echo "$0: SKIP: nbdkit has no $1 plugin"
    exit 77
  fi
}

requires_nbdkit_filter ()
{
  requires nbdkit
  if ! nbdkit --filter="$1" null --version >/dev/null 2>&1; then
    echo "$0: SKIP: nbdkit has no $1 filter"
    exit 77
  fi
}

# stop_server NAME...: stop servers started by start_nbdkit* or
# start_qemu_nbd and wait until they have exited, so that every write
# they accepted is in their files before the test looks at the files.
# (All signalled first, then waited for, so that their exits overlap.)
# The pid files and sockets go too, so that each NAME can be started
# again.
stop_server ()
{
  for _n in "$@"; do
    kill "$(cat "$tmpdir/$_n.pid")" 2>/dev/null || :
  done
  for _n in "$@"; do
    _pid=$(cat "$tmpdir/$_n.pid")
    for _ in $(seq 1 1000); do
      alive "$_pid" || break
      sleep 0.01
    done
    ! alive "$_pid" || fail "server $_n (pid $_pid) did not exit"
    rm -f "$tmpdir/$_n.pid" "$tmpdir/$_n.sock"
  done
}

# wait_for PID SECONDS: wait for the background job PID, at most
# SECONDS, and set waited to its exit status.  A job still running
# then (a program whose --timeout never fires, or that ignores a
# signal) is killed and fails the test at once, instead of leaving
# the test to hang until the watchdog's limit.
wait_for ()
{
  for _ in $(seq 1 $(( $2 * 20 ))); do
    alive "$1" || break
    sleep 0.05
  done
  if alive "$1"; then
    _args=$(ps -o args= -p "$1" 2>/dev/null) || :
    kill -KILL "$1" 2>/dev/null || :
    fail "still running after $2 s, killed: $_args"
  fi
  waited=0
  wait "$1" || waited=$?
}

# wait_log FILE ERE: wait until a line of FILE (the logfile of nbdkit's
# log filter) matches ERE; fail after 30 s.  A test that signals a
# program once it is at work waits this way for the request it needs
# to see, instead of sleeping a guess that a slow machine could miss.
wait_log ()
{
  for _ in $(seq 1 3000); do
    ! grep -Eq -- "$2" "$1" 2>/dev/null || return 0
    sleep 0.01
  done
  fail "no line matching /$2/ in $1 within 30 s"
}

# wait_nonempty FILE: wait until FILE has a byte (a reader has got some
# of a copy); fail after 30 s.
wait_nonempty ()
{
  for _ in $(seq 1 3000); do
    [ ! -s "$1" ] || return 0
    sleep 0.01
  done
  fail "$1 still empty after 30 s"
}

# fill_file FILE SIZE OCTAL: a file of SIZE bytes that are all the byte
# with that octal value (252 is 0xAA), to mark a destination before a
# test and prove afterwards which parts were written.
fill_file ()
{
  head -c "$2" /dev/zero | tr '\0' "\\$3" >"$1" || fail "cannot create $1"
}

# extract FILE OFFSET LENGTH: those bytes of FILE on stdout.
extract ()
{
  dd if="$1" iflag=skip_bytes,count_bytes skip="$2" count="$3" status=none
}

# log_writes LOGFILE: the writes recorded by nbdkit's log filter, one
# "offset length" a line in decimal, sorted by offset.
log_writes ()
{
  sed -n 's/.* Write id=[0-9]* offset=\(0x[0-9a-f]*\) count=\(0x[0-9a-f]*\) .*/\1 \2/p' "$1" |
    while read -r _o _c; do echo "$((_o)) $((_c))"; done |
    sort -n
}

# ranges SIZE STEP: "offset length" lines that cover SIZE bytes in
# pieces of STEP, the last one shorter: what log_writes must show after
# a whole copy with --request-size=STEP.
ranges ()
{
  _o=0
  while [ "$_o" -lt "$1" ]; do
    _l=$(( $1 - _o < $2 ? $1 - _o : $2 ))
    echo "$_o $_l"
    _o=$(( _o + _l ))
  done
}

# digest_of CMD...: the digest of the line "DIGEST  NAME" that CMD
# (nbd-evsum, nbd-evcopy --checksum) prints.  A failure of CMD fails
# it, where CMD | cut would keep only cut's status; call it as
# got=$(digest_of ...) || fail ...
digest_of ()
{
  _line=$("$@") || fail "$* failed"
  echo "${_line%% *}"
}

# blkhash_ref IMAGE [--digest=NAME] [--block-size=BYTES]: the digest
# that tests/blkhash-ref.py computes for IMAGE, a local file, or a URI
# whose image nbdcopy reads into a file first.  The oracle for every
# digest a program prints: comparing one program's digest with the
# other's would pass a fault in the hash code both share.
blkhash_ref ()
{
  _img=$1; shift
  case $_img in
    *://*)
      rm -f "$tmpdir/blkhash.img"
      nbdcopy -- "$_img" "$tmpdir/blkhash.img" || fail "cannot read $_img"
      _img=$tmpdir/blkhash.img ;;
  esac
  python3 "$abs_top_srcdir/tests/blkhash-ref.py" "$@" "$_img" ||
    fail "blkhash-ref.py $* $_img failed"
}

# blkhash_zero_ref SIZE: the digest blkhash-ref.py would print for SIZE
# zero bytes, a multiple of its 64 KiB block, without reading them: the
# construction it documents with the one digest all those blocks have.
# For images too large to read back (an empty 1 TiB disk).
blkhash_zero_ref ()
{
  python3 -c '
import hashlib, struct, sys
size, block = int(sys.argv[1]), 65536
assert size % block == 0
run = hashlib.sha256(bytes(block)).digest() * 4096
outer = hashlib.sha256()
for _ in range(size // block // 4096):
    outer.update(run)
outer.update(run[: (size // block % 4096) * 32])
outer.update(struct.pack("<Q", size))
print(outer.hexdigest())
' "$1" || fail "blkhash_zero_ref $1 failed"
}

# check_blkhash URI [OPTIONS...]: nbd-evsum must print the digest that
# tests/blkhash-ref.py computes over a copy of the image read with
# nbdcopy.  --digest=* and --block-size=* (in bytes) go to both programs,
# any other option to nbd-evsum only.
check_blkhash ()
{
  _uri=$1; shift
  _ref_opts=
  for _o in "$@"; do
    case $_o in
      --digest=*|--block-size=*) _ref_opts="$_ref_opts $_o" ;;
    esac
  done
  # $_ref_opts is split on purpose: it holds whole options, no spaces.
  _want=$(blkhash_ref "$_uri" $_ref_opts) || fail "no reference digest"
  _got=$(nbd-evsum "$@" "$_uri") || fail "nbd-evsum $* $_uri failed"
  [ "$_got" = "$_want  $_uri" ] ||
    fail "nbd-evsum $* $_uri: got '$_got', expected '$_want  $_uri'"
  echo "ok: $_want $* $_uri"
}

# faulty_file_plugin SCRIPT FILE SIZE OP [FROM TO]: write an nbdkit sh
# plugin script (nbdkit-sh-plugin(3)) that serves FILE as a SIZE-byte
# disk whose OP (pread, pwrite or flush) fails with EIO; with FROM and
# TO, only requests that overlap [FROM, TO) fail.  Serve it with
# "start_nbdkit NAME sh SCRIPT".
faulty_file_plugin ()
{
  _from=${5:-0}
  _to=${6:-$3}
  cat >"$1" <<EOF2
#!/bin/sh
# pread and pwrite get HANDLE COUNT OFFSET FLAGS; pwrite's data is on
# stdin.  fails METHOD: true if this request is one to fail.
fails () { [ "\$1" = $4 ] && [ "\$4" -lt $_to ] && [ \$((\$4 + \$3)) -gt $_from ]; }
case "\$1" in
  get_size) echo $3 ;;
  can_write | can_flush) exit 0 ;;
  pread)
    if fails "\$@"; then
      echo "EIO injected read error at \$4" >&2
      exit 1
    fi
    dd if="$2" iflag=skip_bytes,count_bytes skip="\$4" count="\$3" status=none ;;
  pwrite)
    if fails "\$@"; then
      cat >/dev/null
      echo "EIO injected write error at \$4" >&2
      exit 1
    fi
    dd of="$2" oflag=seek_bytes conv=notrunc seek="\$4" status=none ;;
  flush)
    if [ $4 = flush ]; then
      echo "EIO injected flush error" >&2
      exit 1
    fi ;;
  *) exit 2 ;;
esac
EOF2
  chmod +x "$1"
}

# most_in_flight FILE: the largest requests x size in the -v "depth:"
# lines of FILE (tools/lib/depth.h), 0 if the depth never changed.
most_in_flight ()
{
  sed -n 's/.* depth: \([0-9]*\) requests of \([0-9]*\) bytes .*/\1 \2/p' "$1" |
    awk 'BEGIN { m = 0 } { if ($1 * $2 > m) m = $1 * $2 } END { print m }'
}

# most_requests FILE / largest_request FILE: the most requests, and
# the largest request size in bytes, of the -v "depth:" lines of FILE,
# each on its own (0 if the depth never changed).  The product alone
# (most_in_flight) would pass a depth that kept its bytes in flight by
# trading one for the other past a bound.
most_requests ()
{
  sed -n 's/.* depth: \([0-9]*\) requests of [0-9]* bytes .*/\1/p' "$1" |
    awk 'BEGIN { m = 0 } { if ($1 > m) m = $1 } END { print m }'
}

largest_request ()
{
  sed -n 's/.* depth: [0-9]* requests of \([0-9]*\) bytes .*/\1/p' "$1" |
    awk 'BEGIN { m = 0 } { if ($1 > m) m = $1 } END { print m }'
}

# max_rss_kib COMMAND...: run COMMAND, with the mark, its output to
# /dev/null, and print the most memory it ever had resident, in KiB
# (getrusage's ru_maxrss); fails the test if the command fails.
max_rss_kib ()
{
  python3 -c '
import resource, subprocess, sys
r = subprocess.run(["env", sys.argv[1]] + sys.argv[2:], stdout=subprocess.DEVNULL)
if r.returncode != 0:
    sys.exit("max_rss_kib: %s failed: %d" % (sys.argv[2], r.returncode))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$mark" "$@" || fail "$* failed"
}

# served_at_start FILE: the requests an adapting depth may keep in
# flight at the start, from the -v output in FILE: 16 (SERVED_AT_ONCE
# in tools/lib/bounds.h) per connection to each server, from the lines
# that say how many connections each has.
served_at_start ()
{
  sed -n 's/.*: \([0-9]*\) connections* (.*/\1/p' "$1" |
    awk '{ n += 16 * $1 } END { print n }'
}

# served_at_once FILE: the most it may keep in flight: more than at the
# start where the lines of connections opened later (tools/lib/spread.h)
# say so.
served_at_once ()
{
  { served_at_start "$1"
    sed -n 's/.*connections: \([0-9]*\) requests served at once.*/\1/p' "$1"
  } | sort -n | tail -n 1
}

# server_saw WHAT LOGFILE...: what the servers behind nbdkit's log
# filter saw, their logfiles merged in time order.  WHAT is one of the
# words below, or several in one argument, whose values are printed on
# one line in the same order (read -r a b <<<"$(server_saw 'a b' ...)"),
# so that the logs are read once:
#   connections     how many connections were made;
#   requests        the most reads, writes, zeroes and trims in flight
#                   at once, over every connection of every log;
#   per-connection  the most of them in flight on one connection;
#   bytes           the most bytes of reads and writes in flight at
#                   once (a zero or a trim carries none);
#   largest         the largest read or write, in bytes (a zero or a
#                   trim is no bigger for a larger request size);
#   smallest        the smallest read or write, in bytes.
# A request is in flight from its line to the line of its return.  A
# server counts only what its threads have taken up, never a request
# still queued in its socket, so what it saw is at most what the client
# kept in flight: a bound checked here holds for the client too, and a
# growth seen here is one the client made.  Give nbdkit more threads
# (-t) than the bound to check, or it cannot see a client pass it.
server_saw ()
{
  _what=$1; shift
  for _log in "$@"; do
    [ -r "$_log" ] || fail "server_saw: no log $_log"
  done
  _i=0
  for _log in "$@"; do
    _i=$((_i + 1))
    awk -v tag="$_i" '
      function hex(s,  n, i) {
        s = tolower(substr(s, 3)); n = 0
        for (i = 1; i <= length(s); i++)
          n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
        return n
      }
      $4 == "Connect" { print $1, $2, "C", tag ":" $3, "-", 0 }
      $4 ~ /^(Read|Write|Zero|Trim)$/ && $7 ~ /^count=/ {
        print $1, $2, "+", tag ":" $3, $5, hex(substr($7, 7)), $4
      }
      $4 ~ /^\.\.\.(Read|Write|Zero|Trim)$/ {
        print $1, $2, "-", tag ":" $3, $5, 0
      }' "$_log"
  done |
    sort -s -k1,2 |
    awk -v what="$_what" '
      $3 == "C" { conns++ }
      $3 == "+" {
        size[$4 " " $5] = ($7 == "Zero" || $7 == "Trim") ? 0 : $6
        n++; bytes += size[$4 " " $5]; on[$4]++
        if (n > most) most = n
        if (bytes > most_bytes) most_bytes = bytes
        if (on[$4] > most_on) most_on = on[$4]
        if ($7 != "Zero" && $7 != "Trim") {
          if ($6 > largest) largest = $6
          if (smallest == "" || $6 < smallest) smallest = $6
        }
      }
      $3 == "-" && ($4 " " $5) in size {
        n--; bytes -= size[$4 " " $5]; on[$4]--
        delete size[$4 " " $5]
      }
      END {
        v["connections"] = conns + 0
        v["requests"] = most + 0
        v["per-connection"] = most_on + 0
        v["bytes"] = most_bytes + 0
        v["largest"] = largest + 0
        v["smallest"] = smallest + 0
        n = split(what, w, " ")
        for (i = 1; i <= n; i++) {
          if (!(w[i] in v)) exit 1
          line = line (i > 1 ? " " : "") v[w[i]]
        }
        print line
      }' || fail "server_saw: no such count in: $_what"
}

# log_count LOGFILE COMMAND: how many COMMAND requests (Read, Write,
# Zero, Trim, Extents, Flush) the server behind nbdkit's log filter was
# sent, on all its connections.
log_count ()
{
  grep -c " $2 id=" "$1" || :
}
