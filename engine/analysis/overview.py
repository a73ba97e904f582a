"""A long run's overview: running rows, queue length, KV blocks in use and the prefix cache's hit rate over
simulated time, in a bounded number of points, and the window of steps it opens with.

`overview` cuts the busy steps (`metrics.step_metrics`' rows, in order) into at most `buckets` runs of
equal length and gives each bucket's smallest and largest value of each series, so a one-step burst
stays as high as it was however many steps share its point; an idle stretch (nothing runs, waits or
holds a block) belongs to the bucket after it and counts as 0 there. An idle stretch longer than a
bucket's share of the run's time (a trace's quiet minutes) also starts a bucket, which says how long it
was (`idle_s`), so a chart draws it as 0 rather than a line across it; there are fewer such stretches
than buckets, so a run has at most 2 × `buckets` of them. The hit rate is the bucket's tokens found in the
prefix cache over those its admissions looked up (`prefix_hits.prefix_lookups`), NaN where nothing was
admitted. A 100,000-step run is at most 2,000 rows of 15 numbers, whatever its length.
"""

from __future__ import annotations

from math import ceil

import numpy as np
import pandas as pd

SERIES = ("running_rows", "queue_depth", "kv_blocks_held")


def overview(
    steps: pd.DataFrame, lookups: pd.DataFrame | None, buckets: int, series: tuple[str, ...] = SERIES
) -> pd.DataFrame:
    """One row per bucket of `steps` (step_metrics, possibly cut short): `first_step` and `last_step` (busy
    steps), `start_s` and `end_s` (simulated seconds: from the end of the step before), `idle_s` and
    `idle_steps` (a long idle stretch just before it, else 0), each series' `_min` and `_max`, and
    `looked_up`, `cached` and `hit_rate` from `lookups` (prefix_lookups; None: NaN)."""
    n = len(steps)
    end_s = steps.end_s.to_numpy(float)
    gaps = end_s - steps.duration_s.to_numpy(float) - np.r_[0.0, end_s[:-1]]  # idle seconds before each row
    long = np.flatnonzero(gaps > (end_s[-1] if n else 0.0) / max(buckets, 1) + 1e-12)
    starts = np.union1d(np.arange(0, n, max(1, ceil(n / max(buckets, 1)))), long).astype(np.int64)
    last = np.r_[starts[1:], n][: len(starts)] - 1
    opens = np.isin(starts, long)
    out = {
        "first_step": steps.step.to_numpy(np.int64)[starts],
        "last_step": steps.step.to_numpy(np.int64)[last],
        "start_s": np.r_[0.0, end_s][starts],
        "end_s": end_s[last],
        "idle_s": np.where(opens, gaps[starts], 0.0),
        "idle_steps": np.where(opens, steps.idle_before.to_numpy(np.int64)[starts], 0),
    }
    idle = np.add.reduceat(steps.idle_before.to_numpy(np.int64) > 0, starts) > 0 if n else np.zeros(0, bool)
    for name in series:
        values = steps[name].to_numpy(np.int64)
        out[f"{name}_min"] = np.where(idle, 0, np.minimum.reduceat(values, starts)) if n else values
        out[f"{name}_max"] = np.maximum.reduceat(values, starts) if n else values
    looked_up, cached = np.zeros(len(starts), np.int64), np.zeros(len(starts), np.int64)
    if lookups is not None and len(lookups) and n:
        row = np.searchsorted(steps.step.to_numpy(), lookups.step.to_numpy())
        keep = row < n  # (lookups after a cut-short `steps` are left out)
        bucket = np.searchsorted(starts, row[keep], "right") - 1
        np.add.at(looked_up, bucket, lookups.looked_up.to_numpy(np.int64)[keep])
        np.add.at(cached, bucket, lookups.cached.to_numpy(np.int64)[keep])
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(looked_up > 0, cached / np.maximum(looked_up, 1), np.nan)
    return pd.DataFrame({**out, "looked_up": looked_up, "cached": cached, "hit_rate": rate})


def peak_rows(steps: pd.DataFrame, series: tuple[str, ...], buckets: int) -> np.ndarray:
    """The rows of `steps` to draw a long run's step chart from, at most 1 + 2 × len(series) a bucket (`overview`'s
    buckets): each bucket's first row, and the first where each series is smallest and the first where it is
    largest, in step order. Whole rows are kept, so a stacked chart still adds up, and no series loses a peak
    or a trough."""
    n = len(steps)
    width = max(1, ceil(n / max(buckets, 1)))
    if width == 1:
        return np.arange(n)
    starts = np.arange(0, n, width)
    kept = [starts]
    for name in series:
        values = steps[name].to_numpy()
        for pick in (np.argmin, np.argmax):
            kept.append(starts + np.array([pick(values[a : a + width]) for a in starts], np.int64))
    return np.unique(np.concatenate(kept))


def default_window(steps: pd.DataFrame, total: int, length: int, around: int | None = None) -> tuple[int, int]:
    """The `length` steps (of `total`) a long run opens with: centred on step `around` if given (a link's step),
    else on the deepest queue (its first busy step), else the first steps. Not yet widened to whole columns
    (window_frames.window_bounds)."""
    if around is None:
        queue = steps.queue_depth.to_numpy()
        around = int(steps.step.to_numpy()[int(np.argmax(queue))]) if len(queue) and queue.max() > 0 else 0
    length = max(1, min(length, total))
    first = min(max(around - length // 2, 0), max(total - length, 0))
    return first, first + length - 1


def step_times(steps: pd.DataFrame, first: int, last: int) -> tuple[float, float]:
    """Simulated seconds from the start of step `first` to the end of step `last`, a window of whole columns
    (window_frames.window_bounds: each end a busy step or an end of an idle stretch)."""
    busy, end_s = steps.step.to_numpy(), steps.end_s.to_numpy(float)
    start_s = end_s - steps.duration_s.to_numpy(float)  # (a busy step starts after the idle ones before it)
    i, k = np.searchsorted(busy, first, "left"), np.searchsorted(busy, last, "right")
    start = start_s[i] if i < len(busy) and busy[i] == first else (end_s[i - 1] if i > 0 else 0.0)
    end = start_s[k] if k < len(busy) and busy[k] == last + 1 else (end_s[k - 1] if k > 0 else 0.0)
    return float(start), float(max(end, start))
