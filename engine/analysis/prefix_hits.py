"""The prefix cache's hits from the event log alone: at each admission the row's tokens so far are
looked up in the cache (its prompt; after a preemption, the tokens it generated too), and the
`prefix_hit` events just after the `admit` say how many blocks were found (contract, "Prefix
caching and the admission watermark"; vLLM's `num_cached_tokens`, SGLang's cache hit rate).

`admission_lookups` lists them per admission (the stage's frames); `prefix_lookups` counts both
per step; `hit_rate_over_time` groups the steps into at most `max_points` windows of equal
width, so a chart of a long run stays small; `cache_hits` is the run's total, the summary's
`cached_tokens` and `prefix_hit_rate`. Columnar: numpy over the log's columns; only the emits
of readmitted rows are sorted (their generated tokens).
"""

from __future__ import annotations

from math import ceil

import numpy as np
import pandas as pd

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from .array_sets import isin, unique

MAX_POINTS = 400  # windows in `hit_rate_over_time` at most: a chart's points stay bounded


def prefix_lookups(log: EventLog) -> pd.DataFrame:
    """One row per step with an admission (in step order): `looked_up`, the tokens its admissions
    looked up in the prefix cache, and `cached`, those found there. Empty without prefix caching."""
    if not log.config.prefix_caching or not len(log):
        return pd.DataFrame({"step": [], "looked_up": [], "cached": []}, dtype=np.int64)
    step, kind, request, admits, looked_up = _admissions(log)
    hits = step[kind == EventKind.PREFIX_HIT]
    busy = unique(step[admits])  # (a hit is logged at its row's admission: always one of these steps)
    return pd.DataFrame(
        {
            "step": busy,
            "looked_up": np.bincount(np.searchsorted(busy, step[admits]), looked_up, len(busy)).astype(np.int64),
            "cached": np.bincount(np.searchsorted(busy, hits), minlength=len(busy)) * log.config.block_size,
        }
    )


def admission_lookups(log: EventLog) -> list[list[int]]:
    """[request index, step, tokens looked up, blocks hit] per admission, in the log's order. [] without
    prefix caching."""
    if not log.config.prefix_caching or not len(log):
        return []
    step, kind, request, admits, looked_up = _admissions(log)
    # a row's hits are logged at its admission's step, and a row is admitted at most once a step
    width = int(step.max()) + 1
    hit_keys = np.sort(request[kind == EventKind.PREFIX_HIT] * width + step[kind == EventKind.PREFIX_HIT])
    keys = request[admits] * width + step[admits]
    hits = np.searchsorted(hit_keys, keys, "right") - np.searchsorted(hit_keys, keys)
    return np.column_stack([request[admits], step[admits], looked_up, hits]).tolist()


def _admissions(log: EventLog):
    """The log's step, kind and request columns, its admissions (event indices), and the tokens each
    admission looks up: the row's prompt and what it emitted before (after a preemption)."""
    step = np.frombuffer(log.step, np.int32).astype(np.int64)
    kind = np.frombuffer(log.kind, np.int8)
    request = np.frombuffer(log.request, np.int32).astype(np.int64)
    admits = np.flatnonzero(kind == EventKind.ADMIT)
    prompt = np.array([len(info.prompt) for info in log.requests], np.int64)
    return step, kind, request, admits, prompt[request[admits]] + _emitted_before(admits, kind, request)


def _emitted_before(admits: np.ndarray, kind: np.ndarray, request: np.ndarray) -> np.ndarray:
    """For each admission (an event index), the tokens its request emitted before it: 0 at a first
    admission; a readmission's are counted among the emits of the requests admitted more than once."""
    out = np.zeros(len(admits), np.int64)
    readmitted = np.flatnonzero(np.bincount(request[admits]) > 1)
    if not len(readmitted):
        return out
    again = isin(request[admits], readmitted)
    emits = np.flatnonzero((kind == EventKind.EMIT) & isin(request, readmitted))
    # emits of request r before event i: those keyed (r, index) below (r, i), less those of requests before r
    width = len(kind) + 1
    emit_keys = np.sort(request[emits] * width + emits)
    admit_keys = request[admits[again]] * width + admits[again]
    out[again] = np.searchsorted(emit_keys, admit_keys) - np.searchsorted(emit_keys, request[admits[again]] * width)
    return out


def window_width(steps: int, max_points: int = MAX_POINTS) -> int:
    """Steps per window of `hit_rate_over_time`: 1 up to `max_points` steps, then as few as keep the
    windows at most `max_points`."""
    return max(1, ceil(steps / max_points))


def hit_rate_over_time(log: EventLog, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """The hit rate per window of `ceil(steps / max_points)` steps (one step each in a short run),
    one row per window with an admission: its `first_step` and `last_step`, the tokens `looked_up`
    and `cached` in it, `rate` (cached / looked up in the window) and `so_far` (cached / looked up
    from step 0 to the window's end: its last value is the summary's `prefix_hit_rate`)."""
    lookups = prefix_lookups(log)
    width = window_width(log.num_steps, max_points)
    window = lookups.step.to_numpy() // width
    windows = lookups.groupby(window)[["looked_up", "cached"]].sum()
    first = windows.index.to_numpy(np.int64) * width
    looked_up, cached = windows.looked_up.to_numpy(), windows.cached.to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):  # (a window of empty prompts looks up nothing)
        return pd.DataFrame(
            {
                "first_step": first,
                "last_step": np.minimum(first + width - 1, max(log.num_steps - 1, 0)),
                "looked_up": looked_up,
                "cached": cached,
                "rate": cached / looked_up,
                "so_far": np.cumsum(cached) / np.cumsum(looked_up),
            }
        )


def cache_hits(log: EventLog) -> tuple[int, int]:
    """(tokens found in the prefix cache at admissions, tokens looked up there). (0, 0) without prefix caching."""
    lookups = prefix_lookups(log)
    return int(lookups.cached.sum()), int(lookups.looked_up.sum())
