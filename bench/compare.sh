#!/usr/bin/env bash
# compare.sh: make bench-compare, two builds side by side.
#
#   make bench-compare OLD=REV-OR-DIR NEW=REV-OR-DIR [BENCH_ONLY=IDS]
#     [BENCH_COMMANDS='LABEL|LABEL'] [OLD_ENV='VAR=value ...']
#     [NEW_ENV='VAR=value ...'] [BENCH_RUNS=N] [QUICK=1] [BLKSUM=PATH]
#
# or, with the same variables in the environment, bench/compare.sh
# itself: make turns every failure into its own exit status 2, and a
# bisect needs this script's own (below):
#
#   cp -r bench /tmp/nbd-libev-bench
#   git bisect start BAD GOOD
#   git bisect run env OLD=GOOD NEW=HEAD BENCH_ONLY=3a \
#     /tmp/nbd-libev-bench/compare.sh
#
# The copy keeps the harness, and so the comparisons, the same at every
# step while bisect checks out older revisions; it builds the
# revisions of the repository it is run in (git bisect run runs it at
# the top of the work tree), where the harness in bench/ of a checkout
# builds those of its own.
#
# OLD and NEW are each a git revision of that repository, built here in
# a scratch copy outside the source tree (kept in $BENCH_BUILDS, by
# default ${TMPDIR:-/tmp}/nbd-libev-builds, so that a bisect builds each
# revision once), or a directory that holds built programs: a build
# tree (its tools/ and examples/; "." under make is this one), or a
# directory of programs itself (tools/, examples/, an installed bin/,
# which has the tools but never the lessons).  OLD_ENV and NEW_ENV are
# set for that side's commands only, words split on spaces:
# NEW_ENV='LD_LIBRARY_PATH=/path/to/libnbd/lib/.libs' compares two
# libnbd builds with one build of the programs.
#
# The programs are in two layers since the split into lessons
# (examples/: copy-libev and the others) and tools (tools/: nbd-evcopy,
# nbd-evsum), and the comparisons run both (comparisons.sh says which
# runs where).  A side runs a command only if it holds every program
# of the suite that the command names; it is never left to find one
# elsewhere on PATH, which would compare one build with itself.  A
# revision from before the split has only examples/, with the old
# programs under the lessons' names: it cannot be compared on a
# command that runs a tool (exit 125, as for any revision that cannot
# run a command), only on the lesson's rows, and there its copy-libev
# is the old program, with its options and its several connections.
# Revisions at or after the split have both layers.
#
# The comparisons are make bench's (bench/comparisons.sh), chosen by
# BENCH_ONLY, and their commands by BENCH_COMMANDS (labels as in the
# report, separated by '|'; default all).  Each command runs BENCH_RUNS
# rounds (default 10) after one warm-up round; a round runs it once for
# each side, OLD then NEW in odd rounds and NEW then OLD in even ones,
# on the same servers, reset before every run as make bench resets
# them.  Server start-up is not timed.  Each run records the wall time
# and the client's CPU time (user + system of the command's process
# tree), and its instruction count where perf can count them.
#
# bench/compare.py turns the runs into a report (on stdout and in
# $BENCH_RESULTS/compare-DATE-HOST.md): for each command and metric,
# the NEW/OLD ratio with its confidence interval and a verdict.  The
# exit status, of this script (make's is 2 for any failure), is git
# bisect run's: 0 when no command regressed, 1 when one did, 125 when a
# revision cannot be built (or one of its programs cannot run a
# command, as an old revision without an option or without the tools
# may not), 255 when the harness itself fails (which ends a bisect).
set -e
set -u
set -o pipefail

prog=compare.sh
bench=$(cd "$(dirname "$0")" && pwd)
servers="$bench/servers.sh"
# The repository whose revisions OLD and NEW name: the one this script
# is in, or, for a copy outside it (a bisect's), the one it runs in.
srcdir=$(dirname "$bench")
if [ ! -e "$srcdir/.git" ]; then
  srcdir=$(git rev-parse --show-toplevel 2>/dev/null) || srcdir=$(dirname "$bench")
fi

die ()
{
  echo "$prog: $*" >&2
  exit 255
}

cannot_test ()
{
  echo "$prog: $*" >&2
  exit 125
}

[ -n "${OLD:-}" ] && [ -n "${NEW:-}" ] ||
  die "usage: make bench-compare OLD=REV-OR-DIR NEW=REV-OR-DIR [BENCH_ONLY=IDS]"
case ${QUICK:-} in
  ""|0|no) quick= ;;
  *) quick=1 ;;
esac
only=${BENCH_ONLY:-}
if [ -n "$quick" ]; then runs=${BENCH_RUNS:-2}; else runs=${BENCH_RUNS:-10}; fi
case $runs in
  ''|*[!0-9]*|0|1) die "BENCH_RUNS=$runs: at least 2 rounds" ;;
esac
results=${BENCH_RESULTS:-$bench/results}
builds=${BENCH_BUILDS:-${TMPDIR:-/tmp}/nbd-libev-builds}
read -r -a old_env <<<"${OLD_ENV:-}"
read -r -a new_env <<<"${NEW_ENV:-}"

for c in nbdkit qemu-nbd qemu-img nbdcopy python3 /usr/bin/time; do
  command -v "$c" >/dev/null 2>&1 || die "$c not found"
done

# The suite's programs, the lessons' and the tools', old and new: a
# command runs on a side only if that side holds every one it names.
suite_programs="copy-libev zero-extent-copy-libev checksum-libev nbd-evcopy nbd-evsum"

# holds_programs DIR: true if DIR holds any of the suite's programs.
holds_programs ()
{
  local p
  for p in $suite_programs; do
    [ -x "$1/$p" ] && return 0
  done
  return 1
}

# side_path VALUE: the directories, as a PATH prefix, that hold VALUE's
# programs (its tools/, then examples/), building VALUE first if it is
# a revision.  Runs in a command substitution, so that die and
# cannot_test end the script with their status through set -e.
side_path ()
{
  local v=$1 rev dir path= d
  if [ -d "$v" ]; then
    v=$(cd "$v" && pwd)
    for d in "$v/tools" "$v/examples"; do
      if holds_programs "$d"; then
        path=${path:+$path:}$d
      fi
    done
    if [ -z "$path" ] && holds_programs "$v"; then
      path=$v
    fi
    [ -n "$path" ] ||
      die "$1 holds no built programs (none of $suite_programs in it, or in its tools/ or examples/)"
    echo "$path"
    return 0
  fi
  rev=$(git -C "$srcdir" rev-parse --verify --quiet "$v^{commit}") ||
    cannot_test "'$v' is neither a directory nor a revision of $srcdir"
  dir=$builds/$rev
  # The stamp says the build finished: a build that failed half-way may
  # have left some programs behind.
  if [ ! -e "$dir/.bench-built" ]; then
    echo "$prog: building $v ($rev) in $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    git -C "$srcdir" archive "$rev" | tar -x -C "$dir" ||
      die "cannot extract $rev into $dir"
    # The packages are autogen.sh's business; a build needs only these.
    # The copy has no git history, so the man pages take their date from
    # the commit (docs/build-man.sh wants one, for reproducible pages).
    (cd "$dir" && autoreconf -fi && ./configure &&
       SOURCE_DATE_EPOCH=$(git -C "$srcdir" log -1 --format=%ct "$rev") \
         make -j"$(nproc)") >"$dir.log" 2>&1 ||
      cannot_test "$v ($rev) does not build; its log is $dir.log"
    touch "$dir/.bench-built"
  fi
  # Before the split into lessons and tools, only examples/.
  for d in "$dir/tools" "$dir/examples"; do
    [ ! -d "$d" ] || path=${path:+$path:}$d
  done
  echo "$path"
}

old_path=$(side_path "$OLD")
new_path=$(side_path "$NEW")

# lacks PATH-PREFIX COMMAND: the first of the suite's programs that
# COMMAND runs and no directory of PATH-PREFIX holds, if any.
lacks ()
{
  local words dirs w p d found
  read -r -a words <<<"$2"
  for w in "${words[@]}"; do
    for p in $suite_programs; do
      [ "$w" = "$p" ] || continue
      found=
      IFS=: read -r -a dirs <<<"$1"
      for d in "${dirs[@]}"; do
        [ ! -x "$d/$p" ] || found=1
      done
      [ -n "$found" ] || { echo "$p"; return 0; }
    done
  done
  return 0
}

# check_side SIDE VALUE PATH-PREFIX INDEX: stop unless the side can run
# command INDEX: 125 for a revision (a bisect skips it: one from before
# the split has no tools), 255 for a directory (the harness was given
# the wrong one).
check_side ()
{
  local missing
  missing=$(lacks "$3" "${commands[$4]}")
  [ -n "$missing" ] || return 0
  if [ -d "$2" ]; then
    die "$id: '${labels[$4]}' needs $missing, which $1=$2 does not hold (in $3)"
  fi
  cannot_test "$id: '${labels[$4]}' needs $missing, which $1=$2 does not have" \
    "(in $3): a revision from before the split into lessons (examples/)" \
    "and tools (tools/) cannot run the tools' commands; BENCH_COMMANDS" \
    "can choose the lesson's rows (copy-libev) instead"
}

# Instruction counts where perf can count them: on many virtual
# machines the hardware counters are not there, and perf says
# "<not supported>".
perf_ok=
if command -v perf >/dev/null 2>&1 &&
   perf stat -x, -e instructions -o /dev/stdout true 2>/dev/null |
     grep -q '^[0-9][0-9]*,'; then
  perf_ok=1
fi

# The comparisons, their sizes and how they are declared.
source "$bench/comparisons.sh"

mkdir -p "$results"
name="compare-$(date +%Y-%m-%d-%H%M%S)-$(hostname -s)"
[ -z "$quick" ] || name="$name-quick"
record=$(mktemp "${TMPDIR:-/tmp}/nbd-libev-compare.XXXXXX")
BENCH_STATE=$(mktemp -d "${TMPDIR:-/tmp}/nbd-libev-benchrun.XXXXXX")
export BENCH_STATE
cleanup ()
{
  status=$?
  trap - EXIT INT TERM
  "$servers" stop-all || :
  link_cleanup
  rm -rf "$BENCH_STATE" "$record" "$record".*
  exit $status
}
trap cleanup EXIT
trap 'exit 255' INT TERM
ln -s "$servers" "$BENCH_STATE/servers.sh"
SRC="nbd+unix:///?socket=$BENCH_STATE/src.sock"
DST="nbd+unix:///?socket=$BENCH_STATE/dst.sock"
export SRC DST
# blksum's rows, if BLKSUM names it, run the same blksum on both sides.
blksum_ready || die "BLKSUM=$BLKSUM cannot run; unset it to leave blksum's rows out"

# wanted LABEL: true if BENCH_COMMANDS selects the command.
wanted ()
{
  [ -z "${BENCH_COMMANDS:-}" ] && return 0
  local IFS='|' w
  for w in $BENCH_COMMANDS; do
    [ "$w" = "$1" ] && return 0
  done
  return 1
}

# measure SIDE ROUND INDEX: one timed run of command INDEX for SIDE
# (old or new), appended to the record unless ROUND is 0 (warm-up).
measure ()
{
  local side=$1 round=$2 i=$3 dir envs instr=
  if [ "$side" = old ]; then
    dir=$old_path; envs=("${old_env[@]}")
  else
    dir=$new_path; envs=("${new_env[@]}")
  fi
  [ "$fresh" != yes ] || sh -c "$prepare" >/dev/null 2>&1 ||
    die "$id: servers did not start: $prepare"
  local timed=(/usr/bin/time -f '%e %U %S' -o "$record.t" sh -c "${commands[$i]}")
  [ -z "$perf_ok" ] ||
    timed=(perf stat -x, -e instructions -o "$record.p" -- "${timed[@]}")
  if ! env ${envs[@]+"${envs[@]}"} PATH="$dir:$PATH" "${timed[@]}" \
         >/dev/null 2>"$record.err"; then
    cat "$record.err" >&2
    cannot_test "$id: '${labels[$i]}' failed for $side ($dir)"
  fi
  [ -z "$perf_ok" ] || instr=$(sed -n 's/^\([0-9][0-9]*\),.*instructions.*/\1/p' "$record.p")
  [ "$round" -eq 0 ] ||
    printf '%s\t%s\t%s\t%d\t%s\t%s\n' "$id" "${labels[$i]}" "$side" "$round" \
      "$(cat "$record.t")" "${instr:--}" >>"$record"
}

ran=0
run ()
{
  selected "$id" || return 0
  local prepare i r
  prepare_command
  printf 'comparison\t%s\t%s\n' "$id" "$title" >>"$record"
  echo "=== $id. $title" >&2
  if [ "$fresh" != yes ]; then
    sh -c "$prepare" >/dev/null 2>&1 || die "$id: servers did not start: $prepare"
  fi
  for i in "${!labels[@]}"; do
    wanted "${labels[$i]}" || continue
    check_side OLD "$OLD" "$old_path" "$i"
    check_side NEW "$NEW" "$new_path" "$i"
    echo "  ${labels[$i]}: $runs rounds" >&2
    # Round 0 warms both up (the page cache, the servers) unrecorded.
    for r in $(seq 0 "$runs"); do
      if [ $((r % 2)) -eq 1 ]; then
        measure old "$r" "$i"; measure new "$r" "$i"
      else
        measure new "$r" "$i"; measure old "$r" "$i"
      fi
    done
    ran=$((ran + 1))
  done
  "$servers" stop-all
}

define_comparisons
[ "$ran" -gt 0 ] || die "BENCH_ONLY='$only' BENCH_COMMANDS='${BENCH_COMMANDS:-}' selects no command"

set +e
python3 "$bench/compare.py" --old "$OLD" --new "$NEW" \
  --old-dir "$old_path" --new-dir "$new_path" \
  --old-env "${OLD_ENV:-}" --new-env "${NEW_ENV:-}" \
  --output "$results/$name.md" "$record"
status=$?
set -e
case $status in
  0|1) echo "$prog: report in $results/$name.md" >&2; exit $status ;;
  *) die "compare.py failed" ;;
esac
