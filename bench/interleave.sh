#!/usr/bin/env bash
# interleave.sh [-n ROUNDS] [-p PREPARE] CMD...: run each shell
# command once per round, in an order that rotates from round to round,
# so that drift on the machine (load, memory the servers freed) spreads
# over all of them; then print, for each, the median wall time with its
# minimum and maximum, and the median client CPU time (user + system).
# The commands start no servers: start them first, for example
#
#   nbdkit -U /tmp/s.sock pattern 1G; nbdkit -U /tmp/d.sock null 1G
#   S='nbd+unix:///?socket=/tmp/s.sock' D='nbd+unix:///?socket=/tmp/d.sock'
#   export S D
#   bench/interleave.sh -n 7 'copy-libev "$S" "$D"' 'nbdcopy "$S" "$D"'
#
# -p PREPARE runs that shell command, untimed, before every run: the
# removal of a copy's new file, say.
set -e
set -u

rounds=7
prepare=:
while [ "${1:-}" = -n ] || [ "${1:-}" = -p ]; do
  case $1 in
    -n) rounds=$2 ;;
    -p) prepare=$2 ;;
  esac
  shift 2
done
[ $# -ge 1 ] ||
  { echo "usage: interleave.sh [-n ROUNDS] [-p PREPARE] CMD..." >&2; exit 1; }

out=$(mktemp)
trap 'rm -f "$out" "$out.t"' EXIT
for r in $(seq 1 "$rounds"); do
  for k in $(seq 0 $(($# - 1))); do
    i=$(( (k + r) % $# ))
    cmd=${@:$((i + 1)):1}
    sh -c "$prepare" >/dev/null
    /usr/bin/time -f '%e %U %S' -o "$out.t" sh -c "$cmd" >/dev/null
    printf '%d %s\n' "$i" "$(cat "$out.t")" >>"$out"
  done
done

python3 - "$out" "$@" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    i, wall, user, sys_ = line.split()
    rows.setdefault(int(i), []).append((float(wall), float(user) + float(sys_)))
print("| command | median wall (s) | min-max (s) | median client CPU (s) |")
print("|---|---:|---:|---:|")
for i, cmd in enumerate(sys.argv[2:]):
    wall = [w for w, _ in rows[i]]
    cpu = [c for _, c in rows[i]]
    print("| `%s` | %.3f | %.3f-%.3f | %.2f |" % (
        cmd, statistics.median(wall), min(wall), max(wall),
        statistics.median(cpu)))
PY
