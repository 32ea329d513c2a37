#!/usr/bin/env bash
# Sparse-random sources copied onto themselves through nbdkit's
# checkwrite filter, which fails any write that differs from the
# source and any zero command on a range that holds data.  Several
# seeds and percentages, with and without extents and --allocated.
source "$abs_top_srcdir/tests/functions.sh"
requires nbdkit nbdcopy

size=64M
n=0
for seed_percent in 1:0 2:5 3:50 4:95 5:100; do
  seed=${seed_percent%:*} percent=${seed_percent#*:}
  for opts in "" "--allocated" "--noextents" "--requests=1 --request-size=64k"; do
      n=$((n + 1))
      src_filter=
      case $opts in
        --noextents) src_filter=--filter=noextents opts= ;;
      esac
      start_nbdkit "src$n" $src_filter sparse-random $size \
        seed=$seed percent=$percent
      start_nbdkit "dst$n" --filter=checkwrite sparse-random $size \
        seed=$seed percent=$percent
      eval "s=\$src$n d=\$dst$n"
      nbd-evcopy $opts "$s" "$d" ||
        fail "seed=$seed percent=$percent $opts $src_filter"
  done
done

# checkwrite cannot see a write that never happened, so copy one of
# them into memory and compare byte for byte as well.
start_nbdkit src sparse-random $size seed=4 percent=30
start_nbdkit dst memory $size
nbd-evcopy "$src" "$dst"
read_back "$src" "$tmpdir/src.raw"
read_back "$dst" "$tmpdir/dst.raw"
cmp "$tmpdir/src.raw" "$tmpdir/dst.raw"
