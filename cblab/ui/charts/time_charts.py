"""The Timeline and Metrics tabs: per-request waiting and running bars, and rows and queue over
time (and, with memory, cblab/ui/charts/kv_charts.py's charts; with prefix caching, cblab/ui/charts/prefix_charts.py's),
each with a cursor at the step the Grid shows."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pandas.io.formats.style import Styler

from cblab.ui import palette
from cblab.ui.charts.chart_parts import MAX_REQUESTS_DRAWN, add_cursor, count_axis, drawn_steps, with_idle_stretches
from cblab.ui.charts.kv_charts import render_memory_charts
from cblab.ui.charts.prefix_charts import render_prefix_charts
from cblab.ui.runs.runs import Run
from engine.analysis.metrics import CostModel
from engine.analysis.wording import duration
from engine.lab.limits import OVERVIEW_BUCKETS

MAX_STYLED_CELLS = 20_000  # the request table's cells written as text (pandas' Styler); beyond, numbers


def render_timeline(run: Run, step: int) -> None:
    shown = min(len(run.requests), MAX_REQUESTS_DRAWN)
    if len(run.requests) > shown:
        st.caption(f"The first {shown} of {len(run.requests)} requests.")
    st.plotly_chart(timeline_figure(run, step), key="timeline")


def timeline_figure(run: Run, step: int) -> go.Figure:
    """Waiting and running bars per request, one per stretch in the queue and one per stint in a
    slot (a preempted request runs, waits again and runs again), each running bar in the
    request's colour on the stage (its slot only in the hover), and the cursor at `step`. Step k
    spans k ± 0.5. The bars come from the stage's own frames, so both views always agree."""
    count = min(len(run.log.requests), MAX_REQUESTS_DRAWN)
    ids = [info.request_id for info in run.log.requests[:count]]
    end = len(run.replay)  # a log that ends mid-run: its last waits and stints stop there
    waits = sorted((r, a, min(u, end)) for r, a, u, _ in run.frames["waits"] if r < count and u > a)
    stints = sorted(
        (r, first, min(last, end - 1), slot) for slot, r, first, last, _ in run.frames["occupancy"] if r < count
    )
    figure = go.Figure()
    figure.add_bar(
        y=[ids[r] for r, _, _ in waits],
        x=[u - a for _, a, u in waits],
        base=[a - 0.5 for _, a, _ in waits],
        orientation="h",
        name="waiting",
        marker_color=palette.PADDED,
        hovertext=[f"{ids[r]}: waiting, {span(a, u - 1)}" for r, a, u in waits],
        hoverinfo="text",
    )
    figure.add_bar(
        y=[ids[r] for r, _, _, _ in stints],
        x=[last + 1 - first for _, first, last, _ in stints],
        base=[first - 0.5 for _, first, _, _ in stints],
        orientation="h",
        name="running (colour = request, as on the Grid)",
        marker_color=palette.of_requests(run.frames["colours"], [r for r, _, _, _ in stints]),
        hovertext=[f"{ids[r]}: running in slot {slot}, {span(first, last)}" for r, first, last, slot in stints],
        hoverinfo="text",
    )
    figure.update_layout(
        barmode="overlay",
        height=min(120 + 18 * len(ids), 2400),
        xaxis_title="step",
        yaxis={"autorange": "reversed", "title": "request", "categoryorder": "array", "categoryarray": ids},
        margin={"t": 50},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    figure.update_xaxes(**count_axis(end))
    add_cursor(figure, step)
    return figure


def span(first: int, last: int) -> str:
    """Hover text for steps first..last."""
    return f"step {first:,}" if first == last else f"steps {first:,}–{last:,}"


def render_metrics(run: Run, step: int, without_cache: Callable[[], Run] | None = None) -> None:
    """The run's figures and charts; `without_cache` makes the same run with prefix caching off (a run
    with it on only; None for a loaded event log)."""
    figures = run.summary
    columns = st.columns(5)
    columns[0].metric("Steps", f"{figures['steps']:,}")
    columns[1].metric("Throughput", f"{figures['throughput_tokens_per_s']:,.0f} tok/s")
    columns[2].metric("Slot utilisation", f"{figures['slot_utilization']:.0%}")
    columns[3].metric("Padding waste", f"{figures['padding_waste']:.0%}")
    columns[4].metric("TTFT p50", duration(figures["ttft_p50_s"]))
    if run.long:
        st.caption(
            f"A long run ({len(run.steps):,} busy steps): the charts over steps draw, of each stretch of "
            f"{-(-len(run.steps) // OVERVIEW_BUCKETS):,} steps, the steps where a line is lowest or highest, so "
            "every peak stays (the Grid tab's overview shows the same over simulated time)."
        )
    st.plotly_chart(over_time_figure(run, step), key="over_time")
    render_memory_charts(run, step)
    if run.log.config.prefix_caching:
        render_prefix_charts(run, step, without_cache)
    st.caption(cost_caption(run.cost))
    table = request_table(run.requests)
    if isinstance(table, pd.DataFrame):
        st.caption(f"{len(table):,} requests: the columns ending in _s are simulated seconds.")
    st.dataframe(table, key="request_table")


def request_table(requests: pd.DataFrame) -> Styler | pd.DataFrame:
    """The per-request table with its simulated seconds written as durations, as everywhere in the app (the
    numbers stay underneath), its whole steps as whole numbers and "–" where a figure does not apply (a
    request that never got a token). A styled table shows its own text in every cell, so every column
    is written here. Styling costs about 27 µs a cell (0.43 s for 8.4's 1,000 requests), so a table of
    more than `MAX_STYLED_CELLS` is left as numbers."""
    if requests.size > MAX_STYLED_CELLS:
        return requests
    whole = [c for c in requests.columns if c.endswith(("_step", "_steps")) and c != "tpot_steps"]
    table = requests.astype({c: "Int64" for c in whole})
    seconds = {c: duration for c in requests.columns if c.endswith("_s")}
    return table.style.format(seconds, precision=2, na_rep=duration(None), thousands=",")


def cost_caption(cost: CostModel) -> str:
    """Which cost model turned the steps into simulated seconds, in its own figures."""
    if cost.name == "default":
        return (
            "Simulated seconds come from the default cost model (engine/analysis/metrics.py): "
            f"{cost.step_s * 1e3:g} ms a step + {cost.row_s * 1e3:g} ms a row + {cost.prefill_token_s * 1e3:g} ms "
            "a prompt token, a 7B model on an A100 in round figures."
        )
    return (
        f"Simulated seconds come from the hardware preset {cost.name} (engine/analysis/hardware.py): "
        f"{cost.step_s * 1e3:.1f} ms a step to read the weights + {cost.kv_token_s * 1e6:.2f} µs per token of "
        f"context attended + {cost.prefill_token_s * 1e3:.2f} ms a prompt token prefilled."
    )


def over_time_figure(run: Run, step: int) -> go.Figure:
    """Active rows, queue depth and padded rows per busy step (a long run's thinned to their peaks), with the
    cursor at `step`."""
    series = tuple(name.replace(" ", "_") for name in palette.OVER_TIME)
    steps = with_idle_stretches(drawn_steps(run.steps, series, run.long))
    figure = go.Figure()
    for name, colour in palette.OVER_TIME.items():
        figure.add_scatter(x=steps.step, y=steps[name.replace(" ", "_")], name=name, mode="lines", line_color=colour)
    figure.update_layout(
        height=360,
        xaxis_title="step",
        yaxis_title="count",
        margin={"t": 50, "b": 40},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    figure.update_xaxes(**count_axis(len(run.replay) - 1))
    figure.update_yaxes(**count_axis(max((steps[c.replace(" ", "_")].max() for c in palette.OVER_TIME), default=0)))
    add_cursor(figure, step)
    return figure
