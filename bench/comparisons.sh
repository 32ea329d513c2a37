# bench/comparisons.sh: the comparisons behind the claims in the docs,
# sourced by bench/run.sh (make bench) and bench/compare.sh (make
# bench-compare), which each define "run": run.sh times the commands
# with hyperfine, compare.sh runs each command of two builds in turn.
#
# A comparison is declared with begin, claim, note, source_server,
# destination_server, setup (before the servers start), prime (once they
# are up), fresh, baseline, chart and cmd, then run.  The sourcing
# script sets $quick first (empty for full runs) and $only (BENCH_ONLY),
# and calls define_comparisons once its "run" is defined.

# Sizes.  Full runs use the sizes that the figures in the docs are
# for; QUICK shrinks every one of them, the empty qcow2 of 3c too.
if [ -n "$quick" ]; then
  size=64M          # the pattern source and memory destination
  big=64M           # 3b's sparse-random image
  huge=1G           # 3c's empty qcow2 images
  zero=64M          # 4a's zero image
  hf_opts=(--warmup 0 --runs 1)   # per pass; two passes
else
  size=1G
  big=6G
  huge=1T
  # nbdcopy | sha256sum reads every zero through a pipe at about
  # 300 MB/s here: 2G keeps one run under ten seconds.
  zero=2G
  hf_opts=(--warmup 1 --runs 3)   # per pass; two passes: 6 runs
fi

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
  claim= notes=() src= dst= setup= prime= fresh=yes baseline= chart=
  labels=() commands=()
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
cmd () { labels+=("$1"); commands+=("$2"); }

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
  begin 1 "Read-buffer initialization"
  claim "copy-libev --no-init (libnbd does not zero read buffers) is 3-10% faster than --init"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit memory $size"
  cmd "copy-libev --init" 'copy-libev --init "$SRC" "$DST"'
  cmd "copy-libev --no-init" 'copy-libev --no-init "$SRC" "$DST"'
  run

  begin 2 "Request size sweep"
  claim "1 MiB requests are best; 32 MiB requests are about 23% slower"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit memory $size"
  baseline "copy-libev --request-size=1M"
  chart request-size
  for rs in 256k 512k 1M 2M 4M 8M 16M 32M; do
    cmd "copy-libev --request-size=$rs" "copy-libev --request-size=$rs \"\$SRC\" \"\$DST\""
  done
  run

  # Comparison 3: the copiers, on three kinds of image.
  copiers ()
  {
    [ "$1" = no-copy-libev ] || cmd "copy-libev" 'copy-libev "$SRC" "$DST"'
    cmd "zero-extent-copy-libev" 'zero-extent-copy-libev "$SRC" "$DST"'
    cmd "nbdcopy" 'nbdcopy -- "$SRC" "$DST"'
    cmd "nbdcopy --request-size=1M --requests=16 --connections=1" \
        'nbdcopy --request-size=1048576 --requests=16 --connections=1 -- "$SRC" "$DST"'
    cmd "qemu-img convert -n -W" 'qemu-img convert -n -W -f raw -O raw "$SRC" "$DST"'
    note "nbdcopy 1.14 takes --request-size in bytes only: 1M is written 1048576."
    note "qemu-img is given -f raw -O raw: the NBD exports are raw, and probing would only add reads."
  }

  begin 3a "Copiers: pattern to memory"
  claim "copy-libev at least 1.2x faster than the faster of nbdcopy and qemu-img convert, with less client CPU time than nbdcopy"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit memory $size"
  # The destination's pages are allocated once, before the runs: a fresh
  # memory server spends seconds faulting them in, which would time the
  # server, not the copiers.  Every run writes the same data over them.
  prime 'nbdcopy -- "$SRC" "$DST"'
  fresh no
  copiers all
  # The defaults (16 requests of 256 KiB, the kernel's socket buffers)
  # come from measurements on real storage; this row is copy-libev tuned
  # for a memory-to-memory copy on this kind of machine, as comparisons
  # 2 and 5 and a search around them suggested.
  cmd "copy-libev tuned" \
      'copy-libev --requests=32 --request-size=256k --socket-buffer=512k "$SRC" "$DST"'
  note "copy-libev tuned is copy-libev --requests=32 --request-size=256k --socket-buffer=512k: smaller requests that each fit in the socket buffers, and twice as many in flight."
  run

  begin 3b "Copiers: sparse-random 50% to memory"
  claim "none with a number: the copiers side by side on an image that is half data, half holes"
  source_server "nbdkit sparse-random $big percent=50 seed=1"
  destination_server "nbdkit memory $big"
  copiers all
  note "seed=1 makes every run's source the same image."
  run

  begin 3c "Copiers: empty qcow2 to empty qcow2 through qemu-nbd"
  claim "none with a number: the copiers side by side on an image that is all holes"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge && qemu-img create -q -f qcow2 \"\$BENCH_STATE/dst.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 \"\$BENCH_STATE/src.qcow2\""
  destination_server "qemu-nbd -f qcow2 \"\$BENCH_STATE/dst.qcow2\""
  copiers no-copy-libev
  note "copy-libev is left out: it reads every byte, and reading 1 TiB of zeroes would take it over 15 minutes a run. The baseline is zero-extent-copy-libev."
  note "Both qcow2 files are created anew before every run (not timed)."
  run

  # The original 3x report ran hyperfine -w3 on one dst.qcow2: every copy
  # after the first met a destination whose clusters had been zeroed,
  # where each block-status reply costs qemu-nbd an L2 walk.  The prime
  # step puts it in that state once (nbdcopy writes zeroes over all of
  # it); nbdcopy and qemu-img leave it so, and the examples, which skip
  # what already reads as zeroes, do not change it.
  begin 3d "Copiers: empty qcow2 onto one qcow2 reused across runs"
  claim "none with a number: 3c as the original report ran it, onto one destination whose clusters are zeroed"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge && qemu-img create -q -f qcow2 \"\$BENCH_STATE/dst.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 --shared=8 \"\$BENCH_STATE/src.qcow2\""
  destination_server "qemu-nbd -f qcow2 --shared=8 \"\$BENCH_STATE/dst.qcow2\""
  prime 'nbdcopy -- "$SRC" "$DST"'
  fresh no
  copiers no-copy-libev
  note "Both qcow2 files are created, and the destination's clusters zeroed by one nbdcopy, before the runs (not timed); every run then meets the same destination."
  run

  # Comparison 4: checksums.  nbdcopy | sha256sum is a different digest
  # (of the whole stream, not the block hash), but the same reads.
  checksummers ()
  {
    cmd "checksum-libev" 'checksum-libev "$SRC"'
    cmd "checksum-libev --requests=1" 'checksum-libev --requests=1 "$SRC"'
    cmd "nbdcopy to sha256sum" 'nbdcopy -- "$SRC" - | sha256sum'
    note "The ring is checksum-libev as it comes (8 reads in flight); --requests=1 is the same program with one read at a time.  nbdcopy | sha256sum computes another digest (of the whole stream, not the block hash) from the same reads."
  }

  begin 4a "Checksum: zero image"
  claim "the ring is about 4.7x faster on zeroes"
  source_server "nbdkit null $zero"
  fresh no
  checksummers
  note "The zero image is $zero (nbdkit null, which reports it all as a hole), so that nbdcopy | sha256sum stays under about ten seconds a run."
  run

  begin 4b "Checksum: data image"
  claim "the ring is 1.4-2x faster over NBD on data; checksum-libev is at least 4x faster than nbdcopy | sha256sum and within 1.3x of nbdcopy to null:"
  source_server "nbdkit pattern $size"
  fresh no
  checksummers
  cmd "nbdcopy to null:" 'nbdcopy -- "$SRC" null:'
  note "nbdcopy to null: reads the same data and hashes nothing: the floor for any checksum over this connection."
  run

  begin 4c "Checksum: 50% sparse image"
  claim "none with a number (the claims are for zeroes and data): the same three on an image half data, half holes"
  source_server "nbdkit sparse-random $size percent=50 seed=1"
  fresh no
  checksummers
  run

  begin 4d "Checksum: empty qcow2 through qemu-nbd"
  claim "checksum-libev hashes an empty 1 TiB image in under 1 second (the floor is the outer hash of 16 Mi digests)"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 \"\$BENCH_STATE/src.qcow2\""
  fresh no
  cmd "checksum-libev" 'checksum-libev "$SRC"'
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
    cmd "checksum-libev zeroes" 'checksum-libev "$SRC"'
    cmd "checksum-libev --requests=1 zeroes" 'checksum-libev --requests=1 "$SRC"'
    cmd "checksum-libev half data" 'checksum-libev "$DST"'
    cmd "checksum-libev --requests=1 half data" 'checksum-libev --requests=1 "$DST"'
    note "SRC serves $sum_size of zeroes (a sparse file), DST $sum_size half data from sparse-random seed=1; both are only read."
  }

  begin 4e "Checksum table: raw files through qemu-nbd, with the page cache"
  claim "none with a number here: the qemu-img checksum patch's table, the ring against one read at a time"
  checksum_table ""
  run

  begin 4f "Checksum table: raw files through qemu-nbd, O_DIRECT"
  claim "as 4e, with --cache=none --aio=native"
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
    note "The default is what the kernel gives a new Unix socket; here$v. Linux caps a request at the *_max value and reports twice what was set."
    note "The servers listen on Unix sockets, as in every other comparison."
  }

  begin 5a "Socket buffers: checksum-libev"
  claim "a 1 MiB send buffer is best, up to 5-7x faster (measured on macOS); what does Linux show?"
  source_server "nbdkit pattern $size"
  fresh no
  cmd "checksum-libev (default)" 'checksum-libev "$SRC"'
  for sb in 64k 128k 256k 512k 1M 2M; do
    cmd "checksum-libev --socket-buffer=$sb" "checksum-libev --socket-buffer=$sb \"\$SRC\""
  done
  sockbuf_note
  run

  begin 5b "Socket buffers: copy-libev"
  claim "a 1 MiB send buffer is best, up to 5-7x faster (measured on macOS); what does Linux show?"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit memory $size"
  cmd "copy-libev (default)" 'copy-libev "$SRC" "$DST"'
  for sb in 64k 128k 256k 512k 1M 2M; do
    cmd "copy-libev --socket-buffer=$sb" "copy-libev --socket-buffer=$sb \"\$SRC\" \"\$DST\""
  done
  sockbuf_note
  run

  # Comparison 6: what --timeout costs.  The destination is nbdkit null,
  # whose writes cost next to nothing, so the client's own time shows.
  begin 6 "Timeout cost"
  claim "the default --timeout costs nothing measurable against --timeout=0 (one timer per connection, a stamp per read)"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit null $size"
  fresh no
  cmd "copy-libev" 'copy-libev "$SRC" "$DST"'
  cmd "copy-libev --timeout=0" 'copy-libev --timeout=0 "$SRC" "$DST"'
  cmd "checksum-libev" 'checksum-libev "$SRC"'
  cmd "checksum-libev --timeout=0" 'checksum-libev --timeout=0 "$SRC"'
  run

  # Comparison 7: connections per server.  nbdkit advertises multi-conn,
  # so both nbdcopy and the examples open up to four, one per CPU, by
  # default; the destination is nbdkit null so that the client's and the
  # servers' CPU, not page faults, set the pace.
  begin 7 "Connections per server"
  claim "several connections (multi-conn) make the copy faster, as they do for nbdcopy"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit null $size"
  fresh no
  cmd "copy-libev -C 1" 'copy-libev -C 1 "$SRC" "$DST"'
  cmd "copy-libev -C 2" 'copy-libev -C 2 "$SRC" "$DST"'
  cmd "copy-libev (default)" 'copy-libev "$SRC" "$DST"'
  cmd "copy-libev -C 4" 'copy-libev -C 4 "$SRC" "$DST"'
  cmd "nbdcopy" 'nbdcopy "$SRC" "$DST"'
  cmd "nbdcopy --connections=1" 'nbdcopy --connections=1 "$SRC" "$DST"'
  run

  # Comparison 8: raw files on this machine's disk through qemu-nbd, as
  # the libnbd list benchmarked: O_DIRECT (--cache=none) with Linux AIO,
  # the source read-only, the destination a fresh sparse file every run,
  # punching holes where it is zeroed.  The image is half data (runs of
  # random data and holes), made once per make bench from nbdkit
  # sparse-random with a fixed seed.
  if [ -n "$quick" ]; then raw=64M; else raw=4G; fi
  begin 8 "Raw files on disk through qemu-nbd"
  claim "the request defaults suit real storage; the copiers are no slower than nbdcopy; checksum-libev within 1.3x of nbdcopy to null:"
  setup "{ [ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\"; } && rm -f \"\$BENCH_STATE/dst.raw\" && truncate -s $raw \"\$BENCH_STATE/dst.raw\""
  source_server "qemu-nbd --read-only -f raw --cache=none --aio=native --shared=8 \"\$BENCH_STATE/src.raw\""
  destination_server "qemu-nbd -f raw --cache=none --aio=native --shared=8 --discard=unmap \"\$BENCH_STATE/dst.raw\""
  cmd "zero-extent-copy-libev" 'zero-extent-copy-libev "$SRC" "$DST"'
  cmd "zero-extent-copy-libev --request-size=1M" 'zero-extent-copy-libev --request-size=1M "$SRC" "$DST"'
  cmd "zero-extent-copy-libev -C 1" 'zero-extent-copy-libev -C 1 "$SRC" "$DST"'
  cmd "copy-libev" 'copy-libev "$SRC" "$DST"'
  cmd "copy-libev --request-size=1M" 'copy-libev --request-size=1M "$SRC" "$DST"'
  cmd "copy-libev --init" 'copy-libev --init "$SRC" "$DST"'
  cmd "nbdcopy" 'nbdcopy -- "$SRC" "$DST"'
  cmd "nbdcopy --connections=1" 'nbdcopy --connections=1 -- "$SRC" "$DST"'
  cmd "checksum-libev" 'checksum-libev "$SRC"'
  cmd "checksum-libev --request-size=1M" 'checksum-libev --request-size=1M "$SRC"'
  cmd "nbdcopy to null:" 'nbdcopy -- "$SRC" null:'
  note "The image ($raw, half data) and the destination file are in \$BENCH_STATE, on the disk of \${TMPDIR:-/tmp}; O_DIRECT needs a file system that supports it (not tmpfs)."
  note "copy-libev reads and writes every byte, holes included; the others skip the source's holes, and zero-extent-copy-libev also skips writing where the fresh destination reads as zeroes."
  note "copy-libev --init is the read-buffer claim (comparison 1) on real storage, as the libnbd list measured it."
  note "The checksum rows only read; the destination is reset all the same."
  run

  # Comparison 9: verified copies.  The same copy alone, with --checksum
  # (the source's block hash computed while copying), with --verify (and
  # the destination hashed after it), and the passes it replaces: the
  # copy followed by checksum-libev on the source, then on both ends.
  verified ()
  {
    cmd "zero-extent-copy-libev" 'zero-extent-copy-libev "$SRC" "$DST"'
    cmd "zero-extent-copy-libev --checksum" 'zero-extent-copy-libev --checksum "$SRC" "$DST"'
    cmd "zero-extent-copy-libev --verify" 'zero-extent-copy-libev --verify "$SRC" "$DST"'
    cmd "copy, then checksum-libev SRC" 'zero-extent-copy-libev "$SRC" "$DST" && checksum-libev "$SRC"'
    cmd "copy, then checksum-libev SRC and DST" 'zero-extent-copy-libev "$SRC" "$DST" && checksum-libev "$SRC" && checksum-libev "$DST"'
  }

  begin 9a "Verified copies: pattern to memory"
  claim "--checksum costs at most 1.3x the plain copy and is at least 1.5x faster than the copy then checksum-libev SRC; --verify at least 1.3x faster than the copy then checksum-libev on both ends"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit memory $size"
  verified
  run

  begin 9b "Verified copies: sparse-random 50% to memory"
  claim "as 9a, on an image half data, half holes"
  source_server "nbdkit sparse-random $big percent=50 seed=1"
  destination_server "nbdkit memory $big"
  verified
  note "seed=1 makes every run's source the same image."
  run

  begin 9c "Verified copies: empty qcow2 to empty qcow2 through qemu-nbd"
  claim "--checksum adds less than 0.5 s to the copy of an empty 1 TiB image"
  setup "qemu-img create -q -f qcow2 \"\$BENCH_STATE/src.qcow2\" $huge && qemu-img create -q -f qcow2 \"\$BENCH_STATE/dst.qcow2\" $huge"
  source_server "qemu-nbd --read-only -f qcow2 \"\$BENCH_STATE/src.qcow2\""
  destination_server "qemu-nbd -f qcow2 \"\$BENCH_STATE/dst.qcow2\""
  cmd "zero-extent-copy-libev" 'zero-extent-copy-libev "$SRC" "$DST"'
  cmd "zero-extent-copy-libev --checksum" 'zero-extent-copy-libev --checksum "$SRC" "$DST"'
  cmd "zero-extent-copy-libev --verify" 'zero-extent-copy-libev --verify "$SRC" "$DST"'
  note "Both qcow2 files are created anew before every run (not timed)."
  run

  # The same two images onto a memory destination whose pages were
  # allocated before the timed runs (one copy, not timed): a fresh memory
  # server spends about 4.5 s faulting in each GiB on this machine, which
  # hides what the hashing costs.  Every run copies the same data over the
  # same pages, so the destination is in the same state for all of them.
  begin 9d "Verified copies: pattern to a filled memory destination"
  claim "as 9a, with the destination's pages allocated before the runs"
  source_server "nbdkit pattern $size"
  destination_server "nbdkit memory $size"
  prime 'nbdcopy -- "$SRC" "$DST"'
  fresh no
  verified
  run

  begin 9e "Verified copies: sparse-random 50% to a filled memory destination"
  claim "as 9b, with the destination's pages allocated before the runs"
  source_server "nbdkit sparse-random $big percent=50 seed=1"
  destination_server "nbdkit memory $big"
  prime 'nbdcopy -- "$SRC" "$DST"'
  fresh no
  verified
  note "seed=1 makes every run's source the same image; the destination's holes stay holes."
  run

  # Comparison 10: local images.  The examples take a file and serve it
  # with a captive server (common/image.h): the start of that server must
  # cost next to nothing against the same program on a server started
  # beforehand.  The raw image is comparison 8's (half data), in the page
  # cache after the warm-up run, as a user's image is on the second look.
  begin 10a "Local images: a raw file"
  claim "checksum-libev FILE within 1.1x of checksum-libev on the same file served by a server started beforehand"
  setup "{ [ -s \"\$BENCH_STATE/src.raw\" ] || nbdcopy -- [ nbdkit sparse-random $raw percent=50 seed=1 ] \"\$BENCH_STATE/src.raw\"; } && rm -f \"\$BENCH_STATE/dst.raw\""
  source_server "nbdkit --readonly file \"\$BENCH_STATE/src.raw\""
  baseline "checksum-libev SRC"
  cmd "checksum-libev SRC" 'checksum-libev "$SRC"'
  cmd "checksum-libev FILE" 'checksum-libev "$BENCH_STATE/src.raw"'
  cmd "checksum-libev [ qemu-nbd -f raw ]" 'checksum-libev -C 2 -- [ qemu-nbd --read-only -f raw --shared=16 "$BENCH_STATE/src.raw" ]'
  cmd "zero-extent-copy-libev FILE NEWFILE" 'zero-extent-copy-libev "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  cmd "nbdcopy FILE NEWFILE" 'nbdcopy "$BENCH_STATE/src.raw" "$BENCH_STATE/dst.raw"'
  note "SRC is nbdkit's file plugin serving the same file, started before the run: the server the examples start for a raw file.  The qemu-nbd row is the other server that could serve it, with the same two connections."
  note "The copies make dst.raw, removed before every run (not timed); nbdcopy reads and writes the files itself, without NBD."
  run

  # The empty qcow2 twice: 10b starts SRC's qemu-nbd afresh before every
  # run, as the captive one is; 10c keeps one qemu-nbd for all the runs,
  # which then answers block status faster than a new one (it has read
  # the image's metadata before), so 10c's FILE row pays for that too.
  empty_qcow2 ()
  {
    setup "[ -s \"\$BENCH_STATE/empty.qcow2\" ] || qemu-img create -q -f qcow2 \"\$BENCH_STATE/empty.qcow2\" $huge"
    source_server "qemu-nbd --read-only -f qcow2 --shared=16 \"\$BENCH_STATE/empty.qcow2\""
    baseline "checksum-libev SRC"
    cmd "checksum-libev SRC" 'checksum-libev "$SRC"'
    cmd "checksum-libev FILE" 'checksum-libev "$BENCH_STATE/empty.qcow2"'
  }

  begin 10b "Local images: an empty qcow2, against a new server"
  claim "checksum-libev FILE within 1.1x of checksum-libev on the same file served by a server started beforehand"
  empty_qcow2
  note "SRC is a qemu-nbd started before every run (not timed), with the options of the one the examples start for a qcow2 file."
  run

  begin 10c "Local images: an empty qcow2, against a server kept running"
  claim "as 10b, against one qemu-nbd serving all the runs"
  empty_qcow2
  fresh no
  run
}
