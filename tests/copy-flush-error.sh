#!/usr/bin/env bash
# A flush that fails is an error, not a warning: with --flush and a
# destination whose flush fails with EIO (an nbdkit sh plugin script
# over a file), copy-libev exits non-zero with one line that says so,
# after every write has been made.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy
requires_nbdkit_plugin sh
requires_nbdkit_plugin random

size=$((4 * 1024 * 1024))
start_nbdkit src random $size seed=10
fill_file "$tmpdir/dst.img" $size 252

cat >"$tmpdir/dst.sh" <<EOF2
#!/bin/sh
# nbdkit-sh-plugin(3): pread and pwrite get HANDLE COUNT OFFSET FLAGS;
# the data to write is on stdin.
f="$tmpdir/dst.img"
case "\$1" in
  get_size) echo $size ;;
  can_write | can_flush) exit 0 ;;
  pread)
    dd if="\$f" iflag=skip_bytes,count_bytes skip="\$4" count="\$3" status=none ;;
  pwrite)
    dd of="\$f" oflag=seek_bytes conv=notrunc seek="\$4" status=none ;;
  flush)
    echo "EIO injected flush error" >&2
    exit 1 ;;
  *) exit 2 ;;
esac
EOF2
chmod +x "$tmpdir/dst.sh"
start_nbdkit dst sh "$tmpdir/dst.sh"

expect_error "destination: flush failed: Input/output error" \
  copy-libev --flush "$src" "$dst"

# The flush was sent only after every write had returned, so the
# destination already holds the whole copy.
read_back "$src" "$tmpdir/src.img"
read_back "$dst" "$tmpdir/dst-read.img"
cmp "$tmpdir/src.img" "$tmpdir/dst-read.img" || fail "writes are missing"

# Without --flush the same destination works: only the flush failed.
copy-libev "$src" "$dst"
