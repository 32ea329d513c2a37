#!/usr/bin/env bash
# tests/watchdog.sh TEST [ARGS...]: run one test of make check under a
# time limit (Makefile.am's LOG_COMPILER and SH_LOG_COMPILER).
#
# A program whose --timeout is broken, or a test that waits for an
# event that never comes, must fail the suite, not hang it.  The test
# runs in a process group of its own; when the limit passes, the whole
# group gets SIGTERM, so that the test's EXIT trap stops its servers,
# then SIGKILL if anything of it is still there 10 s later, and the
# test fails with a line that names it, whatever its own status was.
#
# The limit is TEST_TIME_LIMIT seconds (default 600, three times that
# in a sanitizer build).  The longest tests take under a minute under
# make -j2 on two CPUs, and make check-bench's run of bench-quick.sh on
# every comparison about two; the margin is for a machine slower still,
# and for AddressSanitizer, which makes every program slower.

set -u

limit=${TEST_TIME_LIMIT:-600}
if [ "${SANITIZERS:-no}" = yes ] && [ -z "${TEST_TIME_LIMIT:-}" ]; then
  limit=$((limit * 3))
fi

# group_alive PGID: true while any process of the group has not exited.
# A zombie has, and counts as gone, as in bench/alive.sh: a daemonised
# server's parent is init, which may reap it about a second late, and
# "kill -0" on the group would wait that second out after every test.
group_alive ()
{
  ps -e -o pgid=,stat= |
    awk -v g="$1" '$1 == g && $2 !~ /^Z/ { n++ } END { exit !n }'
}

# group_ends PGID SECONDS: wait until the group is gone, or for SECONDS;
# true if it is gone.
group_ends ()
{
  local end=$((SECONDS + $2))
  while [ "$SECONDS" -lt "$end" ]; do
    group_alive "$1" || return 0
    sleep 0.1
  done
  ! group_alive "$1"
}

# set -m: the test becomes the leader of a new process group, which
# takes with it every process it starts that does not leave the group
# itself (nbdkit and qemu-nbd daemons do; the test's trap stops them).
set -m
"$@" &
test_pid=$!
set +m

# make's SIGINT or SIGTERM reaches this shell's group, not the test's:
# pass it on.
trap 'kill -TERM -- "-$test_pid" 2>/dev/null' INT TERM

sleep "$limit" &
sleep_pid=$!

# Whichever ends first; wait -n also returns when a signal arrives
# (finished is then empty): wait again.
while :; do
  finished=
  wait -n -p finished "$test_pid" "$sleep_pid"
  status=$?
  [ -z "$finished" ] || break
done

if [ "$finished" = "$test_pid" ]; then
  kill "$sleep_pid" 2>/dev/null
  wait "$sleep_pid" 2>/dev/null
  # What the test started in its group and left running (a background
  # job it did not wait for) would outlive it unseen: stop it and fail
  # the test.  The servers a test started are in its group too, and
  # its EXIT trap has only signalled them: give them 20 s to exit (a
  # server whose close is delayed finishes it first).
  if ! group_ends "$test_pid" 20; then
    echo "FAIL: $1 left running in its process group:" >&2
    ps -e -o pgid=,pid=,args= | awk -v g="$test_pid" '$1 == g' >&2
    kill -TERM -- "-$test_pid" 2>/dev/null
    [ "$status" -ne 0 ] || status=1
  fi
  # For whoever tunes the limit: how long the test took.
  echo "$1: $SECONDS s of the $limit s limit"
  exit "$status"
fi

echo "FAIL: $1 timed out: still running after $limit s (TEST_TIME_LIMIT)" >&2
kill -TERM -- "-$test_pid" 2>/dev/null
if ! group_ends "$test_pid" 10; then
  echo "FAIL: $1: still running 10 s after SIGTERM; killed" >&2
  kill -KILL -- "-$test_pid" 2>/dev/null
fi
wait "$test_pid" 2>/dev/null
exit 1
