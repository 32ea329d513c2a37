#!/usr/bin/env python3
# compare.py: the report of bench/compare.sh, and its verdicts.
#
# Input: one line per timed run, "ID LABEL SIDE ROUND WALL USER SYS
# INSTRUCTIONS" (tab-separated; INSTRUCTIONS is "-" where perf cannot
# count), and "comparison ID TITLE" lines.  Runs of the same command and
# round form a pair, one OLD and one NEW, run back to back on the same
# servers.
#
# The method, for each command and each metric (wall time, client CPU
# time, instructions):
#
#  - The effect is the median over the rounds of the per-round ratio
#    NEW / OLD.  Pairing by round cancels what drifts between rounds
#    (the host's load, the servers' memory), which interleaving puts in
#    both sides of a pair alike; the median ignores the odd round that
#    met a page-fault storm.
#
#  - Its confidence interval comes from a bootstrap: the rounds are
#    resampled with replacement RESAMPLES times and the median ratio
#    taken each time; the interval is the central CONFIDENCE of those
#    medians (percentile method).  A rank test (Wilcoxon's signed-rank
#    test on the pairs) would say whether there is a shift, but not how
#    large it is; the bootstrap gives the ratio itself with its interval,
#    which is what a reader of the report wants.  The resampling is
#    seeded, so that the same runs always give the same report.
#
#  - The verdict: "regression" when the whole interval lies above
#    1 + THRESHOLD, "improvement" when it lies below 1 - THRESHOLD,
#    otherwise "no significant change".  A command regressed if any of
#    its metrics did.  docs/benchmarks.md shows how the number of rounds,
#    the confidence and the threshold were chosen: two identical builds
#    must give no significant change in at least 19 tries of 20, and a
#    change that adds 30% to copy-libev's CPU time must be called a
#    regression in at least 19 of 20.
#
# Exit status: 0 when no command regressed, 1 when one did, 2 when it
# cannot make the report (never 1, which compare.sh would take for a
# regression).

import argparse
import random
import statistics
import sys

from stats import CONFIDENCE, RESAMPLES, bootstrap

THRESHOLD = 0.05


def fail(msg):
    """Exit status 2: 1 is taken, it means a regression."""
    sys.stderr.write("compare.py: %s\n" % msg)
    sys.exit(2)


def value(v, unit):
    """A median for the table: seconds, or a bare count."""
    return "%.3f %s" % (v, unit) if unit else "%.4g" % v


def verdict(lo, hi):
    if lo > 1 + THRESHOLD:
        return "regression"
    if hi < 1 - THRESHOLD:
        return "improvement"
    return "no significant change"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--old-dir", required=True)
    ap.add_argument("--new-dir", required=True)
    ap.add_argument("--old-env", default="")
    ap.add_argument("--new-env", default="")
    ap.add_argument("--output", required=True)
    ap.add_argument("record")
    args = ap.parse_args()

    titles = {}
    order = []
    runs = {}
    for line in open(args.record):
        f = line.rstrip("\n").split("\t")
        if f[0] == "comparison":
            titles[f[1]] = f[2]
            continue
        cid, label, side, rnd, times, instr = f
        wall, user, sys_ = (float(x) for x in times.split())
        key = (cid, label)
        if key not in runs:
            runs[key] = {}
            order.append(key)
        runs[key].setdefault(int(rnd), {})[side] = (
            wall, user + sys_, None if instr == "-" else float(instr))

    rng = random.Random(1)
    out = []
    out.append("# make bench-compare")
    out.append("")
    out.append("- OLD: `%s` (%s)%s" % (args.old, args.old_dir,
               ", with `%s`" % args.old_env if args.old_env else ""))
    out.append("- NEW: `%s` (%s)%s" % (args.new, args.new_dir,
               ", with `%s`" % args.new_env if args.new_env else ""))
    out.append("- Each ratio is NEW / OLD: the median over the rounds of the "
               "ratio within each round, with its %d%% bootstrap interval "
               "(%d resamples of the rounds).  Verdict: regression when the "
               "interval lies above %.2f, improvement below %.2f."
               % (CONFIDENCE * 100, RESAMPLES, 1 + THRESHOLD, 1 - THRESHOLD))
    out.append("")
    out.append("| comparison | command | rounds | metric | OLD median | "
               "NEW median | NEW/OLD | interval | verdict |")
    out.append("|---|---|---:|---|---:|---:|---:|---|---|")
    regressed = []
    summary = []
    for cid, label in order:
        pairs = [r for _, r in sorted(runs[(cid, label)].items())
                 if "old" in r and "new" in r]
        if len(pairs) < 2:
            fail("%s '%s': fewer than 2 rounds" % (cid, label))
        verdicts = []
        for m, name, unit in ((0, "wall", "s"), (1, "client CPU", "s"),
                              (2, "instructions", "")):
            if any(p["old"][m] is None or p["new"][m] is None for p in pairs):
                continue
            old = [p["old"][m] for p in pairs]
            new = [p["new"][m] for p in pairs]
            if min(old) <= 0:
                continue        # too short to measure: no ratio
            ratios = [n / o for n, o in zip(new, old)]
            est = statistics.median(ratios)
            lo, hi = bootstrap(statistics.median, [ratios], rng)
            v = verdict(lo, hi)
            verdicts.append(v)
            out.append("| %s | `%s` | %d | %s | %s | %s | %.3f | %.3f-%.3f | %s |"
                       % (cid, label, len(pairs), name,
                          value(statistics.median(old), unit),
                          value(statistics.median(new), unit),
                          est, lo, hi, v))
        overall = ("regression" if "regression" in verdicts else
                   "improvement" if "improvement" in verdicts else
                   "no significant change")
        summary.append("- %s `%s`: %s" % (cid, label, overall))
        if overall == "regression":
            regressed.append("%s %s" % (cid, label))
    out.append("")
    out.append("Verdicts per command (a regression in any metric counts):")
    out.append("")
    out.extend(summary)
    out.append("")
    text = "\n".join(out) + "\n"
    with open(args.output, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    sys.exit(1 if regressed else 0)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:          # a bug must not read as a regression
        fail("%s: %s" % (type(e).__name__, e))
