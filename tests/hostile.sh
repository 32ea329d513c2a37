#!/usr/bin/env bash
# A few seeds of the hostile-server campaign (tests/hostile.py; make
# check-hostile runs as many as asked): images of odd sizes and
# layouts, servers with limits, missing capabilities, late replies,
# injected errors and deaths, every endpoint; each run judged by its
# oracles.  The seeds are fixed, chosen for what they cover: a copy
# from a captive server into qemu-nbd with --resume (1), a zero error
# and the printed command that copies the rest (21), a limit refused
# before the copy (39), a destination killed at its K-th request (87),
# a lesson's read error (196), a read that answers past --timeout, and
# the printed command once the server is back (276).  A failure is one
# to replay with make check-hostile SEED=K.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy qemu-nbd
requires_nbdkit_plugin sh
requires_nbdkit_filter blocksize-policy

python3 "$abs_top_srcdir/tests/hostile.py" --seed=1,21,39,87,196,276 ||
  fail "the hostile-server campaign failed"
