#!/usr/bin/env bash
# calibrate.sh [TRIES]: how often make bench-compare's verdict is right,
# for the copy-libev lesson on nbdkit pattern 1 GiB to nbdkit memory
# (comparison 3a), with the copy-libev found on PATH (make puts the
# build's examples/ there; run it as PATH=$builddir/examples:$PATH
# bench/calibrate.sh).
#
# Two sets of TRIES (default 20) comparisons, each a full run of
# bench/compare.sh with its default number of rounds:
#
#  - same: both sides run copy-libev through the same wrapper, which
#    adds nothing.  Every verdict should be "no significant change".
#  - slower: NEW's wrapper, once copy-libev has finished, spins until it
#    has used 30% more CPU time than copy-libev did.  Every verdict
#    should be "regression".
#
# The wrapper (python3) costs its own start-up on both sides alike.
# Prints one line per try (its verdict and client-CPU ratio) and the
# counts.  BENCH_RUNS, and the like, pass through to compare.sh.
set -e
set -u

tries=${1:-20}
bench=$(cd "$(dirname "$0")" && pwd)
real=$(command -v copy-libev) || { echo "calibrate.sh: no copy-libev on PATH" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/nbd-libev-calibrate.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat >"$work/burn.py" <<'PY'
import resource, subprocess, sys, time
extra = float(sys.argv[1])
status = subprocess.call(sys.argv[2:])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
goal = time.process_time() + extra * (ru.ru_utime + ru.ru_stime)
while time.process_time() < goal:
    pass
sys.exit(status)
PY
for side in same:0 slower:0.3; do
  d=$work/${side%%:*}
  mkdir "$d"
  printf '#!/bin/sh\nexec python3 %s %s %s "$@"\n' \
    "$work/burn.py" "${side#*:}" "$real" >"$d/copy-libev"
  chmod +x "$d/copy-libev"
done

for set in same slower; do
  n_ok=0
  for t in $(seq 1 "$tries"); do
    BENCH_ONLY=3a BENCH_COMMANDS=copy-libev BENCH_RESULTS="$work" \
      OLD="$work/same" NEW="$work/$set" \
      bash "$bench/compare.sh" >"$work/out" 2>/dev/null || :
    v=$(sed -n 's/^- 3a `copy-libev`: //p' "$work/out")
    cpu=$(grep '| client CPU |' "$work/out" | cut -d'|' -f8,9 | tr -s ' ')
    echo "$set $t: $v; client CPU NEW/OLD$cpu"
    case $set:$v in
      same:"no significant change"|slower:regression) n_ok=$((n_ok + 1)) ;;
    esac
  done
  echo "$set: $n_ok of $tries right"
done
