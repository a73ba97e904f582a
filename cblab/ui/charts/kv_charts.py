"""The Metrics tab's memory charts: the KV pool's tokens over time (held, reserved but empty,
free: stacked, they fill the pool), the preemptions, and the gaps between a request's
consecutive tokens, in steps and in the cost model's seconds (the summary's TBT figures).

The pool's two charts need a KV pool; the gaps are shown with a pool or a token budget,
whose chunked prefills and preemptions are what make a row wait between tokens.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from cblab.ui.charts.chart_parts import add_cursor, count_axis, drawn_steps, log_bins, with_idle_stretches
from cblab.ui.runs.runs import Run
from engine.analysis.metrics import token_gaps
from engine.analysis.wording import duration
from engine.core.log.events import EventKind

HELD, RESERVED, FREE = "#4b5563", "#9ca3af", "#e5e7eb"  # as the stage's pool gauge
LAYOUT = {"margin": {"t": 60, "b": 40}, "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"}}


def render_memory_charts(run: Run, step: int) -> None:
    config = run.log.config
    if config.kv_blocks is not None:
        st.plotly_chart(kv_usage_figure(run, step), key="kv_usage")
        st.plotly_chart(preemptions_figure(run, step), key="preemptions")
    if config.memory:
        st.plotly_chart(token_gap_figure(run), key="token_gaps")


def kv_usage(run: Run) -> pd.DataFrame:
    """Per busy step (and over idle stretches, an empty pool): the pool's tokens held, reserved
    but empty (its rows' blocks' room not yet written) and free, as that step's model call saw it
    (a long run's steps thinned to their peaks: `chart_parts.drawn_steps`)."""
    config, steps = run.log.config, drawn_steps(run.steps, ("kv_blocks_held", "kv_tokens_held"), run.long)
    capacity = config.kv_blocks * config.block_size
    allocated = steps.kv_blocks_held * config.block_size
    frame = pd.DataFrame(
        {
            "step": steps.step,
            "idle_before": steps.idle_before,
            "held": steps.kv_tokens_held,
            "reserved": allocated - steps.kv_tokens_held,
            "free": capacity - allocated,
        }
    )
    return with_idle_stretches(frame, {"held": 0, "reserved": 0, "free": capacity})


def kv_usage_figure(run: Run, step: int) -> go.Figure:
    usage = kv_usage(run)
    figure = go.Figure()
    for name, colour in (("held", HELD), ("reserved", RESERVED), ("free", FREE)):
        label = {"held": "tokens held", "reserved": "reserved but empty", "free": "free"}[name]
        pattern = {"shape": "/", "fgcolor": HELD} if name == "reserved" else None
        figure.add_scatter(
            x=usage.step,
            y=usage[name],
            name=label,
            stackgroup="kv",
            mode="lines",
            line_color=colour,
            fillcolor=colour,
            fillpattern=pattern,
        )
    config = run.log.config
    title = f"KV cache: {config.kv_blocks:,} blocks × {config.block_size} tokens ({config.kv_policy})"
    figure.update_layout(title=title, height=360, xaxis_title="step", yaxis_title="tokens", **LAYOUT)
    figure.update_xaxes(**count_axis(len(run.replay) - 1))
    figure.update_yaxes(**count_axis(config.kv_blocks * config.block_size))
    add_cursor(figure, step)
    return figure


def preemptions_figure(run: Run, step: int) -> go.Figure:
    """Rows preempted at each step (bars), and so far (a line)."""
    log = run.log
    at = np.frombuffer(log.step, np.int32)[np.frombuffer(log.kind, np.int8) == EventKind.PREEMPT]
    steps, counts = np.unique(at, return_counts=True)
    figure = make_subplots(specs=[[{"secondary_y": True}]])
    figure.add_bar(x=steps, y=counts, name="preempted at the step", marker_color="#7c3aed")
    figure.add_scatter(
        x=np.r_[0, steps, len(run.replay) - 1],
        y=np.r_[0, np.cumsum(counts), counts.sum()],
        name="so far",
        mode="lines",
        line={"shape": "hv", "color": "#4c1d95"},
        secondary_y=True,
    )
    figures = run.summary
    title = f"Preemptions: {figures['preemptions']:,} ({figures['recomputed_tokens']:,} tokens computed again)"
    figure.update_layout(title=title, height=320, xaxis_title="step", **LAYOUT)
    figure.update_xaxes(**count_axis(len(run.replay) - 1))
    figure.update_yaxes(title_text="at the step", **count_axis(counts.max(initial=0)), secondary_y=False)
    figure.update_yaxes(title_text="so far", showgrid=False, **count_axis(counts.sum()), secondary_y=True)
    add_cursor(figure, step)
    return figure


def gaps(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """The gaps between each request's consecutive tokens: in steps, and in simulated seconds."""
    in_steps = token_gaps(run.log, run.steps.assign(end_s=run.steps.step))
    return in_steps.astype(np.int64), token_gaps(run.log, run.steps)


def token_gap_figure(run: Run) -> go.Figure:
    """Histograms of the gaps, in steps and in simulated ms, on log axes with log-spaced bins: most gaps are
    one step long and a few stalls last a hundred, and both must show."""
    in_steps, seconds = gaps(run)
    figure = make_subplots(cols=2, subplot_titles=("in steps", "in simulated ms"))
    for col, (values, whole, colour) in enumerate(((in_steps, True, HELD), (seconds * 1e3, False, RESERVED)), 1):
        edges, counts = log_bins(values, whole=whole)
        spans = [_bin_text(low, high, whole) for low, high in zip(edges[:-1], edges[1:])]
        figure.add_bar(
            x=np.sqrt(edges[:-1] * edges[1:]),
            y=counts,
            width=np.diff(edges) * 0.92,
            marker_color=colour,
            hovertext=[f"{span}: {n:,} {_gaps(n)}" for span, n in zip(spans, counts.tolist())],
            hoverinfo="text",
            row=1,
            col=col,
        )
        figure.update_xaxes(type="log", dtick=1, tickformat=",d" if whole else ",~g", row=1, col=col)
        figure.update_yaxes(type="log", dtick=1, tickformat=",d", row=1, col=col)  # every power of ten
    figures = run.summary
    title = f"Time between tokens: p99 {duration(figures['tbt_p99_s'])}, longest {duration(figures['max_tbt_s'])}"
    figure.update_layout(title=title, height=320, showlegend=False, bargap=0.05, margin={"t": 70, "b": 40})
    figure.update_yaxes(title_text="gaps (log scale)", row=1, col=1)
    return figure


def _bin_text(low: float, high: float, whole: bool) -> str:
    """A bin's span in hover text: steps low..high-1 for whole numbers, else low–high ms."""
    if whole:
        first, last = int(low), int(high) - 1
        return f"{first:,} step{'s' * (first != 1)}" if first >= last else f"{first:,}–{last:,} steps"
    return f"{low:,.3g}–{high:,.3g} ms"


def _gaps(n: int) -> str:
    return "gap" if n == 1 else "gaps"
