#!/usr/bin/env bash
# The campaign's oracles refuse wrong results.  tests/hostile.py runs
# with stand-ins for nbd-evcopy (--programs) that are wrong on purpose,
# each on a seed or round whose draw meets it, and must fail it for the
# right reason:
#   - a copy that exits 0 and never creates its new destination file
#     (seed 8, a new file);
#   - a copy that fails into a pipe after writing bytes that are not
#     the source's (seed 348, a pipe with an injected fault);
#   - a copy that ignores SIGINT and SIGTERM and finishes, sending
#     more requests after the signal than it could have had in flight
#     (rounds 14 and 20, SIGTERM and SIGINT);
#   - a copy that reads the source's zero extents, and fails on read
#     errors a correct copy never meets (seed 86, whose faults all lie
#     inside zero extents);
#   - a copy that fails without the command that copies the rest,
#     though it could resume (seed 108, a read error from the source);
# and, on nbdkit logs written here, a destination server killed before
# it answered its K-th request leaves no room for exit 0, and after a
# failure a write confirmed but not holding the source, or bytes
# changed where no write was confirmed, are refused.  Each case also checks that its seed still draws
# what it is here for: an edit of hostile.py's draws fails here, not
# silently.
source "$abs_top_srcdir/tests/functions.sh"
requires python3 nbdkit nbdcopy qemu-nbd
requires_nbdkit_plugin sh
requires_nbdkit_filter blocksize-policy
requires_nbdkit_filter delay
requires_nbdkit_filter log

export NBD_EVCOPY=$abs_top_builddir/tools/nbd-evcopy
[ -x "$NBD_EVCOPY" ] || fail "no $NBD_EVCOPY"

# stand_in NAME SCRIPT: $tmpdir/NAME/nbd-evcopy, a shell script.
stand_in ()
{
  mkdir -p "$tmpdir/$1"
  printf '#!/bin/bash\n%s\n' "$2" >"$tmpdir/$1/nbd-evcopy"
  chmod +x "$tmpdir/$1/nbd-evcopy"
}
stand_in nothing 'exit 0'
stand_in corrupt '"$NBD_EVCOPY" "$@" | { head -c 1 | tr "\000-\377" "\001-\377\000"; cat; }
exit ${PIPESTATUS[0]}'
stand_in deaf 'trap "" INT TERM
"$NBD_EVCOPY" "$@"'
stand_in reads-all '"$NBD_EVCOPY" --no-extents "$@"'
stand_in no-resume '"$NBD_EVCOPY" "$@" 2>"$TMPDIR/err"; s=$?
sed "s/; to copy the rest: .*//" "$TMPDIR/err" >&2; rm -f "$TMPDIR/err"
exit $s'

# refused STAND-IN WHY DRAW ARGS...: hostile.py with the stand-in fails
# every seed or round of ARGS, each with WHY, and its notes show DRAW.
refused ()
{
  _who=$1 _why=$2 _draw=$3; shift 3
  ! python3 "$abs_top_srcdir/tests/hostile.py" --programs="$tmpdir/$_who" \
      "$@" >"$tmpdir/out" 2>&1 || {
    cat "$tmpdir/out"; fail "the stand-in '$_who' passed: $*"; }
  cat "$tmpdir/out"
  _n=$(grep -c '^FAIL ' "$tmpdir/out")
  [ "$_n" -eq "$(grep -c -F -- "$_why" "$tmpdir/out")" ] && [ "$_n" -gt 0 ] ||
    fail "$*: not every failure says '$_why'"
  [ "$(grep -c -F -- "$_draw" "$tmpdir/out")" -eq "$_n" ] ||
    fail "$*: the draw is no longer '$_draw'"
}

refused nothing "exit 0, but the destination file dst.img does not exist" \
  "destination: new-file" --seed=8
refused corrupt "a failed run into a pipe wrote" \
  "destination: pipe" --seed=348
refused deaf "the signal was ignored" " at the " --round=14,20
refused reads-all "where a correct copy never reads" \
  "every fault inside a zero extent: must succeed" --seed=86
refused no-resume "no command to copy the rest" \
  "failed as allowed (injected)" --seed=108

# The killed destination: the K-th request answered or not, as the log
# filter writes it.
python3 - "$abs_top_srcdir/tests/hostile.py" "$tmpdir" <<'PY' ||
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("hostile", sys.argv[1])
h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h)
log = os.path.join(sys.argv[2], "dst.log")
lines = [
    "2026-01-01 00:00:00.000001 connection=1 Write id=1 offset=0x0 count=0x1000 fua=0 ...",
    "2026-01-01 00:00:00.000002 connection=1 ...Write id=1 return=0 (Success)",
    "2026-01-01 00:00:00.000003 connection=2 Write id=1 offset=0x1000 count=0x1000 fua=0 ...",
]
for k, answered in ((1, True), (2, False)):
    with open(log, "w") as f:
        f.write("\n".join(lines) + "\n")
    w = h.Watcher(log, r" (Write|Zero|Trim|Flush|Extents|Read) id=", k, None)
    if w.answered() != answered:
        sys.exit("request %d: answered() is %s" % (k, not answered))
print("ok: the killed destination's K-th reply, as the log says")

# After a failure: 8 KiB, the first 4 KiB confirmed, the second failed.
sc = h.Scenario()
sc.size = 8192
sc.data = bytes([1]) * 8192
sc.old = bytes([2]) * 8192
with open(log, "w") as f:
    f.write("connection=1 Write id=1 offset=0x0 count=0x1000 fua=0 ...\n"
            "connection=1 Write id=2 offset=0x1000 count=0x1000 fua=0 ...\n"
            "connection=1 ...Write id=2 return=-1 (Input/output error)\n"
            "connection=1 ...Write id=1 return=0\n")
cases = [(sc.data[:4096] + sc.old[4096:], None),
         (sc.data[:4095] + sc.old[4095:], "confirmed a write at 0-4096, but differs from the source at offset 4095"),
         (sc.data[:4097] + sc.old[4097:], "changed at offset 4096, in 4096-8192")]
for got, want in cases:
    try:
        h.check_written(sc, got, log)
        why = None
    except h.Failure as e:
        why = str(e)
    if (want is None) != (why is None) or (want and want not in why):
        sys.exit("check_written: %r, wanted %r" % (why, want))
print("ok: after a failure, confirmed writes and untouched bytes, as the log says")
PY
  fail "the log's replies are misread"
