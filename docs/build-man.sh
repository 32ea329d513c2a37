#!/bin/sh
# build-man.sh SRCDIR IN.pod OUT.1 VERSION [DOCDIR]
# build-man.sh --date SRCDIR      (print the date the pages would get)
#
# Build a man page from POD, reproducibly: the page's date comes from
# SOURCE_DATE_EPOCH when it is set (read in UTC), otherwise from the
# release date that "make dist" stored in a tarball, otherwise from the
# last commit of the checkout.  Neither the time zone nor the user or the
# host that builds changes a byte of the output.
#
# The pages cite the documents that "make install" puts in the
# configured docdir, written @docdir@ in the POD.  DOCDIR replaces it:
# the Makefile passes $(docdir); without it, the pages name
# /usr/share/doc/nbd-libev-examples, where a distribution installs them.
set -e
set -u

print_date=
if [ "$1" = --date ]; then
  print_date=1
  shift
fi
srcdir=$1

if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  case "$SOURCE_DATE_EPOCH" in
    *[!0-9]*) echo "build-man.sh: SOURCE_DATE_EPOCH is not a number" >&2; exit 1 ;;
  esac
  date=$(TZ=UTC date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
elif [ -s "$srcdir/.release-date" ]; then
  # A release tarball: "make dist" stored the date.  Checked before git,
  # so that a tarball unpacked inside some other checkout keeps its own.
  date=$(cat "$srcdir/.release-date")
elif git -C "$srcdir" rev-parse --git-dir >/dev/null 2>&1 &&
     epoch=$(git -C "$srcdir" log -1 --format=%ct 2>/dev/null) &&
     [ -n "$epoch" ]; then
  date=$(TZ=UTC date -u -d "@$epoch" +%Y-%m-%d)
else
  echo "build-man.sh: no SOURCE_DATE_EPOCH, no git history and no .release-date" >&2
  exit 1
fi

if [ -n "$print_date" ]; then
  echo "$date"
  exit 0
fi

in=$2 out=$3 version=$4
docdir=${5:-/usr/share/doc/nbd-libev-examples}
name=$(basename "$in" .pod)
# Escaped for sed's replacement: a backslash, & or the | delimiter.
docdir_sed=$(printf '%s\n' "$docdir" | sed 's/[\\&|]/\\&/g')
# pod2man reads no clock and no user name when --date is given; LC_ALL
# and TZ are pinned anyway so that nothing local leaks in.
sed "s|@docdir@|$docdir_sed|g" "$in" >"$out.pod.tmp"
LC_ALL=C TZ=UTC pod2man \
  --section=1 \
  --name="$(echo "$name" | tr '[:lower:]' '[:upper:]')" \
  --center="nbd-libev-examples" \
  --release="nbd-libev-examples $version" \
  --date="$date" \
  --utf8 \
  "$out.pod.tmp" >"$out.tmp"
rm -f "$out.pod.tmp"
mv "$out.tmp" "$out"
