#!/usr/bin/env bash
# run.sh: the benchmarks behind the claims in the docs (make bench).
#
# Each comparison is rounds of hyperfine runs, every command once a
# round, in an order that rotates from round to round.  The servers are captive:
# started on Unix sockets in a temporary directory, either once for all
# the runs (when every run leaves them as it found them, a primed
# memory destination included) or in hyperfine's --prepare before every
# run (a new qcow2 or sparse file each time), and stopped at the end or
# on interrupt; their start-up is not timed, only the client is.  Every
# run's client CPU time is recorded beside hyperfine's wall time.
# bench/report.py turns them into a Markdown report that judges each
# claim in numbers, written to $BENCH_RESULTS/DATE-HOST.md and to
# stdout; hyperfine's own output goes to stderr.
#
# Environment (make bench passes the make variables of the same names):
#   QUICK=1        small images, no warm-up, 2 runs: checks the harness
#                  in about a minute; its numbers mean little
#   BENCH_RESULTS  where the report goes (default: bench/results beside
#                  this script)
#   BENCH_ONLY     comparison ids to run, e.g. "2 3a" (default: all)
#   BENCH_ROUNDS   rounds in every comparison, for narrower intervals
#                  (default: 6, or what the comparison sets; QUICK: 2)
#   BLKSUM         blkhash's blksum, for rows beside nbd-evsum (left
#                  out when unset; comparisons.sh's blksum_ready says
#                  how a blksum whose library does not load is run)
#   LIBNBD_COPY_LIBEV
#                  libnbd's examples/copy-libev, built by hand (it is not
#                  packaged), for rows beside the copiers of comparison
#                  11 (left out when unset)
#
# The programs are found on $PATH: the tools (nbd-evcopy, nbd-evsum)
# and the lesson copy-libev; comparisons.sh says which comparison runs
# which.  make bench puts the build's tools/ and examples/ first.  By
# hand:
#   PATH=$builddir/tools:$builddir/examples:$PATH QUICK=1 bench/run.sh
set -e
set -u
set -o pipefail

prog=run.sh
bench=$(cd "$(dirname "$0")" && pwd)
servers="$bench/servers.sh"

die ()
{
  echo "$prog: $*" >&2
  exit 1
}

case ${QUICK:-} in
  ""|0|no) quick= ;;
  *) quick=1 ;;
esac
results=${BENCH_RESULTS:-$bench/results}
only=${BENCH_ONLY:-}
case ${BENCH_ROUNDS:-} in
  '') ;;
  *[!0-9]*|0*|1) die "BENCH_ROUNDS=$BENCH_ROUNDS: a number of rounds, at least 2" ;;
esac

# A benchmark that silently leaves out a program would report a
# comparison that was never made: everything it needs must be there,
# the tools and the lesson that the comparisons run included (the
# lessons are built by make, not installed: put examples/ on PATH).
for c in hyperfine nbdkit qemu-nbd qemu-img nbdcopy gnuplot python3 sha256sum \
         numfmt nbd-evcopy nbd-evsum copy-libev checksum-libev; do
  command -v "$c" >/dev/null 2>&1 || die "$c not found on PATH"
done
nbdkit --filter=delay null --version >/dev/null 2>&1 || die "nbdkit has no delay filter"
for p in pattern memory null sparse-random; do
  nbdkit "$p" --version >/dev/null 2>&1 || die "nbdkit has no $p plugin"
done

# The comparisons, their sizes and how they are declared.
source "$bench/comparisons.sh"

mkdir -p "$results"
name="$(date +%Y-%m-%d-%H%M%S)-$(hostname -s)"
[ -z "$quick" ] || name="$name-quick"
work="$results/$name-json"
mkdir "$work"

BENCH_STATE=$(mktemp -d "${TMPDIR:-/tmp}/nbd-libev-benchrun.XXXXXX")
export BENCH_STATE
hf_pid=
cleanup ()
{
  status=$?
  trap - EXIT INT TERM
  # On an interrupt, hyperfine goes first, so that no --prepare starts
  # a server after the servers have been stopped.
  if [ -n "$hf_pid" ]; then
    kill "$hf_pid" 2>/dev/null || :
    wait "$hf_pid" 2>/dev/null || :
  fi
  "$servers" stop-all || :
  link_cleanup
  rm -rf "$BENCH_STATE"
  [ $status -eq 0 ] || echo "$prog: failed; partial results in $work" >&2
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The commands see the servers as $SRC and $DST.  The report shows
# them that way.
SRC="nbd+unix:///?socket=$BENCH_STATE/src.sock"
DST="nbd+unix:///?socket=$BENCH_STATE/dst.sock"
export SRC DST

blksum_ready || die "BLKSUM=$BLKSUM cannot run; unset it to leave blksum's rows out"

{
  printf 'started\t%s\n' "$(date '+%Y-%m-%d %H:%M:%S %z')"
  printf 'host\t%s\n' "$(hostname)"
  printf 'quick\t%s\n' "${quick:-0}"
  printf 'rounds\t%s\nwarmup\t%s\n' "${BENCH_ROUNDS:-$default_rounds}" "$warmup"
  printf 'load_before\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || :)"
  printf 'srcdir\t%s\n' "$(dirname "$bench")"
  printf 'clk_tck\t%s\ncpus\t%s\n' "$(getconf CLK_TCK)" "$(nproc)"
  [ -z "$blksum" ] || printf 'blksum\t%s\n' "$blksum${blksum_fix:+ ($blksum_fix)}"
  # The revision measured is the one at the start: the tree may change
  # while a long run goes on.
  printf 'git\t%s\n' "$(git -C "$(dirname "$bench")" describe --always --dirty --tags 2>/dev/null || :)"
} >"$work/run.info"
metas=()

run ()
{
  selected "$id" || return 0
  local meta="$work/$id.meta" prepare i args=()
  local rounds=${BENCH_ROUNDS:-${nr_rounds:-$default_rounds}}
  prepare_command
  {
    printf 'id\t%s\ntitle\t%s\nclaim\t%s\n' "$id" "$title" "$claim"
    printf 'baseline\t%s\nfresh\t%s\n' "${baseline:-${labels[0]}}" "$fresh"
    [ -z "$src" ] || printf 'source\t%s\n' "$src"
    [ -z "$dst" ] || printf 'destination\t%s\n' "$dst"
    [ -z "$setup" ] || printf 'setup\t%s\n' "$setup"
    [ -z "$prime" ] || printf 'prime\t%s\n' "$prime"
    [ -z "$chart" ] || printf 'chart\t%s\n' "$chart"
    [ -z "$image" ] || printf 'image\t%s\n' "$image"
    printf 'warmup\t%s\nrounds\t%s\n' "$warmup" "$rounds"
    for i in "${!notes[@]}"; do printf 'note\t%s\n' "${notes[$i]}"; done
    for i in "${!expects[@]}"; do printf 'expect\t%s\n' "${expects[$i]}"; done
    for i in "${!labels[@]}"; do
      printf 'command\t%s\t%s\n' "${labels[$i]}" "${commands[$i]}"
    done
  } >"$meta"
  metas+=("$meta")

  echo "=== $id. $title" >&2
  if [ "$fresh" != yes ]; then
    # Servers that are only read, or written the same way by every run
    # (a primed destination): start them once for all the runs.
    sh -c "$prepare" || die "$id: servers did not start: $prepare"
  fi
  # hyperfine runs all the runs of one command before the next, so
  # whatever drifts during a comparison (the host's load, memory freed
  # by the last servers) would favour one end of the list.  So each
  # round is one hyperfine run of every command once, in an order that
  # rotates from round to round, the warm-up runs in the first round
  # only: drift moves all the commands of a round alike, report.py
  # compares commands round by round, and over as many rounds as there
  # are commands each takes every place once.
  local r order
  for r in $(seq 1 "$rounds"); do
    order=$(printf '%s\n' "${!labels[@]}" |
              awk -v n=${#labels[@]} -v r="$r" \
                '{ a[NR - 1] = $0 } END { for (i = 0; i < n; i++) print a[(i + r - 1) % n] }')
    hyperfine_pass "$id.r$r.json" "$([ "$r" = 1 ] && echo "$warmup" || echo 0)" $order
  done
  "$servers" stop-all
}

# server_ticks: shell words that set $bench_t to the CPU time, in clock
# ticks, that the servers of $BENCH_STATE have used so far: fields 14
# to 17 of /proc/PID/stat (utime, stime, cutime, cstime), counted after
# the ")" that ends the command name.  A server that has gone counts 0.
server_ticks='bench_t=0; for bench_p in "$BENCH_STATE"/*.pid; do read -r bench_pid <"$bench_p" 2>/dev/null && read -r bench_st <"/proc/$bench_pid/stat" 2>/dev/null || continue; bench_f=(${bench_st##*) }); bench_t=$((bench_t + bench_f[11] + bench_f[12] + bench_f[13] + bench_f[14])); done'

# hyperfine_pass JSON WARMUP INDEX...: one hyperfine run of each of the
# comparison's commands, after WARMUP untimed ones, in the order of the
# indexes given.
#
# hyperfine gives only the mean of the CPU times, and the report needs
# every run's to give their spread, so each command runs under bash's
# "time", which appends the run's elapsed, user and system seconds
# (children included: the client's whole process tree, which is what
# the shell waits for) to $work/ID.rROUND.times.INDEX; the command's own
# stderr goes where hyperfine sends it, through fd 3.  bash's time
# keeps milliseconds where GNU time keeps hundredths.
#
# The servers' CPU time is read around the same command, from
# /proc/PID/stat of every server with a pid file in $BENCH_STATE (user
# + system, their waited-for children's included, in clock ticks), and
# the difference appended to $work/ID.rROUND.servers.INDEX.  The
# reading is bash alone, no process started, so that it adds
# microseconds to the timed run.
hyperfine_pass ()
{
  local json=$1 pass_warmup=$2 i args=() times servers
  shift 2
  for i in "$@"; do
    times=$work/${json%.json}.times.$i
    servers=$work/${json%.json}.servers.$i
    : >"$times"
    : >"$servers"
    args+=("--command-name=${labels[$i]}"
           "$server_ticks; bench_t0=\$bench_t
{ time { ${commands[$i]}
} 2>&3 3>&-; } 3>&2 2>>$(printf '%q' "$times"); bench_s=\$?
$server_ticks; echo \$((bench_t - bench_t0)) >>$(printf '%q' "$servers"); exit \$bench_s")
  done
  [ "$fresh" != yes ] || args=(--prepare "$prepare" "${args[@]}")
  # In the background and waited for, so that a TERM or INT reaches the
  # trap at once, not only once hyperfine has finished the comparison.
  # LC_ALL=C: bash's time writes the locale's decimal separator.
  LC_ALL=C TIMEFORMAT='%3R %3U %3S' \
  hyperfine --warmup "$pass_warmup" --runs 1 --shell=bash \
    --style basic --export-json "$work/$json" "${args[@]}" >&2 &
  hf_pid=$!
  wait "$hf_pid" ||
    die "$id: hyperfine failed (it hides the commands' output: run the" \
        "command from $meta by hand after starting its servers)"
  hf_pid=
}

# servers.sh is called from the prepare commands through $BENCH_STATE,
# so that they read the same in the report whatever the source path.
ln -s "$servers" "$BENCH_STATE/servers.sh"

define_comparisons

[ ${#metas[@]} -gt 0 ] || die "BENCH_ONLY='$only' selects no comparison"
{
  printf 'load_after\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || :)"
  printf 'finished\t%s\n' "$(date '+%Y-%m-%d %H:%M:%S %z')"
} >>"$work/run.info"

python3 "$bench/report.py" --info "$work/run.info" \
  --output "$results/$name.md" --chart "$results/$name-request-size.svg" \
  --delay-chart "$results/$name-delay.svg" --data "$results/$name.json" \
  "${metas[@]}"
cat "$results/$name.md"
echo "$prog: report in $results/$name.md" >&2
