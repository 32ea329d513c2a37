#!/usr/bin/env python3
"""Turn the benchmark's hyperfine results into a Markdown report.

bench/run.sh writes, for each comparison ID, ID.meta (tab-separated
lines: the title, the claim it checks, its servers, its commands with
their labels, the baseline, the rounds) and hyperfine's ID.rROUND.json
for each round, then calls:

  report.py --info run.info --output REPORT.md --chart CHART.svg ID.meta...

With each JSON come ID.rROUND.times.INDEX, one line per run of command
INDEX ("elapsed user system", in seconds, from bash's time keyword),
the warm-up runs first (in the first round only).  Beside them,
ID.rROUND.servers.INDEX holds the servers' CPU time of each run, in
clock ticks (run.info's clk_tck a second); reports of harnesses before
it have none, and their tables leave it out.  Reports of the
harness before rounds have ID.json and ID.rev.json, two passes, with
their times in ID[.rev].times.INDEX; they are read too.

The report gives the machine, the method, and per comparison a table of
wall time and client CPU time (user + system), each mean +- standard
deviation over the runs, and their ratios to the baseline's; a table of
the client's and the servers' CPU time (per GiB of the image, where the
comparison declares one) beside the least wall time the machine's
CPUs allow them, (client + servers) / cores, medians over the runs;
then the claim in numbers, judged, then the exact commands.  --data
writes every run's times as JSON beside the report, for
bench/claims.py.  A claim in numbers
(an "expect" line of the meta) is a ratio of two commands' medians, a
difference of them or one median, in wall or CPU time, with its 95%
bootstrap interval; the report says whether the interval bears the
claim out and how small an effect it resolves.  The judgements are
also gathered in one table at the top.  A comparison marked "chart
request-size" is also drawn with gnuplot, time against request size,
as CHART.svg; those marked "chart delay MS BYTES" (the servers' delay
per request and the image size) are drawn together, throughput against
delay, one line per command label (a sweep's rows, "fixed: TOOL ...",
as one line, TOOL's best at each delay), as --delay-chart's SVG.

An expect's OTHER may also be "best of PREFIX": of the commands whose
labels start with PREFIX, the one with the lowest median (a sweep's
best setting); or "ID:LABEL": command LABEL of comparison ID of the
same run (not judged if ID did not run).

Standard library only.
"""

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys

from stats import RESAMPLES, bootstrap


def read_tabbed(path):
    """Lines of KEY<TAB>VALUE...  as (key, [values]) in file order."""
    with open(path, encoding="utf-8") as f:
        return [tuple([k, rest]) for k, *rest in
                (line.rstrip("\n").split("\t") for line in f if line.strip())]


def read_meta(path):
    """One comparison's description, as run.sh declared it."""
    meta = {"notes": [], "commands": [], "expects": [], "path": path}
    for key, values in read_tabbed(path):
        if key == "note":
            meta["notes"].append(values[0])
        elif key == "expect":
            meta["expects"].append(values)
        elif key == "command":
            meta["commands"].append((values[0], values[1]))
        else:
            meta[key] = values[0]
    return meta


def first_line(argv):
    """The first line a tool prints, or why there is none."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True,
                             check=False, timeout=30)
    except OSError as e:
        return "not available (%s)" % e.strerror
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else "no output"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_total():
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return "%.1f GiB" % (int(line.split()[1]) / 1024 / 1024)
    except OSError:
        pass
    return "unknown"


def os_name():
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def git_describe(srcdir):
    try:
        out = subprocess.run(["git", "-C", srcdir, "describe", "--always",
                              "--dirty", "--tags"],
                             capture_output=True, text=True, check=False)
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown (not a git checkout)"


def cell(text):
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def pick_unit(seconds):
    """Milliseconds for sub-second tables, else seconds."""
    return ("ms", 1000.0, "%.1f") if seconds < 1.0 else ("s", 1.0, "%.3f")


SIZE_SUFFIX = {"": 1, "k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def request_size(command):
    """The --request-size of a command, in bytes."""
    m = re.search(r"--request-size=(\d+)([kKMG]?)\b", command)
    if not m:
        sys.exit("report.py: no --request-size in '%s' to chart" % command)
    return int(m.group(1)) * SIZE_SUFFIX[m.group(2)]


def gnuplot(script):
    """Run gnuplot on script; stop the report if it fails."""
    run = subprocess.run(["gnuplot"], input=script, text=True,
                         capture_output=True, check=False)
    if run.returncode != 0:
        sys.exit("report.py: gnuplot failed: %s" % run.stderr.strip())


def draw_chart(meta, rows, svg):
    """gnuplot: mean time with its standard deviation per request size."""
    work = os.path.dirname(meta["path"])
    dat = os.path.join(work, meta["id"] + ".dat")
    points = sorted((request_size(cmd), label, r["mean"], r["stddev"])
                    for label, cmd, r in rows)
    with open(dat, "w", encoding="utf-8") as f:
        f.write("# request-size-bytes mean-s stddev-s label\n")
        for size, label, mean, sd in points:
            f.write("%d %.6f %.6f \"%s\"\n" % (size, mean, sd, label))
    tics = ", ".join('"%s" %d' % (label.split("=")[-1], size)
                     for size, label, _, _ in points)
    # The program swept, named by the commands themselves (the lesson
    # copy-libev in make bench), so that the title says which ran.
    programs = sorted({cmd.split()[0] for _, cmd, _ in rows})
    program = " and ".join(programs)
    script = "\n".join([
        "set terminal svg size 720,440 dynamic font 'sans,12' background rgb 'white'",
        "set output '%s'" % svg.replace("'", "''"),
        "set title '%s'" % (program + ": time against request size ("
                            + meta.get("source", "") + " to "
                            + meta.get("destination", "") + ")").replace("'", "''"),
        "set logscale x 2",
        "set xtics (%s)" % tics,
        "set xlabel 'request size'",
        "set ylabel 'mean time of one copy (s)'",
        "set yrange [0:*]",
        "set grid",
        "set key top left",
        "set offsets graph 0.04, graph 0.04, 0, 0",
        "plot '%s' using 1:2:3 with yerrorlines pt 7 ps 0.6 title 'mean ± stddev'"
        % dat.replace("'", "''"),
        "",
    ])
    gnuplot(script)


def mean_sd(xs):
    """Mean and sample standard deviation (0 for one value)."""
    return (statistics.mean(xs),
            statistics.stdev(xs) if len(xs) > 1 else 0.0)


def read_times(path, warmup, expected):
    """One pass's runs of one command from bash's time: (user, system)
    per timed run, the warm-up runs dropped."""
    with open(path, encoding="utf-8") as f:
        lines = [l.split() for l in f if l.strip()]
    if len(lines) != warmup + expected:
        sys.exit("report.py: %s has %d runs, expected %d warm-up + %d"
                 % (path, len(lines), warmup, expected))
    return [(float(u), float(s)) for _, u, s in lines[warmup:]]


def read_server_times(path, warmup, expected, clk_tck):
    """One pass's runs of one command: the servers' CPU seconds per
    timed run, or None where the harness did not record them."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        lines = [l.strip() for l in f if l.strip()]
    if len(lines) != warmup + expected:
        sys.exit("report.py: %s has %d runs, expected %d warm-up + %d"
                 % (path, len(lines), warmup, expected))
    return [int(t) / clk_tck for t in lines[warmup:]]


def pooled_results(meta, clk_tck):
    """Each command's runs, pooled: the wall times from hyperfine's JSON
    (which subtracts the shell's start-up), the CPU times from bash's
    time.  run.sh runs rounds, every command once a round (ID.rN.json);
    a command's runs are then in round order, and "paired" is true.
    Reports of older harnesses ran two passes, forward and reverse
    (ID.json, ID.rev.json), which pair nothing.  The servers' CPU time
    of each run, in seconds, is "server" (None where it was not
    recorded)."""
    stem = os.path.splitext(meta["path"])[0]
    warmup = int(meta["warmup"])
    index = {label: i for i, (label, _) in enumerate(meta["commands"])}
    if "rounds" in meta:
        passes = [("%s.r%d" % (stem, r), warmup if r == 1 else 0)
                  for r in range(1, int(meta["rounds"]) + 1)]
    else:
        passes = [(stem, warmup), (stem + ".rev", warmup)]
    pooled = {}
    for pass_stem, pass_warmup in passes:
        with open(pass_stem + ".json", encoding="utf-8") as f:
            results = json.load(f)["results"]
        for r in results:
            label = r["command"]
            cpu = read_times("%s.times.%d" % (pass_stem, index[label]),
                             pass_warmup, len(r["times"]))
            server = read_server_times(
                "%s.servers.%d" % (pass_stem, index[label]), pass_warmup,
                len(r["times"]), clk_tck)
            p = pooled.setdefault(label, {"wall": [], "user": [],
                                          "system": [], "server": []})
            p["wall"] += r["times"]
            p["user"] += [u for u, _ in cpu]
            p["system"] += [s for _, s in cpu]
            if server is None or p["server"] is None:
                p["server"] = None
            else:
                p["server"] += server
    for p in pooled.values():
        p["cpu"] = [u + s for u, s in zip(p["user"], p["system"])]
        p["mean"], p["stddev"] = mean_sd(p["wall"])
        p["cpu_mean"], p["cpu_sd"] = mean_sd(p["cpu"])
        p["paired"] = "rounds" in meta
    return pooled


METRIC_NAME = {"wall": "wall time", "cpu": "client CPU time"}


def resolve_other(meta, other, key, results, every):
    """An expect's OTHER as (its name in the claim, its results, the
    command a sweep's best is, or None), or (reason, None, None) if it
    cannot be judged in this run."""
    if other.startswith("best of "):
        prefix = other[len("best of "):]
        swept = [l for l in results if l.startswith(prefix)]
        if not swept:
            sys.exit("report.py: %s: no command starts with '%s'"
                     % (meta["id"], prefix))
        best = min(swept, key=lambda l: statistics.median(results[l][key]))
        return "best of `%s*`" % cell(prefix), results[best], best
    m = re.fullmatch(r"([^\s:]+):(.+)", other)
    if m and other not in results:
        cid, label = m.groups()
        if cid not in every:
            return "not judged: comparison %s did not run" % cid, None, None
        if label not in every[cid]:
            sys.exit("report.py: %s: expect names '%s', not a command of %s"
                     % (meta["id"], label, cid))
        return "`%s` of %s" % (cell(label), cid), every[cid][label], None
    if other not in results:
        sys.exit("report.py: %s: expect names '%s', not a command"
                 % (meta["id"], other))
    return "`%s`" % cell(other), results[other], None


def judge(meta, expect, results, every):
    """One claim in numbers: its statistic, 95% interval, resolution
    and verdict, as a dict for the tables.  every holds the results of
    all the run's comparisons, by ID."""
    metric, label, op, value = expect[:4]
    other = expect[4] if len(expect) > 4 and expect[4] else None
    key = "wall" if metric == "wall" else "cpu"
    if label not in results:
        sys.exit("report.py: %s: expect names '%s', not a command"
                 % (meta["id"], label))
    other_name, other_results, best = (
        resolve_other(meta, other, key, results, every) if other
        else (None, None, None))
    if other and other_results is None:
        return {"id": meta["id"],
                "claim": "`%s` %s %s against %s" % (cell(label), op, value,
                                                     other),
                "metric": METRIC_NAME[metric], "measured": "n/a",
                "resolution": "n/a", "claimed": "n/a", "resolves": "n/a",
                "verdict": other_name}
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?s?", value) or (
            not other and not value.endswith("s")):
        sys.exit("report.py: %s: expect value '%s' is not a ratio or, "
                 "in seconds, a time (1s) or difference (0.5s)"
                 % (meta["id"], value))
    seconds = value.endswith("s")
    bound = float(value[:-1] if seconds else value)
    median = statistics.median
    samples = [results[label][key]]
    # Two commands of one comparison ran side by side, round by round:
    # the claim is judged on the median of the rounds' own ratios (or
    # differences), which drift on the machine between rounds does not
    # move, and the rounds are resampled whole.  Otherwise (another
    # comparison's command, or an older report's passes) each command's
    # runs are resampled independently.
    paired = (other and other_results is not None and
              other_results.get("paired") and
              results[label].get("paired") and
              any(other_results is r for r in results.values()))
    if other and paired and min(other_results[key]) <= 0:
        paired = False          # a round of no time has no ratio
    if other and paired:
        a, b = results[label][key], other_results[key]
        kind = "difference" if seconds else "ratio"
        samples = [[x - y if seconds else x / y for x, y in zip(a, b)]]
        stat = median
    elif other:
        samples.append(other_results[key])
        kind = "difference" if seconds else "ratio"
        stat = ((lambda a, b: median(a) - median(b)) if seconds else
                (lambda a, b: median(a) / median(b)))
    else:
        kind = "time"
        stat = median
    # A new seeded generator per claim, so that a claim's interval does
    # not depend on the claims before it.
    point = stat(*samples)
    lo, hi = bootstrap(stat, samples, random.Random(1))
    half = (hi - lo) / 2
    if op == "below":
        verdict = ("borne out" if hi < bound else
                   "not borne out" if lo >= bound else
                   "undecided: the interval holds the bound")
    elif op == "above":
        verdict = ("borne out" if lo > bound else
                   "not borne out" if hi <= bound else
                   "undecided: the interval holds the bound")
    elif op == "about":
        verdict = ("borne out" if lo <= bound <= hi else
                   "not borne out: a difference shows")
    elif op == "no-more":
        verdict = "borne out" if lo <= bound else "not borne out"
    else:
        sys.exit("report.py: %s: unknown expect operator '%s'"
                 % (meta["id"], op))
    if kind == "ratio":
        what = "`%s` / %s" % (cell(label), other_name)
        shown = "%.3f [%.3f, %.3f]" % (point, lo, hi)
        if best:
            shown += ", the best `%s`" % cell(best)
        # Relative to the median: run-to-run noise grows with the times,
        # so a ratio of 14 is not resolved 14 times less finely.
        rel = half / point if point > 0 else float("inf")
        resolution = "±%.1f%%" % (rel * 100)
        effect = abs(bound - 1)
        claimed = ("%.0f%%" % (effect * 100) if effect > 0 else "any")
        resolves = (effect > rel) if effect > 0 else None
    else:
        what = ("`%s` − %s" % (cell(label), other_name)
                if kind == "difference" else "`%s`" % cell(label))
        shown = "%.3f s [%.3f, %.3f]" % (point, lo, hi)
        resolution = "±%.3f s" % half
        claimed = "%g s" % bound
        # A difference resolves its bound when the noise is smaller than
        # the bound; a single median's bound is a limit, not an effect.
        resolves = (bound > half if kind == "difference" and bound > 0
                    else None)
    if op == "about":
        claimed = "none"
        resolves = None
    elif op == "no-more" and kind == "ratio" and bound == 1:
        claimed = "no worse"
        resolves = None
    return {
        "id": meta["id"],
        "claim": "%s %s %s" % (what, op, value),
        "metric": METRIC_NAME[metric],
        "measured": shown,
        "resolution": resolution,
        "claimed": claimed,
        "resolves": ("n/a" if resolves is None else
                     "yes" if resolves else "no"),
        "verdict": verdict,
    }


def judgement_table(rows, out, with_id):
    out.append("| %sclaim in numbers | metric | median [95%% interval] "
               "| resolution | claimed effect | resolvable | verdict |"
               % ("comparison | " if with_id else ""))
    out.append("|%s---|---|---:|---:|---:|---|---|"
               % ("---|" if with_id else ""))
    for j in rows:
        out.append("| %s%s | %s | %s | %s | %s | %s | %s |" % (
            ("%s | " % j["id"]) if with_id else "", j["claim"], j["metric"],
            j["measured"], j["resolution"], j["claimed"], j["resolves"],
            j["verdict"]))
    out.append("")


def image_bytes(meta):
    """The bytes of the image a comparison's commands work on, from its
    "image" line (1G, 64M), or None where it declares none."""
    m = re.fullmatch(r"(\d+)([kKMG]?)", meta.get("image", ""))
    return int(m.group(1)) * SIZE_SUFFIX[m.group(2)] if m else None


def limits(r, cores):
    """One command's runs against the limit that the CPUs allow: each
    run's (client CPU + servers' CPU) / cores, and its wall time over
    that limit."""
    limit = [(c + s) / cores for c, s in zip(r["cpu"], r["server"])]
    return limit, [w / l if l > 0 else float("inf")
                   for w, l in zip(r["wall"], limit)]


# The two-core goals of the tools (nbd-evcopy, nbd-evsum) where client
# and servers share the CPUs: wall time within LIMIT_GOAL of the limit
# the CPUs allow, and client CPU at most every peer's in the comparison
# (the same image, so per GiB as well).  A tool's peers are the other
# projects' programs of its own task (PEERS_RE): a checksum is not held
# to a copy's CPU, nor to nbdcopy's reads thrown away.  The lessons and
# the other projects' programs are measured, not held to them.
LIMIT_GOAL = 1.1
OURS_RE = re.compile(r"nbd-ev(copy|sum)\b")
PEERS_RE = {
    "copy": re.compile(r"(nbdcopy\b(?! to (null:|sha256sum))|qemu-img convert\b"
                       r"|cp\b)"),
    "sum": re.compile(r"(blksum\b|nbdcopy to sha256sum\b)"),
}
GOAL = "the 2-core goal"


def pace(r):
    """Whose CPU sets the pace of a command's runs: the side that used
    more, in medians."""
    return ("the client's" if statistics.median(r["cpu"]) >=
            statistics.median(r["server"]) else "the servers'")


def two_core_goals(meta, rows, cores, every):
    """The goals judged for each of the tools' commands of a comparison
    with the servers' CPU: rows for the claims tables."""
    goals = []
    # Servers behind nbdkit's delay filter with a delay sleep on every
    # request: the wall time is the delay's, and such a comparison
    # judges the tool against its fixed settings instead.
    source = meta.get("source", "")
    waits = "--filter=delay" in source and any(
        int(ms) > 0 for ms in re.findall(r"\bdelay-\w+=(\d+)ms", source))
    for label, _, r in rows:
        m = OURS_RE.match(label)
        if not m:
            continue
        peers = [p for p, _, _ in rows if PEERS_RE[m.group(1)].match(p)]
        _, ratio = limits(r, cores)
        point = statistics.median(ratio)
        lo, hi = bootstrap(statistics.median, [ratio], random.Random(1))
        verdict = ("not judged: the servers wait out a delay on every "
                   "request" if waits else
                   "borne out" if hi < LIMIT_GOAL else
                   "not borne out" if lo >= LIMIT_GOAL else
                   "undecided: the interval holds the bound")
        if verdict.startswith(("not borne", "undecided")):
            verdict += "; %s CPU sets the pace" % pace(r)
        goals.append({
            "id": meta["id"],
            "claim": "`%s` / its %d-core limit below %g"
                     % (cell(label), cores, LIMIT_GOAL),
            "metric": METRIC_NAME["wall"],
            "measured": "%.3f [%.3f, %.3f]" % (point, lo, hi),
            "resolution": "±%.1f%%" % ((hi - lo) / 2 / point * 100
                                       if point > 0 else float("inf")),
            "claimed": GOAL, "resolves": "n/a", "verdict": verdict})
        for peer in peers:
            j = judge(meta, ("cpu", label, "no-more", "1", peer),
                      every[meta["id"]], every)
            j["claimed"] = GOAL
            goals.append(j)
    return goals


def limit_table(meta, rows, cores, out):
    """The CPU time of the client and of the servers, and the wall time
    beside the least that they allow on this machine's cores."""
    size = image_bytes(meta)
    median = statistics.median
    out.append("CPU time and the %d-core limit, medians over the runs: "
               "the limit is the least wall time that the client's and "
               "the servers' CPU time allow on %d cores, (client CPU + "
               "servers' CPU) / %d; a wall time near it means the CPUs "
               "set the pace%s."
               % (cores, cores, cores,
                  "; per GiB is per GiB of the %s image" % meta["image"]
                  if size else ""))
    out.append("")
    out.append("| command | client CPU (s) | servers' CPU (s) |%s limit (s) "
               "| wall (s) | wall / limit | pace set by |"
               % (" client CPU per GiB (s) | servers' CPU per GiB (s) |"
                  if size else ""))
    out.append("|---|---:|---:|%s---:|---:|---:|---|"
               % ("---:|---:|" if size else ""))
    for label, _, r in rows:
        limit, ratio = limits(r, cores)
        per_gib = ""
        if size:
            gib = size / (1 << 30)
            per_gib = " %.3f | %.3f |" % (median(r["cpu"]) / gib,
                                          median(r["server"]) / gib)
        out.append("| `%s` | %.3f | %.3f |%s %.3f | %.3f | %.2f | %s CPU |" % (
            cell(label), median(r["cpu"]), median(r["server"]), per_gib,
            median(limit), median(r["wall"]), median(ratio), pace(r)))
    out.append("")


def comparison(meta, chart_svg, out, judged, every, delays, cores):
    """One comparison's section: claim, servers, table, the claim in
    numbers judged (also appended to judged), commands.  Its points for
    the delay chart, if it has any, go to delays."""
    results = every[meta["id"]]
    rows = []
    for label, cmd in meta["commands"]:
        if label not in results:
            sys.exit("report.py: %s has no result for '%s'"
                     % (meta["path"], label))
        rows.append((label, cmd, results[label]))
    base_label = meta["baseline"]
    if base_label not in results:
        sys.exit("report.py: baseline '%s' of %s was not run"
                 % (base_label, meta["id"]))
    base = results[base_label]["mean"]
    base_cpu = results[base_label]["cpu_mean"]

    out.append("## %s. %s" % (meta["id"], meta["title"]))
    out.append("")
    claim = meta["claim"]
    out.append("Claim checked: %s%s" % (claim, "" if claim[-1] in ".?!" else "."))
    out.append("")
    servers = []
    if "source" in meta:
        servers.append("source `%s`" % meta["source"])
    if "destination" in meta:
        servers.append("destination `%s`" % meta["destination"])
    when = ("started afresh before every run (not timed)"
            if meta["fresh"] == "yes" else
            "started once for all runs (every run reads the same, and"
            " writes the same data, if any)")
    if servers:
        out.append("Servers: %s, %s." % (", ".join(servers), when))
    if "rounds" in meta:
        out.append("Runs: %s rounds, each command once a round, after %s "
                   "warm-up run%s in the first."
                   % (meta["rounds"], meta["warmup"],
                      "" if meta["warmup"] == "1" else "s"))
    else:
        out.append("Runs: two passes of `hyperfine --warmup %s --runs %s`."
                   % (meta["warmup"], meta["runs"]))
    if "setup" in meta:
        out.append("Before starting them: `%s`." % meta["setup"])
    if "prime" in meta:
        out.append("Once they are up (not timed): `%s`." % meta["prime"])
    for note in meta["notes"]:
        out.append("")
        out.append(note)
    out.append("")

    unit, scale, fmt = pick_unit(base)
    # The slowest run beside the mean: on this VM a writer of local
    # files pays, in some runs, for pages the host took back (cp too),
    # so such comparisons are judged on medians and show the slowest.
    out.append("| command | wall mean ± σ (%s) | slowest (%s) | client CPU "
               "mean ± σ (%s) | of which system (%s) | runs | wall ratio "
               "| CPU ratio |" % (unit, unit, unit, unit))
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, _, r in rows:
        ratio = "%.2f" % (r["mean"] / base) if base > 0 else "n/a"
        cpu_ratio = ("%.2f" % (r["cpu_mean"] / base_cpu) if base_cpu > 0
                     else "n/a")
        if label == base_label:
            ratio += " (baseline)"
            cpu_ratio += " (baseline)"
        out.append("| `%s` | %s ± %s | %s | %s ± %s | %s | %d | %s | %s |" % (
            cell(label), fmt % (r["mean"] * scale), fmt % (r["stddev"] * scale),
            fmt % (max(r["wall"]) * scale),
            fmt % (r["cpu_mean"] * scale), fmt % (r["cpu_sd"] * scale),
            fmt % (sum(r["system"]) / len(r["system"]) * scale),
            len(r["wall"]), ratio, cpu_ratio))
    out.append("")

    if all(r["server"] for _, _, r in rows):
        limit_table(meta, rows, cores, out)
        goals = two_core_goals(meta, rows, cores, every)
        if goals:
            judged += goals
            out.append("The two-core goals (wall time within %g of the "
                       "limit; client CPU, and so per GiB, at most each "
                       "other program's):" % LIMIT_GOAL)
            out.append("")
            judgement_table(goals, out, False)

    if meta["expects"]:
        mine = [judge(meta, e, results, every) for e in meta["expects"]]
        judged += mine
        out.append("The claim in numbers:")
        out.append("")
        judgement_table(mine, out, False)

    chart = meta.get("chart", "").split()
    if chart[:1] == ["delay"]:
        ms, size = float(chart[1]), int(chart[2])
        for label, _, r in rows:
            delays.append((label, ms, size / statistics.median(r["wall"]) / 1e6))
    if meta.get("chart") == "request-size":
        draw_chart(meta, rows, chart_svg)
        out.append("![time against request size](%s)"
                   % os.path.basename(chart_svg))
        out.append("")

    out.append("Commands (each run by hyperfine under `bash -c`, inside "
               "the `time` wrapper of the method):")
    out.append("")
    out.append("```")
    for label, cmd in meta["commands"]:
        out.append("# %s" % label)
        out.append(cmd)
    out.append("```")
    out.append("")


def draw_delay_chart(delays, svg, out):
    """gnuplot: throughput (image bytes over the median time) against
    the servers' delay, one line per command label, a sweep's as one;
    and the section that shows it."""
    # A sweep's rows ("fixed: TOOL ...") are one line, TOOL's best fixed
    # setting at each delay: the chart has one line per program.
    best = {}
    for label, ms, mbs in delays:
        if label.startswith("fixed: "):
            key = ("best fixed " + label.split()[1], ms)
            best[key] = max(best.get(key, 0), mbs)
    delays = [p for p in delays if not p[0].startswith("fixed: ")]
    delays += [(label, ms, mbs) for (label, ms), mbs in best.items()]
    labels = []
    for label, _, _ in delays:
        if label not in labels:
            labels.append(label)
    dat = os.path.splitext(svg)[0] + ".dat"
    with open(dat, "w", encoding="utf-8") as f:
        for label in labels:
            f.write("# %s\n" % label)
            for _, ms, mbs in sorted(p for p in delays if p[0] == label):
                f.write("%g %.3f\n" % (ms, mbs))
            f.write("\n\n")
    # gnuplot's own colours repeat after eight: twelve of them, and a
    # point shape per line, keep the lines apart.
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
               "#000000", "#aec7e8"]
    plots = ", ".join("'%s' index %d using 1:2 with linespoints lc rgb '%s' "
                      "pt %d ps 0.7 title '%s'"
                      % (dat.replace("'", "''"), i, colours[i % len(colours)],
                         i % 13 + 1, label.replace("'", "''"))
                      for i, label in enumerate(labels))
    script = "\n".join([
        "set terminal svg size 800,520 dynamic font 'sans,12' background rgb 'white'",
        "set output '%s'" % svg.replace("'", "''"),
        "set title 'Throughput against the delay the servers add to each request'",
        "set xlabel 'delay per request (ms, nbdkit delay filter)'",
        "set ylabel 'image MB / median time (MB/s)'",
        "set yrange [0:*]",
        "set grid",
        "set key outside right",
        "plot " + plots,
        "",
    ])
    gnuplot(script)
    out.append("## Throughput against delay")
    out.append("")
    out.append("Every comparison marked with a delay, drawn together: the "
               "image's size in MB over each command's median wall time, "
               "against the delay the servers add to each request; a "
               "sweep of fixed settings is drawn as its best at each "
               "delay.  The points are in %s." % os.path.basename(dat))
    out.append("")
    out.append("![throughput against delay](%s)" % os.path.basename(svg))
    out.append("")


def header(info, out):
    """Machine, versions and method."""
    quick = info.get("quick", "0") not in ("", "0")
    out.append("# nbd-libev-examples benchmarks: %s on %s"
               % (info.get("started", "?"), info.get("host", "?")))
    out.append("")
    if quick:
        out.append("**QUICK=1 run**: small images, no warm-up, two runs a "
                   "command.  It checks that the harness works; its numbers "
                   "support no conclusion.")
        out.append("")
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    un = platform.uname()
    try:
        nbdcopy = subprocess.run(["nbdcopy", "--version"],
                                 capture_output=True, text=True,
                                 check=False).stdout.split("\n")
    except OSError:
        nbdcopy = [""]
    libnbd = next((l for l in nbdcopy if l.startswith("libnbd")), "unknown")
    out.append("## Machine")
    out.append("")
    rows = [
        ("CPU", "%s, %d CPUs (nproc)" % (cpu_model(), cpus)),
        ("memory", mem_total()),
        ("OS", "%s, kernel %s %s" % (os_name(), un.release, un.machine)),
        ("load average (1, 5, 15 min)", "%s before, %s after"
         % (info.get("load_before", "?"), info.get("load_after", "?"))),
        ("run", "%s to %s" % (info.get("started", "?"),
                              info.get("finished", "?"))),
        # The lessons are built, not installed, and the tools may be
        # installed elsewhere: the report says which of each ran.
        ("git", info.get("git") or git_describe(info.get("srcdir", "."))),
        ("lesson", shutil.which("copy-libev") or "?"),
        ("tools", "%s, %s" % (shutil.which("nbd-evcopy") or "?",
                              shutil.which("nbd-evsum") or "?")),
    ]
    if info.get("blksum"):
        rows.append(("blksum", info["blksum"]))
    rows += [
        ("nbdkit", first_line(["nbdkit", "--version"])),
        ("qemu", first_line(["qemu-img", "--version"])),
        ("libnbd", libnbd),
        ("nbdcopy", nbdcopy[0] if nbdcopy[0] else "unknown"),
        ("hyperfine", first_line(["hyperfine", "--version"])),
        ("gnuplot", first_line(["gnuplot", "--version"])),
    ]
    out.append("| | |")
    out.append("|---|---|")
    for k, v in rows:
        out.append("| %s | %s |" % (k, cell(v)))
    out.append("")
    machine = dict(rows)
    out.append("## Method")
    out.append("")
    if "rounds" in info:
        out.append(
            "Each comparison below is %s rounds, unless it says "
            "otherwise, after %s warm-up run(s) of each command in the "
            "first: each round is a hyperfine run of every command once "
            "(`--runs 1`), in an order that rotates from round to round.  "
            "hyperfine on its own runs all the runs of one command before "
            "the next, so anything that drifts during a comparison "
            "(background load, memory the previous servers freed) would "
            "favour one end of the list; in rounds, drift moves all the "
            "commands of a round alike (over as many rounds as there are "
            "commands, each takes every place once), and a claim that "
            "compares two commands of one comparison is judged on the "
            "ratios within each round.  The tables pool all rounds: mean "
            "and standard deviation over all runs."
            % (info["rounds"], info.get("warmup", "?")))
    else:
        out.append(
            "Each comparison below is two hyperfine passes (`hyperfine %s` "
            "each, unless the comparison says otherwise) over the commands "
            "it compares, the second pass in reverse order, so that every "
            "command gets the same share of early and late runs.  The "
            "tables pool both passes: mean and standard deviation over all "
            "runs." % info.get("hyperfine_opts", "?"))
    out.append("")
    out.append(
        "Two layers of this suite run: the lesson `copy-libev` "
        "(examples/: NBD URIs only, its settings fixed but for "
        "`--requests`, `--request-size` in bytes and `--init`), for the "
        "claims about the techniques it shows, and the tools "
        "`nbd-evcopy` and `nbd-evsum` (tools/: files, captive servers, "
        "several connections, timeouts), for comparisons with nbdcopy, "
        "qemu-img and blksum on real use.  `nbd-evcopy --no-extents "
        "--no-sparse` copies as the lesson does, with the options the "
        "lesson lacks.  Each row's label names the program that ran.")
    out.append("")
    out.append(
        "The servers are nbdkit and qemu-nbd on Unix sockets in a fresh "
        "temporary directory `$BENCH_STATE`; the commands reach them as "
        "`$SRC` (`nbd+unix:///?socket=$BENCH_STATE/src.sock`) and `$DST` "
        "(`.../dst.sock`).  A comparison either restarts its servers in "
        "hyperfine's `--prepare` before every run, or starts them once "
        "for all its runs; each says which, and why its destination is "
        "the one it is.  Starting servers is not timed: the timed command "
        "is the client alone.")
    out.append("")
    out.append(
        "Wall time is hyperfine's.  Client CPU time is user + system time "
        "of the client's process tree, taken for every run by bash's "
        "`time` keyword around the command (`{ time { COMMAND } 2>&3 3>&-; } "
        "3>&2 2>>FILE`, milliseconds); the servers are not the client's "
        "children, so their CPU time is not in it, but it is in the wall "
        "time: on 2 cores the servers and the client share the machine.  "
        "The exception is a captive server, which a program starts "
        "itself (the FILE and `[ ... ]` rows of comparison 10): it is "
        "the program's child, and its CPU time is in the client's.")
    out.append("")
    out.append(
        "The ratios are a command's mean over the baseline's: below 1.00 "
        "is less.  A claim with a number is judged on medians, in the "
        "metric its effect is expected in (client CPU time for work the "
        "client saves, wall time for the rest): the ratio of two "
        "commands' medians (or their difference, or one median) with a "
        "95%% percentile bootstrap interval (%d resamples, seed 1: of "
        "the rounds, for two commands that ran in the same rounds, whose "
        "ratio is then the median of the rounds' own ratios; else of each "
        "command's runs, independently).  For a claim *below* or "
        "*above* a bound, *borne out* means the whole interval meets the "
        "claim, *not borne out* that none of it does, *undecided* that "
        "the interval straddles the bound.  A claim of no difference "
        "(*about* 1) is borne out when the interval holds 1: no "
        "difference larger than the resolution shows.  A claim of *no "
        "more* than a bound (\"no slower than\") is borne out when the "
        "interval reaches down to the bound: the run does not show it "
        "worse.  The resolution is half the interval's width (relative "
        "to the median, for a ratio): a true effect smaller than that "
        "cannot be told from noise by this run, so a claimed effect "
        "smaller than the resolution is marked not resolvable, whatever "
        "the verdict." % RESAMPLES)
    out.append("")
    return machine


def write_data(path, info, machine, metas, every, judged, cores):
    """Every run's times, beside the report, for bench/claims.py: the
    figures the docs quote are computed from these, not copied."""
    data = {"info": info, "machine": machine, "cores": cores,
            "comparisons": []}
    for meta in metas:
        results = every[meta["id"]]
        data["comparisons"].append({
            "id": meta["id"],
            "title": meta["title"],
            "image": meta.get("image"),
            "image_bytes": image_bytes(meta),
            "commands": [{
                "label": label,
                "command": cmd,
                "paired": results[label]["paired"],
                "wall": results[label]["wall"],
                "cpu": results[label]["cpu"],
                "server": results[label]["server"],
            } for label, cmd in meta["commands"]],
            "claims": [j for j in judged if j["id"] == meta["id"]],
        })
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--info", required=True, help="run.sh's run.info")
    ap.add_argument("--output", required=True, help="the Markdown report")
    ap.add_argument("--chart", required=True,
                    help="SVG for the request size comparison")
    ap.add_argument("--delay-chart", required=True,
                    help="SVG for the comparisons with a delay")
    ap.add_argument("--data",
                    help="JSON of every run's times, for bench/claims.py")
    ap.add_argument("meta", nargs="+", help="comparisons, in report order")
    args = ap.parse_args()

    info = {k: v[0] if v else "" for k, v in read_tabbed(args.info)}
    out = []
    machine = header(info, out)
    sections, judged, delays = [], [], []
    metas = [read_meta(path) for path in args.meta]
    clk_tck = int(info.get("clk_tck") or 100)
    cores = int(info.get("cpus") or os.cpu_count())
    every = {meta["id"]: pooled_results(meta, clk_tck) for meta in metas}
    for meta in metas:
        comparison(meta, args.chart, sections, judged, every, delays, cores)
    if delays:
        draw_delay_chart(delays, args.delay_chart, sections)
    if judged:
        out.append("## The claims in numbers")
        out.append("")
        out.append("Every claim with a number, judged in the metric its "
                   "effect is expected in; each comparison's section "
                   "below has its table and commands.")
        out.append("")
        judgement_table(judged, out, True)
    out += sections
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")
    if args.data:
        write_data(args.data, info, machine, metas, every, judged, cores)


if __name__ == "__main__":
    main()
