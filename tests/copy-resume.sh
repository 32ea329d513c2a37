#!/usr/bin/env bash
# A copy that fails says that the file it created holds the source only
# below an offset, and prints the command that copies the rest; run once
# the fault is gone, that command (--resume) completes the copy.
# --resume refuses what it cannot do: a hash of the whole image, a
# destination that is not there, an offset past the end.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy

size=$((16 * 1024 * 1024))
bad=$((12 * 1024 * 1024))
cd "$tmpdir"
nbdkit -U - sparse-random $size seed=5 percent=50 --run 'nbdcopy -- "$uri" src.img' ||
  fail "cannot make src.img"

# An nbdkit sh plugin serving src.img whose reads of the byte at 12 MiB
# fail while the file "broken" exists, so that the same command line
# works once it is gone.  The failing read answers after 1 s, so that
# the reads and writes below it are done by then and the offset said
# is past 0: at 0, the comparisons below would prove nothing.
cat >plugin.sh <<EOF2
#!/bin/sh
case "\$1" in
  get_size) echo $size ;;
  pread)
    if [ -e "$tmpdir/broken" ] && [ "\$4" -le $bad ] &&
       [ \$((\$4 + \$3)) -gt $bad ]; then
      sleep 1
      echo "EIO injected read error at \$4" >&2
      exit 1
    fi
    dd if="$tmpdir/src.img" iflag=skip_bytes,count_bytes skip="\$4" \
      count="\$3" status=none ;;
  *) exit 2 ;;
esac
EOF2
chmod +x plugin.sh
touch broken
start_nbdkit src sh "$tmpdir/plugin.sh"

expect_error "read failed at offset" nbd-evcopy "$src" dst.raw
grep -q "; dst.raw was created by this copy and holds the source only below offset [0-9]*; to copy the rest: " "$tmpdir/err" ||
  fail "the message does not say what dst.raw holds"
off=$(sed -n 's/.* holds the source only below offset \([0-9]*\);.*/\1/p' "$tmpdir/err")
[ "$off" -gt 0 ] || fail "offset $off: nothing below it to check"
[ "$off" -le $bad ] || fail "offset $off is past the failed read"
cmp -n "$off" src.img dst.raw || fail "dst.raw differs below $off"
cmd=$(sed -n 's/.*; to copy the rest: //p' "$tmpdir/err")
[ "$cmd" = "nbd-evcopy --resume=$off '$src' dst.raw" ] ||
  fail "unexpected command: $cmd"

rm broken
eval "$cmd" || fail "the resumed copy failed: $cmd"
cmp src.img dst.raw || fail "after --resume, dst.raw differs"

# What --resume refuses, before writing anything.
cp dst.raw before.raw
expect_error "--resume cannot be used with --checksum" \
  nbd-evcopy --resume=0 --checksum "$src" dst.raw
expect_error "--resume cannot be used with --verify" \
  nbd-evcopy --resume=0 --verify "$src" dst.raw
expect_error "--resume: missing.raw does not exist" \
  nbd-evcopy --resume=0 "$src" missing.raw
[ ! -e missing.raw ] || fail "missing.raw was created"
expect_error "--resume: offset 1073741824 is past the source's end ($size bytes)" \
  nbd-evcopy --resume=1G "$src" dst.raw
expect_error "--resume: 'x' is not an offset" nbd-evcopy --resume=x "$src" dst.raw
cmp before.raw dst.raw || fail "a refused --resume wrote to dst.raw"
