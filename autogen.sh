#!/bin/sh
# Build nbd-libev-examples from a checkout:  ./autogen.sh [CONFIGURE-ARGS]
#
# Checks that the Debian packages of four groups are installed: the
# build's, the tests' (and make demo's), the checks', and the
# benchmarks'.  As root on Debian or Ubuntu it installs whatever is
# missing of all four with apt-get, saying so first: CI runs
# ./autogen.sh && make check on a clean clone and counts a skipped test
# as a failure.  Otherwise it prints the apt-get line to run.  A missing
# build or test package stops it; missing packages of the checks or the
# benchmarks are only named, since the programs and make check do
# without them.  Then it runs autoreconf and configure.

set -e

# Build: compiler, autotools, pkg-config, the libraries, and perl for
# pod2man, which configure requires to build the man pages.
build_pkgs="build-essential autoconf automake pkg-config libnbd-dev libev-dev libssl-dev liburing-dev perl"
# Tests and make demo: the servers (nbdkit; qemu-nbd, qemu-img and
# qemu-io from qemu-utils), nbdcopy and nbdinfo (libnbd-bin), python3
# for the tests' helpers, psktool (gnutls-bin) for the TLS test, script
# (bsdutils) for the terminal test, valgrind for the error-path test
# (and valgrind/memcheck.h, which the build uses when it is there), ss
# (iproute2) for the TCP socket-buffer test.
test_pkgs="nbdkit qemu-utils libnbd-bin python3 gnutls-bin bsdutils valgrind iproute2"
# Checks beyond make check, which CI runs too: clang with its
# sanitizer and libFuzzer runtimes for ./configure --enable-sanitizers
# and --enable-fuzzing, and scan-build for make analyze (which also
# runs gcc -fanalyzer, from build-essential).
check_pkgs="clang-14 libclang-rt-14-dev clang-tools-14"
# Benchmarks only: hyperfine and gnuplot for make bench, GNU
# /usr/bin/time (time) for make bench-compare and bench/interleave.sh.
# Without them make check skips the two tests of the harness
# (tests/bench-quick.sh, tests/bench-compare-quick.sh) and runs the rest.
bench_pkgs="hyperfine gnuplot-nox time"

# not_installed PACKAGE...: print the packages dpkg does not have
# installed, each after a space.
not_installed ()
{
  for p in "$@"; do
    status=$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null || :)
    case "$status" in
      ii*) ;;
      *) printf ' %s' "$p" ;;
    esac
  done
}

# Without dpkg (not Debian or Ubuntu) nothing is checked: configure
# says what the build lacks, and a test whose tool is absent is skipped.
missing=
missing_optional=
if command -v dpkg-query >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  missing=$(not_installed $build_pkgs $test_pkgs)
  # shellcheck disable=SC2086
  missing_optional=$(not_installed $check_pkgs $bench_pkgs)
fi

if [ -n "$missing$missing_optional" ] &&
   [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "autogen.sh: installing Debian packages:$missing$missing_optional"
  export DEBIAN_FRONTEND=noninteractive
  # The package lists may be missing or stale on a fresh machine.
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq $missing $missing_optional
else
  if [ -n "$missing_optional" ]; then
    echo "autogen.sh: warning: not installed, needed only by the checks beyond make check and the benchmarks:$missing_optional" >&2
    echo "autogen.sh: warning: to install them, as root:  apt-get install$missing_optional" >&2
  fi
  if [ -n "$missing" ]; then
    echo "autogen.sh: missing Debian packages:$missing" >&2
    echo "autogen.sh: run as root:  apt-get install$missing" >&2
    exit 1
  fi
fi

cd "$(dirname "$0")"
autoreconf -fi
./configure "$@"
