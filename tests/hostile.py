#!/usr/bin/env python3
# hostile.py: a seeded campaign of hostile servers against the tools
# and the lessons.
#
# Each seed chooses, reproducibly from the seed alone, an image (its
# size, odd ones included, and its layout: nbdkit sparse-random, data or
# pattern, or an extent list with 1-byte and unaligned extents and
# "hole" extents that are not zero over data), the servers (block-size
# limits with the error policy, capabilities taken away, replies out of
# order, errors on chosen reads, writes, zeroes, flushes and block
# status, a server killed at its K-th request, or, for the tools, one
# that breaks the protocol: tests/bad-server.py), the endpoints (NBD,
# a captive server, a local file, a pipe, null:) and the options; then
# runs nbd-evcopy, nbd-evsum or a lesson once, under a timeout, and
# judges the outcome by oracles, not by eye:
#
#   - exit 0: the destination equals the source byte for byte (and past
#     the source's size keeps its old bytes; a file destination exists),
#     any digest printed equals tests/blkhash-ref.py's over the source,
#     and so does the reference's digest of what was read back; a
#     destination server killed at its K-th request answered it first
#     (its log says so);
#   - a non-zero exit only where the seed injected a fault (or set a
#     limit the tools refuse up front) where a correct program goes (a
#     copy whose every fault lies inside the source's zero extents must
#     succeed), with exactly one line on stderr
#     that names the failed command's offset and length where it has
#     them, overlapping a range where that command was made to fail, and
#     the documented exit status; every byte of a readable destination
#     is then its old byte or the source's, and below the offset the
#     message reports, the source's (a new file not created reports no
#     offset; a pipe got a prefix of the source); where nbdkit's log
#     shows the destination's requests, the source's exactly where a
#     write was confirmed and the old bytes where none was; a killed
#     server is the one the message names; the command that copies the
#     rest is offered whenever the copy can resume, and with the fault
#     removed and the server still there, it copies the rest;
#   - no hang, no process left with the run's mark (as tests/functions.sh
#     checks), no file left in the run's TMPDIR, no sanitizer report.
#
# The interrupt rounds (--rounds) stop nbd-evcopy with SIGINT, SIGTERM
# or SIGKILL at the K-th write the destination's log filter records (for
# a file or a pipe, which no server sees, the K-th read of the source's),
# check that the program stopped by the signal (exit 0 once it was sent
# is a signal ignored), that every block of the destination holds its
# old bytes or the source's, then run the printed --resume command (or,
# after SIGKILL, the same command again), which must give an exact copy.
#
# Usage:
#   hostile.py --seeds=N [--first=S] [--jobs=J]    N seeds from S on
#   hostile.py --seed=K[,L...] [-v] [--keep]       replay seeds
#   hostile.py --rounds=N [--first=S] [--jobs=J]   N interrupt rounds
#   hostile.py --round=K [-v] [--keep]             replay one round
#   hostile.py --programs=DIR ...                  DIR's programs first
#
# A failure prints its seed and the command that replays it.  The
# environment is make check's (abs_top_builddir, abs_top_srcdir,
# SANITIZERS); without it the paths are found from this file's place.

import argparse
import ctypes
import importlib.util
import io
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import random
import concurrent.futures

SRCDIR = os.environ.get("abs_top_srcdir") or \
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.environ.get("abs_top_builddir") or SRCDIR
SANITIZERS = os.environ.get("SANITIZERS", "no") == "yes"

KIB = 1024
MIB = 1024 * 1024

# --programs=DIR: stand-ins for the programs, first on PATH, so that a
# test can show an oracle refusing a wrong result (tests/hostile-oracle.sh).
STAND_INS = []

# A run that takes longer than this has hung: the largest image is a
# few MiB and the slowest server answers within 20 ms, though 512-byte
# requests to a delayed server that takes one at a time run about 50 s
# on an idle machine, twice that beside another seed.
RUN_TIMEOUT = 180

# The reference block hash, as the shell tests use it.
_spec = importlib.util.spec_from_file_location(
    "blkhash_ref", os.path.join(SRCDIR, "tests", "blkhash-ref.py"))
blkhash_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(blkhash_ref)


def ref_digest(data, name="sha256", block_size=64 * KIB):
    """blkhash-ref.py's digest of DATA."""
    return blkhash_ref.block_hash(io.BytesIO(data), name, block_size)


_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    """In a server's child, before exec: SIGTERM when the thread that
    started it goes (prctl PR_SET_PDEATHSIG), so that a driver stopped
    by a signal or killed leaves no server behind."""
    _libc.prctl(1, signal.SIGTERM, 0, 0, 0)


class Failure(Exception):
    """An oracle said no."""


def check(cond, why):
    if not cond:
        raise Failure(why)


# ---------------------------------------------------------------------
# Images.

def random_size(rng):
    """An image size: odd ones, block edges and random ones, up to 3 MiB."""
    kind = rng.random()
    if kind < 0.05:
        return 0
    if kind < 0.35:
        return rng.choice([1, 511, 512, 513, 4095, 4097, 65535, 65536,
                           65537, 262145, MIB - 1, MIB, MIB + 1,
                           2 * MIB + 4096, 3 * MIB - 7])
    if kind < 0.6:
        return rng.randrange(1, 64) * rng.choice([512, 4096, 65536])
    return rng.randrange(1, 3 * MIB)


def extent_layout(rng, size):
    """An extent list over SIZE bytes and the bytes it describes: a list
    of (offset, length, type) with type "", "hole", "zero" or
    "hole,zero", where the zero ones read as zeroes and "hole" alone is
    data (allocated or not, it must be read)."""
    extents = []
    data = bytearray(size)
    off = 0
    while off < size:
        r = rng.random()
        if r < 0.2:
            length = rng.choice([1, 2, 3, 511, 513, 4095])
        elif r < 0.7:
            length = rng.randrange(1, 128 * KIB)
        else:
            length = rng.choice([4096, 65536, 65536 + 1, 300 * KIB, MIB])
        length = min(length, size - off)
        kind = rng.choice(["", "", "hole", "zero", "hole,zero", "hole,zero"])
        if "zero" not in kind:
            fill = rng.random()
            if fill < 0.15:
                pass                    # data that happens to be zero
            elif fill < 0.3:
                data[off:off + length] = bytes([rng.randrange(1, 256)]) * length
            else:
                data[off:off + length] = rng.randbytes(length)
        extents.append((off, length, kind))
        off += length
    return extents, bytes(data)


# ---------------------------------------------------------------------
# Servers.

# The sh plugin the driver writes for each server that fails on
# purpose: it serves a file, and its faults are fixed by the seed (not
# by the clock, as the error filter's are).  The faults apply while the
# file "faults" exists, so that once a copy has failed the same server
# can take the command that copies the rest.
SH_PLUGIN = r'''#!/bin/sh
# Written by tests/hostile.py for one seed.
img=@IMG@
faults=@FAULTS@
# hit RANGES COUNT OFFSET: true if [OFFSET, OFFSET+COUNT) overlaps one of
# the ranges FROM TO ... and the faults are on.
hit () {
  [ -e "$faults" ] || return 1
  _c=$2; _o=$3
  set -- $1
  while [ $# -ge 2 ]; do
    if [ "$_o" -lt "$2" ] && [ $((_o + _c)) -gt "$1" ]; then return 0; fi
    shift 2
  done
  return 1
}
# late OFFSET: sleep a time fixed by the offset, 0 to 20 ms, so that
# replies come back out of order.
late () {
  [ @DELAY@ = 1 ] || return 0
  _ms=$(( ($1 / 512 * 7 + @SALT@) % 21 ))
  sleep 0.0$((_ms / 10))$((_ms % 10))
}
case "$1" in
  thread_model) echo parallel ;;
  get_size) echo @SIZE@ ;;
  can_write) exit @CAN_WRITE@ ;;
  can_flush) exit @CAN_FLUSH@ ;;
  can_fast_zero) exit @CAN_FAST_ZERO@ ;;
  can_multi_conn) exit @CAN_MULTI_CONN@ ;;
  can_extents) exit @CAN_EXTENTS@ ;;
  pread)
    late "$4"
    if hit "@STALL_FAULTS@" "$3" "$4"; then sleep 3; fi
    if hit "@READ_FAULTS@" "$3" "$4"; then
      echo "@READ_ERRNO@ injected read error at $4" >&2; exit 1
    fi
    dd if="$img" iflag=skip_bytes,count_bytes skip="$4" count="$3" status=none ;;
  pwrite)
    late "$4"
    if hit "@WRITE_FAULTS@" "$3" "$4"; then
      cat >/dev/null
      echo "@WRITE_ERRNO@ injected write error at $4" >&2; exit 1
    fi
    dd of="$img" oflag=seek_bytes conv=notrunc seek="$4" status=none ;;
  zero)
    late "$4"
    if hit "@ZERO_FAULTS@" "$3" "$4"; then
      echo "@ZERO_ERRNO@ injected zero error at $4" >&2; exit 1
    fi
    case "$5" in *fast*) [ @CAN_FAST_ZERO@ = 0 ] || { echo ENOTSUP >&2; exit 1; } ;; esac
    fallocate -z -o "$4" -l "$3" "$img" 2>/dev/null ||
      head -c "$3" /dev/zero |
        dd of="$img" oflag=seek_bytes conv=notrunc seek="$4" status=none ;;
  flush)
    if [ @FLUSH_FAULT@ = 1 ] && [ -e "$faults" ]; then
      echo "EIO injected flush error" >&2; exit 1
    fi ;;
  extents)
    late "$4"
    if hit "@EXTENTS_FAULTS@" "$3" "$4"; then
      echo "EIO injected block status error at $4" >&2; exit 1
    fi
    awk -v o="$4" -v c="$3" '$1 + $2 > o && $1 < o + c { print }' @EXTENTS@ ;;
  *) exit 2 ;;
esac
'''


def fault_ranges(rng, size, n):
    """N ranges [from, to) inside SIZE, some of them 1 byte long."""
    out = []
    for _ in range(n):
        if size == 0:
            break
        a = rng.randrange(size)
        b = min(size, a + rng.choice([1, 512, 4096, rng.randrange(1, 256 * KIB)]))
        out.append((a, b))
    return out


class Run:
    """One seed's temporary directory, servers, and processes."""

    def __init__(self, seed, kind, verbose, keep):
        self.seed = seed
        self.kind = kind
        self.verbose = verbose
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix="nbd-libev-hostile.%s%d." % (kind, seed))
        self.tmp = os.path.join(self.dir, "t")
        os.mkdir(self.tmp)
        self.mark = "NBD_LIBEV_TEST_MARK=" + self.dir
        self.servers = []               # Popen of every server started
        self.started = {}               # nbdkit's arguments, by name
        self.notes = []                 # what the seed chose, for a failure
        self.env = dict(os.environ)
        self.env["PATH"] = ":".join(STAND_INS + [
            os.path.join(BUILDDIR, "tools"),
            os.path.join(BUILDDIR, "examples"), self.env.get("PATH", "")])
        self.env["LC_ALL"] = "C"
        self.env.pop("LIBNBD_DEBUG", None)
        # The programs' own environment: the mark, and a TMPDIR of their
        # own that must be empty when they are done.
        self.penv = dict(self.env)
        self.penv["NBD_LIBEV_TEST_MARK"] = self.dir
        self.penv["TMPDIR"] = self.tmp
        if SANITIZERS:
            log = os.path.join(self.dir, "sanitizer")
            self.penv["ASAN_OPTIONS"] = "exitcode=86:log_path=" + log
            self.penv["UBSAN_OPTIONS"] = \
                "exitcode=86:print_stacktrace=1:log_path=" + log

    def path(self, name):
        return os.path.join(self.dir, name)

    def note(self, text):
        self.notes.append(text)
        if self.verbose:
            print("  " + text, flush=True)

    def nbdkit(self, name, args, log=False):
        """Start nbdkit with ARGS on a Unix socket; its URI, pid and log."""
        sock = self.path(name + ".sock")
        pidf = self.path(name + ".pid")
        for f in (sock, pidf):          # a server started again
            if os.path.exists(f):
                os.unlink(f)
        self.started[name] = args
        cmd = ["nbdkit", "-f", "-U", sock, "-P", pidf]
        logf = None
        if log:
            logf = self.path(name + ".log")
            cmd += ["--filter=log"]
        cmd += args
        if log:
            cmd += ["logfile=" + logf]
        self.note("server %s: %s" % (name, " ".join(shlex.quote(a) for a in cmd[6:])))
        p = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=open(self.path(name + ".err"), "wb"),
                             preexec_fn=die_with_parent)
        self.servers.append(p)
        for _ in range(3000):
            if os.path.exists(pidf) and os.path.getsize(pidf) > 0:
                break
            if p.poll() is not None:
                raise Failure("nbdkit %s did not start: %s" %
                              (name, open(self.path(name + ".err")).read()))
            time.sleep(0.005)
        return "nbd+unix:///?socket=" + sock, p, logf

    def qemu_nbd(self, name, image):
        sock = self.path(name + ".sock")
        cmd = ["qemu-nbd", "-f", "raw", "--shared=8", "--persistent",
               "--socket=" + sock, image]
        self.note("server %s: %s" % (name, " ".join(cmd[1:])))
        p = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=open(self.path(name + ".err"), "wb"),
                             preexec_fn=die_with_parent)
        self.servers.append(p)
        for _ in range(3000):
            if os.path.exists(sock):
                break
            if p.poll() is not None:
                raise Failure("qemu-nbd did not start")
            time.sleep(0.005)
        return "nbd+unix:///?socket=" + sock, p

    def sh_plugin(self, name, image, size, caps, faults, extents=None,
                  delay=False, salt=0):
        """Write the sh plugin serving IMAGE; its path."""
        def ranges(rs):
            return " ".join("%d %d" % r for r in rs)
        text = SH_PLUGIN
        subst = {
            "IMG": shlex.quote(image),
            "FAULTS": shlex.quote(self.path("faults")),
            "SIZE": str(size),
            "DELAY": "1" if delay else "0",
            "SALT": str(salt),
            "CAN_WRITE": "0" if caps.get("write") else "3",
            "CAN_FLUSH": "0" if caps.get("flush", True) else "3",
            "CAN_FAST_ZERO": "0" if caps.get("fast_zero", True) else "3",
            "CAN_MULTI_CONN": "0" if caps.get("multi_conn", True) else "3",
            "CAN_EXTENTS": "0" if extents else "3",
            "READ_FAULTS": ranges(faults.get("read", [])),
            "WRITE_FAULTS": ranges(faults.get("write", [])),
            "ZERO_FAULTS": ranges(faults.get("zero", [])),
            "EXTENTS_FAULTS": ranges(faults.get("extents", [])),
            "STALL_FAULTS": ranges(faults.get("stall", [])),
            "READ_ERRNO": faults.get("read_errno", "EIO"),
            "WRITE_ERRNO": faults.get("write_errno", "EIO"),
            "ZERO_ERRNO": faults.get("zero_errno", "EIO"),
            "FLUSH_FAULT": "1" if faults.get("flush") else "0",
            "EXTENTS": shlex.quote(extents or "/dev/null"),
        }
        for k, v in subst.items():
            text = text.replace("@%s@" % k, v)
        script = self.path(name + ".sh")
        with open(script, "w") as f:
            f.write(text)
        os.chmod(script, 0o755)
        return script

    def leftovers(self):
        """Pids of live processes with this run's mark."""
        want = (self.mark + "\0").encode()
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read()
            except OSError:
                continue
            if env.startswith(want) or (b"\0" + want) in env:
                out.append(int(pid))
        return out

    def check_clean(self):
        """No process with the mark, no file in the programs' TMPDIR, no
        sanitizer report."""
        for _ in range(50):
            if not self.leftovers():
                break
            time.sleep(0.1)
        left = self.leftovers()
        if left:
            args = []
            for pid in left:
                try:
                    args.append(open("/proc/%d/cmdline" % pid, "rb").read()
                                .replace(b"\0", b" ").decode())
                except OSError:
                    pass
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            raise Failure("left running: %s" % "; ".join(args))
        stray = os.listdir(self.tmp)
        check(not stray, "left in TMPDIR: %s" % " ".join(stray))
        reports = [f for f in os.listdir(self.dir) if f.startswith("sanitizer")]
        if reports:
            text = "".join(open(self.path(f)).read() for f in reports)
            raise Failure("sanitizer report:\n" + text)

    def stop_servers(self):
        for p in self.servers:
            if p.poll() is None:
                p.terminate()
        for p in self.servers:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def close(self, ok):
        self.stop_servers()
        if ok and not self.keep:
            subprocess.run(["rm", "-rf", self.dir])


class Watcher(threading.Thread):
    """Act once a log filter's LOGFILE records the K-th request matching
    PATTERN: the K-th request a server sees, not a time that a slow
    machine could miss."""

    def __init__(self, logfile, pattern, k, action):
        super().__init__(daemon=True)
        self.logfile = logfile
        self.pattern = re.compile(pattern)
        self.k = k
        self.action = action
        self.done = threading.Event()
        self.fired = False
        self.fired_at = None

    def run(self):
        while not self.done.is_set():
            try:
                with open(self.logfile) as f:
                    n = sum(1 for line in f if self.pattern.search(line))
            except OSError:
                n = 0
            if n >= self.k:
                self.fired = True
                self.fired_at = time.time()
                self.action()
                return
            time.sleep(0.002)

    def after(self, seconds):
        """How many requests matching PATTERN the log records more than
        SECONDS after the action (nbdkit's log filter stamps each line
        with the local time, to the microsecond)."""
        with open(self.logfile) as f:
            stamps = [l[:26] for l in f if self.pattern.search(l)]
        late = self.fired_at + seconds
        return sum(1 for t in stamps if time.mktime(time.strptime(
            t[:19], "%Y-%m-%d %H:%M:%S")) + float("0" + t[19:]) > late)

    def answered(self):
        """Whether the log records the reply to the K-th request, the one
        the action followed: nbdkit's log filter writes a request's
        "...OP id=N return" line before the reply leaves the server, so
        a client cannot have the reply to a request without it."""
        with open(self.logfile) as f:
            lines = f.read().splitlines()
        asked = [l for l in lines if self.pattern.search(l)]
        m = re.search(r"connection=(\d+) (\w+) id=(\d+)", asked[self.k - 1])
        check(m, "cannot read the log line %r" % asked[self.k - 1])
        conn, op, rid = m.groups()
        reply = re.compile(r"connection=%s \.\.\.%s id=%s return" %
                           (conn, op, rid))
        return any(reply.search(l) for l in lines)

    def stop(self):
        self.done.set()
        self.join()


def helper(run, argv, what):
    """Run a helper command of the oracle (making an image, reading a
    destination back) under RUN_TIMEOUT: a helper that hangs fails the
    seed, as the program would, instead of the whole campaign."""
    try:
        r = subprocess.run(argv, env=run.env, capture_output=True,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure("hang: %s took over %d s" % (what, RUN_TIMEOUT))
    check(r.returncode == 0, "%s failed: %s" %
          (what, r.stderr.decode(errors="replace").strip()))
    return r


def run_program(run, argv, stdin_data=None, pipe_out=None):
    """Run a program with the run's environment under RUN_TIMEOUT: its
    status, stdout (or the bytes a pipe destination got, into
    PIPE_OUT) and stderr."""
    run.note("run: " + " ".join(shlex.quote(a) for a in argv))
    p = subprocess.Popen(argv, cwd=run.dir, env=run.penv,
                         stdin=subprocess.PIPE if stdin_data is not None
                         else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(stdin_data, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Failure("hang: no exit within %d s" % RUN_TIMEOUT)
    if pipe_out is not None:
        with open(pipe_out, "wb") as f:
            f.write(out)
    return p.returncode, out, err


# ---------------------------------------------------------------------
# The campaign: one seed.

PROGRAMS = ["nbd-evcopy"] * 6 + ["nbd-evsum"] * 2 + \
    ["copy-libev", "zero-extent-copy-libev", "checksum-libev"]


class Scenario:
    """What a seed chose."""

    def __init__(self):
        self.src_watch = self.dst_watch = None
        self.checksum = self.verify = False
        self.dst_kind = None
        self.dst_log = None
        self.dst_file = None
        self.dst_max = None
        self.old = None
        self.resume = self.resume_cut = None
        self.digest, self.block = "sha256", 64 * KIB
        self.must_succeed = False
        self.opts = []
        self.outcome = "exit 0"


def choose_source(run, rng, sc):
    """The source image and how it is served."""
    size = random_size(rng)
    layout = rng.choice(["extents", "extents", "sparse-random", "data",
                         "pattern"])
    sc.size = size
    sc.faults = {}                      # op -> ranges that may fail
    sc.may_fail = set()                 # what may end the run
    sc.extents = None                   # what the source's map says
    sc.map_whole = True                 # and the tools get all of it
    src_img = run.path("src.img")
    if layout == "extents":
        extents, data = extent_layout(rng, size)
        sc.extents = extents
        with open(run.path("src.extents"), "w") as f:
            for o, l, t in extents:
                f.write("%d %d %s\n" % (o, l, t))
    elif layout == "sparse-random":
        # nbdkit 1.32's sparse-random seeds a block's bytes from the
        # offset of the read rather than the block's (read_block in
        # sparse-random.c), so a read that starts inside one of its
        # 4 KiB blocks gets other bytes than one that starts at the
        # block: the blocksize filter, innermost, gives it whole blocks
        # only, over a size it does not round down.
        size = (size + 4095) // 4096 * 4096
        sc.size = size
        plugin = ["sparse-random", str(size), "seed=%d" % rng.randrange(1000),
                  "percent=%d" % rng.choice([1, 10, 50, 90]),
                  "runlength=%d" % rng.choice([1, 512, 4096, 16 * KIB, 256 * KIB])]
    elif layout == "data":
        spec = []
        for _ in range(rng.randrange(0, 12)):
            if size == 0:
                break
            spec.append("@%d" % rng.randrange(size))
            n = rng.choice([1, 2, 7, 600])
            spec += [str(rng.randrange(256)) for _ in range(min(n, 8))]
            if n > 8:
                spec.append("%d*%d" % (rng.randrange(1, 256), n))
        plugin = ["data", " ".join(spec) or "0", "size=%d" % size]
    else:
        plugin = ["pattern", str(size)]
    if layout == "sparse-random":
        plugin += ["minblock=4096"]
    if layout != "extents":
        # The truth: the plugin's bytes, read by nbdcopy from a plain
        # server of the same plugin.
        inner = ["--filter=blocksize"] if layout == "sparse-random" else []
        helper(run, ["nbdkit", "-U", "-", "-r"] + inner + plugin +
               ["--run", 'nbdcopy -- "$uri" ' + shlex.quote(src_img)],
               "making the source image")
        with open(src_img, "rb") as f:
            data = f.read()
        if size == 0:
            data = b""
    else:
        with open(src_img, "wb") as f:
            f.write(data)
    check(len(data) == size, "the source image has %d bytes, not %d" %
          (len(data), size))
    sc.data = data
    sc.layout = layout
    sc.plugin = None if layout == "extents" else plugin
    run.note("source image: %s, %d bytes" % (layout, size))


def source_server(run, rng, sc, for_lesson):
    """Start the source's NBD server with its hostile settings."""
    sc.src_min = 1
    sc.src_max = None
    sc.src_multi_conn = True
    filters = []
    args = []
    sh = sc.layout == "extents" or rng.random() < 0.25
    if rng.random() < 0.3:
        filters += ["--filter=delay"]
        args += ["delay-read=%dms" % rng.randrange(0, 21),
                 "delay-extents=%dms" % rng.randrange(0, 21)]
    if rng.random() < 0.3:
        minimum = rng.choice([1, 1, 512, 4096]) if not for_lesson else 1
        maximum = rng.choice([64 * KIB, 256 * KIB, MIB, 32 * MIB])
        if for_lesson == "checksum-libev":
            maximum = max(maximum, MIB)
        sc.src_min = minimum
        sc.src_max = maximum
        filters += ["--filter=blocksize-policy"]
        args += blocksize_policy(minimum, maximum)
        if sc.size % minimum:
            sc.may_fail.add("refuse-min")
    if rng.random() < 0.15:
        filters += ["--filter=noextents"]
        sc.map_whole = False            # every byte read then
    if rng.random() < 0.2:
        # No multi-conn: from the sh plugin, not the multi-conn filter,
        # which in nbdkit 1.32 with multi-conn-mode=disable sometimes
        # fails an assertion (h->group, in multi_conn_finalize) as a
        # connection closes, and takes the server with it.
        sh = True
        sc.src_multi_conn = False
    if rng.random() < 0.1:
        filters += ["--filter=noparallel"]
        args += ["serialize=requests"]
    faults = {}
    if sh:
        # Served by the sh plugin from a copy of the image, with errors
        # on chosen reads and block status.
        if rng.random() < 0.4:
            faults["read"] = fault_ranges(rng, sc.size, rng.randrange(1, 3))
            faults["read_errno"] = rng.choice(["EIO", "EPERM", "ENOMEM"])
            sc.faults["read"] = faults["read"]
        if rng.random() < 0.4:
            faults["extents"] = fault_ranges(rng, sc.size, rng.randrange(1, 3))
            sc.map_whole = False        # read as data there instead
        if not for_lesson and rng.random() < 0.05:
            # A read that answers after 3 s, past a --timeout of 1.
            faults["stall"] = fault_ranges(rng, sc.size, 1)
            sc.may_fail.add("timeout")
        with open(run.path("src-served.img"), "wb") as f:
            f.write(sc.data)
        extents = run.path("src.extents") if sc.layout == "extents" else None
        script = run.sh_plugin("src", run.path("src-served.img"), sc.size,
                               {"write": False,
                                "multi_conn": sc.src_multi_conn},
                               faults, extents=extents,
                               delay=rng.random() < 0.4,
                               salt=rng.randrange(1000))
        plugin = ["sh", script]
    else:
        plugin = sc.plugin
        if sc.layout == "sparse-random":
            filters = filters + ["--filter=blocksize"]
    # The K-th request kills the server (SIGKILL), seen by the log filter.
    kill_at = rng.randrange(1, 120) if rng.random() < 0.1 else None
    sc.src_cmd = filters + plugin + args
    uri, p, logf = run.nbdkit("src", ["-r"] + filters + plugin + args,
                              log=kill_at is not None)
    sc.src_proc = p
    sc.src_uri = uri
    sc.src_watch = None
    if kill_at:
        sc.may_fail.add("src-killed")
        run.note("source killed at its request %d" % kill_at)
        sc.src_watch = Watcher(logf, r" (Read|Extents|Flush|Cache) id=", kill_at,
                               lambda: p.kill())
        sc.src_watch.server = p


def dest(run, rng, sc, program):
    """The destination: its kind, old bytes, server; sets sc.dst."""
    kinds = ["memory", "file-nbd", "sh", "qemu-nbd", "file", "new-file",
             "captive-file", "pipe", "null"]
    if program in ("copy-libev", "zero-extent-copy-libev"):
        kinds = ["memory", "file-nbd", "sh", "qemu-nbd"]
    kind = rng.choice(kinds)
    sc.dst_kind = kind
    extra = rng.choice([0, 0, 0, 1, 4096, 65536 + 3]) if kind not in \
        ("new-file", "pipe", "null") else 0
    if extra == 0 and kind not in ("new-file", "pipe", "null") and \
       sc.size > 1 and rng.random() < 0.08:
        # Smaller than the source: refused before the copy, or, from a
        # stream whose size is known only at its end, a read past the
        # destination's end that fails.  A file grows instead.
        extra = -rng.choice([1, 512, sc.size // 2])
        # qemu-nbd serves a raw file rounded up to 512 bytes, and
        # writes past the file's end make it longer.
        served = sc.size + extra
        if kind == "qemu-nbd":
            served = (served + 511) // 512 * 512
        if not (kind == "file" and sc.src_kind == "pipe") and \
           served < sc.size:
            sc.may_fail.add("small-dest")
    dsize = sc.size + extra
    sc.dsize = dsize
    sc.dst_min = 1
    sc.dst_max = None
    sc.dst_multi_conn = kind in ("memory", "file-nbd", "sh")
    sc.dst_zero = False
    sc.dst_file = None
    old_kind = rng.choice(["zero", "random", "byte", "source-prefix"])
    if kind in ("memory", "new-file"):
        old_kind = "zero"
    if kind in ("pipe", "null"):
        old_kind = None
    if old_kind == "zero":
        old = bytes(dsize)
    elif old_kind == "random":
        old = rng.randbytes(dsize)
    elif old_kind == "byte":
        old = bytes([rng.randrange(1, 256)]) * dsize
    elif old_kind == "source-prefix":
        cut = rng.randrange(0, min(sc.size, dsize) + 1)
        old = sc.data[:cut] + rng.randbytes(dsize - cut)
    else:
        old = None
    sc.old = old
    sc.dst_zero = old_kind == "zero"
    run.note("destination: %s, %d bytes, old bytes %s" % (kind, dsize, old_kind))
    if kind in ("pipe", "null"):
        sc.dst_arg = "-" if kind == "pipe" else "null:"
        return
    dfile = run.path("dst.img")
    sc.dst_file = dfile
    if kind != "new-file":
        # Holes where the old bytes are zero, for the destination's block
        # status to report.
        sparse_file(dfile, old)
    if kind in ("file", "new-file"):
        sc.dst_arg = "dst.img"
        return
    if kind == "captive-file":
        sc.dst_arg = ["[", "nbdkit", "file", dfile, "]"]
        return
    if kind == "qemu-nbd":
        sc.dst_arg, _ = run.qemu_nbd("dst", dfile)
        sc.dst_watch = None
        return
    filters = []
    args = []
    if rng.random() < 0.3:
        filters += ["--filter=delay"]
        args += ["delay-write=%dms" % rng.randrange(0, 21),
                 "delay-zero=%dms" % rng.randrange(0, 21)]
    if rng.random() < 0.3:
        if program in ("copy-libev", "zero-extent-copy-libev"):
            minimum = 1
        else:
            minimum = rng.choice([1, 1, 512, 4096])
        maximum = rng.choice([64 * KIB, 256 * KIB, MIB, 32 * MIB])
        sc.dst_min = minimum
        sc.dst_max = maximum
        filters += ["--filter=blocksize-policy"]
        args += blocksize_policy(minimum, maximum)
        # The copy's last request ends at the source's size, or at the
        # destination's when a stream's size is known only at its end:
        # only that end need fall on the minimum.
        if sc.size % minimum or (sc.src_kind == "pipe" and dsize % minimum):
            sc.may_fail.add("refuse-min")
    if rng.random() < 0.3 and program != "zero-extent-copy-libev":
        filters += ["--filter=nozero"]
        args += [rng.choice(["zeromode=none", "fastzeromode=none",
                             "zeromode=notrim", "fastzeromode=slow"])]
    if rng.random() < 0.15:
        filters += ["--filter=noextents"]
    if rng.random() < 0.1:
        filters += ["--filter=noparallel"]
        args += ["serialize=requests"]
    if kind == "memory":
        plugin = ["memory", str(dsize)]
    elif kind == "file-nbd":
        plugin = ["file", dfile]
    else:
        faults = {}
        if rng.random() < 0.4:
            faults["write"] = fault_ranges(rng, sc.size, rng.randrange(1, 3))
            faults["write_errno"] = rng.choice(["EIO", "ENOSPC", "EPERM"])
            sc.faults["write"] = faults["write"]
        if rng.random() < 0.3:
            faults["zero"] = fault_ranges(rng, sc.size, rng.randrange(1, 3))
            faults["zero_errno"] = rng.choice(["EIO", "ENOSPC"])
            sc.faults["zero"] = faults["zero"]
        can_flush = rng.random() < 0.8
        if can_flush and rng.random() < 0.15:
            faults["flush"] = True
            sc.may_fail.add("flush")
        sc.dst_multi_conn = sc.dst_multi_conn and rng.random() < 0.7
        script = run.sh_plugin("dst", dfile, dsize,
                               {"write": True, "flush": can_flush,
                                "fast_zero": rng.random() < 0.5,
                                "multi_conn": sc.dst_multi_conn},
                               faults, delay=rng.random() < 0.4,
                               salt=rng.randrange(1000))
        plugin = ["sh", script]
    kill_at = rng.randrange(1, 120) if rng.random() < 0.1 else None
    # Logged always: after a failure the log says which writes the
    # server confirmed (check_written).
    uri, p, logf = run.nbdkit("dst", filters + plugin + args, log=True)
    sc.dst_log = logf
    sc.dst_arg = uri
    sc.dst_watch = None
    if kill_at:
        sc.may_fail.add("dst-killed")
        run.note("destination killed at its request %d" % kill_at)
        sc.dst_watch = Watcher(logf, r" (Write|Zero|Trim|Flush|Extents|Read) id=",
                               kill_at, lambda: p.kill())
        sc.dst_watch.server = p


def size_choices(lo_multiple, maximum, candidates):
    """The candidates that are multiples of LO_MULTIPLE, at most MAXIMUM."""
    return [c for c in candidates
            if c % lo_multiple == 0 and (maximum is None or c <= maximum)]


def evcopy_options(rng, sc):
    """nbd-evcopy's options for this seed, valid for its servers."""
    opts = []
    min_bs = max(sc.src_min, sc.dst_min)
    maxes = [m for m in (sc.src_max, sc.dst_max) if m]
    max_bs = min(maxes) if maxes else None
    stream_dst = sc.dst_kind == "pipe"
    nbd_dst = sc.dst_kind in ("memory", "file-nbd", "sh", "qemu-nbd",
                              "captive-file")
    checksum = verify = False
    block = 64 * KIB
    if not stream_dst and rng.random() < 0.35:
        block = rng.choice([4 * KIB, 64 * KIB, 64 * KIB, 256 * KIB, MIB])
        if max_bs and block > max_bs:
            block = 64 * KIB if 64 * KIB <= max_bs else 4 * KIB
        digest = rng.choice(["", "=md5", "=sha1", "=sha512"])
        opts.append("--checksum" + digest)
        sc.digest = digest[1:] or "sha256"
        if block != 64 * KIB or rng.random() < 0.2:
            opts.append("--block-size=%d" % block)
        checksum = True
        if sc.dst_kind != "null" and rng.random() < 0.5:
            opts.append("--verify")
            verify = True
    sc.block = block
    if rng.random() < 0.5:
        sizes = size_choices(block if checksum else max(min_bs, 1), max_bs,
                             [512, 1024, 4096, 12288, 65536, 196608,
                              262144, MIB, 4 * MIB])
        sizes = [s for s in sizes if s % max(min_bs, 1) == 0]
        if sizes:
            opts.append("--request-size=%d" % rng.choice(sizes))
    if rng.random() < 0.5:
        opts.append("--requests=%d" % rng.choice([1, 2, 3, 7, 16, 64, 256]))
    if rng.random() < 0.4 and (not nbd_dst or sc.dst_multi_conn):
        opts.append("-C")
        opts.append(str(rng.randrange(1, 5)))
    allocated = rng.random() < 0.2 and not stream_dst
    if allocated:
        opts.append("--allocated")
    resume = None
    if sc.resume_cut is not None and not checksum and rng.random() < 0.7:
        resume = sc.resume_cut
        opts.append("--resume=%d" % resume)
    if sc.dst_zero and not allocated and not stream_dst and resume is None \
       and rng.random() < 0.5:
        opts.append("--destination-is-zero")
    for o, p in (("--no-extents", 0.2), ("--no-sparse", 0.2),
                 ("--flush", 0.3), ("--init", 0.1), ("--timeout=30", 0.2),
                 ("--socket-buffer=65536", 0.05)):
        if rng.random() < p:
            opts.append(o)
    if "timeout" in sc.may_fail:
        opts.append("--timeout=1")
    sc.checksum = checksum
    sc.verify = verify
    return opts


def evsum_options(rng, sc):
    opts = []
    block = rng.choice([4 * KIB, 64 * KIB, 64 * KIB, 256 * KIB, MIB])
    if sc.src_max and block > sc.src_max:
        block = 4 * KIB
    digest = rng.choice(["sha256", "sha256", "md5", "sha1", "sha512"])
    if digest != "sha256" or rng.random() < 0.2:
        opts.append("--digest=" + digest)
    if block != 64 * KIB or rng.random() < 0.2:
        opts.append("--block-size=%d" % block)
    sc.digest = digest
    sc.block = block
    if rng.random() < 0.4:
        sizes = size_choices(block, sc.src_max, [4096, 65536, 262144, MIB,
                                                 2 * MIB])
        sizes = [s for s in sizes if s % max(sc.src_min, 1) == 0]
        if sizes:
            opts.append("--request-size=%d" % rng.choice(sizes))
    if rng.random() < 0.4:
        opts.append("--requests=%d" % rng.choice([1, 2, 5, 16, 100]))
    if rng.random() < 0.3:
        opts += ["-C", str(rng.randrange(1, 5))]
    if rng.random() < 0.2:
        opts.append("--timeout=30")
    if "timeout" in sc.may_fail:
        opts.append("--timeout=1")
    return opts


def lesson_options(rng, sc, program):
    opts = []
    if program == "checksum-libev":
        return opts
    maxes = [m for m in (sc.src_max, sc.dst_max) if m]
    max_bs = min(maxes) if maxes else None
    if rng.random() < 0.5 or (max_bs and max_bs < MIB):
        sizes = size_choices(1, max_bs, [512, 4096, 65536, 196608, MIB])
        opts.append("--request-size=%d" % rng.choice(sizes))
    if rng.random() < 0.5:
        opts.append("--requests=%d" % rng.choice([1, 2, 3, 16, 64]))
    if rng.random() < 0.2:
        opts.append("--init")
    return opts


def sparse_file(path, data):
    """DATA into a new file, leaving holes where whole 4 KiB blocks are zero."""
    with open(path, "wb") as f:
        f.truncate(len(data))
        for o in range(0, len(data), 4096):
            block = data[o:o + 4096]
            if block.count(0) != len(block):
                f.seek(o)
                f.write(block)


def read_dest(run, sc):
    """The destination's bytes now, or None if nothing can read them."""
    if sc.dst_kind in (None, "pipe", "null"):
        return None
    if sc.dst_file and sc.dst_kind != "memory":
        if not os.path.exists(sc.dst_file):
            return None
        with open(sc.dst_file, "rb") as f:
            return f.read()
    if sc.dst_watch and sc.dst_watch.fired:
        return None                     # the memory server is dead
    back = run.path("readback.img")
    # nbdcopy 1.14 sends requests of 256 KiB whatever the server's
    # maximum block size, and cannot read the tail of an image whose
    # size is not a multiple of its minimum: nbdkit's blocksize filter
    # in between reads it in whole blocks, all but that tail.
    cmd = ["nbdcopy"]
    if sc.dst_max:
        cmd += ["--request-size=4096"]
    cmd += ["--", sc.dst_arg, back]
    if sc.dst_min > 1 and sc.dsize % sc.dst_min:
        cmd = ["nbdkit", "-U", "-", "-r", "--filter=blocksize", "nbd",
               "uri=" + sc.dst_arg, "minblock=%d" % sc.dst_min,
               "--run", 'nbdcopy --request-size=4096 -- "$uri" ' +
               shlex.quote(back)]
    helper(run, cmd, "reading the destination back")
    with open(back, "rb") as f:
        data = f.read()
    os.unlink(back)
    return data


def old_or_source(sc, got, limit):
    """Every byte of GOT is its old byte or the source's (below LIMIT, the
    source's); the first offset where neither, or None."""
    data = sc.data
    old = sc.old if sc.old is not None else bytes(len(got))
    step = 4096
    end = min(len(got), len(data))
    for o in range(0, end, step):
        g = got[o:min(o + step, end)]
        s = data[o:o + len(g)]
        if g == s:
            continue
        d = old[o:o + len(g)]
        if g == d and o >= limit:
            continue
        for i in range(len(g)):
            if g[i] == s[i]:
                continue
            if o + i < limit or g[i] != d[i]:
                return o + i
    if len(got) > len(data):
        if got[len(data):] != old[len(data):len(got)]:
            return len(data)
    return None


def needless_faults(sc, program, opts):
    """True if every fault the seed injected lies where a correct
    nbd-evcopy never goes, so that the copy must succeed: only read
    faults, each inside a run of the source's zero extents, away from
    the run's ends by the alignment the copy cuts on (the larger
    minimum block size, and the hash block with --checksum), with the
    whole map given to a program that asks for it.  libnbd's
    copy/copy-nbd-error.sh requires the same of nbdcopy."""
    if program != "nbd-evcopy" or sc.src_kind not in ("nbd", "captive") or \
       sc.extents is None or not sc.map_whole or "--no-extents" in opts or \
       sc.may_fail or set(sc.faults) != {"read"}:
        return False
    b = max(sc.src_min, sc.dst_min, sc.block if sc.checksum else 1)
    runs = []
    for o, l, t in sc.extents:
        if "zero" not in t:
            continue
        if runs and runs[-1][1] == o:
            runs[-1][1] = o + l
        else:
            runs.append([o, o + l])
    inside = [(-(-zs // b) * b, ze // b * b) for zs, ze in runs]
    return all(any(lo <= a and z <= hi for lo, hi in inside)
               for a, z in sc.faults["read"])


LOG_ASKED_RE = re.compile(r"connection=(\d+) (Write|Zero|Trim) id=(\d+) "
                          r"offset=(0x[0-9a-f]+) count=(0x[0-9a-f]+)")
LOG_ANSWER_RE = re.compile(r"connection=(\d+) \.\.\.(Write|Zero|Trim) "
                           r"id=(\d+) return=(-?\d+)")


def check_written(sc, got, logf):
    """After a failure, what the destination's log says against what it
    holds: where a write, zero or trim was confirmed, the source's
    bytes; where one failed or none was sent, its old bytes; where one
    had no answer (its server killed), old or the source's, byte by
    byte.  A request refused as too long and sent again in pieces is
    confirmed by its pieces."""
    asked = {}
    with open(logf) as f:
        for line in f:
            m = LOG_ASKED_RE.search(line)
            if m:
                start = int(m.group(4), 16)
                asked[m.group(1, 2, 3)] = [start, start + int(m.group(5), 16),
                                          2]
                continue
            m = LOG_ANSWER_RE.search(line)
            if m and m.group(1, 2, 3) in asked:
                asked[m.group(1, 2, 3)][2] = 3 if m.group(4) == "0" else 1
    n = min(len(got), sc.size)
    state = bytearray(n)                # 0 none, 1 failed, 2 no answer, 3 done
    for want in (1, 2, 3):              # a later state over an earlier one
        for start, end, st in asked.values():
            if st == want and start < n:
                end = min(end, n)
                state[start:end] = bytes([st]) * (end - start)
    for m in re.finditer(rb"\x00+|\x01+|\x02+|\x03+", bytes(state)):
        a, b, st = m.start(), m.end(), state[m.start()]
        g, d, o = got[a:b], sc.data[a:b], sc.old[a:b]
        if st == 3:
            check(g == d, "the destination confirmed a write at %d-%d, but "
                  "differs from the source at offset %d" %
                  (a, b, a + common_prefix(g, d)))
        elif st == 2:
            bad = [i for i in range(len(g)) if g[i] not in (d[i], o[i])]
            check(not bad, "at %d, a byte that no write gave" %
                  (a + bad[0] if bad else 0))
        else:
            check(g == o, "the destination changed at offset %d, in %d-%d "
                  "where no write was confirmed" %
                  (a + common_prefix(g, o), a, b))


def digest_line(sc, name):
    return "%s  %s" % (ref_digest(sc.data, sc.digest, sc.block), name)


def judge_success(run, sc, program, out, err, pipe_bytes):
    lines = err.decode(errors="replace").splitlines()
    allowed = [l for l in lines if not re.match(
        r"^nbd-evcopy: verified: the destination's first \d+ bytes have "
        r"the source's digest$", l)]
    check(not allowed, "exit 0 with messages on stderr: %r" % allowed)
    if program == "nbd-evsum":
        want = [digest_line(sc, n) for n in sc.names]
        got = out.decode().splitlines()
        check(got == want, "nbd-evsum printed %r, want %r" % (got, want))
        return
    if program == "checksum-libev":
        sc.digest, sc.block = "sha256", 64 * KIB
        got = out.decode().splitlines()
        want = [digest_line(sc, sc.src_name)]
        check(got == want, "checksum-libev printed %r, want %r" % (got, want))
        return
    if sc.dst_watch and sc.dst_watch.fired:
        # The destination server was killed at its K-th request: a copy
        # can succeed only if that request had its reply.
        check(sc.dst_watch.answered(), "exit 0, but the destination "
              "server was killed before it answered request %d" %
              sc.dst_watch.k)
    if sc.checksum:
        got = out.decode().splitlines()
        want = [digest_line(sc, sc.src_name)]
        check(got == want, "--checksum printed %r, want %r" % (got, want))
        if sc.verify:
            check(len(lines) == 1, "--verify did not say verified")
    elif sc.dst_kind != "pipe":
        check(out == b"", "printed on stdout: %r" % out[:200])
    if sc.dst_kind == "pipe":
        check(pipe_bytes == sc.data,
              "the pipe got %d bytes, not the source's %d%s" %
              (len(pipe_bytes), sc.size, first_diff(pipe_bytes, sc.data)))
        check(ref_digest(pipe_bytes) == ref_digest(sc.data),
              "the pipe's digest differs")
        return
    if sc.dst_kind in ("file", "new-file"):
        check(os.path.exists(sc.dst_file), "exit 0, but the destination "
              "file %s does not exist" % os.path.basename(sc.dst_file))
    if sc.dst_watch and sc.dst_watch.fired:
        run.note("the destination was killed after its K-th reply")
        return                          # its bytes are gone with it
    got = read_dest(run, sc)
    if got is None:
        return
    want_len = sc.dsize
    if sc.dst_kind == "memory":
        want_len -= sc.dsize % sc.dst_min    # see read_dest
    if sc.dst_kind in ("new-file", "qemu-nbd") or \
       (sc.dst_kind == "file" and sc.src_kind == "pipe"):
        want_len = max(sc.size, sc.dsize)
    check(len(got) == want_len, "the destination has %d bytes, not %d" %
          (len(got), want_len))
    check(got[:sc.size] == sc.data, "wrong bytes: the destination differs "
          "from the source%s" % first_diff(got[:sc.size], sc.data))
    check(ref_digest(got[:sc.size]) == ref_digest(sc.data),
          "the destination's block hash differs from the source's")
    if sc.old is not None:
        check(got[sc.size:] == sc.old[sc.size:len(got)],
              "the bytes past the source's size changed")


def common_prefix(a, b):
    """How many bytes A and B have in common from their start."""
    n = min(len(a), len(b))
    o = 0
    while o < n and a[o:o + 4096] == b[o:o + 4096]:
        o += 4096
    while o < n and a[o] == b[o]:
        o += 1
    return min(o, n)


def first_diff(a, b):
    i = common_prefix(a, b)
    if i < min(len(a), len(b)):
        return " (first at offset %d)" % i
    return "" if len(a) == len(b) else " (lengths %d, %d)" % (len(a), len(b))


def names_killed(sc, program, line):
    """Whether LINE, the one message of a failed run, begins by naming a
    server that was killed: "source" or "destination" (the tools and the
    copier lessons), the image's name (nbd-evsum), or nothing at all
    for checksum-libev, which has one server."""
    if program == "checksum-libev":
        return True
    names = []
    if sc.src_watch and sc.src_watch.fired:
        names += ["source", sc.src_name]
    if sc.dst_watch and sc.dst_watch.fired:
        names.append("destination")
    return any(re.match(re.escape("%s: %s" % (program, n)) +
                        r"(: | connection [0-9]+: )", line) for n in names)


FAIL_RE = re.compile(r"(read|write|zero) failed at offset (\d+) length (\d+): ")
BELOW_RE = re.compile(r"(?:complete|holds the source only) below offset (\d+)")
RESUME_RE = re.compile(r"(?:complete|holds the source only) below offset (\d+); "
                       r"to copy the rest: (.*)$")


def judge_failure(run, sc, program, status, out, err):
    text = err.decode(errors="replace")
    lines = text.splitlines()
    killed = any(w and w.fired for w in (sc.src_watch, sc.dst_watch))
    check(not sc.must_succeed, "exit %d, but every fault lies inside a "
          "zero extent, where a correct copy never reads: %r" %
          (status, lines))
    check(sc.faults or sc.may_fail,
          "exit %d with no fault injected: %r" % (status, lines))
    check(status == 1, "exit status %d, not 1: %r" % (status, lines))
    want_lines = 1
    check(len(lines) == want_lines,
          "%d lines on stderr, not 1: %r" % (len(lines), lines))
    line = lines[0]
    check(line.startswith(program + ": "), "message without the program's "
          "name: %r" % line)
    if program == "nbd-evsum":
        # The images that did not fail are still hashed, each in its
        # child; the one that failed is named in the message.
        failed = [n for n in sc.names
                  if re.match(re.escape("%s: %s" % (program, n)) +
                              "(: | connection [0-9]+: )", line)]
        check(len(failed) == 1, "the message names no image: %r" % line)
        want = [digest_line(sc, n) for n in sc.names if n != failed[0]]
        check(out.decode().splitlines() == want,
              "nbd-evsum printed %r, want %r" % (out, want))
    elif sc.dst_kind == "pipe":
        check(out == sc.data[:len(out)], "a failed run into a pipe wrote "
              "%d bytes that are not the source's first%s" %
              (len(out), first_diff(out, sc.data[:len(out)])))
    else:
        check(out == b"", "a failed run printed on stdout: %r" % out[:200])
    m = FAIL_RE.search(line)
    why = None
    if "minimum block size" in line and "refuse-min" in sc.may_fail:
        why = "refused"
    elif "small-dest" in sc.may_fail and "smaller than the source" in line:
        why = "refused"
    elif "small-dest" in sc.may_fail and \
            "more data than the destination holds" in line:
        why = "small-dest"
    elif m:
        op, off, length = m.group(1), int(m.group(2)), int(m.group(3))
        ranges = sc.faults.get("read", []) if op == "read" else \
            sc.faults.get("write", []) + sc.faults.get("zero", [])
        if any(off < b and off + length > a for a, b in ranges):
            why = "injected"
        elif killed:
            why = "killed"
            check(names_killed(sc, program, line), "a server was killed, "
                  "but the message names another: %r" % line)
        else:
            raise Failure("%s failed at %d+%d, where no fault was injected: "
                          "%r" % (op, off, length, line))
    elif "flush failed" in line and "flush" in sc.may_fail:
        why = "flush"
    elif "no reply from the server for 1 s" in line and \
            "timeout" in sc.may_fail:
        why = "timeout"
    elif killed:
        why = "killed"
        check(names_killed(sc, program, line), "a server was killed, but "
              "the message does not name it: %r" % line)
    else:
        raise Failure("unexplained failure: %r" % line)
    run.note("failed as allowed (%s): %s" % (why, line))
    sc.outcome = "failed as allowed (%s)" % why
    if why == "refused":
        # Every limit is checked before the first byte is read: the
        # destination is as it was, and one the copy would have created
        # is not there.
        if sc.dst_kind == "new-file":
            check(not os.path.exists(sc.dst_file),
                  "a refused copy left the file it created")
        elif sc.dst_file and sc.dst_kind != "memory":
            with open(sc.dst_file, "rb") as f:
                check(f.read() == sc.old, "a refused copy wrote to the "
                      "destination")
        return
    # What the destination holds: old bytes or the source's, and the
    # source's below the offset the message reports.
    r = RESUME_RE.search(line)
    below = BELOW_RE.search(line)
    limit = int(below.group(1)) if below else 0
    if program == "nbd-evcopy":
        # The command that copies the rest is offered whenever the copy
        # can resume (not with --checksum or --destination-is-zero, not
        # from or to a stream or null:) and some of it is left; a copy
        # that can resume and says nothing of the destination failed
        # before any of it held the source.
        resumable = sc.dst_kind not in ("pipe", "null") and \
            sc.src_kind != "pipe" and not sc.checksum and \
            "--destination-is-zero" not in sc.opts
        if not resumable:
            check(not r, "a command to copy the rest, from a copy that "
                  "cannot resume: %r" % line)
        elif below and limit < sc.size:
            check(r, "no command to copy the rest below %d: %r" %
                  (limit, line))
    if below and sc.resume is not None:
        check(limit >= sc.resume // (64 * KIB) * (64 * KIB),
              "reported offset %d below --resume" % limit)
    if sc.dst_kind == "new-file" and not os.path.exists(sc.dst_file):
        check(limit == 0, "the message says the destination holds the "
              "source below %d, but the new file does not exist" % limit)
    if sc.dst_kind != "pipe":
        got = read_dest(run, sc)
        if got is not None and sc.old is not None and sc.dst_log:
            check_written(sc, got, sc.dst_log)
        if got is not None and sc.old is not None:
            # Below --resume the old bytes are the source's already.
            bad = old_or_source(sc, got, limit)
            check(bad is None, "after the failure, the destination's byte "
                  "at %s is neither its old byte nor the source's (or not "
                  "the source's below %d)" % (bad, limit))
    if not r:
        return
    # With the faults gone and the servers still there, the command the
    # message prints copies the rest.
    if why == "refused":
        return
    # Servers to start again, as an administrator would before running
    # the command: one killed, or one that a client timed out on (it
    # hangs up with a read in flight, and nbdkit 1.32 aborts when it
    # answers it, as nbd-evcopy(1) says).  A memory server's bytes are
    # gone with it.
    again = []
    for w, name in ((sc.src_watch, "src"), (sc.dst_watch, "dst")):
        if w and w.fired:
            again.append((name, w.server))
    if why == "timeout":
        again.append(("src", sc.src_proc))
    for name, proc in again:
        if name == "src" and sc.src_kind == "captive":
            continue                    # the command starts its own
        if (name == "src" and sc.src_kind != "nbd") or \
           (name == "dst" and sc.dst_kind not in ("file-nbd", "sh")):
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        run.nbdkit(name, run.started[name])
    if again:
        sc.outcome += ", the server started again"
    dead = [" ".join(p.args) for p in run.servers if p.poll() is not None
            and not any(p is proc for _, proc in again)]
    check(not dead, "a server that was not killed is gone: %s" % dead)
    os.unlink(run.path("faults"))
    cmd = r.group(2)
    status2, out2, err2 = run_program(run, ["/bin/sh", "-c", cmd])
    check(status2 == 0, "the printed command failed (%d): %s: %r" %
          (status2, cmd, err2.decode(errors="replace")))
    sc.checksum = False
    judge_success(run, sc, program, out2, err2, None)
    run.note("resumed: " + cmd)
    sc.outcome += ", then resumed"


# Servers that break the protocol (tests/bad-server.py): the faults
# that must stop the program, and those libnbd lets pass, which must
# give exact results.
BAD_REFUSED = ["cookie", "chunk-offset", "chunk-oversize", "cut-chunk",
               "wrong-chunk", "handshake", "handshake-stop", "second-size"]
BAD_PASSED = ["reply-flags", "extent-zero", "extent-past-end", "hole"]


def bad_server_seed(run, program, fault):
    """A run of PROGRAM against tests/bad-server.py breaking the protocol
    as FAULT says: its outcome."""
    sock = run.path("bad.sock")
    p = subprocess.Popen(["python3", os.path.join(SRCDIR, "tests",
                                                  "bad-server.py"),
                          sock, fault], env=run.env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         preexec_fn=die_with_parent)
    run.servers.append(p)
    for _ in range(1000):
        if os.path.exists(sock) or p.poll() is not None:
            break
        time.sleep(0.01)
    check(os.path.exists(sock), "bad-server.py %s did not start" % fault)
    uri = "nbd+unix:///?socket=" + sock
    image = run.path("bad.img")
    helper(run, ["python3", os.path.join(SRCDIR, "tests", "bad-server.py"),
                 "--image", fault, image], "writing the bad server's image")
    with open(image, "rb") as f:
        data = f.read()
    os.unlink(image)
    run.note("source: bad-server.py %s" % fault)
    opts = ["--timeout=5"] + (["-C", "2"] if fault == "second-size" else [])
    if program == "nbd-evsum":
        argv = [program] + opts + [uri]
    else:
        dst, _, _ = run.nbdkit("dst", ["memory", str(4 * MIB)])
        argv = [program] + opts + [uri, dst]
    status, out, err = run_program(run, argv)
    lines = err.decode(errors="replace").splitlines()
    got = None
    if program == "nbd-evcopy":
        back = run.path("readback.img")
        helper(run, ["nbdcopy", "--", dst, back], "reading the destination back")
        with open(back, "rb") as f:
            got = f.read()
        os.unlink(back)
    if fault in BAD_PASSED:
        check(status == 0 and not lines, "exit %d against %s, which libnbd "
              "lets pass: %r" % (status, fault, lines))
        if got is None:
            want = "%s  %s" % (ref_digest(data), uri)
            check(out.decode().splitlines() == [want], "nbd-evsum printed %r"
                  % out)
        else:
            check(got == data, "the copy differs%s" % first_diff(got, data))
        return "bad server (%s): exact" % fault
    check(status == 1 and len(lines) == 1, "exit %d against %s, with %r"
          % (status, fault, lines))
    check(re.match(re.escape(program) + ": (source|%s)" % re.escape(uri),
                   lines[0]), "the message names another server: %r"
          % lines[0])
    if got is not None:
        zero = bytes(4096)
        bad = next((o for o in range(0, len(got), 4096)
                    if got[o:o + 4096] not in (data[o:o + 4096], zero)), None)
        check(bad is None, "the destination's block at %s is neither the "
              "source's nor its old zeroes" % bad)
    return "bad server (%s): refused" % fault


def one_seed(seed, verbose=False, keep=False):
    """Run seed SEED: (None, what happened) if every oracle agreed, else
    (the reason, None)."""
    rng = random.Random(seed)
    run = Run(seed, "s", verbose, keep)
    ok = False
    sc = Scenario()
    try:
        with open(run.path("faults"), "w"):
            pass
        program = rng.choice(PROGRAMS)
        lesson = program not in ("nbd-evcopy", "nbd-evsum")
        run.note("program: " + program)
        # A server that breaks the protocol, drawn apart from the rest
        # so that the seeds that do not draw one keep their scenarios.
        side = random.Random(seed * 1000003 + 17)
        if not lesson and side.random() < 0.05:
            outcome = bad_server_seed(run, program, side.choice(
                BAD_REFUSED + BAD_PASSED))
            run.check_clean()
            ok = True
            return None, "%s: %s" % (program, outcome)
        choose_source(run, rng, sc)
        src_kind = "nbd"
        if not lesson:
            src_kind = rng.choice(["nbd", "nbd", "nbd", "captive", "file",
                                   "pipe"])
        sc.src_kind = src_kind
        sc.src_min, sc.src_max = 1, None
        stdin_data = None
        if src_kind in ("nbd", "captive"):
            source_server(run, rng, sc, program if lesson else None)
            if src_kind == "captive":
                sc.src_argv = ["[", "nbdkit", "-r"] + sc.src_cmd + ["]"]
                sc.src_name = " ".join(sc.src_argv)
                sc.may_fail.discard("src-killed")
                sc.src_watch = None
            else:
                sc.src_argv = [sc.src_uri]
                sc.src_name = sc.src_uri
        elif src_kind == "file":
            sparse_file(run.path("src-file.img"), sc.data)
            sc.src_argv = ["src-file.img"]
            sc.src_name = "src-file.img"
        else:
            stdin_data = sc.data
            sc.src_argv = ["-"]
            sc.src_name = "-"
        run.note("source: %s" % src_kind)
        sc.resume_cut = None
        sc.resume = None
        pipe_out = None
        if program == "nbd-evsum":
            opts = evsum_options(rng, sc)
            sc.names = [sc.src_name]
            argv = [program] + opts + sc.src_argv
            if src_kind != "pipe" and rng.random() < 0.2:
                sparse_file(run.path("src-file.img"), sc.data)
                sc.names.append("src-file.img")
                argv.append("src-file.img")
        elif program == "checksum-libev":
            argv = [program, sc.src_uri]
        else:
            dest(run, rng, sc, program)
            if sc.old is not None and sc.dst_kind != "new-file" and \
               sc.size <= len(sc.old) and sc.old[:sc.size] != sc.data and \
               sc.dst_kind != "memory":
                # An old destination that holds a prefix of the source
                # can take --resume at that prefix.
                cut = common_prefix(sc.old[:sc.size], sc.data)
                if cut > 0 and src_kind != "pipe" and program == "nbd-evcopy":
                    sc.resume_cut = cut
            if lesson:
                opts = lesson_options(rng, sc, program)
            else:
                opts = evcopy_options(rng, sc)
                for o in opts:
                    if o.startswith("--resume="):
                        sc.resume = int(o[9:])
                sc.opts = opts
                sc.must_succeed = needless_faults(sc, program, opts)
                if sc.must_succeed:
                    run.note("every fault inside a zero extent: must succeed")
            argv = [program] + opts + sc.src_argv + \
                ([sc.dst_arg] if isinstance(sc.dst_arg, str) else sc.dst_arg)
            if sc.dst_kind == "pipe":
                pipe_out = run.path("pipe.out")
        for w in (sc.src_watch, sc.dst_watch):
            if w:
                w.start()
        status, out, err = run_program(run, argv, stdin_data, pipe_out)
        for w in (sc.src_watch, sc.dst_watch):
            if w:
                w.stop()
        if verbose:
            sys.stdout.write("  exit %d; stderr: %s" % (status, err.decode(errors="replace")))
        if status == 86 and SANITIZERS:
            run.check_clean()
        pipe_bytes = out if sc.dst_kind == "pipe" else None
        if status == 0:
            judge_success(run, sc, program, out, err, pipe_bytes)
            if sc.must_succeed:
                sc.outcome = "exit 0, as required: every fault needless"
        else:
            judge_failure(run, sc, program, status, out, err)
        run.check_clean()
        ok = True
        return None, "%s: %s" % (program, sc.outcome)
    except Failure as e:
        return failure_report(run, e), None
    except Exception:
        # A fault of this driver: the seed's failure, not the campaign's.
        return failure_report(run, "driver error: " +
                              traceback.format_exc()), None
    finally:
        for w in (sc.src_watch, sc.dst_watch):
            if w:
                w.done.set()
        run.close(ok)


# ---------------------------------------------------------------------
# Interrupt rounds: stop a copy at the K-th write, check what the
# destination holds, and finish it.

STOP_RE = re.compile(r"^nbd-evcopy: stopping on SIG(INT|TERM): waiting for the "
                     r"\d+ requests in flight; (press Ctrl-C|send it) again to "
                     r"stop at once$")
INTERRUPTED_RE = re.compile(
    r"^nbd-evcopy: interrupted by SIG(INT|TERM) after (\d+) bytes; "
    r"(?:the destination is complete below offset (\d+)|"
    r"(\S+) was created by this copy and holds the source only below "
    r"offset (\d+))(?:; to copy the rest: (.*))?$")


def check_blocks(sc, got, limit, what):
    """Per 4 KiB block, GOT holds its old bytes or the source's, and the
    source's below LIMIT."""
    bad = None
    old = sc.old if sc.old is not None else bytes(len(got))
    for o in range(0, min(len(got), sc.size), 4096):
        g = got[o:min(o + 4096, sc.size)]
        if g == sc.data[o:o + len(g)]:
            continue
        if o >= limit and g == old[o:o + len(g)]:
            continue
        bad = o
        break
    check(bad is None, "%s: the destination's block at %s is %s" %
          (what, bad, "not the source's" if bad is not None and bad < limit
           else "neither its old bytes nor the source's"))


def failure_report(run, why):
    """Why a seed or a round failed, then what the run noted on the way
    (its servers, commands and statuses), one item a line."""
    return "%s\n    %s" % (why, "\n    ".join(run.notes))


def blocksize_policy(minimum, maximum):
    """The blocksize-policy filter's arguments for these limits, with a
    request outside them refused, as a strict server would."""
    return ["blocksize-minimum=%d" % minimum,
            "blocksize-preferred=%d" % max(minimum, 4096),
            "blocksize-maximum=%d" % maximum,
            "blocksize-error-policy=error"]


def stop_server(p):
    """Stop a server and wait for it, so that every write it accepted is
    in its file."""
    if p.poll() is None:
        p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def one_round(k, verbose=False, keep=False):
    """Interrupt round K: (None, what happened) or (the reason, None)."""
    rng = random.Random(k)
    run = Run(k, "r", verbose, keep)
    ok = False
    sc = Scenario()
    src_log = dst_log = None
    try:
        # 32 to 256 requests, at most 32 MiB: long enough to stop in
        # the middle, short enough with one request in flight.
        reqsize = rng.choice([4096, 65536, 262144, MIB])
        size = min(32 * MIB, reqsize * rng.randrange(32, 257)) + \
            rng.choice([0, 0, 4096, 12345])
        layout = rng.choice(["sparse-random", "pattern", "data"])
        if layout == "sparse-random":
            size = (size + 4095) // 4096 * 4096
            plugin = ["--filter=blocksize", "sparse-random", str(size),
                      "seed=%d" % rng.randrange(1000),
                      "percent=%d" % rng.choice([10, 50, 90]),
                      "runlength=%d" % rng.choice([4096, 65536, MIB]),
                      "minblock=4096"]
        elif layout == "pattern":
            plugin = ["pattern", str(size)]
        else:
            spec = []
            for _ in range(rng.randrange(1, 40)):
                spec += ["@%d" % rng.randrange(size),
                         "%d*%d" % (rng.randrange(1, 256),
                                    rng.choice([1, 4096, 100000, MIB]))]
            plugin = ["data", " ".join(spec), "size=%d" % size]
        sc.size = size
        src_img = run.path("src.img")
        helper(run, ["nbdkit", "-U", "-", "-r"] + plugin +
               ["--run", 'nbdcopy -- "$uri" ' + shlex.quote(src_img)],
               "making the source")
        sc.data = open(src_img, "rb").read()
        kind = rng.choice(["nbd", "nbd", "file", "new-file", "pipe"])
        sig = rng.choice(["INT", "TERM", "KILL"])
        if kind == "pipe" and sig == "KILL":
            sig = rng.choice(["INT", "TERM"])
        sc.dst_kind = {"nbd": "file-nbd"}.get(kind, kind)
        # K well before the last request.
        kth = rng.randrange(1, max(2, min(30, size // reqsize // 2)))
        run.note("round %d: %s, %d bytes, into %s, SIG%s at the %s %d" %
                 (k, layout, size, kind, sig,
                  "write" if kind == "nbd" else "read", kth))
        # The source: slow reads unless the destination is slow.
        src_args = ["-r"]
        delay = rng.randrange(5, 25) if kind == "nbd" else \
            rng.randrange(20, 50)
        if kind != "nbd":
            src_args += ["--filter=delay"]
            plugin = plugin + ["delay-read=%dms" % delay]
        src_uri, src_p, src_log = run.nbdkit("src", src_args + plugin,
                                             log=kind != "nbd")
        # The destination: old bytes, other than the source's.
        sc.old = rng.randbytes(size)
        sc.dsize = size
        dfile = run.path("dst.img")
        sc.dst_file = dfile
        if kind in ("nbd", "file"):
            with open(dfile, "wb") as f:
                f.write(sc.old)
        else:
            sc.old = None if kind == "pipe" else bytes(size)
        dst_args = ["--filter=delay", "file", dfile,
                    "delay-write=%dms" % delay, "delay-zero=%dms" % delay]
        if kind == "nbd":
            dst_uri, dst_p, dst_log = run.nbdkit("dst", dst_args, log=True)
            dst_arg = dst_uri
        elif kind == "pipe":
            dst_arg = "-"
        else:
            dst_arg = "dst.img"
        opts = ["--request-size=%d" % reqsize]
        if kind != "nbd":
            # Reads that answer late, few in flight: time to stop it
            # before the end.
            opts.append("--requests=%d" % rng.choice([1, 2, 4, 8]))
        elif rng.random() < 0.5:
            opts.append("--requests=%d" % rng.choice([1, 4, 16, 64]))
        for o, p in (("--no-extents", 0.2), ("--no-sparse", 0.2),
                     ("--flush", 0.3), ("--allocated", 0.2)):
            if rng.random() < p and not (kind == "pipe" and o == "--allocated"):
                opts.append(o)
        checksum = kind != "pipe" and reqsize >= 65536 and rng.random() < 0.2
        if checksum:
            opts.append("--checksum")
        argv = ["nbd-evcopy"] + opts + [src_uri, dst_arg]
        run.note("run: " + " ".join(shlex.quote(a) for a in argv))
        out_f = open(run.path("pipe.out"), "wb") if kind == "pipe" else \
            subprocess.PIPE
        p = subprocess.Popen(argv, cwd=run.dir, env=run.penv,
                             stdin=subprocess.DEVNULL, stdout=out_f,
                             stderr=subprocess.PIPE)
        signum = getattr(signal, "SIG" + sig)
        w = Watcher(dst_log if kind == "nbd" else src_log,
                    r" (Write|Zero) id=" if kind == "nbd" else r" Read id=",
                    kth, lambda: p.send_signal(signum))
        w.start()
        try:
            out, err = p.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise Failure("hang: no exit within %d s" % RUN_TIMEOUT)
        finally:
            w.stop()
        if kind == "pipe":
            out_f.close()
        lines = err.decode(errors="replace").splitlines()
        run.note("exit %d: %r" % (p.returncode, lines))
        if not w.fired:
            # Done before the K-th write was seen: it must be a copy,
            # with fewer than K of them in the log.
            check(p.returncode == 0, "exit %d: %r" % (p.returncode, lines))
            with open(w.logfile) as f:
                seen = sum(1 for l in f if w.pattern.search(l))
            check(seen < kth, "%d requests in the log, but the signal was "
                  "not sent at request %d" % (seen, kth))
            outcome = "done before the signal"
        elif p.returncode == 0:
            # The signal was sent at the K-th request, well before the
            # last, and the servers answer late: a program that heeds it
            # stops with its status.  On a loaded machine the signal can
            # still come as the copy ends, and the requests in flight
            # then reach the log late: more than 64 of them (the most
            # these rounds keep in flight) a fifth of a second after the
            # signal are new ones, sent by a program that ignored it.
            late = w.after(0.2)
            check(late <= 64, "exit 0 after SIG%s at request %d, with %d "
                  "requests sent after it: the signal was ignored" %
                  (sig, kth, late))
            outcome = "done as the signal came"
        elif sig == "KILL":
            check(p.returncode == -signal.SIGKILL, "exit %d after SIGKILL"
                  % p.returncode)
            outcome = "SIGKILL, then the same command again"
        else:
            want = 130 if sig == "INT" else 143
            check(p.returncode == want, "exit %d after SIG%s, not %d: %r" %
                  (p.returncode, sig, want, lines))
            outcome = "SIG%s, then --resume" % sig
        if p.returncode != 0:
            run.check_clean()
        if kind == "nbd":
            # Every write the server accepted is in its file once it
            # has stopped (a killed client leaves replies pending, and
            # nbdkit 1.32 may abort then: it is started again).
            stop_server(dst_p)
        def dest_now():
            if kind == "pipe":
                return open(run.path("pipe.out"), "rb").read()
            if not os.path.exists(dfile):
                return None
            return open(dfile, "rb").read()
        got = dest_now()
        cmd = None
        if p.returncode not in (0, -signal.SIGKILL):
            rest = [l for l in lines if not STOP_RE.match(l)]
            check(len(rest) == 1 and len(lines) <= 2,
                  "after SIG%s, not one line (and the line at once): %r" %
                  (sig, lines))
            m = INTERRUPTED_RE.match(rest[0])
            check(m, "after SIG%s, an unexpected line: %r" % (sig, rest[0]))
            off = int(m.group(3) or m.group(5))
            cmd = m.group(6)
            if kind == "pipe":
                check(got == sc.data[:off], "the pipe got %d bytes, not the "
                      "source's first %d%s" % (len(got), off,
                                              first_diff(got, sc.data[:off])))
                check(cmd is None, "a --resume command for a stream: %s" % cmd)
                outcome = "SIG%s, the pipe holds the source below the offset" % sig
            else:
                check_blocks(sc, got, off, "after SIG" + sig)
                if off >= size:
                    # The signal came after the last write (during the
                    # flush, or as the last commands drained): nothing
                    # is left to copy, and no command is offered.
                    check(cmd is None, "a command for a complete copy: %s"
                          % cmd)
                    outcome = "SIG%s after the last write: complete" % sig
                elif checksum:
                    # --resume refuses --checksum, so none is offered:
                    # the whole command again.
                    check(cmd is None, "--resume offered with --checksum")
                    cmd = " ".join(shlex.quote(a) for a in argv)
                    outcome = "SIG%s with --checksum, then the same " \
                        "command again" % sig
                else:
                    check(cmd is not None, "no command to copy the rest")
                    check(" --resume=%d " % off in " %s " % cmd,
                          "the command does not resume at %d: %s" % (off, cmd))
        elif p.returncode == -signal.SIGKILL:
            if got is not None and kind != "pipe":
                check_blocks(sc, got, 0, "after SIGKILL")
            cmd = " ".join(shlex.quote(a) for a in argv)
        else:
            check(got is not None and got[:size] == sc.data,
                  "a finished copy differs%s" % first_diff(got or b"", sc.data))
        if cmd:
            if sig == "KILL":
                # A client killed with reads in flight: nbdkit 1.32 may
                # abort as it answers one (raw_send_socket: Assertion
                # 'sock >= 0' failed), as late as the delay of its
                # slowest read, so whether it has yet is a race.  The
                # source is started again either way, as an
                # administrator would after such a crash.
                if src_p.poll() is not None:
                    outcome += " (the source's nbdkit started again)"
                stop_server(src_p)
                run.nbdkit("src", run.started["src"])
            else:
                check(src_p.poll() is None,
                      "the source server is gone after SIG" + sig)
            if kind == "nbd":
                _, dst_p, _ = run.nbdkit("dst", dst_args)
            if kind == "pipe":
                cmd += " > pipe.out"
            status, out2, err2 = run_program(run, ["/bin/sh", "-c", cmd])
            check(status == 0, "the command that copies the rest failed (%d): "
                  "%s: %r" % (status, cmd, err2))
            if kind == "nbd":
                stop_server(dst_p)
            got = dest_now()
            check(got[:size] == sc.data, "wrong bytes after %s%s" %
                  (cmd, first_diff(got[:size], sc.data)))
            check(ref_digest(got[:size]) == ref_digest(sc.data),
                  "the block hash differs after " + cmd)
        run.check_clean()
        ok = True
        return None, "%s: %s" % (kind, outcome)
    except Failure as e:
        return failure_report(run, e), None
    except Exception:
        return failure_report(run, "driver error: " +
                              traceback.format_exc()), None
    finally:
        run.close(ok)


# The outcome classes the fixed seeds of tests/hostile.sh and the fixed
# rounds of tests/resume-rounds.sh stand for, each a regular expression
# on "PROGRAM: OUTCOME" (a round's outcome has no program).  --cover
# finds a quick seed or round of each, as the draws make them now.
COVER_SEEDS = [
    r"nbd-evcopy: exit 0",
    r"nbd-evsum: exit 0",
    r"nbd-evcopy: exit 0, as required: every fault needless",
    r"nbd-evcopy: failed as allowed \(injected\), then resumed",
    r"nbd-evcopy: failed as allowed \(refused\)",
    r"nbd-evcopy: failed as allowed \(killed\)",
    r"nbd-evcopy: failed as allowed \(timeout\), the server started "
    r"again, then resumed",
    r"checksum-libev: failed as allowed \(injected\)",
    r"nbd-evcopy: bad server \(.*\): refused",
    r"nbd-evsum: bad server \(.*\): exact",
]
COVER_ROUNDS = [
    r"nbd: SIGINT, then --resume",
    r"file: SIGTERM, then --resume",
    r"pipe: SIGINT, the pipe holds the source below the offset",
    r"new-file: SIGKILL, then the same command again",
]
# A note on an outcome that a race decides, left out of what is covered.
RACY_NOTE = " (the source's nbdkit started again)"


def cover(path, rounds, jobs):
    """Write to PATH, for each class of COVER_ROUNDS or COVER_SEEDS, the
    quickest round or seed whose outcome is in it, of those run until
    every class had one, as "ok K: OUTCOME" lines after a comment
    (make check runs them); fail on a failed seed, or a class not met
    within 2,000."""
    classes = COVER_ROUNDS if rounds else COVER_SEEDS
    fn = one_round if rounds else one_seed
    found = {}                          # class: (seconds, line)
    batch = 20 * max(1, jobs)
    first = 1

    def timed(k):
        t = time.time()
        return fn(k, False, False), time.time() - t

    with concurrent.futures.ThreadPoolExecutor(max(1, min(jobs, 2))) as ex:
        while len(found) < len(classes) and first <= 2000:
            ks = range(first, first + batch)
            for k, ((reason, outcome), took) in zip(ks, ex.map(timed, ks)):
                if reason is not None:
                    sys.exit("%s %d failed: %s" % ("round" if rounds
                                                   else "seed", k, reason))
                outcome = outcome.replace(RACY_NOTE, "")
                for c in classes:
                    if re.fullmatch(c, outcome) and \
                       (c not in found or took < found[c][0]):
                        found[c] = (took, "ok %d: %s" % (k, outcome))
            first += batch
    missing = [c for c in classes if c not in found]
    if missing:
        sys.exit("no %s within 2000 for: %s" % ("round" if rounds else "seed",
                                                 ", ".join(missing)))
    lines = sorted((line for _, line in found.values()),
                   key=lambda l: int(l.split()[1][:-1]))
    with open(path, "w") as f:
        f.write("# The %s that tests/%s runs: of each outcome class in\n"
                "# tests/hostile.py's %s, the quickest found, with the\n"
                "# outcome it must keep.  Written by make hostile-cover,\n"
                "# again when the draws change.\n"
                % (
                    "rounds" if rounds else "seeds",
                    "resume-rounds.sh" if rounds else "hostile.sh",
                    "COVER_ROUNDS" if rounds else "COVER_SEEDS"))
        f.write("".join(l + "\n" for l in lines))
    print("".join(l + "\n" for l in lines), end="")


def main():
    ap = argparse.ArgumentParser(description="Hostile-server campaign.")
    ap.add_argument("--seeds", type=int, help="run N seeds")
    ap.add_argument("--rounds", type=int, help="run N interrupt rounds")
    ap.add_argument("--round", help="replay one interrupt round (or K,L,...)")
    ap.add_argument("--seed", help="replay one seed (or K,L,... several)")
    ap.add_argument("--first", type=int, default=1, help="the first seed")
    ap.add_argument("--jobs", type=int, default=1, help="seeds at once (<= 2)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory of a seed")
    ap.add_argument("--programs", metavar="DIR",
                    help="run DIR's programs in place of the suite's")
    ap.add_argument("--cover", metavar="FILE",
                    help="write the first seed of each outcome class to FILE")
    ap.add_argument("--cover-rounds", metavar="FILE",
                    help="write the first round of each outcome class to FILE")
    args = ap.parse_args()
    if args.programs:
        STAND_INS.append(os.path.abspath(args.programs))
    rounds = args.rounds is not None or args.round is not None
    if args.cover or args.cover_rounds:
        cover(args.cover or args.cover_rounds, bool(args.cover_rounds),
              args.jobs)
        return
    what, make_target, fn = ("round", "check-resume ROUND", one_round) \
        if rounds else ("seed", "check-hostile SEED", one_seed)
    if args.seed is not None or args.round is not None:
        seeds = [int(k) for k in (args.seed or args.round).split(",")]
    else:
        seeds = list(range(args.first, args.first +
                           ((args.rounds if rounds else args.seeds) or 5)))
    t0 = time.time()
    failed = []
    tally = {}

    def one(seed):
        if args.verbose:
            print("%s %d" % (what, seed), flush=True)
        return seed, fn(seed, args.verbose, args.keep)

    with concurrent.futures.ThreadPoolExecutor(max(1, min(args.jobs, 2))) as ex:
        for seed, (reason, outcome) in ex.map(one, seeds):
            if reason is None:
                tally[outcome] = tally.get(outcome, 0) + 1
                print("ok %d: %s" % (seed, outcome), flush=True)
            else:
                failed.append(seed)
                print("FAIL %s %d: %s" % (what, seed, reason), flush=True)
                print("  replay: make %s=%d  (or: %s --%s=%d -v)"
                      % (make_target, seed,
                         os.path.join(SRCDIR, "tests", "hostile.py"), what,
                         seed), flush=True)
    for outcome in sorted(tally):
        print("  %5d  %s" % (tally[outcome], outcome))
    print("%d %ss, %d failed%s, %.0f s" %
          (len(seeds), what, len(failed),
           (": " + " ".join(map(str, failed))) if failed else "",
           time.time() - t0))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
