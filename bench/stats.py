"""The statistics shared by bench/report.py (make bench) and
bench/compare.py (make bench-compare).

Both give an effect with a percentile bootstrap interval: the runs are
resampled with replacement RESAMPLES times, the statistic is computed on
every resample, and the interval is the central CONFIDENCE of those
values.  The caller passes a seeded random.Random, so that the same runs
always give the same report.

Standard library only.
"""

RESAMPLES = 2000
CONFIDENCE = 0.95


def bootstrap(stat, samples, rng):
    """The percentile interval (lo, hi) of stat(*samples): each sample
    (a list of runs) resampled independently, in the order given."""
    values = sorted(stat(*[rng.choices(s, k=len(s)) for s in samples])
                    for _ in range(RESAMPLES))
    return (values[int((1 - CONFIDENCE) / 2 * RESAMPLES)],
            values[int((1 + CONFIDENCE) / 2 * RESAMPLES) - 1])
