"""A long run's overview: running rows, queue length, KV blocks in use and the prefix cache's hit rate over
simulated time, one panel each, with the window the stage plays shaded, in a small component of its own.

The series are `engine.analysis.overview`'s buckets (at most `OVERVIEW_BUCKETS` points each, whatever the
run's length), made once per run in a cache every session shares: each panel draws a bucket's largest value
as a line over a band down to its smallest, so a burst stays visible. A panel is left out where the run has
nothing to show: the pool without one, the hit rate without prefix caching.

NOTE: not Plotly. Streamlit loads Plotly's 4.7 MB of JavaScript the first time a page shows a Plotly chart,
which cost a long run's first view 1-2 s on this machine (the Grid tab has no other). The component
(`cblab/ui/stage/overview_component/`, a package asset like the stage's) draws SVG at the panel's width with no
library, reads a bucket out on hover, and sends a click (centre the window there) or a drag (the steps under
it) back as `pick`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from cblab.ui.cache import SizedCache
from cblab.ui.components import PackagedComponent
from cblab.ui.runs.runs import Run
from engine.analysis.overview import overview
from engine.analysis.prefix_hits import prefix_lookups
from engine.lab.limits import OVERVIEW_BUCKETS

# A package asset (cblab/ui/components.py): overview.js imports panels.js (the inline form: these files in order).
OVERVIEW = PackagedComponent("overview", js="overview.js", css="overview.css", scripts=("panels.js", "overview.js"))
BUCKETS = SizedCache(max_bytes=32 * 2**20)  # (run, the first step hidden) -> its overview's buckets
LINES = {"running_rows": "#1d4ed8", "queue_depth": "#c2410c", "kv_blocks_held": "#4b5563", "hit_rate": "#047857"}
KEY = "overview"


def buckets(run: Run, cap: int | None) -> pd.DataFrame:
    """The run's overview buckets, of the steps before `cap` only (a prediction hides the rest; None: all)."""

    def make() -> pd.DataFrame:
        steps = run.steps if cap is None else run.steps[run.steps.step < cap]
        lookups = prefix_lookups(run.log) if run.log.config.prefix_caching else None
        return overview(steps, lookups, OVERVIEW_BUCKETS)

    return BUCKETS.get((run.digest, cap), make, lambda frame: int(frame.memory_usage(index=True).sum()))


def panels(run: Run) -> list[tuple[str, str, str, str]]:
    """(series, title, short name, unit) of each panel the run has."""
    config = run.log.config
    out = [
        ("running_rows", f"running rows (of {config.batch_size})", "running", ""),
        ("queue_depth", "queue length (requests waiting)", "queue", ""),
    ]
    if config.kv_blocks is not None:
        out.append(("kv_blocks_held", f"KV blocks in use (% of the pool's {config.kv_blocks:,})", "KV", " %"))
    if config.prefix_caching:
        out.append(("hit_rate", "prefix cache hit rate (% of the tokens looked up)", "hit rate", " %"))
    return out


def overview_data(run: Run, frame: pd.DataFrame, window_s: tuple[float, float], projector: bool) -> dict:
    """What the component draws: a point per bucket at its end (its smallest and largest values, its steps), and
    before a bucket that opens after a long idle stretch two points at 0, the stretch's start and end, so the
    lines drop to 0 there rather than cross it; each panel's values, the window in seconds."""
    gap = frame.idle_s.to_numpy(float) > 0
    own = np.arange(len(frame)) + 2 * np.cumsum(gap)  # each bucket's point, after the gaps' before it
    points = len(frame) + 2 * int(gap.sum())
    at = {"x": np.zeros(points), "first_step": np.zeros(points, np.int64), "last_step": np.zeros(points, np.int64)}
    at["x"][own], at["first_step"][own], at["last_step"][own] = frame.end_s, frame.first_step, frame.last_step
    idle_first = (frame.first_step - frame.idle_steps).to_numpy()[gap]
    for shift, x in ((2, frame.start_s.to_numpy()[gap]), (1, (frame.start_s + frame.idle_s).to_numpy()[gap])):
        at["x"][own[gap] - shift], at["first_step"][own[gap] - shift] = x, idle_first
        at["last_step"][own[gap] - shift] = frame.first_step.to_numpy()[gap] - 1
    shown = []
    for name, title, short, unit in panels(run):
        low, high = (_spread(values, own, points, name) for values in _values(run, frame, name))
        top = max([v for v in high if v is not None], default=0)
        top = 100 if unit else max(top, run.log.config.batch_size if name == "running_rows" else 1)
        panel = {"name": name, "title": title, "short": short, "unit": unit, "colour": LINES[name]}
        shown.append({**panel, "low": low, "high": high, "top": top})
    return {
        "x": np.round(at["x"], 3).tolist(),
        "first_step": at["first_step"].tolist(),
        "last_step": at["last_step"].tolist(),
        "panels": shown,
        "window": [round(window_s[0], 3), round(window_s[1], 3)],
        "projector": projector,
    }


def _spread(values: list | None, own: np.ndarray, points: int, name: str) -> list | None:
    """A bucket's `values` at its own points, and at the idle stretches' points 0 (the hit rate: none, a gap)."""
    if values is None:
        return None
    out: list = [None if name == "hit_rate" else 0] * points
    for i, value in zip(own.tolist(), values):
        out[i] = value
    return out


def render_overview(data: dict, on_pick: Callable[[object], None]) -> None:
    """Mount the overview; a click or a drag on it calls `on_pick` with what the browser sent (checked there)."""
    OVERVIEW(key=KEY, data=data, default={}, on_pick_change=lambda: on_pick(_picked()))


def _picked() -> object:
    state = st.session_state.get(KEY)
    return state.get("pick") if isinstance(state, dict) else None


def _values(run: Run, frame: pd.DataFrame, name: str) -> tuple[list | None, list]:
    """(smallest, largest) per bucket as drawn: counts, the pool's blocks as a % of it, the hit rate as a %
    (one value a bucket: no smallest; NaN, a bucket without an admission, is a gap)."""
    if name == "hit_rate":
        rate = frame.hit_rate.to_numpy(float) * 100
        return None, [None if np.isnan(v) else round(float(v), 1) for v in rate]
    low, high = frame[f"{name}_min"].to_numpy(float), frame[f"{name}_max"].to_numpy(float)
    if name == "kv_blocks_held":
        scale = 100 / max(run.log.config.kv_blocks, 1)
        return np.round(low * scale, 1).tolist(), np.round(high * scale, 1).tolist()
    return low.astype(int).tolist(), high.astype(int).tolist()
