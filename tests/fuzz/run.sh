#!/bin/sh
# make fuzz: run each libFuzzer target of tests/fuzz/ for a while.
#
#   FUZZ_JOBS=N tests/fuzz/run.sh SECONDS SRCDIR TARGET...
#
# runs N targets at once (1 by default), each for SECONDS on a CPU of
# its own.  Run from the build directory of an --enable-fuzzing build.  Each
# target fuzzes a scratch copy of its committed seeds and regression
# inputs (tests/fuzz/work/TARGET/corpus), so that the tree's corpus
# only changes by hand; what libFuzzer found stays there for the next
# run.  A crash, which is also every property that does not hold,
# stops that target and is kept in tests/fuzz/work/TARGET/crashes/;
# the run goes on with the next target and fails at the end, naming
# every crash.  Each target's last line of statistics is printed:
# executions, coverage (cov: edges, ft: features) and corpus size.
set -e

seconds=$1
srcdir=$2
shift 2

# one TARGET: fuzz it; the lines to print go to its work directory's
# summary, the files that show a crash to its crashed.
one ()
{
  target=$1
  work=tests/fuzz/work/$target
  fuzzer=tests/fuzz/fuzz-$target
  mkdir -p "$work/corpus" "$work/crashes"
  for dir in "$srcdir/tests/fuzz/corpus/$target" \
             "$srcdir/tests/fuzz/regress/$target"; do
    if [ -d "$dir" ]; then
      cp "$dir"/* "$work/corpus/" 2>/dev/null || :
    fi
  done
  # -timeout: an input that runs for 10 s is a hang, which is a bug.
  status=0
  "$fuzzer" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/crashes/" "$work/corpus" >"$work/log" 2>&1 ||
    status=$?
  {
    grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$work/log" |
      tail -n 1 | sed "s|^|fuzz: $target: |"
    grep -E '^stat::number_of_executed_units' "$work/log" |
      sed "s|^|fuzz: $target: |"
  } >"$work/summary" || :
  found=$(find "$work/crashes" -type f | sort)
  : >"$work/crashed"
  if [ "$status" -ne 0 ] || [ -n "$found" ]; then
    grep -E 'ERROR|property does not hold|SUMMARY' "$work/log" | head -n 5 |
      sed "s|^|fuzz: $target: |" >>"$work/summary" || :
    if [ -n "$found" ]; then
      echo "$found" >"$work/crashed"
    else
      echo "$work/log" >"$work/crashed"
    fi
  fi
}

for target in "$@"; do
  [ -x "tests/fuzz/fuzz-$target" ] || {
    echo "make fuzz: tests/fuzz/fuzz-$target is not built" >&2
    exit 1
  }
done

# FUZZ_JOBS targets at a time, each on a CPU of its own for the whole
# of its SECONDS; their lines are printed a batch at a time, in the
# order given.
jobs=${FUZZ_JOBS:-1}
crashes=
batch=
n=0
# finish: wait for the batch, print its lines, collect its crashes.
finish ()
{
  wait
  for t in $batch; do
    cat "tests/fuzz/work/$t/summary"
    crashes="$crashes $(cat "tests/fuzz/work/$t/crashed")"
  done
  batch=
  n=0
}
for target in "$@"; do
  echo "fuzz: $target for $seconds s (log: tests/fuzz/work/$target/log)"
  one "$target" &
  batch="$batch $target"
  n=$((n + 1))
  [ "$n" -lt "$jobs" ] || finish
done
finish
crashes=$(echo $crashes)

if [ -n "$crashes" ]; then
  echo "fuzz: crashes (each belongs in tests/fuzz/regress/TARGET/ with" \
       "its fix):" >&2
  for f in $crashes; do
    echo "  $f" >&2
  done
  exit 1
fi
echo "fuzz: no crash"
