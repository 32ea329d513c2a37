#!/usr/bin/env bash
# [ CMD ARGS ... ]: captive servers run with socket activation, for
# every program, with nbdkit and qemu-nbd; output that names the image
# as given, with the digest of tests/blkhash-ref.py; copies read back
# and compared byte for byte; and the ways it can go wrong, each one
# line and exit 1 without hanging: a command that fails to start, one
# that is not an NBD server, one that is not installed, a server program
# that is not installed for a local file.  Signals stop a run of
# several images.  functions.sh fails the test if any server outlives
# its program.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy qemu-img qemu-nbd timeout

mib=$((1024 * 1024))

# nbd-evsum: the line names the command; the digest is
# tests/blkhash-ref.py's of the same image on a server started here.
start_nbdkit pat pattern $((3 * mib + 512))
read_back "$pat" "$tmpdir/want.raw"
want=$(blkhash_ref "$tmpdir/want.raw")
got=$(nbd-evsum [ nbdkit pattern $((3 * mib + 512)) ]) ||
  fail "nbd-evsum [ nbdkit ... ]"
[ "$got" = "$want  [ nbdkit pattern $((3 * mib + 512)) ]" ] ||
  fail "got '$got', expected digest $want"

# qemu-nbd, with its own options, which must not be taken for the
# program's; and with -C 2, whose second connection goes to the same
# captive server.
qemu-img create -q -f qcow2 "$tmpdir/q.qcow2" $((3 * mib + 512))
nbdcopy -- "$pat" [ qemu-nbd -f qcow2 "$tmpdir/q.qcow2" ] ||
  fail "cannot fill q.qcow2"
got=$(nbd-evsum -v -C 2 -- [ qemu-nbd -r -f qcow2 --shared=2 "$tmpdir/q.qcow2" ] \
        2>"$tmpdir/log") || fail "nbd-evsum [ qemu-nbd ... ]"
[ "${got%% *}" = "$want" ] || fail "qemu-nbd: got '$got', expected digest $want"
grep -q "connection 2: connected" "$tmpdir/log" ||
  fail "no second connection: $(grep connect "$tmpdir/log")"

# Both ways of copying, every byte (--no-extents --no-sparse) and by
# extents, from a captive nbdkit to a captive qemu-nbd and back to a
# captive nbdkit file; the copies are read back and compared.  $opts is
# split on purpose: whole options, no spaces inside.
for opts in "--no-extents --no-sparse" ""; do
  rm -f "$tmpdir/out.raw"
  truncate -s $((3 * mib + 512)) "$tmpdir/out.raw"
  nbd-evcopy $opts -- [ nbdkit pattern $((3 * mib + 512)) ] \
    [ qemu-nbd -f raw "$tmpdir/out.raw" ] ||
    fail "nbd-evcopy $opts to qemu-nbd"
  cmp "$tmpdir/want.raw" "$tmpdir/out.raw" ||
    fail "nbd-evcopy $opts: copy differs"
  fill_file "$tmpdir/out2.raw" $((3 * mib + 512)) 252
  nbd-evcopy $opts [ qemu-nbd -r -f raw "$tmpdir/out.raw" ] \
    [ nbdkit file "$tmpdir/out2.raw" ] ||
    fail "nbd-evcopy $opts to nbdkit file"
  cmp "$tmpdir/want.raw" "$tmpdir/out2.raw" ||
    fail "nbd-evcopy $opts: copy 2 differs"
done
nbd-evcopy --checksum [ nbdkit pattern $((3 * mib + 512)) ] \
  [ nbdkit memory $((3 * mib + 512)) ] >"$tmpdir/out" ||
  fail "nbd-evcopy --checksum"
[ "$(cat "$tmpdir/out")" = "$want  [ nbdkit pattern $((3 * mib + 512)) ]" ] ||
  fail "--checksum line: $(cat "$tmpdir/out")"

# What can go wrong, each in one line, within seconds.
# $prog is split on purpose: the program and its options.
for prog in nbd-evsum "nbd-evcopy --no-extents --no-sparse" nbd-evcopy; do
  if [ "$prog" = nbd-evsum ]; then dst=(); else dst=("$tmpdir/x.raw"); fi
  what="[ nbdkit nosuchplugin ]: cannot connect"
  [ "$prog" = nbd-evsum ] ||
    what="source: cannot connect to [ nbdkit nosuchplugin ]"
  # What the program promises: the image named, "cannot connect", and
  # the server's own words.  How libnbd words the failure depends on a
  # race (the reset of the socket or the refused connect), and how
  # nbdkit words a missing plugin on its version, so neither is matched.
  expect_error "$what: " \
    timeout 20 $prog -- [ nbdkit nosuchplugin ] "${dst[@]}"
  grep -q ": the server said: nbdkit: error: .*nosuchplugin" "$tmpdir/err" ||
    fail "$prog: the captive server's message is not in the error"
  expect_error "cannot connect" \
    timeout 20 $prog [ true ] "${dst[@]}"
  expect_error "no NBD handshake" \
    timeout 20 $prog --timeout=1 [ sleep 60 ] "${dst[@]}"
  expect_error "[ no-such-command x ]: no-such-command: command not found" \
    timeout 20 $prog [ no-such-command x ] "${dst[@]}"
  [ ! -e "$tmpdir/x.raw" ] || fail "$prog created its destination in vain"
done

# A local file whose server is not installed: a PATH without it.
mkdir "$tmpdir/bin"
ln -s "$(command -v nbdkit)" "$tmpdir/bin/nbdkit"
# (the path, not the shell function: env runs it with the mark.)
evsum=$(type -P nbd-evsum)
expect_error "q.qcow2: a qcow2 image needs qemu-nbd, which is not installed (Debian package qemu-utils)" \
  env "$mark" PATH="$tmpdir/bin" "$evsum" "$tmpdir/q.qcow2"
rm "$tmpdir/bin/nbdkit"
ln -s "$(command -v qemu-nbd)" "$tmpdir/bin/qemu-nbd"
# A raw file needs no server where the program reads it itself
# (io_uring); on the fallback it needs nbdkit.
env "$mark" PATH="$tmpdir/bin" "$evsum" "$tmpdir/out.raw" >/dev/null ||
  fail "nbd-evsum of a raw file needed a server"
expect_error "out.raw: a raw image is served by nbdkit, which is not installed (Debian package nbdkit)" \
  env "$mark" PATH="$tmpdir/bin" NBD_EV_NO_IO_URING=1 "$evsum" "$tmpdir/out.raw"

# SIGTERM during a run of several images: the image being hashed stops
# cleanly, no other starts, and the status says which signal.  The
# signal comes once the second image's server has had a read (its log
# filter, outside the delay, records it as it arrives): the first image
# is done, and the second is being hashed.
# (env, not the shell function: $! must be the program itself.)
env "$mark" nbd-evsum --requests=1 [ nbdkit pattern 1M ] \
  [ nbdkit --filter=log --filter=delay pattern 1G rdelay=100ms \
    logfile="$tmpdir/second.log" ] [ nbdkit pattern 2M ] \
  >"$tmpdir/out" 2>"$tmpdir/err" &
pid=$!
wait_log "$tmpdir/second.log" ' Read id='
kill -TERM $pid
wait_for $pid 60
status=$waited
[ $status -eq 143 ] || fail "status $status after SIGTERM, not 143"
[ "$(wc -l <"$tmpdir/out")" -eq 1 ] || fail "stdout: $(cat "$tmpdir/out")"
grep -q 'interrupted by SIGTERM' "$tmpdir/err" || fail "stderr: $(cat "$tmpdir/err")"
echo ok
