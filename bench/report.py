#!/usr/bin/env python3
"""Turn the benchmark's hyperfine results into a Markdown report.

bench/run.sh writes, for each comparison ID, ID.meta (tab-separated
lines: the title, the claim it checks, its servers, its commands with
their labels, the baseline) and hyperfine's ID.json, then calls:

  report.py --info run.info --output REPORT.md --chart CHART.svg ID.meta...

The report gives the machine, the method, and per comparison a table of
mean +- standard deviation, user and system CPU time and the ratio of
each mean to the baseline's, then the exact commands.  It reports
numbers only: whether they bear a claim out is left to the reader.
A comparison marked "chart request-size" is also drawn with gnuplot,
time against request size, as CHART.svg.

Standard library only.
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys


def read_tabbed(path):
    """Lines of KEY<TAB>VALUE...  as (key, [values]) in file order."""
    with open(path, encoding="utf-8") as f:
        return [tuple([k, rest]) for k, *rest in
                (line.rstrip("\n").split("\t") for line in f if line.strip())]


def read_meta(path):
    """One comparison's description, as run.sh declared it."""
    meta = {"notes": [], "commands": [], "path": path}
    for key, values in read_tabbed(path):
        if key == "note":
            meta["notes"].append(values[0])
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


def draw_chart(meta, rows, svg):
    """gnuplot: mean time with its standard deviation per request size."""
    work = os.path.dirname(meta["path"])
    dat = os.path.join(work, meta["id"] + ".dat")
    points = sorted((request_size(cmd), label, r["mean"], r["stddev"] or 0.0)
                    for label, cmd, r in rows)
    with open(dat, "w", encoding="utf-8") as f:
        f.write("# request-size-bytes mean-s stddev-s label\n")
        for size, label, mean, sd in points:
            f.write("%d %.6f %.6f \"%s\"\n" % (size, mean, sd, label))
    tics = ", ".join('"%s" %d' % (label.split("=")[-1], size)
                     for size, label, _, _ in points)
    script = "\n".join([
        "set terminal svg size 720,440 dynamic font 'sans,12' background rgb 'white'",
        "set output '%s'" % svg.replace("'", "''"),
        "set title '%s'" % ("copy-libev: time against request size ("
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
    out = subprocess.run(["gnuplot"], input=script, text=True,
                         capture_output=True, check=False)
    if out.returncode != 0:
        sys.exit("report.py: gnuplot failed: %s" % out.stderr.strip())


def pooled_results(paths):
    """Each command's runs from all passes that exist (run.sh makes a
    forward and a reverse pass), pooled: mean and sample stddev over all
    the times, user and system time weighted by each pass's runs."""
    runs = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for r in json.load(f)["results"]:
                runs.setdefault(r["command"], []).append(r)
    pooled = {}
    for label, parts in runs.items():
        times = [t for p in parts for t in p["times"]]
        n = len(times)
        mean = sum(times) / n
        var = sum((t - mean) ** 2 for t in times) / (n - 1) if n > 1 else 0.0
        pooled[label] = {
            "mean": mean,
            "stddev": var ** 0.5,
            "user": sum(p["user"] * len(p["times"]) for p in parts) / n,
            "system": sum(p["system"] * len(p["times"]) for p in parts) / n,
            "times": times,
        }
    return pooled


def comparison(meta, chart_svg, out):
    """One comparison's section: claim, servers, table, commands."""
    json_path = os.path.splitext(meta["path"])[0] + ".json"
    results = pooled_results([json_path, json_path[:-5] + ".rev.json"])
    rows = []
    for label, cmd in meta["commands"]:
        if label not in results:
            sys.exit("report.py: %s has no result for '%s'" % (json_path, label))
        rows.append((label, cmd, results[label]))
    base_label = meta["baseline"]
    if base_label not in results:
        sys.exit("report.py: baseline '%s' of %s was not run"
                 % (base_label, meta["id"]))
    base = results[base_label]["mean"]

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
    out.append("Servers: %s, %s." % (", ".join(servers), when))
    if "setup" in meta:
        out.append("Before starting them: `%s`." % meta["setup"])
    if "prime" in meta:
        out.append("Once they are up (not timed): `%s`." % meta["prime"])
    for note in meta["notes"]:
        out.append("")
        out.append(note)
    out.append("")

    unit, scale, fmt = pick_unit(base)
    out.append("| command | mean ± σ (%s) | user (%s) | system (%s) | runs "
               "| ratio to baseline |" % (unit, unit, unit))
    out.append("|---|---:|---:|---:|---:|---:|")
    for label, _, r in rows:
        ratio = "%.2f" % (r["mean"] / base) if base > 0 else "n/a"
        if label == base_label:
            ratio += " (baseline)"
        out.append("| `%s` | %s ± %s | %s | %s | %d | %s |" % (
            cell(label), fmt % (r["mean"] * scale),
            fmt % ((r["stddev"] or 0.0) * scale),
            fmt % (r["user"] * scale), fmt % (r["system"] * scale),
            len(r["times"]), ratio))
    out.append("")

    if meta.get("chart") == "request-size":
        draw_chart(meta, rows, chart_svg)
        out.append("![time against request size](%s)"
                   % os.path.basename(chart_svg))
        out.append("")

    out.append("Commands (each run by hyperfine under `sh -c`):")
    out.append("")
    out.append("```")
    for label, cmd in meta["commands"]:
        out.append("# %s" % label)
        out.append(cmd)
    out.append("```")
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
    nbdcopy = subprocess.run(["nbdcopy", "--version"], capture_output=True,
                             text=True, check=False).stdout.split("\n")
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
        ("examples", "%s (git %s)" % (shutil.which("copy-libev") or "?",
                                      git_describe(info.get("srcdir", ".")))),
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
    out.append("## Method")
    out.append("")
    out.append(
        "Each comparison below is two hyperfine passes (`hyperfine %s` "
        "each) over the commands it compares, the second pass in reverse "
        "order.  hyperfine runs all the runs of one command before the "
        "next, so anything that drifts during a comparison (background "
        "load, memory the previous servers freed) favours one end of the "
        "list; the reversed pass gives every command the same share of "
        "early and late runs.  The table pools both passes: mean and "
        "standard deviation over all runs."
        % info.get("hyperfine_opts", "?"))
    out.append("")
    out.append(
        "The servers are nbdkit and qemu-nbd on Unix sockets in a fresh "
        "temporary directory `$BENCH_STATE`; the commands reach them as "
        "`$SRC` (`nbd+unix:///?socket=$BENCH_STATE/src.sock`) and `$DST` "
        "(`.../dst.sock`).  Where a run writes, hyperfine's `--prepare` "
        "restarts the servers before every run, so that the destination is "
        "empty each time; starting them is not timed.  The timed command is "
        "the client alone.  User and system time are the client's "
        "(hyperfine counts its child processes); the servers' CPU time is "
        "not in them.")
    out.append("")
    out.append(
        "The ratio is the command's mean time over the baseline's: below "
        "1.00 is faster than the baseline, above is slower.  The report "
        "gives numbers only; whether they bear out each claim is for the "
        "reader to judge.")
    out.append("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--info", required=True, help="run.sh's run.info")
    ap.add_argument("--output", required=True, help="the Markdown report")
    ap.add_argument("--chart", required=True,
                    help="SVG for the request size comparison")
    ap.add_argument("meta", nargs="+", help="comparisons, in report order")
    args = ap.parse_args()

    info = {k: v[0] if v else "" for k, v in read_tabbed(args.info)}
    out = []
    header(info, out)
    for path in args.meta:
        comparison(read_meta(path), args.chart, out)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
