"""The batch-size sweep as one chart: throughput (left axis) and p50/p99 end-to-end latency (right
axis) against the batch size, with the knee marked, and the figures as a table.

The sweep itself is engine/lab/sweep.py (closed loop: as many clients as slots); it runs once per
scenario and set of batch sizes, behind Streamlit's cache.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from cblab.ui import palette
from cblab.ui.runs.runs import scenario_digest
from engine.lab.scenario import Scenario
from engine.lab.sweep import SweepPoint, knee, sweep

THROUGHPUT, P50, P99 = palette.OVER_TIME["active rows"], palette.OVER_TIME["queue depth"], palette.EVICT


@st.cache_data(max_entries=8, show_spinner="Running the sweep…")
def cached_sweep(digest: str, _scenario: Scenario, batch_sizes: tuple[int, ...] | None) -> list[SweepPoint]:
    """`sweep(scenario, batch_sizes)`, keyed by the scenario's digest (a Scenario is not hashed)."""
    return sweep(_scenario, batch_sizes)


def sweep_figure(points: list[SweepPoint]) -> go.Figure:
    sizes = [p.batch_size for p in points]
    figure = go.Figure()
    figure.add_scatter(
        x=sizes, y=[p.throughput_tokens_per_s for p in points], name="throughput", line={"color": THROUGHPUT}
    )
    for name, values, colour in (
        ("latency p50", [p.e2e_p50_s for p in points], P50),
        ("latency p99", [p.e2e_p99_s for p in points], P99),
    ):
        seconds = [None if v is None else v * 1e3 for v in values]
        figure.add_scatter(x=sizes, y=seconds, name=name, yaxis="y2", line={"color": colour, "dash": "dot"})
    bend = knee(points)
    if bend is not None:
        figure.add_vline(x=bend, line={"color": palette.CURRENT, "dash": "dash"})
        # (on a log axis an annotation's x is in log10 units, unlike a shape's: else the axis stretches to 10**bend)
        figure.add_annotation(
            x=math.log10(bend), y=1, yref="paper", text=f"knee: {bend}", showarrow=False, yanchor="bottom"
        )
    figure.update_layout(
        xaxis={"title": "batch size (slots)", "type": "log", "tickvals": sizes, "ticktext": [str(s) for s in sizes]},
        yaxis={"title": "throughput (tokens/s)", "rangemode": "tozero"},
        yaxis2={"title": "end-to-end latency (ms)", "overlaying": "y", "side": "right", "rangemode": "tozero"},
        legend={"orientation": "h", "y": 1.12},
        margin={"t": 40, "r": 60},
        height=380,
    )
    return figure


HEADINGS = {
    "batch_size": "batch size",
    "throughput_tokens_per_s": "throughput (tokens/s)",
    "steps": "steps",
    "model_calls": "model calls",
    "e2e_p50_ms": "end-to-end p50 (ms)",
    "e2e_p99_ms": "end-to-end p99 (ms)",
    "tpot_p50_ms": "time per token p50 (ms)",
}


def sweep_table(points: list[SweepPoint]) -> pd.DataFrame:
    frame = pd.DataFrame([dataclasses.asdict(p) for p in points])
    for column in ("e2e_p50_s", "e2e_p99_s", "tpot_p50_s"):
        frame[column.removesuffix("_s") + "_ms"] = frame.pop(column).astype(float) * 1e3
    return frame.round(1).rename(columns=HEADINGS)


def render_sweep(scenario: Scenario, batch_sizes: tuple[int, ...] | None = None) -> None:
    """The chart and table for a scenario, at `batch_sizes` (default: its `[sweep]`, else 1, 2, 4, ..., 256)."""
    try:
        points = cached_sweep(scenario_digest(scenario), scenario, batch_sizes)
    except ValueError as exc:  # over a limit: one line, as everywhere
        st.error(str(exc))
        return
    st.plotly_chart(sweep_figure(points), key="sweep_chart")
    st.caption("Closed loop: as many clients as slots, each sending its next request when its last one is delivered.")
    st.dataframe(sweep_table(points), key="sweep_table", hide_index=True)
