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
# SIGINT (11), a new file after SIGKILL (23), each checked to end so.
# A failure is one to replay with make check-resume ROUND=K.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy
requires_nbdkit_filter delay
requires_nbdkit_filter log

python3 "$abs_top_srcdir/tests/hostile.py" --round=4,5,11,23 \
  >"$tmpdir/out" || { cat "$tmpdir/out"; fail "the interrupt rounds failed"; }
cat "$tmpdir/out"
# Every round's signal arrived in the middle of the copy: none is "done
# before the signal".  Whether nbdkit 1.32 aborted after the SIGKILL is
# a race (see hostile.py), so that note is not part of the outcome.
grep '^ok ' "$tmpdir/out" | sort -n -k2 |
  sed "s/ (the source's nbdkit started again)\$//" >"$tmpdir/outcomes"
cat >"$tmpdir/want" <<'EOF'
ok 4: nbd: SIGINT, then --resume
ok 5: file: SIGTERM, then --resume
ok 11: pipe: SIGINT, the pipe holds the source below the offset
ok 23: new-file: SIGKILL, then the same command again
EOF
diff -u "$tmpdir/want" "$tmpdir/outcomes" ||
  fail "a round no longer stops the copy as it is here for (- wanted, + got)"
