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
# the printed command once the server is back (276), faults all inside
# zero extents, which the copy must not meet (86).  Each seed's outcome
# is checked too, so that an edit of hostile.py's draws that turns one
# into a plain copy fails here.  A failure is one to replay with make
# check-hostile SEED=K.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy qemu-nbd
requires_nbdkit_plugin sh
requires_nbdkit_filter blocksize-policy

python3 "$abs_top_srcdir/tests/hostile.py" --seed=1,21,39,86,87,196,276 \
  --jobs=2 >"$tmpdir/out" || {
  cat "$tmpdir/out"; fail "the hostile-server campaign failed"; }
cat "$tmpdir/out"
grep '^ok ' "$tmpdir/out" | sort -n -k2 >"$tmpdir/outcomes"
cat >"$tmpdir/want" <<'EOF'
ok 1: nbd-evcopy: exit 0
ok 21: nbd-evcopy: failed as allowed (injected), then resumed
ok 39: nbd-evcopy: failed as allowed (refused)
ok 86: nbd-evcopy: exit 0, as required: every fault needless
ok 87: nbd-evcopy: failed as allowed (killed)
ok 196: checksum-libev: failed as allowed (injected)
ok 276: nbd-evcopy: failed as allowed (timeout), the server started again, then resumed
EOF
diff -u "$tmpdir/want" "$tmpdir/outcomes" ||
  fail "a seed no longer covers what it is here for (- wanted, + got)"
