#!/usr/bin/env bash
# Every program's error paths under valgrind's memcheck: a read error, a
# write error, a zero error, a refused connection and a bad option must
# end with the program's own exit status 1 and one line on stderr, and
# valgrind must find nothing: no invalid access, no thread left running
# (its stack shows as "possibly lost") and no leak.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit valgrind
requires_no_sanitizers "valgrind cannot run a program built with AddressSanitizer"
requires_nbdkit_filter error
requires_nbdkit_filter blocksize-policy

mib=$((1024 * 1024))

# The cases run in two lanes at once, for valgrind's runs are slow and
# each keeps a CPU busy: errors from NBD servers (the first lane, in
# the test's shell, which starts and restarts the servers), and captive
# servers, local files and streams (the second, in the background,
# where a failure ends its subshell).  vg_lane N: the valgrind command
# line and the files of lane N, its logs and its runs' stderr.
vg_lane ()
{
  lane=$1
  vg=(valgrind --quiet --error-exitcode=9 --leak-check=full
      --errors-for-leak-kinds=definite,possible
      --log-file="$tmpdir/vg$lane.%p")
}

# vg_clean WHAT: valgrind wrote nothing in any log.  With --quiet it
# writes only what it finds, and one log a process (%p): a child that
# nbd-evsum forks for each image writes its own, and the status 9 it
# ends with becomes nbd-evsum's own 1, which a test expecting a
# failure would take for the one it expects.  So the logs, not the
# status alone, are the verdict.
vg_clean ()
{
  _dirty=
  for _f in "$tmpdir"/vg$lane.*; do
    [ -s "$_f" ] || continue
    cat "$_f" >&2
    _dirty=1
  done
  [ -z "$_dirty" ] || fail "valgrind found errors in: $1"
  rm -f "$tmpdir"/vg$lane.*
}

# under_valgrind TEXT CMD...: CMD fails with status 1 (or $want_status)
# and TEXT in its one line on stderr, and valgrind reports no error.
under_valgrind ()
{
  _text=$1; shift
  rm -f "$tmpdir"/vg$lane.*
  set +e
  "${vg[@]}" "$@" >/dev/null 2>"$tmpdir/err$lane"
  _status=$?
  set -e
  vg_clean "$*"
  [ $_status -ne 9 ] || fail "valgrind found errors in: $*"
  [ $_status -eq "${want_status:-1}" ] ||
    fail "$*: exit status $_status, expected ${want_status:-1}"
  [ "$(wc -l <"$tmpdir/err$lane")" -eq 1 ] || { cat "$tmpdir/err$lane"; fail "$*: not one line on stderr"; }
  grep -qF -- "$_text" "$tmpdir/err$lane" || { cat "$tmpdir/err$lane"; fail "$*: no '$_text'"; }
  echo "ok: $*"
}

# The second lane.  Its one NBD server, a destination that refuses
# every write, is started here, where cleanup knows it.
start_nbdkit fdst --filter=error memory 16M error-pwrite=EIO \
  error-pwrite-rate=100%
{
  vg_lane 2
  # Captive servers (tools/lib/captive.c): one that does not start, whose
  # message comes from its log; a new destination file removed again
  # after a failed check; and several images, one missing, each hashed in
  # a child process (valgrind follows the fork).  The servers are stopped
  # at exit by closing their handles.
  under_valgrind "the server said: nbdkit: error" \
    nbd-evsum -- [ nbdkit nosuchplugin ]
  under_valgrind "minimum block size 4096" \
    nbd-evcopy --no-extents --no-sparse --request-size=6k -- \
    [ nbdkit --filter=blocksize-policy pattern 1M blocksize-minimum=4096 ] \
    "$tmpdir/new.raw"
  [ ! -e "$tmpdir/new.raw" ] || fail "nbd-evcopy left new.raw behind"
  under_valgrind "missing.raw: No such file or directory" \
    nbd-evsum [ nbdkit pattern 1M ] "$tmpdir/missing.raw" [ nbdkit pattern 2M ]

  # Local files read and written through io_uring (tools/lib/file.c):
  # a copy and a verified copy that succeed, and a file whose server
  # refuses every write.
  nbdkit -U - sparse-random 8M seed=2 percent=40 runlength=100000 \
    --run "nbdcopy \"\$uri\" $tmpdir/file.raw" || fail "cannot make file.raw"
  for opts in "" --verify; do
    rm -f "$tmpdir/copy.raw"
    "${vg[@]}" nbd-evcopy $opts "$tmpdir/file.raw" "$tmpdir/copy.raw" \
      >/dev/null || { vg_clean "nbd-evcopy $opts"; fail "nbd-evcopy $opts of a file"; }
    vg_clean "nbd-evcopy $opts of a file"
    cmp "$tmpdir/file.raw" "$tmpdir/copy.raw" || fail "$opts: the copy differs"
  done
  "${vg[@]}" nbd-evsum "$tmpdir/file.raw" >/dev/null ||
    { vg_clean "nbd-evsum of a file"; fail "nbd-evsum of a file"; }
  vg_clean "nbd-evsum of a file"
  under_valgrind "write failed" nbd-evcopy "$tmpdir/file.raw" "$fdst"

  # Streams (tools/lib/stream.c): a file to a pipe and a pipe to a new
  # file, nbd-evsum of standard input, and a reader that goes away
  # (EPIPE).  Each status of a pipeline from PIPESTATUS, which set -e and
  # || see only the last of.
  set +e
  "${vg[@]}" nbd-evcopy "$tmpdir/file.raw" - 2>/dev/null | cmp - "$tmpdir/file.raw"
  statuses=${PIPESTATUS[*]}
  set -e
  vg_clean "a file to a pipe"
  [ "$statuses" = "0 0" ] || fail "a file to a pipe: statuses $statuses"
  rm -f "$tmpdir/copy.raw"
  set +e
  cat "$tmpdir/file.raw" | "${vg[@]}" nbd-evcopy - "$tmpdir/copy.raw"
  statuses=${PIPESTATUS[*]}
  set -e
  vg_clean "a pipe to a file"
  [ "$statuses" = "0 0" ] || fail "a pipe to a file: statuses $statuses"
  cmp "$tmpdir/file.raw" "$tmpdir/copy.raw" || fail "a pipe to a file: differs"
  set +e
  cat "$tmpdir/file.raw" | "${vg[@]}" nbd-evsum - >/dev/null
  statuses=${PIPESTATUS[*]}
  set -e
  vg_clean "nbd-evsum -"
  [ "$statuses" = "0 0" ] || fail "nbd-evsum -: statuses $statuses"
  set +e
  "${vg[@]}" nbd-evcopy "$tmpdir/file.raw" - 2>"$tmpdir/err$lane" | head -c 1000 >/dev/null
  status=${PIPESTATUS[0]}
  set -e
  vg_clean "EPIPE"
  [ "$status" -eq 1 ] || fail "EPIPE under valgrind: status $status"
  grep -q "Broken pipe" "$tmpdir/err$lane" || fail "EPIPE under valgrind: $(cat "$tmpdir/err$lane")"
} &
lane2=$!

# The first lane.  The servers are restarted for each case: nbdkit 1.32
# may abort when a client disconnects with replies pending, as these
# programs do on error.
vg_lane 1
servers ()
{
  [ ! -e "$tmpdir/src.pid" ] || stop_server src dst
  start_nbdkit src "$@"
  start_nbdkit dst --filter=error memory 16M error-pwrite=EIO \
    error-pwrite-rate=100% error-zero=EIO error-zero-rate=100%
}

servers --filter=error pattern 16M error-pread=EIO error-pread-rate=100%
under_valgrind "read failed" nbd-evcopy --no-extents --no-sparse "$src" "$dst"
servers --filter=error pattern 16M error-pread=EIO error-pread-rate=100%
under_valgrind "read failed" nbd-evcopy "$src" "$dst"
servers --filter=error pattern 16M error-pread=EIO error-pread-rate=100%
under_valgrind "read failed" nbd-evsum "$src"

servers pattern 16M
under_valgrind "write failed" nbd-evcopy --no-extents --no-sparse "$src" "$dst"
servers pattern 16M
under_valgrind "write failed" nbd-evcopy "$src" "$dst"
# All zero: with --allocated the one zero command must be sent.
servers data '' size=16M
under_valgrind "zero failed" nbd-evcopy --allocated "$src" "$dst"

none="nbd+unix:///?socket=$tmpdir/none.sock"
under_valgrind "cannot connect" \
  nbd-evcopy --no-extents --no-sparse "$none" "$dst"
under_valgrind "cannot connect" nbd-evcopy "$none" "$dst"
under_valgrind "cannot connect" nbd-evsum "$none"

# (Options before the bad one only set flags: with --no-extents
# --no-sparse first, nbd-evcopy takes the same path out.)
under_valgrind "unknown or ambiguous option" nbd-evcopy --bogus "$src" "$dst"
under_valgrind "unknown or ambiguous option" nbd-evsum --bogus "$src"

# With the hash threads of --checksum and --verify running: a read
# error, a write error, a destination whose reads fail in the verify
# pass, and a destination that stores nothing (nbdkit null reads back
# zeroes), which fails the comparison itself.  The last two copy all
# of their source before the verify pass fails, which under valgrind
# is most of their time: 4 MiB, each from a source of its own.
servers --filter=error pattern 16M error-pread=EIO error-pread-rate=100%
under_valgrind "read failed" nbd-evcopy --checksum "$src" "$dst"
servers pattern 16M
under_valgrind "write failed" nbd-evcopy --verify "$src" "$dst"
start_nbdkit vsrc pattern 4M
start_nbdkit unreadable --filter=error memory 4M error-pread=EIO \
  error-pread-rate=100%
under_valgrind "destination: read failed" \
  nbd-evcopy --verify -C 1 "$vsrc" "$unreadable"
start_nbdkit vsrc2 pattern 4M
start_nbdkit blackhole null 4M
# A mismatch has its own status, 2.
want_status=2 under_valgrind "verify failed" nbd-evcopy --verify "$vsrc2" "$blackhole"

wait $lane2 || fail "the second lane failed (its message is above)"
