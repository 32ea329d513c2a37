#!/usr/bin/env bash
# A few interrupt rounds of tests/hostile.py (make check-resume runs as
# many as asked): nbd-evcopy stopped by SIGINT, SIGTERM or SIGKILL at
# the K-th write of its destination's server, or the K-th read of its
# source for a file or pipe destination; every block of the
# destination is then its old bytes or the source's, and the printed
# --resume command (the same command again, after SIGKILL) gives an
# exact copy.  A pipe holds exactly the source's bytes below the
# offset reported, and is offered no --resume.  The rounds are fixed:
# into NBD after SIGINT (4), a file after SIGTERM (5), a pipe after
# SIGINT (11), a new file after SIGKILL (23).  A failure is one to
# replay with make check-resume ROUND=K.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy
requires_nbdkit_filter delay
requires_nbdkit_filter log

python3 "$abs_top_srcdir/tests/hostile.py" --round=4,5,11,23 ||
  fail "the interrupt rounds failed"
