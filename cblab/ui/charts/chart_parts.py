"""Pieces the Timeline and Metrics charts share: the cursor at the Grid's step, a long run's rows
thinned to its peaks, the idle stretches a line must drop over instead of joining across, the
most requests drawn one by one, a count axis's whole-number ticks, a distribution's cumulative
curve in a bounded number of points, and a histogram's bins spaced evenly on a log scale (a few
long stalls among many short gaps)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from cblab.ui import palette
from engine.analysis.overview import peak_rows
from engine.lab.limits import OVERVIEW_BUCKETS

IDLE_ZEROS = {"active_rows": 0, "queue_depth": 0, "padded_rows": 0}
MAX_REQUESTS_DRAWN = 300  # requests drawn one by one (a bar each); more are summed up
MAX_CDF_POINTS = 400  # points of a cumulative curve
LOG_BINS = 30  # bins of a log-scale histogram
FEW = 10  # below this top, a count axis's automatic ticks would fall between whole numbers


def add_cursor(figure: go.Figure, step: int) -> None:
    """The vertical line at the step the Grid shows, labelled "step N" just inside the plot's top edge, to
    the line's right: the charts' legends sit above that edge, so the label never covers them."""
    figure.add_vline(x=step, line={"color": palette.CURRENT, "width": 2, "dash": "dot"})
    figure.add_annotation(
        x=step,
        xref="x",
        y=1,
        yref="paper",
        xanchor="left",
        yanchor="top",
        text=f"step {step:,}",
        showarrow=False,
        font={"color": palette.CURRENT},
        bgcolor="rgba(255, 255, 255, 0.8)",
    )


def count_axis(top: float) -> dict:
    """Axis settings for a count (rows, tokens, steps, preemptions) whose values reach `top`: ticks on whole
    numbers only, from 0. Below `FEW` the ticks are every 1 or 2 (automatic ones would be 0.5 apart);
    above, automatic, which are whole there, and never synced to another axis (an overlaying axis's
    default, which put a count's ticks at 48.8, 97.5, 146.2)."""
    spacing = {"tickmode": "linear", "tick0": 0, "dtick": 1 if top <= 5 else 2} if top < FEW else {"tickmode": "auto"}
    return {"tickformat": ",d", "rangemode": "tozero", **spacing}


def log_bins(values: np.ndarray, bins: int = LOG_BINS, whole: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A histogram of positive `values` on bins evenly spaced on a log scale from the smallest to the largest:
    (the bins' edges, one more than the counts; the counts). With `whole` (values that are whole numbers)
    the edges are whole numbers, each bin holding at least one."""
    values = values[values > 0]
    if not len(values):
        return np.zeros(0), np.zeros(0, np.int64)
    low, high = float(values.min()), float(values.max())
    if whole:
        edges = np.unique(np.round(np.geomspace(low, high + 1, bins + 1)))
    else:
        edges = np.geomspace(low, high, bins + 1) if high > low else np.array([low, math.nextafter(low, math.inf)])
    counts, _ = np.histogram(values, edges)  # (its last bin holds its right edge)
    return edges, counts


def drawn_steps(steps: pd.DataFrame, series: tuple[str, ...], long: bool) -> pd.DataFrame:
    """The busy steps' rows a chart over steps draws: all of them, or for a long run those `peak_rows` keeps
    (at most OVERVIEW_BUCKETS buckets, each its first row and where each of `series` is lowest and highest),
    so a 100,000-step run sends a few thousand points a line, peaks included."""
    return steps.iloc[peak_rows(steps, series, OVERVIEW_BUCKETS)] if long else steps


def with_idle_stretches(steps: pd.DataFrame, idle: dict[str, float] = IDLE_ZEROS) -> pd.DataFrame:
    """The busy steps' rows, plus the `idle` values (nothing runs or waits) at the first and
    last step of each idle stretch, so a line does not join across it as if the work went on."""
    stretches = steps[steps.idle_before > 0]
    first = pd.DataFrame({"step": stretches.step - stretches.idle_before, **idle})
    last = pd.DataFrame({"step": stretches.step - 1, **idle})
    return pd.concat([steps, first, last]).drop_duplicates("step", keep="first").sort_values("step", kind="stable")


def cdf(values: np.ndarray, max_points: int = MAX_CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The empirical cumulative distribution of `values` (NaN dropped) as (x, share of values at or below
    x): every value when there are at most `max_points`, else the values at `max_points` evenly spaced
    shares (the k-th of m points: the ceil(k n / m)-th smallest of n values)."""
    ordered = np.sort(values[~np.isnan(values)])
    n, m = len(ordered), min(len(ordered), max_points)
    ranks = np.arange(1, m + 1)
    return ordered[(ranks * n + m - 1) // m - 1], ranks / max(m, 1)
