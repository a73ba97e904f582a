"""A window of a long run for the stage: the frames of steps `first`..`last` alone, as the whole run's would draw them.

A run too long to play whole (engine/lab/limits.py, `is_long`) keeps its outline (frames.py: the
event-proportional lists, without tokens or narration). The stage then gets a window of it, in
frames.py's format with the run's own step numbers, plus `first` (the window's first step), `total`
(the run's steps) and `next_busy` (the first busy step after the window, for an idle stretch's
narration). Only what the window draws is made: the narration of its busy steps, the tokens its
requests emitted up to its last step, its partial stop matches.

The state at `first` needs no earlier frame: a row holding a slot then, or a request waiting then,
is listed with its whole stretch (its first step may be earlier: it is not drawn as admitted), and
the KV pool as the steps before left it opens the window's ops (kv_window.py). Requests are renumbered
0, 1, ... in the run's order, keeping their colours. tests/test_window_frames.py checks, on small runs,
that every list equals the whole run's frames cut to the window.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from .frames import _partial
from .kv_window import pool_before, window_kv
from .narration import narrate
from .replay import Replay


def window_bounds(busy: list[int], steps: int, first: int, last: int, most: int) -> tuple[int, int]:
    """The window asked for (`first`..`last`, in any order, any values) inside the run's `steps`, at most
    `most` steps long (its start kept), then widened to whole columns of the stage: an idle stretch
    (the steps between two busy ones) is one column, shown whole or not at all."""
    top = max(steps - 1, 0)
    first, last = sorted((min(max(int(first), 0), top), min(max(int(last), 0), top)))
    last = min(last, first + max(most, 1) - 1)
    i = bisect_right(busy, first) - 1
    if i < 0 or busy[i] != first:  # inside an idle stretch: from its start
        first = busy[i] + 1 if i >= 0 else 0
    j = bisect_left(busy, last)
    if j == len(busy) or busy[j] != last:  # inside an idle stretch: to its end
        last = busy[j] - 1 if j < len(busy) else top
    return first, last


def window_frames(replay: Replay, outline: dict, first: int, last: int, captions: dict[int, str] | None = None) -> dict:
    """The frames of steps `first`..`last` (from `window_bounds`) of the run whose `outline` is given."""
    log, captions = replay.log, captions or {}
    pool = pool_before(outline["kv"], first) if "kv" in outline else None
    chosen = _requests(replay, outline, first, last, pool)
    local = {request: i for i, request in enumerate(chosen)}
    emits = [
        [r, start, min(count, last - start + 1)] for r, start, count in outline["emits"] if r in local and start <= last
    ]
    emitted = dict.fromkeys(chosen, 0)
    for request, _, count in emits:
        emitted[request] += count
    infos = [log.requests[r] for r in chosen]
    generated = {r: replay.outputs.generated(info.request_id)[: emitted[r]] for r, info in zip(chosen, infos)}
    busy = outline["busy"][bisect_left(outline["busy"], first) : bisect_right(outline["busy"], last)]
    after = bisect_right(outline["busy"], last)

    def kept(rows: list, at: int = 1, upto: int = last) -> list:
        """`rows` of the window's requests (column 0) whose step (column `at`) is at most `upto`, renamed."""
        return [[local[row[0]], *row[1:]] for row in rows if row[0] in local and row[at] <= upto]

    frames = {
        **{key: outline[key] for key in ("version", "slots", "padded", "batching")},
        "steps": last + 1,
        "first": first,
        "total": outline["steps"],
        "next_busy": outline["busy"][after] if after < len(outline["busy"]) else None,
        "requests": [
            {"id": info.request_id, "prompt": len(info.prompt), "tokens": generated[r]}
            for r, info in zip(chosen, infos)
        ],
        "colours": [outline["colours"][r] for r in chosen],
        "occupancy": [
            [slot, local[r], start, end, how]
            for slot, r, start, end, how in outline["occupancy"]
            if start <= last and end >= first
        ],
        "emits": [[local[r], start, count] for r, start, count in emits],
        "stops": kept(outline["stops"]),
        "partial": [[local[r], step] for r, step in _partial(log, emits, generated)],
        "waits": [[local[r], a, u, order] for r, a, u, order in outline["waits"] if a <= last and u > first],
        "preempted": kept(outline["preempted"], upto=last + 1),
        "busy": busy,
        "calls": [call for call in outline["calls"] if first <= call[0] <= last],
        "faults": [step for step in outline["faults"] if first <= step <= last],
        "prefills": kept(outline["prefills"]),
        "words": outline["words"],
        "narration": {
            str(step): [captions[step]] if step in captions else narrate(replay, step, log.vocabulary) for step in busy
        },
    }
    if pool is not None:
        frames["kv"] = window_kv(outline["kv"], pool, first, last, local)
    return frames


def _requests(replay: Replay, outline: dict, first: int, last: int, pool) -> list[int]:
    """The requests the window shows or names, in the run's order: those holding a slot or waiting at one of
    its steps, those with an event in it, and those holding KV blocks as it opens."""
    chosen = {r for _, r, start, end, _ in outline["occupancy"] if start <= last and end >= first}
    chosen |= {r for r, a, u, _ in outline["waits"] if a <= last and u > first}
    steps = np.frombuffer(replay.log.step, np.int32)
    lo, hi = np.searchsorted(steps, first, "left"), np.searchsorted(steps, last, "right")
    requests = np.unique(np.frombuffer(replay.log.request, np.int32)[lo:hi])
    chosen |= {int(r) for r in requests if 0 <= r < len(replay.log.requests)}
    if pool is not None:
        chosen |= pool.holders()
    return sorted(chosen)
