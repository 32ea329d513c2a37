#!/bin/sh
# Build nbd-libev-examples from a checkout:  ./autogen.sh [CONFIGURE-ARGS]
#
# Checks that the Debian packages for the build, the tests and the demo
# are installed.  As root on Debian or Ubuntu it installs what is missing
# with apt-get (saying so first); otherwise it prints the apt-get line to
# run and stops.  Then it runs autoreconf and configure.

set -e

# Build: compiler, autotools, pkg-config and the libraries.
build_pkgs="build-essential autoconf automake pkg-config libnbd-dev libev-dev libssl-dev liburing-dev"
# Tests, demo and benchmarks: real servers, the tools compared with,
# psktool (gnutls-bin) for the TLS test, script (bsdutils) for the
# terminal test, valgrind for the error-path test, and time (GNU
# /usr/bin/time) for bench/interleave.sh.
test_pkgs="nbdkit qemu-utils libnbd-bin python3 hyperfine gnuplot-nox perl gnutls-bin bsdutils valgrind time"

missing=
if command -v dpkg-query >/dev/null 2>&1; then
  for p in $build_pkgs $test_pkgs; do
    status=$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null || :)
    case "$status" in
      ii*) ;;
      *) missing="$missing $p" ;;
    esac
  done
fi

if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "autogen.sh: installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    # The package lists may be missing or stale on a fresh machine.
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq $missing
  else
    echo "autogen.sh: missing Debian packages:$missing" >&2
    echo "autogen.sh: run as root:  apt-get install$missing" >&2
    exit 1
  fi
fi

cd "$(dirname "$0")"
autoreconf -fi
./configure "$@"
