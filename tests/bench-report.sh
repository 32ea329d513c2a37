#!/usr/bin/env bash
# bench/report.py judges each claim in numbers from the runs: here on
# runs written by hand, so that every verdict is known beforehand (a
# real run's numbers cannot be), in both metrics, for a ratio, a
# difference and a single median, against the best of a sweep and
# against another comparison's command, and the tools' two-core goals;
# it draws the delay chart; and it refuses a claim that names no
# command, and CPU times that do not match hyperfine's runs.
source "$abs_top_srcdir/tests/functions.sh"
requires python3

w=$tmpdir/work
mkdir "$w"
printf 'started\tnow\nhost\ttest\nquick\t0\nhyperfine_opts\t--warmup 1 --runs 3\nclk_tck\t100\ncpus\t2\n' >"$w/run.info"

# json FILE LABEL:TIMES...: a hyperfine export with those wall times.
json ()
{
  local f=$1 sep= c label times
  shift
  {
    printf '{"results": ['
    for c in "$@"; do
      label=${c%%:*} times=${c#*:}
      printf '%s{"command": "%s", "times": [%s]}' "$sep" "$label" "$times"
      sep=,
    done
    printf ']}\n'
  } >"$f"
}
# times FILE USER SYSTEM...: bash time lines, a warm-up line first.
times ()
{
  local f=$1
  shift
  echo "9.999 9.999 9.999" >"$f"
  while [ $# -gt 0 ]; do
    echo "1.000 $1 $2" >>"$f"
    shift 2
  done
}

# Wall times: B twice A; C is A; D straddles 0.97 A.  CPU: A uses 0.2 s
# a run, B 0.1 s (in user and system), C and D as A.
cat >"$w/t.meta" <<'EOF2'
id	t
title	Synthetic
claim	known verdicts
baseline	A
fresh	no
warmup	1
runs	3
chart	delay 0 1000000
command	A	a
command	B	b
command	C	c
command	D	d
expect	wall	A	below	0.97	B
expect	wall	A	above	1.23	B
expect	wall	A	about	1	B
expect	wall	A	no-more	1	B
expect	wall	C	about	1	A
expect	wall	C	below	0.97	A
expect	wall	D	below	0.97	A
expect	cpu	B	below	0.6	A
expect	cpu	C	about	1	A
expect	wall	A	below	0.5s	B
expect	wall	B	below	1s
expect	wall	B	above	1.5	A
expect	wall	D	above	0.97	A
expect	wall	B	no-more	1	A
expect	wall	D	no-more	0.97	A
EOF2
json "$w/t.json" "A:1.00,1.01,0.99" "B:2.00,2.02,1.98" "C:1.00,1.01,0.99" "D:0.70,1.20,0.90"
json "$w/t.rev.json" "D:1.05,0.80,1.10" "C:1.02,0.98,1.00" "B:2.04,1.96,2.00" "A:1.02,0.98,1.00"
for p in t t.rev; do
  times "$w/$p.times.0" 0.150 0.050 0.152 0.050 0.148 0.050
  times "$w/$p.times.1" 0.075 0.025 0.076 0.025 0.074 0.025
  times "$w/$p.times.2" 0.150 0.050 0.152 0.050 0.148 0.050
  times "$w/$p.times.3" 0.150 0.050 0.152 0.050 0.148 0.050
done

# A second comparison in milliseconds: G takes 14 times F's time.
cat >"$w/u.meta" <<'EOF2'
id	u
title	Synthetic, short
claim	known verdicts
baseline	F
fresh	no
warmup	1
runs	3
command	F	f
command	G	g
chart	delay 10 1000000
expect	wall	G	above	1.23	F
expect	wall	G	above	10	best of F
expect	wall	G	below	0.2	t:A
expect	wall	G	below	1	z:A
EOF2
json "$w/u.json" "F:0.010,0.0102,0.0098" "G:0.140,0.142,0.138"
json "$w/u.rev.json" "G:0.141,0.139,0.140" "F:0.0101,0.0099,0.010"
for p in u u.rev; do
  times "$w/$p.times.0" 0.005 0.004 0.005 0.004 0.005 0.004
  times "$w/$p.times.1" 0.070 0.060 0.071 0.060 0.069 0.060
done

# A comparison run in rounds, as run.sh runs them now: P and Q once a
# round, the warm-up in the first round only.  The machine drifts from
# round to round (P takes 1 to 3 s), and Q takes 0.9 of P's time in
# every round: judged round by round, Q/P is 0.900 exactly, where the
# runs resampled apart from each other could not tell it below 0.95.
cat >"$w/v.meta" <<'EOF2'
id	v
title	Synthetic, in rounds
claim	known verdicts
baseline	P
fresh	no
warmup	1
rounds	4
command	P	p
command	Q	q
command	P slow	p --slow
expect	wall	Q	below	0.95	P
expect	wall	Q	below	0.95	best of P
expect	wall	Q	below	1	t:A
EOF2
p_times=(1.0 2.0 1.5 3.0) q_times=(0.9 1.8 1.35 2.7) s_times=(1.2 2.4 1.8 3.6)
for r in 1 2 3 4; do
  json "$w/v.r$r.json" "P:${p_times[$r-1]}" "Q:${q_times[$r-1]}" \
    "P slow:${s_times[$r-1]}"
  for i in 0 1 2; do
    times "$w/v.r$r.times.$i" 0.100 0.050
    [ "$r" = 1 ] || sed -i 1d "$w/v.r$r.times.$i"
  done
done

# A sweep of request sizes, drawn as the request size chart: 256k
# takes 1 s a round, 1M 0.5 s, each 0.15 s of client CPU; the servers
# use 50 clock ticks (0.5 s) for 256k, 10 (0.1 s) for 1M.
cat >"$w/s.meta" <<'EOF2'
id	s
title	Synthetic, request sizes
claim	a chart
baseline	x --request-size=256k
fresh	no
warmup	0
rounds	2
chart	request-size
image	1G
command	x --request-size=256k	x --request-size=256k
command	x --request-size=1M	x --request-size=1M
EOF2
for r in 1 2; do
  json "$w/s.r$r.json" "x --request-size=256k:1.0" "x --request-size=1M:0.5"
  for i in 0 1; do
    times "$w/s.r$r.times.$i" 0.100 0.050
    sed -i 1d "$w/s.r$r.times.$i"
  done
  echo 50 >"$w/s.r$r.servers.0"
  echo 10 >"$w/s.r$r.servers.1"
done

# The tools' two-core goals: nbd-evcopy takes 1 s a round with 0.2 s
# of client CPU and 1.8 s of the servers' (the limit on 2 cores, 1 s:
# within 1.1 of it), half of nbdcopy's client CPU; nbd-evsum takes 2 s
# with 0.5 s of its own and 0.3 s of the servers' (5 times its limit,
# its own CPU setting the pace), more client CPU than blksum's.  Each
# tool is held to the programs of its own task: the copy to nbdcopy,
# the checksum to blksum.  The lesson is no peer.
cat >"$w/g.meta" <<'EOF2'
id	g
title	Synthetic, two cores
claim	the goals
baseline	nbdcopy
fresh	no
warmup	0
rounds	3
image	1G
command	nbd-evcopy	nbd-evcopy
command	nbd-evsum	nbd-evsum
command	nbdcopy	nbdcopy
command	copy-libev	copy-libev
command	blksum	blksum
EOF2
for r in 1 2 3; do
  json "$w/g.r$r.json" "nbd-evcopy:1.0" "nbd-evsum:2.0" "nbdcopy:2.0" "copy-libev:1.0" "blksum:2.0"
  for i in 0 1 2 3 4; do
    case $i in
      0) times "$w/g.r$r.times.$i" 0.150 0.050; echo 180 >"$w/g.r$r.servers.$i" ;;
      1) times "$w/g.r$r.times.$i" 0.400 0.100; echo 30 >"$w/g.r$r.servers.$i" ;;
      *) times "$w/g.r$r.times.$i" 0.300 0.100; echo 180 >"$w/g.r$r.servers.$i" ;;
    esac
    sed -i 1d "$w/g.r$r.times.$i"
  done
done

# The same runs with servers that wait out a delay on every request:
# the wall time is the delay's, not the CPUs', and the limit is not
# judged; the client CPU still is.
sed -e 's/^id\tg$/id\th/' -e 's/^title\t.*/title\tSynthetic, servers 50 ms away/' \
    "$w/g.meta" >"$w/h.meta"
printf 'source\tnbdkit -r --filter=delay pattern 1G delay-read=50ms\n' >>"$w/h.meta"
for f in "$w"/g.r*; do
  cp "$f" "$w/h${f#"$w/g"}"
  cp "$f" "$w/i${f#"$w/g"}"
done
# And behind the same filter with no delay: judged as g.
sed -e 's/^id\tg$/id\ti/' -e 's/^title\t.*/title\tSynthetic, servers 0 ms away/' \
    "$w/g.meta" >"$w/i.meta"
printf 'source\tnbdkit -r --filter=delay pattern 1G delay-read=0ms\n' >>"$w/i.meta"

report ()
{
  python3 "$abs_top_srcdir/bench/report.py" --info "$w/run.info" \
    --output "$tmpdir/report.md" --chart "$tmpdir/chart.svg" \
    --delay-chart "$tmpdir/delay.svg" \
    "$w/t.meta" "$w/u.meta" "$w/v.meta" "$w/s.meta" "$w/g.meta" "$w/h.meta" "$w/i.meta" \
    --data "$tmpdir/runs.json"
}
report || fail "report.py failed"
cat "$tmpdir/report.md"

# verdict ID METRIC CLAIM VERDICT [RESOLVABLE]: the top table's row for
# CLAIM of comparison ID, in METRIC (wall or cpu).
verdict ()
{
  local row metric
  case $2 in wall) metric="wall time" ;; *) metric="client CPU time" ;; esac
  row=$(grep -F "| $1 | $3 | $metric |" "$tmpdir/report.md" | head -1)
  [ -n "$row" ] || fail "no row for: $1 $3 ($metric)"
  case $row in
    *"| $4 |") ;;
    *) fail "expected '$4' for: $3; found: $row" ;;
  esac
  [ -z "${5:-}" ] || case $row in
    *"| $5 | $4 |") ;;
    *) fail "expected resolvable '$5' for: $3; found: $row" ;;
  esac
}
verdict t wall '`A` / `B` below 0.97' "borne out" yes
verdict t wall '`A` / `B` above 1.23' "not borne out" yes
verdict t wall '`A` / `B` about 1' "not borne out: a difference shows" n/a
verdict t wall '`A` / `B` no-more 1' "borne out" n/a
verdict t wall '`C` / `A` about 1' "borne out" n/a
verdict t wall '`C` / `A` below 0.97' "not borne out" yes
verdict t wall '`D` / `A` below 0.97' "undecided: the interval holds the bound" no
verdict t cpu '`B` / `A` below 0.6' "borne out" yes
verdict t cpu '`C` / `A` about 1' "borne out" n/a
verdict t wall '`A` − `B` below 0.5s' "borne out" yes
verdict t wall '`B` below 1s' "not borne out" n/a
verdict t wall '`B` / `A` above 1.5' "borne out" yes
verdict t wall '`D` / `A` above 0.97' "undecided: the interval holds the bound" no
verdict t wall '`B` / `A` no-more 1' "not borne out" n/a
verdict t wall '`D` / `A` no-more 0.97' "borne out"
verdict u wall '`G` / `F` above 1.23' "borne out" yes
verdict u wall '`G` / best of `F*` above 10' "borne out" yes
grep -Fq '| u | `G` / best of `F*` above 10 | wall time | 14.000 [' "$tmpdir/report.md" ||
  fail "wrong ratio to the best of F*"
grep -Fq ', the best `F` |' "$tmpdir/report.md" || fail "the best of F* is not named"
verdict u wall '`G` / `A` of t below 0.2' "borne out" yes
verdict u wall '`G` below 1 against z:A' "not judged: comparison z did not run"
grep -Fq '| v | `Q` / `P` below 0.95 | wall time | 0.900 [0.900, 0.900] |' \
  "$tmpdir/report.md" || fail "Q/P not judged round by round"
verdict v wall '`Q` / `P` below 0.95' "borne out" yes
# The best of a sweep, P over P slow, is paired round by round too.
grep -Fq '| v | `Q` / best of `P*` below 0.95 | wall time | 0.900 [0.900, 0.900], the best `P` |' \
  "$tmpdir/report.md" || fail "Q against the best of P* not judged round by round"
# Against another comparison's command nothing pairs the runs.
grep -Fq '| v | `Q` / `A` of t below 1 | wall time | 1.575 [' \
  "$tmpdir/report.md" || fail "Q against t's A not judged on medians"
grep -Fq 'Runs: 4 rounds, each command once a round, after 1 warm-up run in the first.' \
  "$tmpdir/report.md" || fail "the rounds are not described"
# The delay chart: each label's image MB over its median time, at its
# comparison's delay (A at 0 ms: 1 MB in 1 s; F at 10 ms: in 10 ms).
[ -s "$tmpdir/delay.svg" ] || fail "no delay chart"
grep -Fq '![throughput against delay](delay.svg)' "$tmpdir/report.md" ||
  fail "the report does not show the delay chart"
awk '/^# A$/ { getline; print }' "$tmpdir/delay.dat" | grep -qx '0 1.000' ||
  fail "wrong point for A: $(cat "$tmpdir/delay.dat")"
awk '/^# F$/ { getline; print }' "$tmpdir/delay.dat" | grep -qx '10 100.000' ||
  fail "wrong point for F: $(cat "$tmpdir/delay.dat")"
# The request size chart: a point per size, at its mean time.
[ -s "$tmpdir/chart.svg" ] || fail "no request size chart"
grep -Fq '![time against request size](chart.svg)' "$tmpdir/report.md" ||
  fail "the report does not show the request size chart"
grep -Eq '^262144 1\.000000 0\.000000 "x --request-size=256k"$' "$w/s.dat" &&
  grep -Eq '^1048576 0\.500000 0\.000000 "x --request-size=1M"$' "$w/s.dat" ||
  fail "wrong request size points: $(cat "$w/s.dat")"
# The servers' CPU time and the limit of 2 CPUs: 256k's limit is
# (0.15 + 0.5) / 2 = 0.325 s, its 1 s wall 3.08 of it; per GiB of the
# 1G image as they are.  Comparisons without servers' times (t, u, v)
# have no such table.
grep -Fq '| `x --request-size=256k` | 0.150 | 0.500 | 0.150 | 0.500 | 0.325 | 1.000 | 3.08 |' \
  "$tmpdir/report.md" || fail "wrong CPU and limit row for 256k"
grep -Fq '| `x --request-size=1M` | 0.150 | 0.100 | 0.150 | 0.100 | 0.125 | 0.500 | 4.00 |' \
  "$tmpdir/report.md" || fail "wrong CPU and limit row for 1M"
[ "$(grep -c '^CPU time and the 2-core limit' "$tmpdir/report.md")" = 4 ] ||
  fail "a limit table for a comparison without the servers' times (s, g, h and i have them)"
# The runs beside the report: every run's times, the servers' in
# seconds, None where they were not recorded.
python3 - "$tmpdir/runs.json" <<'PY' || fail "wrong runs in the JSON"
import json, sys
data = json.load(open(sys.argv[1]))
by_id = {c["id"]: c for c in data["comparisons"]}
s = by_id["s"]
assert s["image_bytes"] == 1 << 30, s
assert s["commands"][0]["server"] == [0.5, 0.5], s["commands"][0]
assert s["commands"][1]["wall"] == [0.5, 0.5], s["commands"][1]
assert by_id["t"]["commands"][0]["server"] is None
assert data["cores"] == 2
assert [c["claim"] for c in by_id["v"]["claims"]][0] == "`Q` / `P` below 0.95"
PY
# The medians and intervals: A/B 0.500 in wall time, its resolution
# half the interval relative to the median; B/A 0.500 in CPU (0.1
# against 0.2); G/F 14, resolved as finely, relatively, as A/B.
grep -Fq '| t | `A` / `B` below 0.97 | wall time | 0.500 [0.490, 0.510] | ±2.0% |' \
  "$tmpdir/report.md" || fail "wrong wall ratio or resolution"
grep -Fq '| u | `G` / `F` above 1.23 | wall time | 14.000 [' "$tmpdir/report.md" ||
  fail "wrong ratio of G to F"
grep -E -q '^\| u \| `G` / `F` above 1.23 \| wall time \| [^|]* \| ±[0-3]\.[0-9]% \|' \
  "$tmpdir/report.md" || fail "G/F's resolution is not relative to its median"
grep -Fq '| command | wall mean ± σ (ms) | slowest (ms) |' "$tmpdir/report.md" ||
  fail "no table in milliseconds for u"
grep -Fq '| `G` | 140.0 ± 1.4 | 142.0 | 130.0 ± 0.9 | 60.0 | 6 | 14.00 | 14.44 |' \
  "$tmpdir/report.md" || fail "wrong table row for G"
grep -Fq '| t | `B` / `A` below 0.6 | client CPU time | 0.500 [' "$tmpdir/report.md" ||
  fail "wrong CPU ratio"
grep -Fq '| `B` | 2.000 ± 0.028 | 2.040 | 0.100 ± 0.001 | 0.025 | 6 | 2.00 | 0.50 |' \
  "$tmpdir/report.md" || fail "wrong table row for B"

# The two-core goals, in the top table: nbd-evcopy's within its limit,
# nbd-evsum's not, its own CPU setting the pace; client CPU against
# nbdcopy's, not the lesson's.
verdict g wall '`nbd-evcopy` / its 2-core limit below 1.1' "borne out"
verdict g wall '`nbd-evsum` / its 2-core limit below 1.1' \
  "not borne out; the client's CPU sets the pace"
verdict g cpu '`nbd-evcopy` / `nbdcopy` no-more 1' "borne out"
verdict g cpu '`nbd-evsum` / `blksum` no-more 1' "not borne out"
! grep -F '| g | `nbd-evcopy` / `copy-libev`' "$tmpdir/report.md" ||
  fail "a lesson is judged as a peer"
! grep -F '| g | `nbd-evsum` / `nbdcopy`' "$tmpdir/report.md" ||
  fail "a checksum is held to a copier's CPU"
! grep -F '| g | `nbd-evcopy` / `blksum`' "$tmpdir/report.md" ||
  fail "a copy is held to a checksum's CPU"
verdict h wall '`nbd-evcopy` / its 2-core limit below 1.1' \
  "not judged: the servers wait out a delay on every request"
verdict h cpu '`nbd-evsum` / `blksum` no-more 1' "not borne out"
verdict i wall '`nbd-evcopy` / its 2-core limit below 1.1' "borne out"
grep -Fq '| g | `nbd-evsum` / its 2-core limit below 1.1 | wall time | 5.000 [5.000, 5.000] |' \
  "$tmpdir/report.md" || fail "wrong ratio to the limit for nbd-evsum"
grep -Fq "| \`nbdcopy\` | 0.400 | 1.800 | 0.400 | 1.800 | 1.100 | 2.000 | 1.82 | the servers' CPU |" \
  "$tmpdir/report.md" || fail "wrong limit row for nbdcopy"

# A claim about a command that was not run, and CPU times with a run
# missing: each stops the report with a message naming it.
sed -i 's/^expect\twall\tB\tbelow\t1s$/expect\twall\tE\tbelow\t1s/' "$w/t.meta"
! report 2>"$tmpdir/err" || fail "report.py took a claim about E"
grep -q "expect names 'E'" "$tmpdir/err" || fail "message: $(cat "$tmpdir/err")"
sed -i 's/^expect\twall\tE\tbelow\t1s$/expect\twall\tB\tbelow\t1s/' "$w/t.meta"
sed -i '$d' "$w/t.rev.times.2"
! report 2>"$tmpdir/err" || fail "report.py took a short times file"
grep -q "t.rev.times.2 has 3 runs, expected 1 warm-up + 3" "$tmpdir/err" ||
  fail "message: $(cat "$tmpdir/err")"
echo ok
