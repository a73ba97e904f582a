"""The other tabs: per-request timeline, metrics over time, the four-way comparison, the event log."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from engine.analysis.metrics import format_seconds
from engine.core.dataframe import KIND_LABELS, events_frame
from engine.core.events import EventKind
from engine.lab.compare import COMPARED, CONFIGURATIONS, continuous_speedup
from ui import palette
from ui.runs import Run, comparison

MAX_TIMELINE_REQUESTS = 300
MAX_LOG_ROWS = 5_000  # events turned into the Event log table at once


def render_timeline(run: Run) -> None:
    requests = run.requests
    shown = requests.head(MAX_TIMELINE_REQUESTS)
    if len(requests) > len(shown):
        st.caption(f"The first {len(shown)} of {len(requests)} requests.")
    log = run.log
    admits = np.flatnonzero(np.frombuffer(log.kind, np.int8) == EventKind.ADMIT)
    slot_column, request_column = np.frombuffer(log.slot, np.int32), np.frombuffer(log.request, np.int32)
    slots = {log.requests[request_column[i]].request_id: int(slot_column[i]) for i in admits}
    figure = go.Figure()
    ids = list(shown.index)
    waiting = shown.admit_step.fillna(shown.finish_step) - shown.arrival_step
    figure.add_bar(
        y=ids,
        x=waiting,
        base=shown.arrival_step,
        orientation="h",
        name="waiting",
        marker_color=palette.PADDED,
        hovertemplate="%{y}: waiting from step %{base}<extra></extra>",
    )
    running = shown.finish_step + 1 - shown.admit_step
    colors = [palette.REQUESTS[slots.get(rid, 0) % len(palette.REQUESTS)] for rid in ids]
    figure.add_bar(
        y=ids,
        x=running,
        base=shown.admit_step,
        orientation="h",
        name="running (colour = slot)",
        marker_color=colors,
        customdata=[slots.get(rid) for rid in ids],
        hovertemplate="%{y}: running in slot %{customdata} from step %{base}<extra></extra>",
    )
    figure.update_layout(
        barmode="overlay",
        height=min(120 + 18 * len(ids), 2400),
        xaxis_title="step",
        yaxis={"autorange": "reversed", "title": "request"},
        margin={"t": 30},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    st.plotly_chart(figure, key="timeline")


def render_metrics(run: Run) -> None:
    figures = run.summary
    columns = st.columns(5)
    columns[0].metric("Steps", f"{figures['steps']:,}")
    columns[1].metric("Throughput", f"{figures['throughput_tokens_per_s']:,.0f} tok/s")
    columns[2].metric("Slot utilisation", f"{figures['slot_utilization']:.0%}")
    columns[3].metric("Padding waste", f"{figures['padding_waste']:.0%}")
    columns[4].metric("TTFT p50", format_seconds(figures["ttft_p50_s"]))
    steps = run.steps.set_index("step")
    over_time = pd.DataFrame(
        {
            "active rows": steps.active_rows,
            "queue depth": steps.queue_depth,
            "padded rows": steps.padded_rows,
        }
    )
    st.line_chart(over_time, x_label="step")
    st.caption(
        "Simulated seconds come from the cost model in engine/metrics.py (7 ms a step + 0.1 ms a row "
        "+ 0.05 ms a prompt token, a 7B model on an A100)."
    )
    st.dataframe(run.requests, key="request_table")


def render_comparison(run: Run, name: str, toml_text: str | None, overrides) -> None:
    if run.scenario is None:
        st.info("A loaded event log replays without the engine, so it cannot be re-run in other configurations.")
        return
    results = comparison(name, toml_text, overrides)
    speedup = continuous_speedup(results)
    st.metric(
        "Continuous / static throughput (ragged)",
        f"{speedup:.2f}×" if speedup is not None else "– (no tokens generated)",
    )
    formats = {"steps": "{:,.0f}", "throughput_tokens_per_s": "{:,.0f} tok/s", "slot_utilization": "{:.0%}"}
    formats["padding_waste"] = formats["slot_utilization"]
    shown = {name: formats.get(name, "{:.3f} s") for name in COMPARED}
    table = pd.DataFrame(results).T[list(COMPARED)].style.format(shown).relabel_index(list(COMPARED.values()), axis=1)
    st.dataframe(table, key="comparison_table")
    left, right = st.columns(2)
    names = list(CONFIGURATIONS)
    left.plotly_chart(
        _bars(names, [results[n]["throughput_tokens_per_s"] for n in names], "tokens / s"), key="compare_throughput"
    )
    right.plotly_chart(
        _bars(names, [results[n]["e2e_p50_s"] for n in names], "end-to-end p50 (s)"), key="compare_latency"
    )


def _bars(names: list[str], values: list[float], title: str) -> go.Figure:
    figure = go.Figure(go.Bar(x=names, y=values, marker_color=palette.REQUESTS[: len(names)]))
    figure.update_layout(title=title, height=320, margin={"t": 40, "b": 40})
    return figure


def render_log(run: Run) -> None:
    """The events, filtered; only the first MAX_LOG_ROWS matching ones are turned into a table."""
    log = run.log
    left, middle, right = st.columns([2, 1, 1])
    kinds = left.multiselect("Kinds", KIND_LABELS, key="log_kinds")
    request = middle.text_input("Request id", key="log_request")
    slot = right.number_input("Slot", min_value=0, value=None, step=1, key="log_slot")
    keep = np.ones(len(log), dtype=bool)
    if kinds:
        keep &= np.isin(np.frombuffer(log.kind, np.int8), [KIND_LABELS.index(k) for k in kinds])
    if request:
        index = log.request_index.get(request.strip(), -2)
        keep &= np.frombuffer(log.request, np.int32) == index
    if slot is not None:
        keep &= np.frombuffer(log.slot, np.int32) == slot
    matching = np.flatnonzero(keep)
    shown = matching[:MAX_LOG_ROWS]
    more = f"; the first {len(shown):,} are shown" if len(shown) < len(matching) else ""
    st.caption(f"{len(matching):,} of {len(log):,} events{more}")
    st.dataframe(events_frame(log, shown), key="log_table", height=420)
    left, right = st.columns(2)
    left.download_button("Download JSONL", log.to_jsonl, "events.jsonl", "application/jsonl", key="get_jsonl")
    right.download_button(
        "Download CSV", lambda: log.to_dataframe().to_csv(index=False), "events.csv", "text/csv", key="get_csv"
    )
