#!/usr/bin/env bash
# A few interrupt rounds of tests/hostile.py (make check-resume runs as
# many as asked): nbd-evcopy stopped by SIGINT, SIGTERM or SIGKILL at
# the K-th write of its destination's server, or the K-th read of its
# source for a file or pipe destination; every block of the
# destination is then its old bytes or the source's, and the printed
# --resume command (the same command again, after SIGKILL) gives an
# exact copy.  A pipe holds exactly the source's bytes below the
# offset reported, and is offered no --resume.  The rounds are those of
# tests/resume-rounds.txt, the quickest of each outcome class that
# hostile.py's COVER_ROUNDS names (into NBD after SIGINT, a file after
# SIGTERM, a pipe after SIGINT, a new file after SIGKILL), each checked
# to end so; make hostile-cover writes the file again.
# A failure is one to replay with make check-resume ROUND=K.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy
requires_nbdkit_filter delay
requires_nbdkit_filter log

list=$abs_top_srcdir/tests/resume-rounds.txt
grep '^ok ' "$list" >"$tmpdir/want"
rounds=$(sed 's/^ok \([0-9]*\):.*/\1/' "$tmpdir/want" | paste -sd,)
[ -n "$rounds" ] || fail "no round in $list"
python3 "$abs_top_srcdir/tests/hostile.py" --round="$rounds" \
  >"$tmpdir/out" || { cat "$tmpdir/out"; fail "the interrupt rounds failed"; }
cat "$tmpdir/out"
# Every round's signal arrived in the middle of the copy: none is "done
# before the signal".  Whether nbdkit 1.32 aborted after the SIGKILL is
# a race (see hostile.py), so that note is not part of the outcome.
grep '^ok ' "$tmpdir/out" | sort -n -k2 |
  sed "s/ (the source's nbdkit started again)\$//" >"$tmpdir/outcomes"
diff -u "$tmpdir/want" "$tmpdir/outcomes" ||
  fail "a round no longer stops the copy as it is here for (- wanted, + got): make hostile-cover"
