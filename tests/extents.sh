#!/usr/bin/env bash
# common/extents.c builds the merged allocation map of an export from
# block status: exact maps for images with known layouts, one merged
# zero extent for a 1 TiB hole however many windows it takes, and the
# fallbacks to data for servers without extents or failing block status.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit qemu-img qemu-nbd

check ()
{
  expected=$1; shift
  "$@" >"$tmpdir/map" || fail "$*"
  if ! diff -u <(printf '%s\n' "$expected") "$tmpdir/map"; then
    fail "unexpected extent map from: $*"
  fi
}

# nbdkit's data plugin keeps its image in 32 KiB pages and reports each
# page that holds data as data, the rest as zero.  Extents straddle the
# 4 GiB block-status window and must come back merged.
start_nbdkit src data '1 @1073741823 1 @4294967295 1 @4294967296 1'
check "0 32768 data
32768 1073676288 zero
1073709056 32768 data
1073741824 3221192704 zero
4294934528 32769 data
commands 2" extents-dump "$src"

# A 1 TiB hole after one page: 257 windows of just under 4 GiB, merged
# into one extent.
start_nbdkit hole data '1' size=1T
check "0 32768 data
32768 1099511595008 zero
commands 257" extents-dump "$hole"

# An empty qcow2 through qemu-nbd: the whole export is one zero extent.
qemu-img create -q -f qcow2 "$tmpdir/empty.qcow2" 1T
start_qemu_nbd qcow -r -f qcow2 "$tmpdir/empty.qcow2"
check "0 1099511627776 zero
commands 257" extents-dump "$qcow"

# Odd sizes: the last extent ends at the export's end.
start_nbdkit odd data '1' size=7
check "0 7 data
commands 1" extents-dump "$odd"

# Zero size: no command at all.
start_nbdkit empty data ''
check "commands 0" extents-dump "$empty"

# A server whose block status fails: the range is read as data.
start_nbdkit err --filter=error data '1 @1048576 1' \
  error-extents=EIO error-extents-rate=100%
check "0 1048577 data
commands 1" extents-dump "$err"

# A server without base:allocation: nbdkit --no-sr turns off structured
# replies, and without them there is no block status at all.
start_nbdkit noext --no-sr data '1 @1048576 1'
check "0 1048577 data
commands 0" extents-dump "$noext"
