#!/usr/bin/env bash
# A few seeds of the hostile-server campaign (tests/hostile.py; make
# check-hostile runs as many as asked): images of odd sizes and
# layouts, servers with limits, missing capabilities, late replies,
# injected errors and deaths, servers that break the protocol, every
# endpoint; each run judged by its oracles.  The seeds are those of
# tests/hostile-seeds.txt, the quickest of each outcome class that
# hostile.py's COVER_SEEDS names (a refusal, a kill, a timeout, faults
# that must not matter...), and each must still end in its class, so
# that an edit of hostile.py's draws that turns one into a plain copy
# fails here; make hostile-cover writes the file again.  A failure is
# one to replay with make check-hostile SEED=K.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy qemu-nbd
requires_nbdkit_plugin sh
requires_nbdkit_filter blocksize-policy

list=$abs_top_srcdir/tests/hostile-seeds.txt
grep '^ok ' "$list" >"$tmpdir/want"
seeds=$(sed 's/^ok \([0-9]*\):.*/\1/' "$tmpdir/want" | paste -sd,)
[ -n "$seeds" ] || fail "no seed in $list"
python3 "$abs_top_srcdir/tests/hostile.py" --seed="$seeds" --jobs=2 \
  >"$tmpdir/out" || { cat "$tmpdir/out"; fail "the hostile-server campaign failed"; }
cat "$tmpdir/out"
grep '^ok ' "$tmpdir/out" | sort -n -k2 >"$tmpdir/outcomes"
diff -u "$tmpdir/want" "$tmpdir/outcomes" ||
  fail "a seed no longer ends in its class (- wanted, + got): make hostile-cover"
