# bench/comparisons.sh: the comparisons behind the claims in the docs,
# sourced by bench/run.sh (make bench) and bench/compare.sh (make
# bench-compare), which each define "run": run.sh times the commands
# with hyperfine, compare.sh runs each command of two builds in turn.
#
# A comparison is declared with begin, claim, note, source_server,
# destination_server, setup (before the servers start), prime (once they
# are up), fresh, baseline, chart, image, rounds, expect and cmd, then
# run.  The sourcing script sets $quick first (empty for full runs) and
# $only (BENCH_ONLY), calls blksum_ready once $BENCH_STATE exists, and
# calls define_comparisons once its "run" is defined.
#
# Which program runs where.  A claim about a technique runs on the
# lesson that shows it: copy-libev (examples/, URIs only, fixed
# settings) for read-buffer initialization (1), the request size (2)
# and the ring against nbdcopy and qemu-img (3a), and for the same two
# claims on real storage (8).  Everything that compares the suite with
# nbdcopy, qemu-img or blksum on real use (sparse and qcow2 images,
# checksums, socket buffers, timeouts, several connections, verified
# copies, local files) runs on the tools in tools/: nbd-evcopy, the
# copier, and nbd-evsum, the checksum.  Where a comparison needs
# copy-libev's way of copying (every byte read and written) with an
# option the lesson lacks (-C, --timeout, --socket-buffer), it runs
# nbd-evcopy --no-extents --no-sparse, which copies that way.  The
# labels name the program that ran, so the report says which it was.

# Sizes.  Full runs use the sizes that the figures in the docs are
# for; QUICK shrinks every one of them, the empty qcow2 of 3c too.
if [ -n "$quick" ]; then
  size=64M          # the pattern source and memory destination
  big=64M           # 3b's sparse-random image
  huge=1G           # 3c's empty qcow2 images
  zero=64M          # 4a's zero image
  warmup=0 default_rounds=2  # each command once a round
else
  size=1G
  big=6G
  huge=1T
  # nbdcopy | sha256sum reads every zero through a pipe at about
  # 300 MB/s here: 2G keeps one run under ten seconds.
  zero=2G
  warmup=1 default_rounds=6  # each command once a round, after one warm-up
fi

# nbd-evcopy copying as copy-libev does: no block status, every buffer
# written.  The labels spell it out, so that a reader of the report
# can tell it from the lesson.
copyall="nbd-evcopy --no-extents --no-sparse"

# Said of every comparison that writes files: whether anything is
# synced between its runs.
nosync="Nothing is synced between runs: the kernel writes the files back when it will, and a run may meet the writeback of the runs before."

# selected ID: true if comparison ID (e.g. 3a) is among $only, the IDs
# of BENCH_ONLY, or if $only is empty.
selected ()
{
  [ -z "$only" ] && return 0
  local w
  for w in $only; do
    case $1 in
      "$w"|"$w"[a-z]) return 0 ;;
    esac
  done
  return 1
}

begin ()
{
  id=$1 title=$2
  claim= notes=() src= dst= setup= prime= fresh=yes baseline= chart= image=
  labels=() commands=() expects=() nr_rounds=
}
claim () { claim=$1; }
note () { notes+=("$1"); }
source_server () { src=$1; }
destination_server () { dst=$1; }
setup () { setup=$1; }
prime () { prime=$1; }
fresh () { fresh=$1; }
baseline () { baseline=$1; }
chart () { chart=$1; }
# image SIZE: the size of the image the commands work on (1G, 64M), for
# the report's CPU time per GiB.
image () { image=$1; }
cmd () { labels+=("$1"); commands+=("$2"); }
# rounds N: N rounds (N timed runs of each command) instead of make
# bench's default, for a cheap comparison whose claimed effect is small.
rounds () { [ -n "$quick" ] || nr_rounds=$1; }

# expect METRIC LABEL OP VALUE [OTHER]: the claim in numbers, which
# make bench's report judges.  METRIC is wall (the elapsed time) or cpu
# (the client's user + system time), whichever the claimed effect is
# expected in.  With OTHER, the claim is about the ratio of LABEL's
# median to OTHER's (VALUE a number: 0.97 is "3% less"), or about their
# difference (VALUE in seconds, 0.5s); without it, about LABEL's median
# itself (VALUE in seconds).  OP says what the claim is:
#   below    the whole 95% interval is below VALUE
#   above    the whole interval is above VALUE
#   about    the interval holds VALUE (no difference this run resolves)
#   no-more  the interval reaches down to VALUE or lower (not shown to
#            be worse: "no slower than")
expect ()
{
  local ok=
  case $#:$1:$3:$4 in
    5:wall:*|5:cpu:*) ;;
    4:wall:*:*s|4:cpu:*:*s) ;;
    *) ok=no ;;
  esac
  case ${3:-}:${4:-} in
    below:*|above:*|about:*|no-more:*) ;;
    *) ok=no ;;
  esac
  case ${4:-} in
    ''|*[!0-9.s]*|*s?*) ok=no ;;
  esac
  # A mistake in the declarations is the harness's: 255 tells git
  # bisect run (through compare.sh) to stop, not to blame a commit.
  if [ -n "$ok" ]; then
    echo "comparisons.sh: $id: bad expect '$*'" >&2
    exit 255
  fi
  local IFS=$'\t'
  expects+=("$*")
}

# blksum_ready: blkhash's blksum, given as BLKSUM in the environment,
# made ready for the rows that run it; without BLKSUM those rows are
# left out (blksum is not a Debian package, and make bench must not
# need it).  Sets $blksum to the program as given, for the notes,
# $blksum_fix to what was done to run it, if anything, and exports
# BLKSUM, the command the rows run as "$BLKSUM".  Returns
# non-zero, with a message, if BLKSUM does not run.
#
# A blksum copied out of its build may not load.  The blksum this
# suite was measured against (an anchor built from blkhash's sources,
# kept read-only outside the repository) is bin/blksum, which finds
# libblkhash through its RUNPATH ($ORIGIN/../lib), beside a
# lib/libblkhash.so.0 that is a symlink saved as a 20-byte text file:
# the loader stops with "file too short".  So if "$BLKSUM --help" fails
# with a loader error and a real ../lib/libblkhash.so.0.* sits beside
# it, BLKSUM becomes a wrapper in $BENCH_STATE that puts a directory
# holding a proper symlink libblkhash.so.0 -> that file first on
# LD_LIBRARY_PATH (which the loader searches before RUNPATH) and execs
# blksum.  The wrapper's sh costs about a millisecond a run, against
# blksum runs of tens of milliseconds and more.
blksum_ready ()
{
  blksum=${BLKSUM:-} blksum_fix=
  [ -n "$blksum" ] || return 0
  local err lib= f fix=$BENCH_STATE/blksum-lib
  blksum=$(command -v "$blksum") || {
    echo "comparisons.sh: BLKSUM=$BLKSUM: no such program" >&2
    return 1
  }
  blksum=$(cd "$(dirname "$blksum")" && pwd)/$(basename "$blksum")
  BLKSUM=$blksum
  export BLKSUM
  err=$("$blksum" --help 2>&1 >/dev/null) && return 0
  case $err in
    *"error while loading shared libraries"*) ;;
    *) echo "comparisons.sh: BLKSUM=$blksum --help failed: $err" >&2
       return 1 ;;
  esac
  for f in "$(dirname "$blksum")"/../lib/libblkhash.so.0.*; do
    if [ -f "$f" ] && [ ! -L "$f" ]; then
      lib=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
    fi
  done
  [ -n "$lib" ] || {
    echo "comparisons.sh: BLKSUM=$blksum does not load, and no ../lib/libblkhash.so.0.* beside it: $err" >&2
    return 1
  }
  mkdir -p "$fix"
  ln -sfn "$lib" "$fix/libblkhash.so.0"
  {
    printf '#!/bin/sh\n# %s, with %s\n' "$blksum" "$fix/libblkhash.so.0 -> $lib"
    printf 'LD_LIBRARY_PATH=%q${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n' "$fix"
    printf 'export LD_LIBRARY_PATH\nexec %q "$@"\n' "$blksum"
  } >"$BENCH_STATE/blksum"
  chmod +x "$BENCH_STATE/blksum"
  BLKSUM=$BENCH_STATE/blksum
  err=$("$BLKSUM" --help 2>&1 >/dev/null) || {
    echo "comparisons.sh: BLKSUM=$blksum does not run even with $lib: $err" >&2
    return 1
  }
  blksum_fix="its own lib/libblkhash.so.0 does not load: run with LD_LIBRARY_PATH naming a libblkhash.so.0 -> $lib"
  echo "comparisons.sh: $blksum: $blksum_fix" >&2
}

# blksum_row LABEL IMAGE: a row that runs blksum on IMAGE (shell words,
# as in the command), if BLKSUM names it; else a note that it is left
# out, so that the report says why.
blksum_row ()
{
  if [ -n "$blksum" ]; then
    cmd "$1" "\"\$BLKSUM\" $2"
    note "The $1 row runs blkhash's blksum, BLKSUM=$blksum${blksum_fix:+ ($blksum_fix)}, as it comes: its own threads and queue depth."
  else
    note "blksum's row is left out: BLKSUM is unset (make bench BLKSUM=/path/to/blksum adds it)."
  fi
}

# copy_libev_anchor_row: a row that runs libnbd's own
# examples/copy-libev, built elsewhere (it is not packaged), if
# LIBNBD_COPY_LIBEV names it; else a note that it is left out.
copy_libev_anchor_row ()
{
  if [ -n "${LIBNBD_COPY_LIBEV:-}" ]; then
    cmd "libnbd copy-libev" '"$LIBNBD_COPY_LIBEV" "$SRC" "$DST"'
    note "The libnbd copy-libev row runs libnbd's examples/copy-libev.c, LIBNBD_COPY_LIBEV=$LIBNBD_COPY_LIBEV, as it comes: 16 requests of 1 MiB, one connection."
  else
    note "libnbd copy-libev's row is left out: LIBNBD_COPY_LIBEV is unset (make bench LIBNBD_COPY_LIBEV=/path/to/copy-libev adds it)."
  fi
}

# The link of comparison 13: a network namespace of the run's own,
# named after $BENCH_STATE, whose loopback is limited by a token bucket.
link_rate=1gbit
link_bps=1000000000
link_ns=
link_desc="tc qdisc add dev lo root tbf rate $link_rate burst 1mb latency 50ms, on the loopback of a network namespace made for the run"
link_src=nbd://127.0.0.1:10809
link_dst=nbd://127.0.0.1:10810

# link_ready: make the namespace and its link, once; false, with one
# line saying why comparison 13 is skipped, where that is not permitted
# (not root, no tbf, no namespaces).
link_ready ()
{
  local err
  [ -z "$link_ns" ] || return 0
  link_ns=nbd-libev-bench-${BENCH_STATE##*.}
  if ! err=$(ip netns add "$link_ns" 2>&1); then
    echo "comparisons.sh: 13: skipped: cannot make a network namespace: $(echo "$err" | head -1)" >&2
    link_ns=
    return 1
  fi
  if ! err=$({ ip netns exec "$link_ns" ip link set lo up &&
               ip netns exec "$link_ns" tc qdisc add dev lo root tbf \
                 rate $link_rate burst 1mb latency 50ms; } 2>&1); then
    echo "comparisons.sh: 13: skipped: cannot make a network namespace with a tbf link: $(echo "$err" | head -1)" >&2
    link_cleanup
    return 1
  fi
  link_exec="ip netns exec $link_ns"
}

# link_cleanup: remove the namespace, if made; for run.sh's and
# compare.sh's traps.
link_cleanup ()
{
  [ -z "$link_ns" ] || ip netns del "$link_ns" 2>/dev/null || :
  link_ns=
}

# prepare_command: the shell command that makes the servers of the
# comparison just declared ready, into $prepare: stop them all, run the
# setup, start the source and destination, prime them.  The servers'
# words go to sh unquoted (none has a space) but "$BENCH_STATE" stays a
# variable, expanded by sh at each run.
prepare_command ()
{
  prepare="\"\$BENCH_STATE/servers.sh\" stop-all"
  [ -z "$setup" ] || prepare="$prepare && $setup"
  [ -z "$src" ] || prepare="$prepare && \"\$BENCH_STATE/servers.sh\" start src $src"
  [ -z "$dst" ] || prepare="$prepare && \"\$BENCH_STATE/servers.sh\" start dst $dst"
  [ -z "$prime" ] || prepare="$prepare && $prime"
}

define_comparisons ()
{
  # A memory destination whose pages are allocated before the runs: a
  # fresh memory server spends about 4.5 s faulting in each GiB on this
  # machine, which would time the server, not the client.  nbdcopy fills
  # it once (not timed); every run then writes the same data over the
  # same pages.  primed_memory DST-SIZE [SERVER] declares it, SERVER
  # being the whole server command when it is not plain nbdkit memory.
  primed_memory ()
  {
    destination_server "${2:-nbdkit memory $1}"
    prime 'nbdcopy -- "$SRC" "$DST"'
    fresh no
    note "Destination: nbdkit memory, filled once before the runs (not timed), because a fresh memory server spends seconds faulting in its pages, which would time the server and not the client."
  }
  # The destination is nbdkit null, which throws the data away.
  null_destination ()
  {
    destination_server "nbdkit null $1"
    fresh no
    note "Destination: nbdkit null, whose writes cost next to nothing, so that the client's and the source's CPU set the pace."
  }

  # Comparisons 1 and 2: techniques, on the lesson that shows them.
  # copy-libev takes --request-size in plain bytes; the labels keep the
  # sizes readable, as nbdcopy's rows do.
  lesson_note ()
  {
    note "copy-libev is the lesson (examples/copy-libev): one connection, 16 requests of 1 MiB, libnbd leaving read buffers as they are unless --init; it takes --request-size in bytes only (1M is written 1048576)."
  }

  begin 1 "Read-buffer initialization"
  image "$size"
  claim "copy-libev (the lesson, which has libnbd leave read buffers as they are) is 3-10% faster than copy-libev --init"
  source_server "nbdkit pattern $size"
  primed_memory "$size"
  rounds 20
  cmd "copy-libev --init" 'copy-libev --init "$SRC" "$DST"'
  cmd "copy-libev" 'copy-libev "$SRC" "$DST"'
  expect cpu "copy-libev" below 0.97 "copy-libev --init"
  note "Judged in client CPU time: zeroing a buffer is the client's work, and the wall time here is mostly the servers'."
  lesson_note
  run

  begin 2 "Request size sweep"
  image "$size"
  claim "1 MiB requests are best; 32 MiB requests are about 23% slower"
  source_server "nbdkit pattern $size"
  primed_memory "$size"
  baseline "copy-libev --request-size=1M"
  chart request-size
  for rs in 256k 512k 1M 2M 4M 8M 16M 32M; do
    case $rs in
      *k) bytes=$((${rs%k} * 1024)) ;;
      *M) bytes=$((${rs%M} * 1024 * 1024)) ;;
    esac
    cmd "copy-libev --request-size=$rs" "copy-libev --request-size=$bytes \"\$SRC\" \"\$DST\""
  done
  expect wall "copy-libev --request-size=32M" above 1.23 "copy-libev --request-size=1M"
  note "The claim was measured on real storage (comparison 8 checks it there too); here the servers are in memory."
  lesson_note
  run

  # Comparison 3: the copiers, on three kinds of image.  The first row
  # is the one that reads every byte: the lesson where the claim is its
  # (3a), nbd-evcopy copying the same way on a sparse image (3b), none
  # on an empty 1 TiB one (3c, 3d).
  copiers ()
  {
    case $1 in
      lesson) cmd "copy-libev" 'copy-libev "$SRC" "$DST"' ;;
      tool) cmd "$copyall" "$copyall \"\$SRC\" \"\$DST\"" ;;
    esac
    cmd "nbd-evcopy" 'nbd-evcopy "$SRC" "$DST"'
    cmd "nbdcopy" 'nbdcopy -- "$SRC" "$DST"'
    cmd "nbdcopy --request-size=1M --requests=16 --connections=1" \
        'nbdcopy --request-size=1048576 --requests=16 --connections=1 -- "$SRC" "$DST"'
    cmd "qemu-img convert -n -W" 'qemu-img convert -n -W -f raw -O raw "$SRC" "$DST"'
    note "nbdcopy 1.14 takes --request-size in bytes only: 1M is written 1048576."
    note "qemu-img is given -f raw -O raw: the NBD exports are raw, and probing would only add reads."
    note "nbd-evcopy is the tool (tools/nbd-evcopy): the source's extents, zero extents zeroed with one command, up to 4 connections."
  }

  begin 3a "Copiers: pattern to memory"
  image "$size"
  claim "copy-libev at least 1.2x faster than the faster of nbdcopy and qemu-img convert, with less client CPU time than nbdcopy"
  source_server "nbdkit pattern $size"
  primed_memory "$size"
  # Twice the default rounds: with 6 runs, the 1.2x claim's interval
  # straddled its bound; the comparison is cheap.
  rounds 12
  copiers lesson
  expect wall "copy-libev" below 0.833 "nbdcopy"
  expect wall "copy-libev" below 0.833 "qemu-img convert -n -W"
  expect cpu "copy-libev" below 1 "nbdcopy"
  # The lesson's settings (16 requests of 1 MiB, the kernel's socket
  # buffers) are chosen for servers near and far (docs/techniques.md,
  # section 4); this row is the same way of copying tuned for a
  # memory-to-memory copy on this kind of machine, as comparisons 2 and
  # 5 and a search around them suggested.  The lesson has no
  # --socket-buffer: the tool copies as it does.
  cmd "$copyall tuned" \
      "$copyall --requests=32 --request-size=256k --socket-buffer=512k \"\$SRC\" \"\$DST\""
  lesson_note
  note "$copyall tuned is $copyall --requests=32 --request-size=256k --socket-buffer=512k: every byte read and written, as the lesson does, with smaller requests that each fit in the socket buffers and twice as many in flight."
  run

  begin 3b "Copiers: sparse-random 50% to memory"
  image "$big"
  claim "none with a number: the copiers side by side on an image that is half data, half holes"
  source_server "nbdkit sparse-random $big percent=50 seed=1"
  primed_memory "$big"
  copiers tool
  note "seed=1 makes every run's source the same image; the destination's holes stay holes."
  note "$copyall reads and writes every byte, holes included, as the copy-libev lesson does."
  run

  begin 3c "Copiers: empty qcow2 to empty qcow2 through qemu-nbd"
  image "$huge"
  claim "none with a number: the copiers side by side on an image that is all holes"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge && qemu-img create -q -f qcow2 \"\$BENCH_STATE/dst.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 \"\$BENCH_STATE/src.qcow2\""
  destination_server "qemu-nbd -f qcow2 \"\$BENCH_STATE/dst.qcow2\""
  copiers none
  note "No copier that reads every byte (copy-libev, $copyall): reading 1 TiB of zeroes would take over 15 minutes a run. The baseline is nbd-evcopy."
  note "Both qcow2 files are created anew before every run (not timed): every copier meets a destination with no clusters allocated, as a user copying into a new image does."
  note "$nosync"
  run

  # The original 3x report ran hyperfine -w3 on one dst.qcow2: every copy
  # after the first met a destination whose clusters had been zeroed,
  # where each block-status reply costs qemu-nbd an L2 walk.  The prime
  # step puts it in that state once (nbdcopy writes zeroes over all of
  # it); nbdcopy and qemu-img leave it so, and nbd-evcopy, which skips
  # what already reads as zeroes, does not change it.
  begin 3d "Copiers: empty qcow2 onto one qcow2 reused across runs"
  image "$huge"
  claim "none with a number: 3c as the original report ran it, onto one destination whose clusters are zeroed"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge && qemu-img create -q -f qcow2 \"\$BENCH_STATE/dst.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 --shared=8 \"\$BENCH_STATE/src.qcow2\""
  destination_server "qemu-nbd -f qcow2 --shared=8 \"\$BENCH_STATE/dst.qcow2\""
  prime 'nbdcopy -- "$SRC" "$DST"'
  fresh no
  copiers none
  note "Both qcow2 files are created, and the destination's clusters zeroed by one nbdcopy, before the runs (not timed); every run then meets the same destination, as every run after the first did in the original report."
  note "$nosync"
  run

  # Comparison 4: checksums, on the tool: the ring against one read at a
  # time needs --requests, which the lesson (checksum-libev, fixed
  # settings) does not take.  nbdcopy | sha256sum is a different digest
  # (of the whole stream, not the block hash), but the same reads.
  checksummers ()
  {
    cmd "nbd-evsum" 'nbd-evsum "$SRC"'
    cmd "nbd-evsum --requests=1" 'nbd-evsum --requests=1 "$SRC"'
    cmd "nbdcopy to sha256sum" 'nbdcopy -- "$SRC" - | sha256sum'
    note "The ring is nbd-evsum (tools/nbd-evsum) as it comes (its depth adapting from 16 reads of 1 MiB); --requests=1 is the same program with one read at a time.  nbdcopy | sha256sum computes another digest (of the whole stream, not the block hash) from the same reads."
    blksum_row blksum '"$SRC"'
  }

  begin 4a "Checksum: zero image"
  image "$zero"
  claim "the ring is about 4.7x faster on zeroes"
  source_server "nbdkit null $zero"
  fresh no
  checksummers
  expect wall "nbd-evsum" below 0.213 "nbd-evsum --requests=1"
  note "The zero image is $zero (nbdkit null, which reports it all as a hole), so that nbdcopy | sha256sum stays under about ten seconds a run."
  run

  begin 4b "Checksum: data image"
  image "$size"
  claim "the ring is 1.4-2x faster over NBD on data; nbd-evsum is at least 4x faster than nbdcopy | sha256sum and within 1.3x of nbdcopy to null:"
  source_server "nbdkit pattern $size"
  fresh no
  checksummers
  cmd "nbdcopy to null:" 'nbdcopy -- "$SRC" null:'
  expect wall "nbd-evsum" below 0.714 "nbd-evsum --requests=1"
  expect wall "nbd-evsum" below 0.25 "nbdcopy to sha256sum"
  expect wall "nbd-evsum" below 1.3 "nbdcopy to null:"
  note "nbdcopy to null: reads the same data and hashes nothing: the floor for any checksum over this connection."
  run

  begin 4c "Checksum: 50% sparse image"
  image "$size"
  claim "none with a number (the claims are for zeroes and data): the same three on an image half data, half holes"
  source_server "nbdkit sparse-random $size percent=50 seed=1"
  fresh no
  checksummers
  run

  begin 4d "Checksum: empty qcow2 through qemu-nbd"
  image "$huge"
  claim "nbd-evsum hashes an empty 1 TiB image in under 1 second (the floor is the outer hash of 16 Mi digests)"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 \"\$BENCH_STATE/src.qcow2\""
  fresh no
  cmd "nbd-evsum" 'nbd-evsum "$SRC"'
  expect wall "nbd-evsum" below 1s
  blksum_row blksum '"$SRC"'
  run

  # The checksum table of the qemu-img checksum patch on the QEMU list:
  # an image of zeroes and one half data, each read through qemu-nbd
  # with the page cache (4e) and without (4f), by the ring and by one
  # read at a time, as the table compared a coroutine loop with a
  # simple read loop.  The files are made once and kept for both.
  if [ -n "$quick" ]; then sum_size=64M; else sum_size=6G; fi
  checksum_table ()
  {
    setup "{ [ -s \"\$BENCH_STATE/zero.raw\" ] || truncate -s $sum_size \"\$BENCH_STATE/zero.raw\"; } && { [ -s \"\$BENCH_STATE/half.raw\" ] || nbdcopy -- [ nbdkit sparse-random $sum_size percent=50 seed=1 ] \"\$BENCH_STATE/half.raw\"; }"
    source_server "qemu-nbd --read-only -f raw $1 --shared=8 \"\$BENCH_STATE/zero.raw\""
    destination_server "qemu-nbd --read-only -f raw $1 --shared=8 \"\$BENCH_STATE/half.raw\""
    fresh no
    cmd "nbd-evsum zeroes" 'nbd-evsum "$SRC"'
    cmd "nbd-evsum --requests=1 zeroes" 'nbd-evsum --requests=1 "$SRC"'
    cmd "nbd-evsum half data" 'nbd-evsum "$DST"'
    cmd "nbd-evsum --requests=1 half data" 'nbd-evsum --requests=1 "$DST"'
    note "SRC serves $sum_size of zeroes (a sparse file), DST $sum_size half data from sparse-random seed=1; both are only read."
  }

  begin 4e "Checksum table: raw files through qemu-nbd, with the page cache"
  claim "none with a number here: the qemu-img checksum patch's table, the ring against one read at a time"
  image "$sum_size"
  checksum_table ""
  run

  begin 4f "Checksum table: raw files through qemu-nbd, O_DIRECT"
  claim "as 4e, with --cache=none --aio=native"
  image "$sum_size"
  checksum_table "--cache=none --aio=native"
  run

  # Comparison 5: socket buffer sizes, against the kernel's default.
  sockbuf_note ()
  {
    local f v
    v=
    for f in wmem_default wmem_max rmem_default rmem_max; do
      v="$v net.core.$f=$(cat "/proc/sys/net/core/$f" 2>/dev/null || echo '?')"
    done
    note "--socket-buffer=0 leaves what the kernel gives a new Unix socket; here$v. The tools' default is 1M. Linux caps a request at the *_max value and reports twice what was set."
    note "The servers listen on Unix sockets, as in every other comparison."
  }

  begin 5a "Socket buffers: nbd-evsum"
  image "$size"
  claim "a 1 MiB send buffer is best, up to 5-7x faster (measured on macOS); what does Linux show?"
  source_server "nbdkit pattern $size"
  fresh no
  cmd "nbd-evsum --socket-buffer=0 (the kernel's)" 'nbd-evsum --socket-buffer=0 "$SRC"'
  for sb in 64k 128k 256k 512k 1M 2M; do
    cmd "nbd-evsum --socket-buffer=$sb" "nbd-evsum --socket-buffer=$sb \"\$SRC\""
  done
  expect wall "nbd-evsum --socket-buffer=1M" below 0.2 "nbd-evsum --socket-buffer=0 (the kernel's)"
  sockbuf_note
  run

  begin 5b "Socket buffers: $copyall"
  image "$size"
  claim "a 1 MiB send buffer is best, up to 5-7x faster (measured on macOS); what does Linux show?"
  source_server "nbdkit pattern $size"
  primed_memory "$size"
  cmd "$copyall --socket-buffer=0 (the kernel's)" "$copyall --socket-buffer=0 \"\$SRC\" \"\$DST\""
  for sb in 64k 128k 256k 512k 1M 2M; do
    cmd "$copyall --socket-buffer=$sb" "$copyall --socket-buffer=$sb \"\$SRC\" \"\$DST\""
  done
  expect wall "$copyall --socket-buffer=1M" below 0.2 "$copyall --socket-buffer=0 (the kernel's)"
  sockbuf_note
  note "$copyall copies as the copy-libev lesson does (every byte read and written); the lesson has no --socket-buffer."
  run

  # Comparison 6: what --timeout costs, in the client's CPU time.  The
  # lessons have no timeout: the tools do.
  begin 6 "Timeout cost"
  image "$size"
  claim "the default --timeout costs nothing measurable against --timeout=0 (one timer per connection, a stamp per read)"
  source_server "nbdkit pattern $size"
  null_destination "$size"
  rounds 12
  cmd "$copyall" "$copyall \"\$SRC\" \"\$DST\""
  cmd "$copyall --timeout=0" "$copyall --timeout=0 \"\$SRC\" \"\$DST\""
  cmd "nbd-evsum" 'nbd-evsum "$SRC"'
  cmd "nbd-evsum --timeout=0" 'nbd-evsum --timeout=0 "$SRC"'
  expect cpu "$copyall" about 1 "$copyall --timeout=0"
  expect cpu "nbd-evsum" about 1 "nbd-evsum --timeout=0"
  run

  # Comparison 7: connections per server.  nbdkit advertises multi-conn,
  # so both nbdcopy and the tools open up to four, one per CPU, by
  # default (the lessons open one).
  begin 7 "Connections per server"
  image "$size"
  claim "several connections (multi-conn) make the copy faster, as they do for nbdcopy"
  source_server "nbdkit pattern $size"
  null_destination "$size"
  rounds 12
  cmd "$copyall -C 1" "$copyall -C 1 \"\$SRC\" \"\$DST\""
  cmd "$copyall -C 2" "$copyall -C 2 \"\$SRC\" \"\$DST\""
  cmd "$copyall (default)" "$copyall \"\$SRC\" \"\$DST\""
  cmd "$copyall -C 4" "$copyall -C 4 \"\$SRC\" \"\$DST\""
  cmd "nbdcopy" 'nbdcopy "$SRC" "$DST"'
  cmd "nbdcopy --connections=1" 'nbdcopy --connections=1 "$SRC" "$DST"'
  expect wall "$copyall (default)" below 1 "$copyall -C 1"
  expect wall "nbdcopy" below 1 "nbdcopy --connections=1"
  run

  # Comparison 8: raw files on this machine's disk through qemu-nbd, as
  # the libnbd list benchmarked: O_DIRECT (--cache=none) with Linux AIO,
  # the source read-only, the destination a fresh sparse file every run,
  # punching holes where it is zeroed.  The image is half data (runs of
  # random data and holes), made once per make bench from nbdkit
  # sparse-random with a fixed seed.  The copy-libev rows are the
  # lesson: comparisons 1 and 2's claims on real storage.
  if [ -n "$quick" ]; then raw=64M; else raw=4G; fi
  begin 8 "Raw files on disk through qemu-nbd"
  image "$raw"
  claim "the request defaults suit real storage; nbd-evcopy is no slower than nbdcopy; nbd-evsum within 1.3x of nbdcopy to null:"
  setup "{ [ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\"; } && rm -f \"\$BENCH_STATE/dst.raw\" && truncate -s $raw \"\$BENCH_STATE/dst.raw\""
  source_server "qemu-nbd --read-only -f raw --cache=none --aio=native --shared=8 \"\$BENCH_STATE/src.raw\""
  destination_server "qemu-nbd -f raw --cache=none --aio=native --shared=8 --discard=unmap \"\$BENCH_STATE/dst.raw\""
  cmd "nbd-evcopy" 'nbd-evcopy "$SRC" "$DST"'
  cmd "nbd-evcopy --request-size=1M" 'nbd-evcopy --request-size=1M "$SRC" "$DST"'
  cmd "nbd-evcopy -C 1" 'nbd-evcopy -C 1 "$SRC" "$DST"'
  cmd "copy-libev" 'copy-libev "$SRC" "$DST"'
  cmd "copy-libev --request-size=256k" 'copy-libev --request-size=262144 "$SRC" "$DST"'
  cmd "copy-libev --request-size=32M" 'copy-libev --request-size=33554432 "$SRC" "$DST"'
  cmd "copy-libev --init" 'copy-libev --init "$SRC" "$DST"'
  cmd "nbdcopy" 'nbdcopy -- "$SRC" "$DST"'
  cmd "nbdcopy --connections=1" 'nbdcopy --connections=1 -- "$SRC" "$DST"'
  cmd "nbd-evsum" 'nbd-evsum "$SRC"'
  cmd "nbd-evsum --request-size=1M" 'nbd-evsum --request-size=1M "$SRC"'
  cmd "nbdcopy to null:" 'nbdcopy -- "$SRC" null:'
  blksum_row blksum '"$SRC"'
  note "The image ($raw, half data) and the destination file are in \$BENCH_STATE, on the disk of \${TMPDIR:-/tmp}; O_DIRECT needs a file system that supports it (not tmpfs)."
  note "copy-libev (the lesson, one connection) reads and writes every byte, holes included; the others skip the source's holes, and nbd-evcopy also skips writing where the fresh destination reads as zeroes."
  note "copy-libev --init and --request-size=32M are the read-buffer and request-size claims (comparisons 1 and 2) on real storage, as the libnbd list measured them."
  note "Destination: a new sparse file before every run (not timed), as in the libnbd list's benchmarks; the checksum rows only read, and it is reset for them all the same."
  note "$nosync"
  lesson_note
  expect wall "nbd-evcopy" no-more 1 "nbdcopy"
  expect wall "copy-libev" no-more 1 "copy-libev --request-size=256k"
  expect wall "nbd-evsum" below 1.3 "nbdcopy to null:"
  expect cpu "copy-libev" below 0.97 "copy-libev --init"
  expect wall "copy-libev --request-size=32M" above 1.23 "copy-libev"
  run

  # Comparison 9: verified copies.  The same copy alone, with --checksum
  # (the source's block hash computed while copying), with --verify (and
  # the destination hashed after it), and the passes it replaces: the
  # copy followed by nbd-evsum on the source, then on both ends.
  verified ()
  {
    cmd "nbd-evcopy" 'nbd-evcopy "$SRC" "$DST"'
    cmd "nbd-evcopy --checksum" 'nbd-evcopy --checksum "$SRC" "$DST"'
    cmd "nbd-evcopy --verify" 'nbd-evcopy --verify "$SRC" "$DST"'
    cmd "copy, then nbd-evsum SRC" 'nbd-evcopy "$SRC" "$DST" && nbd-evsum "$SRC"'
    cmd "copy, then nbd-evsum SRC and DST" 'nbd-evcopy "$SRC" "$DST" && nbd-evsum "$SRC" && nbd-evsum "$DST"'
  }

  # The claims are about the client's hashing, so the memory
  # destinations are primed.
  verified_expect ()
  {
    expect wall "nbd-evcopy --checksum" below 1.3 "nbd-evcopy"
    expect wall "nbd-evcopy --checksum" below 0.667 "copy, then nbd-evsum SRC"
    expect wall "nbd-evcopy --verify" below 0.769 "copy, then nbd-evsum SRC and DST"
  }

  begin 9a "Verified copies: pattern to memory"
  image "$size"
  claim "--checksum costs at most 1.3x the plain copy and is at least 1.5x faster than the copy then nbd-evsum SRC; --verify at least 1.3x faster than the copy then nbd-evsum on both ends"
  source_server "nbdkit pattern $size"
  primed_memory "$size"
  verified
  verified_expect
  run

  begin 9b "Verified copies: sparse-random 50% to memory"
  image "$big"
  claim "as 9a, on an image half data, half holes"
  source_server "nbdkit sparse-random $big percent=50 seed=1"
  primed_memory "$big"
  verified
  verified_expect
  note "seed=1 makes every run's source the same image; the destination's holes stay holes."
  run

  begin 9c "Verified copies: empty qcow2 to empty qcow2 through qemu-nbd"
  image "$huge"
  claim "--checksum adds less than 0.5 s to the copy of an empty 1 TiB image"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge && qemu-img create -q -f qcow2 \"\$BENCH_STATE/dst.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 \"\$BENCH_STATE/src.qcow2\""
  destination_server "qemu-nbd -f qcow2 \"\$BENCH_STATE/dst.qcow2\""
  cmd "nbd-evcopy" 'nbd-evcopy "$SRC" "$DST"'
  cmd "nbd-evcopy --checksum" 'nbd-evcopy --checksum "$SRC" "$DST"'
  cmd "nbd-evcopy --verify" 'nbd-evcopy --verify "$SRC" "$DST"'
  expect wall "nbd-evcopy --checksum" below 0.5s "nbd-evcopy"
  note "Both qcow2 files are created anew before every run (not timed), as a copy into a new image meets them."
  note "$nosync"
  run

  # Comparison 10: local images.  The tools take a file and serve it
  # with a captive server (tools/lib/image.h): the start of that server must
  # cost next to nothing against the same program on a server started
  # beforehand.  The raw image is comparison 8's (half data), in the page
  # cache after the warm-up run, as a user's image is on the second look.
  begin 10a "Local images: a raw file"
  image "$raw"
  claim "nbd-evsum FILE within 1.1x of nbd-evsum on the same file served by a server started beforehand"
  setup "{ [ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\"; } && rm -f \"\$BENCH_STATE/dst.raw\""
  source_server "nbdkit --readonly file \"\$BENCH_STATE/src.raw\""
  baseline "nbd-evsum SRC"
  cmd "nbd-evsum SRC" 'nbd-evsum "$SRC"'
  cmd "nbd-evsum FILE" 'nbd-evsum "$BENCH_STATE/src.raw"'
  cmd "nbd-evsum [ qemu-nbd -f raw ]" 'nbd-evsum -C 2 -- [ qemu-nbd --read-only -f raw --shared=16 "$BENCH_STATE/src.raw" ]'
  cmd "nbd-evcopy FILE NEWFILE" 'nbd-evcopy "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "nbdcopy FILE NEWFILE" 'nbdcopy "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "qemu-img convert FILE NEWFILE" 'qemu-img convert -f raw -O raw "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "cp --sparse=always FILE NEWFILE" 'cp --sparse=always "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "nbd-evcopy FILE NEWFILE, through nbdkit" 'NBD_EV_NO_IO_URING=1 nbd-evcopy "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  blksum_row "blksum FILE" '"$BENCH_STATE/src.raw"'
  expect wall "nbd-evsum FILE" below 1.1 "nbd-evsum SRC"
  expect wall "nbd-evcopy FILE NEWFILE" below 0.833 "nbdcopy FILE NEWFILE"
  [ -z "$blksum" ] || expect wall "nbd-evsum FILE" below 0.667 "blksum FILE"
  note "SRC is nbdkit's file plugin serving the same file, started before the run: the server the tools started for a raw file before they read files themselves.  The qemu-nbd row is the other server that could serve it, with the same two connections."
  note "The copies make dst.raw, removed before every run (not timed).  nbd-evcopy, nbdcopy, qemu-img and cp read and write the files themselves, without NBD; the row through nbdkit is nbd-evcopy with NBD_EV_NO_IO_URING=1, a captive nbdkit for each file."
  note "$nosync"
  run

  # Comparison 10d: uploading a local image, the job of every importer:
  # 10a's raw file into a memory server filled once before the runs.
  begin 10d "Local images: a raw file uploaded to an NBD server"
  image "$raw"
  claim "nbd-evcopy FILE to a server at least 1.2x faster than nbdcopy and level with qemu-img convert -n"
  setup "[ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\""
  source_server "nbdkit --readonly file \"\$BENCH_STATE/src.raw\""
  primed_memory "$raw"
  baseline "nbdcopy FILE DST"
  cmd "nbd-evcopy FILE DST" 'nbd-evcopy "$BENCH_STATE/src.raw" "$DST"'
  cmd "nbdcopy FILE DST" 'nbdcopy "$BENCH_STATE/src.raw" "$DST"'
  cmd "qemu-img convert -n FILE DST" 'qemu-img convert -n -f raw -O raw "$BENCH_STATE/src.raw" "$DST"'
  cmd "nbd-evcopy FILE DST, through nbdkit" 'NBD_EV_NO_IO_URING=1 nbd-evcopy "$BENCH_STATE/src.raw" "$DST"'
  expect wall "nbd-evcopy FILE DST" below 0.833 "nbdcopy FILE DST"
  expect wall "nbd-evcopy FILE DST" below 1.0 "qemu-img convert -n FILE DST"
  note "SRC, nbdkit serving the file, only primes the destination; every row reads the file itself (the last through a captive nbdkit)."
  run

  # Comparison 10e: pipes.  The tools write a stream in offset order
  # with the source's reads at full depth, and read one in order with
  # the destination's writes at full depth (tools/lib/stream.h);
  # nbdcopy drops to one request at a time for a pipe.  The pipe's
  # other end is cat, which costs little, and sha256sum, which sets the
  # pace and shows what a consumer that computes leaves of the gain.
  begin 10e "Pipes: an NBD server to standard output, and standard input to a server"
  image "$size"
  claim "nbd-evcopy SRC - and - DST at least 1.5x faster than nbdcopy with the same pipe"
  setup "[ -s \"\$BENCH_STATE/pattern.raw\" ] || nbdcopy -- [ nbdkit pattern $size ] \"\$BENCH_STATE/pattern.raw\""
  source_server "nbdkit pattern $size"
  primed_memory "$size"
  cmd "nbd-evcopy SRC - into cat" 'nbd-evcopy "$SRC" - | cat >/dev/null'
  cmd "nbdcopy SRC - into cat" 'nbdcopy -- "$SRC" - | cat >/dev/null'
  cmd "nbd-evcopy SRC - into sha256sum" 'nbd-evcopy "$SRC" - | sha256sum >/dev/null'
  cmd "nbdcopy SRC - into sha256sum" 'nbdcopy -- "$SRC" - | sha256sum >/dev/null'
  cmd "cat FILE into nbd-evcopy - DST" 'cat "$BENCH_STATE/pattern.raw" | nbd-evcopy - "$DST"'
  cmd "cat FILE into nbdcopy - DST" 'cat "$BENCH_STATE/pattern.raw" | nbdcopy -- - "$DST"'
  cmd "cat FILE into nbd-evsum -" 'cat "$BENCH_STATE/pattern.raw" | nbd-evsum - >/dev/null'
  if [ -n "$blksum" ]; then
    cmd "cat FILE into blksum" 'cat "$BENCH_STATE/pattern.raw" | "$BLKSUM" >/dev/null'
    note "The blksum row runs blkhash's blksum, BLKSUM=$blksum${blksum_fix:+ ($blksum_fix)}, as it comes, on standard input."
  fi
  expect wall "nbd-evcopy SRC - into cat" below 0.667 "nbdcopy SRC - into cat"
  expect wall "cat FILE into nbd-evcopy - DST" below 0.667 "cat FILE into nbdcopy - DST"
  note "SRC is nbdkit pattern; FILE is the same bytes in a file, in the page cache after the warm-up run, read by cat into the pipe.  Each row is a shell pipeline, timed whole."
  note "The tools grow the pipe to 1 MiB (F_SETPIPE_SZ); nbdcopy leaves it at 64 KiB."
  run

  # Comparison 10f: direct I/O and the page cache side by side.  blksum
  # reads a file through a qemu-nbd of its own with the page cache off
  # unless given --cache; nbd-evsum and nbd-evcopy use the page cache
  # unless given --cache=none (O_DIRECT).  Each pair reads the same way.
  # nbdcopy has no direct I/O; qemu-img convert has -t none -T none.
  begin 10f "Local images: direct I/O and the page cache, side by side"
  image "$raw"
  claim "nbd-evsum at least 1.5x faster than blksum reading the same way, with the page cache and without; nbd-evcopy --cache=none no slower than qemu-img convert -t none -T none"
  setup "{ [ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\"; } && rm -f \"\$BENCH_STATE/dst.raw\""
  cmd "nbd-evsum FILE" 'nbd-evsum "$BENCH_STATE/src.raw"'
  cmd "nbd-evsum --cache=none FILE" 'nbd-evsum --cache=none "$BENCH_STATE/src.raw"'
  cmd "nbd-evcopy --cache=none FILE NEWFILE" 'nbd-evcopy --cache=none "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "qemu-img convert -t none -T none FILE NEWFILE" 'qemu-img convert -t none -T none -f raw -O raw "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  if [ -n "$blksum" ]; then
    cmd "blksum --cache FILE" '"$BLKSUM" --cache "$BENCH_STATE/src.raw"'
    cmd "blksum FILE" '"$BLKSUM" "$BENCH_STATE/src.raw"'
    note "The blksum rows run blkhash's blksum, BLKSUM=$blksum${blksum_fix:+ ($blksum_fix)}: without --cache its qemu-nbd reads the file with the page cache off, with --cache through it."
    expect wall "nbd-evsum FILE" below 0.667 "blksum --cache FILE"
    expect wall "nbd-evsum --cache=none FILE" below 0.667 "blksum FILE"
  fi
  expect wall "nbd-evcopy --cache=none FILE NEWFILE" no-more 1 "qemu-img convert -t none -T none FILE NEWFILE"
  note "FILE is 10a's raw file; with the page cache it is cached after the warm-up run, without it every run reads the disk.  The copies make dst.raw, removed before every run (not timed)."
  note "$nosync"
  run

  # Comparison 10g: downloading, an NBD server's image into a new local
  # file the tools write themselves.
  begin 10g "Local images: an NBD server's image downloaded into a new file"
  image "$raw"
  claim "nbd-evcopy SRC NEWFILE at least 1.4x faster than nbdcopy"
  setup "rm -f \"\$BENCH_STATE/dst.raw\""
  source_server "nbdkit sparse-random $raw percent=50 seed=1"
  baseline "nbdcopy SRC NEWFILE"
  cmd "nbd-evcopy SRC NEWFILE" 'nbd-evcopy "$SRC" "$BENCH_STATE/dst.raw"'
  cmd "nbdcopy SRC NEWFILE" 'nbdcopy -- "$SRC" "$BENCH_STATE/dst.raw"'
  cmd "qemu-img convert SRC NEWFILE" 'qemu-img convert -f raw -O raw "$SRC" "$BENCH_STATE/dst.raw"'
  expect wall "nbd-evcopy SRC NEWFILE" below 0.714 "nbdcopy SRC NEWFILE"
  note "SRC is nbdkit sparse-random, $raw, half data; every copier asks it for block status and writes a new sparse file, removed before every run (not timed)."
  note "$nosync"
  run

  # Comparison 10h: 10a's file into a new file, each run after what a
  # busy machine does between copies: another program's copy to the
  # same destination, an upload of the source to a memory server that
  # then exits, and a checksum of the source.  The memory they free
  # goes back to a pool the next writer takes its page cache from; on a
  # VM that reports free pages to its host, those pages are slow to
  # touch again (docs/techniques.md, section 14).
  begin 10h "Local images: a raw file into a new file after other programs' work"
  image "$raw"
  claim "nbd-evcopy FILE NEWFILE at least 1.2x faster than nbdcopy and within 1.2x of cp, after another copy, an upload and a checksum"
  setup "{ [ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\"; } && cp --sparse=always \"\$BENCH_STATE/src.raw\" \"\$BENCH_STATE/dst.raw\" && nbdcopy -- \"\$BENCH_STATE/src.raw\" [ nbdkit memory $raw ] && nbd-evsum \"\$BENCH_STATE/src.raw\" >/dev/null && rm -f \"\$BENCH_STATE/dst.raw\""
  baseline "nbdcopy FILE NEWFILE"
  cmd "nbd-evcopy FILE NEWFILE" 'nbd-evcopy "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "nbdcopy FILE NEWFILE" 'nbdcopy "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "cp --sparse=always FILE NEWFILE" 'cp --sparse=always "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  expect wall "nbd-evcopy FILE NEWFILE" below 0.833 "nbdcopy FILE NEWFILE"
  expect wall "nbd-evcopy FILE NEWFILE" below 1.2 "cp --sparse=always FILE NEWFILE"
  note "Before every run (not timed): cp writes dst.raw, nbdcopy uploads FILE into a captive nbdkit memory server, which exits, nbd-evsum hashes FILE, and dst.raw is removed."
  note "$nosync"
  run

  # Comparison 10i: a local qcow2 into a new raw file, the job of
  # every import from a qcow2 image.  The tools serve the qcow2 with a
  # captive qemu-nbd; nbdcopy is given the same qemu-nbd, and qemu-img
  # reads the qcow2 itself, with no socket between.
  begin 10i "Local images: a qcow2 file into a new raw file"
  image "$raw"
  claim "nbd-evcopy FILE.qcow2 NEWFILE at least 1.2x faster than nbdcopy through the same qemu-nbd"
  setup "{ [ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\"; } && { [ -s \"\$BENCH_STATE/src.qcow2\" ] || qemu-img convert -f raw -O qcow2 \"\$BENCH_STATE/src.raw\" \"\$BENCH_STATE/src.qcow2\"; } && rm -f \"\$BENCH_STATE/dst.raw\""
  baseline "nbdcopy [ qemu-nbd ] NEWFILE"
  cmd "nbd-evcopy FILE.qcow2 NEWFILE" 'nbd-evcopy "$BENCH_STATE/src.qcow2" "$BENCH_STATE/dst.raw"'
  cmd "nbdcopy [ qemu-nbd ] NEWFILE" 'nbdcopy -- [ qemu-nbd --read-only -f qcow2 --shared=16 "$BENCH_STATE/src.qcow2" ] "$BENCH_STATE/dst.raw"'
  cmd "qemu-img convert FILE.qcow2 NEWFILE" 'qemu-img convert -f qcow2 -O raw "$BENCH_STATE/src.qcow2" "$BENCH_STATE/dst.raw"'
  expect wall "nbd-evcopy FILE.qcow2 NEWFILE" below 0.833 "nbdcopy [ qemu-nbd ] NEWFILE"
  note "FILE.qcow2 is 10a's raw file (half data) converted once by qemu-img convert -O qcow2.  nbdcopy's qemu-nbd has the options of the one nbd-evcopy starts: --read-only -f qcow2 --shared=16.  The copies make dst.raw, removed before every run (not timed)."
  note "$nosync"
  run

  # The empty qcow2 twice: 10b starts SRC's qemu-nbd afresh before every
  # run, as the captive one is; 10c keeps one qemu-nbd for all the runs,
  # which then answers block status faster than a new one (it has read
  # the image's metadata before), so 10c's FILE row pays for that too.
  empty_qcow2 ()
  {
    setup "[ -s \"\$BENCH_STATE/empty.qcow2\" ] || qemu-img create -q -f qcow2 \"\$BENCH_STATE/empty.qcow2\" $huge"
    source_server "qemu-nbd --read-only -f qcow2 --shared=16 \"\$BENCH_STATE/empty.qcow2\""
    baseline "nbd-evsum SRC"
    cmd "nbd-evsum SRC" 'nbd-evsum "$SRC"'
    cmd "nbd-evsum FILE" 'nbd-evsum "$BENCH_STATE/empty.qcow2"'
    blksum_row "blksum FILE" '"$BENCH_STATE/empty.qcow2"'
    expect wall "nbd-evsum FILE" below 1.1 "nbd-evsum SRC"
  }

  begin 10b "Local images: an empty qcow2, against a new server"
  image "$huge"
  claim "nbd-evsum FILE within 1.1x of nbd-evsum on the same file served by a server started beforehand"
  empty_qcow2
  note "SRC is a qemu-nbd started before every run (not timed), with the options of the one the tools start for a qcow2 file."
  run

  begin 10c "Local images: an empty qcow2, against a server kept running"
  image "$huge"
  claim "as 10b, against one qemu-nbd serving all the runs"
  empty_qcow2
  fresh no
  rounds 12
  run
  # Comparisons 11 and 12: servers that answer each request after a
  # delay, as a server across a network or on remote storage does
  # (nbdkit's delay filter on both servers), from 0 to 50 ms.  Each tool
  # with its defaults, which adapt the depth (tools/lib/depth.h), against
  # the peers with theirs, the lesson with its fixed settings, and the
  # tool fixed at each setting of a small sweep, labelled "fixed: ...",
  # so that the report shows how far the default is from the best fixed
  # setting at each delay.  The letter names the delay, the same in
  # QUICK runs, which run only 0 and 10 ms.
  delay_rows ()
  {
    local r rs
    for r in "$@"; do
      rs=${r#*x}
      cmd "fixed: $tool --requests=${r%x*} --request-size=$rs" \
          "$tool --requests=${r%x*} --request-size=$rs $args"
    done
    note "The fixed rows are $tool with --requests and --request-size given, which fixes both: a sweep around the settings that suit servers near and far."
  }
  # conn_rows C...: $tool fixed at C connections (-C) and 1 MiB
  # requests, as many as the two servers serve at once on them: 16 per
  # connection (tools/lib/bounds.h, SERVED_AT_ONCE), and a copy's slot
  # is on one server at a time.
  conn_rows ()
  {
    local c
    for c in "$@"; do
      cmd "fixed: $tool -C $c --requests=$((32 * c)) --request-size=1M" \
          "$tool -C $c --requests=$((32 * c)) --request-size=1M $args"
    done
    note "The rows with -C fix the connections too, from 1 to 8, with 1 MiB requests, as many as both servers serve at once on them (16 per connection)."
  }
  # delay_begin ID LETTER:MS TITLE: begin comparison ID followed by the
  # letter, with a source MS ms away; false where QUICK skips it.
  delay_begin ()
  {
    ms=${2#*:}
    [ -z "$quick" ] || [ "$ms" = 0 ] || [ "$ms" = 10 ] || return 1
    begin "$1${2%%:*}" "Servers $ms ms away: $3"
    image "$size"
    source_server "nbdkit -r --filter=delay pattern $size delay-read=${ms}ms"
    chart "delay $ms $(numfmt --from=iec "$size")"
  }
  # delay_expects ID OLD PEER RATIO LESSON: $tool's claims in
  # comparison ID: within $best_bound (1.05 unless set) of the sweep's
  # best; at 0 ms no slower than OLD, the fixed settings it had before
  # it adapted, nor than LESSON, its lesson (none if empty); at 10 ms
  # within 1.2x of its time at 0 ms and RATIO or less of PEER's time,
  # at 50 ms within 1.5x of its time at 0 ms, and at 2 ms faster than
  # PEER (no PEER claims if PEER is empty).
  delay_expects ()
  {
    expect wall "$tool" below "${best_bound:-1.05}" "best of fixed: $tool"
    case $ms in
      0) expect wall "$tool" no-more 1 "fixed: $tool $2"
         [ -z "${5:-}" ] || expect wall "$tool" no-more 1 "$5"
         note "$tool $2 is the fixed setting $tool had before it adapted." ;;
      2) [ -z "$3" ] || expect wall "$tool" below 1 "$3" ;;
      10) expect wall "$tool" below 1.2 "${1}a:$tool"
          [ -z "$3" ] || expect wall "$tool" below "$4" "$3" ;;
      50) expect wall "$tool" below 1.5 "${1}a:$tool" ;;
    esac
  }
  for d in a:0 b:1 c:2 d:5 e:10 f:20 g:50; do
    delay_begin 11 "$d" copies || continue
    claim "nbd-evcopy's default within 1.05x of its best fixed setting (at 50 ms 1.3x, the sweep reaching 8 connections); at 0 ms no slower than its lesson copy-libev; at 10 ms within 1.2x of its time at 0 ms and at least 1.2x faster than nbdcopy; at 50 ms within 1.5x of its time at 0 ms; at 2 ms faster than nbdcopy"
    primed_memory "$size" "nbdkit --filter=delay memory $size delay-write=${ms}ms delay-zero=${ms}ms"
    cmd "nbd-evcopy" 'nbd-evcopy "$SRC" "$DST"'
    cmd "copy-libev" 'copy-libev "$SRC" "$DST"'
    copy_libev_anchor_row
    cmd "nbdcopy" 'nbdcopy -- "$SRC" "$DST"'
    cmd "qemu-img convert -n -W" 'qemu-img convert -n -W -f raw -O raw "$SRC" "$DST"'
    tool=nbd-evcopy args='"$SRC" "$DST"'
    delay_rows 16x256k 16x1M 64x256k 64x1M
    best_bound=1.05
    if [ "$ms" = 50 ]; then conn_rows 1 2 4 8; best_bound=1.3; fi
    delay_expects 11 "--requests=16 --request-size=256k" nbdcopy 0.833 copy-libev
    note "Every read, write and zero waits ${ms} ms in the servers (nbdkit's delay filter), so a client keeps the servers busy only with enough bytes in flight."
    note "copy-libev is the lesson, with its fixed settings; qemu-img is given -f raw -O raw, as in comparison 3."
    run
  done

  # 11h: servers 50 ms away, 4 GiB, where a far copy spends its time
  # once the depth and the connections have grown: the default against
  # the fixed settings over 1 to 8 connections alone (nbdcopy would take
  # half a minute a run).
  if [ -z "$quick" ] && selected 11h; then
    ms=50 far=4G
    begin 11h "Servers $ms ms away: a copy of $far"
    image "$far"
    claim "nbd-evcopy's default within 1.15x of its best fixed setting over 1 to 8 connections"
    source_server "nbdkit -r --filter=delay pattern $far delay-read=${ms}ms"
    primed_memory "$far" "nbdkit --filter=delay memory $far delay-write=${ms}ms delay-zero=${ms}ms"
    cmd "nbd-evcopy" 'nbd-evcopy "$SRC" "$DST"'
    tool=nbd-evcopy args='"$SRC" "$DST"'
    conn_rows 1 2 4 8
    expect wall "$tool" below 1.15 "best of fixed: $tool"
    rounds 10
    note "Every read, write and zero waits ${ms} ms in the servers (nbdkit's delay filter)."
    run
  fi

  for d in a:0 b:1 c:2 d:5 e:10 f:20 g:50; do
    best_bound=1.05
    delay_begin 12 "$d" checksums || continue
    claim "nbd-evsum's default within 1.05x of its best fixed setting; at 0 ms at least 1.2x faster than blksum; at 10 ms within 1.2x of its time at 0 ms and at least 1.3x faster than blksum; at 50 ms within 1.5x of its time at 0 ms; at 2 ms faster than blksum"
    fresh no
    cmd "nbd-evsum" 'nbd-evsum "$SRC"'
    cmd "checksum-libev" 'checksum-libev "$SRC"'
    blksum_row blksum '"$SRC"'
    cmd "nbdcopy to null:" 'nbdcopy -- "$SRC" null:'
    tool=nbd-evsum args='"$SRC"'
    delay_rows 8x256k 16x1M 32x1M 64x256k 64x1M
    delay_expects 12 "--requests=8 --request-size=256k" "${blksum:+blksum}" 0.769
    [ "$ms" != 0 ] || [ -z "$blksum" ] || expect wall "$tool" below 0.833 blksum
    note "Every read waits ${ms} ms in the server (nbdkit's delay filter).  nbdcopy to null: reads the same data and hashes nothing."
    note "checksum-libev is the lesson, with its fixed settings."
    run
  done

  # Comparison 14: techniques with and without, on the same image, where
  # no comparison above runs them so.  The source's extents (section 5
  # of techniques.md) are the two copier lessons side by side, which
  # differ in exactly that.  Zero blocks hashed unread (6) and the
  # destination's map (7) are the tool against the same nbdkit server
  # with and without nbdkit's noextents filter, which answers block
  # status with one data extent: the server then says nothing of its
  # holes, and the program cannot skip them.
  begin 14a "With and without: the source's extents, in the copier lessons"
  image "$size"
  claim "zero-extent-copy-libev (the source's extents, one zero command per hole) is faster than copy-libev on an image half holes"
  source_server "nbdkit sparse-random $size percent=50 seed=1"
  primed_memory "$size"
  cmd "zero-extent-copy-libev" 'zero-extent-copy-libev "$SRC" "$DST"'
  cmd "copy-libev" 'copy-libev "$SRC" "$DST"'
  expect wall "zero-extent-copy-libev" below 1 "copy-libev"
  lesson_note
  note "zero-extent-copy-libev is copy-libev with the source's extents: it reads the data extents only and sends each hole as zero commands.  seed=1 makes every run's source the same image."
  run

  begin 14b "With and without: zero blocks hashed unread, nbd-evsum"
  image "$size"
  claim "nbd-evsum hashes an image half holes faster when the server reports the holes than when it hides them"
  source_server "nbdkit sparse-random $size percent=50 seed=1"
  destination_server "nbdkit --filter=noextents sparse-random $size percent=50 seed=1"
  fresh no
  cmd "nbd-evsum, holes reported" 'nbd-evsum "$SRC"'
  cmd "nbd-evsum, holes hidden" 'nbd-evsum "$DST"'
  expect wall "nbd-evsum, holes reported" below 1 "nbd-evsum, holes hidden"
  note "Both servers serve the same image (seed=1); DST, hashed by the second row, has nbdkit's noextents filter, so every block of it is read and hashed.  Both print the same digest."
  run

  begin 14c "With and without: the destination's map, nbd-evcopy"
  image "$size"
  claim "nbd-evcopy copies an image half holes into a new qcow2 faster when the destination reports that it reads as zeroes than when it hides it"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/dst.qcow2\" $size"
  source_server "nbdkit sparse-random $size percent=50 seed=1"
  destination_server "qemu-nbd -f qcow2 \"\$BENCH_STATE/dst.qcow2\""
  cmd "nbd-evcopy, destination's holes reported" 'nbd-evcopy "$SRC" [ nbdkit nbd socket="$BENCH_STATE/dst.sock" ]'
  cmd "nbd-evcopy, destination's holes hidden" 'nbd-evcopy "$SRC" [ nbdkit --filter=noextents nbd socket="$BENCH_STATE/dst.sock" ]'
  expect wall "nbd-evcopy, destination's holes reported" below 1 "nbd-evcopy, destination's holes hidden"
  note "The destination is a new qcow2 behind qemu-nbd, created anew before every run (not timed), reached through a captive nbdkit nbd plugin that nbd-evcopy starts and stops (one connection); the second row's has the noextents filter, so the destination's block status says nothing of its holes and every hole of the source is sent as zero commands.  With the map, the holes are skipped.  Client CPU includes the captive nbdkit's."
  note "$nosync"
  run

  # Comparison 13: a link of known rate.  The servers listen on TCP in a
  # network namespace made for the run, whose loopback sends through a
  # token bucket (tc tbf) of $link_rate; the clients run in it too
  # ($link_exec), so that all the data crosses the bucket.  A copy
  # sends every byte through it twice (from the source, to the
  # destination), a checksum once.  The claims: at least 90% of the
  # link's rate, at no delay and with 10 ms added per request.
  if [ -n "$quick" ]; then link_size=32M; else link_size=256M; fi
  if selected 13 && link_ready; then
    link_bytes=$(numfmt --from=iec "$link_size")
    # The time the link needs at 90% of its rate, for one and two
    # crossings of every byte.
    sum_bound=$(awk -v b="$link_bytes" -v r="$link_bps" 'BEGIN { printf "%.3f", b * 8 / r / 0.9 }')
    copy_bound=$(awk -v b="$link_bytes" -v r="$link_bps" 'BEGIN { printf "%.3f", 2 * b * 8 / r / 0.9 }')
    for d in a:0 b:10; do
      ms=${d#*:} l=${d%%:*}
      begin "13$l" "A $link_rate link, servers $ms ms away"
      image "$link_size"
      claim "nbd-evcopy and nbd-evsum reach at least 90% of the link's rate"
      source_server "tcp $link_ns 10809 nbdkit -r --filter=delay pattern $link_size delay-read=${ms}ms"
      primed_memory "$link_size" "tcp $link_ns 10810 nbdkit --filter=delay memory $link_size delay-write=${ms}ms delay-zero=${ms}ms"
      prime "$link_exec nbdcopy -- $link_src $link_dst"
      cmd "nbd-evcopy" "$link_exec nbd-evcopy $link_src $link_dst"
      cmd "nbdcopy" "$link_exec nbdcopy -- $link_src $link_dst"
      cmd "nbd-evsum" "$link_exec nbd-evsum $link_src"
      cmd "nbdcopy to null:" "$link_exec nbdcopy -- $link_src null:"
      blksum_row blksum "$link_src"
      [ -z "$blksum" ] || commands[${#commands[@]}-1]="$link_exec ${commands[${#commands[@]}-1]}"
      expect wall "nbd-evcopy" below "${copy_bound}s"
      expect wall "nbd-evsum" below "${sum_bound}s"
      note "The link: $link_desc.  ${link_size} copied is 2 x ${link_size} through it, which takes ${copy_bound} s at 90% of its rate; ${link_size} hashed, ${sum_bound} s."
      note "Servers and clients are in the namespace, on 127.0.0.1 (SRC is $link_src, DST $link_dst); every read, write and zero also waits ${ms} ms in the servers."
      run
    done
  fi
}
