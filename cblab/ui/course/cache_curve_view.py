"""The lesson "Kimi's chat traffic and the prefix cache" beside its stage: Mooncake's Figure 9 from the engine,
the whole trace's prefix hit rate against the cache's size, drawn from the stored curve
(`engine/lab/measurements/cache_curve.json`, `python benchmarks/cache_curve.py --write`), never from figures
typed in a lesson. The trace's own LRU figure is drawn beside the engine's, the maximum (a cache that never
evicts) as a dashed line, and the lesson's own pool as a dotted one. A missing file is a message naming the
command that writes it.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from cblab.ui import palette
from engine.lab.measured_files import CacheCurve, MeasurementError, read_cache_curve
from engine.lab.scenario import Scenario

ENGINE_COLOUR, TRACE_COLOUR = palette.ADMIT, palette.OVER_TIME["active rows"]


def render_cache_curve(scenario: Scenario) -> None:
    try:
        curve = read_cache_curve()
    except MeasurementError as exc:
        st.info(str(exc))
        return
    pool = scenario.engine.kv_blocks * scenario.engine.block_size if scenario.engine.kv_blocks else None
    st.plotly_chart(curve_figure(curve, pool), key="cache_curve")
    st.markdown(curve_summary(curve))


def curve_figure(curve: CacheCurve, pool_tokens: int | None = None) -> go.Figure:
    figure = go.Figure()
    sizes = list(curve.capacities)
    for name, rates, colour in (
        ("the engine", curve.engine_hit_rate, ENGINE_COLOUR),
        ("the trace alone (LRU, no batching)", curve.trace_hit_rate, TRACE_COLOUR),
    ):
        percents = [None if r is None else r * 100 for r in rates]
        figure.add_scatter(x=sizes, y=percents, name=name, mode="lines+markers", line={"color": colour})
    maximum = {"color": palette.CURRENT, "dash": "dash"}
    figure.add_hline(y=curve.unbounded_engine_hit_rate * 100, line=maximum, annotation_text="no limit")
    if pool_tokens:
        pool = {"color": palette.EVICT, "dash": "dot"}
        figure.add_vline(
            x=pool_tokens, line=pool, annotation_text="this lesson's pool", annotation_position="bottom right"
        )
    ticks = [_tokens(size) for size in sizes]
    figure.update_layout(
        xaxis={"title": "cache capacity (tokens)", "type": "log", "tickvals": sizes, "ticktext": ticks},
        yaxis={"title": "prompt tokens found in the cache (%)", "rangemode": "tozero"},
        legend={"orientation": "h", "y": 1.15},
        margin={"t": 40, "r": 20},
        height=340,
    )
    return figure


def curve_summary(curve: CacheCurve) -> str:
    """The figures, each capacity's share of the maximum, and where they come from."""
    maximum = curve.unbounded_engine_hit_rate
    points = "; ".join(
        f"{_tokens(size)} tokens: {rate * 100:.1f} % ({rate / maximum * 100:.0f} % of the maximum)"
        for size, rate in zip(curve.capacities, curve.engine_hit_rate)
        if rate is not None and maximum
    )
    return (
        f"The whole trace {curve.trace}, replayed by the engine once per capacity: {points}. The dashed line is a "
        f"cache that never evicts ({maximum * 100:.1f} %); the dotted one, this lesson's pool. "
        f"(`python -m engine cache-curve {curve.trace}`, stored on {curve.measured_on}.)"
    )


def _tokens(count: int) -> str:
    return f"{count / 1e6:g}M" if count >= 10**6 else f"{count:,}"
