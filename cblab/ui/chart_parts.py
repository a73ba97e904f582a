"""Pieces the Timeline and Metrics charts share: the cursor at the Grid's step, the idle
stretches a line must drop over instead of joining across, the most requests drawn one by one,
and a distribution's cumulative curve in a bounded number of points."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from cblab.ui import palette

IDLE_ZEROS = {"active_rows": 0, "queue_depth": 0, "padded_rows": 0}
MAX_REQUESTS_DRAWN = 300  # requests drawn one by one (a bar each); more are summed up
MAX_CDF_POINTS = 400  # points of a cumulative curve


def add_cursor(figure: go.Figure, step: int) -> None:
    """The vertical line at the step the Grid shows, labelled "step N"."""
    figure.add_vline(
        x=step,
        line={"color": palette.CURRENT, "width": 2, "dash": "dot"},
        annotation={"text": f"step {step}", "font": {"color": palette.CURRENT}},
        annotation_position="top",
    )


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
