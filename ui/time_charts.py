"""The Timeline and Metrics tabs: per-request waiting and running bars, and rows and queue over
time, each with a cursor at the step the Grid shows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from engine.analysis.metrics import CostModel, format_seconds
from engine.core.events import EventKind
from ui import palette
from ui.runs import Run

MAX_TIMELINE_REQUESTS = 300


def render_timeline(run: Run, step: int) -> None:
    shown = min(len(run.requests), MAX_TIMELINE_REQUESTS)
    if len(run.requests) > shown:
        st.caption(f"The first {shown} of {len(run.requests)} requests.")
    st.plotly_chart(timeline_figure(run, step), key="timeline")


def timeline_figure(run: Run, step: int) -> go.Figure:
    """Waiting and running bars per request, each running bar in the request's colour on the
    stage (its slot only in the hover), and the cursor at `step`. Step k spans k ± 0.5."""
    shown = run.requests.head(MAX_TIMELINE_REQUESTS)
    ids, arrived, admitted, finished = list(shown.index), shown.arrival_step, shown.admit_step, shown.finish_step
    slots = admitted_slots(run.log)
    waited = admitted.fillna(finished) - arrived
    figure = go.Figure()
    figure.add_bar(
        y=ids,
        x=waited.where(waited > 0),
        base=arrived - 0.5,
        orientation="h",
        name="waiting",
        marker_color=palette.PADDED,
        hovertext=[f"{rid}: waiting, {span(a, a + w - 1)}" if w > 0 else "" for rid, a, w in zip(ids, arrived, waited)],
        hoverinfo="text",
    )
    figure.add_bar(
        y=ids,
        x=finished + 1 - admitted,
        base=admitted - 0.5,
        orientation="h",
        name="running (colour = request, as on the Grid)",
        marker_color=palette.of_requests(run.frames["colours"], [run.log.request_index[rid] for rid in ids]),
        hovertext=[
            f"{rid}: running in {slots.get(rid, 'no slot')}, {span(a, f)}" for rid, a, f in zip(ids, admitted, finished)
        ],
        hoverinfo="text",
    )
    figure.update_layout(
        barmode="overlay",
        height=min(120 + 18 * len(ids), 2400),
        xaxis_title="step",
        yaxis={"autorange": "reversed", "title": "request"},
        margin={"t": 50},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    add_cursor(figure, step)
    return figure


def span(first: float, last: float) -> str:
    """Hover text for steps first..last (floats from the metrics frame; NaN: not recorded)."""
    if np.isnan(last):
        return f"from step {first:.0f}"
    return f"step {first:.0f}" if first == last else f"steps {first:.0f}–{last:.0f}"


def admitted_slots(log) -> dict[str, str]:
    """Each admitted request's slot ("slot 0"), or its slots in order if preemption moved it ("slots 0, 1")."""
    admits = np.flatnonzero(np.frombuffer(log.kind, np.int8) == EventKind.ADMIT)
    slot_column, request_column = np.frombuffer(log.slot, np.int32), np.frombuffer(log.request, np.int32)
    slots: dict[str, list[int]] = {}
    for i in admits.tolist():
        held = slots.setdefault(log.requests[request_column[i]].request_id, [])
        if int(slot_column[i]) not in held:
            held.append(int(slot_column[i]))
    return {rid: ("slot " if len(held) == 1 else "slots ") + ", ".join(map(str, held)) for rid, held in slots.items()}


def add_cursor(figure: go.Figure, step: int) -> None:
    """The vertical line at the step the Grid shows, labelled "step N"."""
    figure.add_vline(
        x=step,
        line={"color": palette.CURRENT, "width": 2, "dash": "dot"},
        annotation={"text": f"step {step}", "font": {"color": palette.CURRENT}},
        annotation_position="top",
    )


def render_metrics(run: Run, step: int) -> None:
    figures = run.summary
    columns = st.columns(5)
    columns[0].metric("Steps", f"{figures['steps']:,}")
    columns[1].metric("Throughput", f"{figures['throughput_tokens_per_s']:,.0f} tok/s")
    columns[2].metric("Slot utilisation", f"{figures['slot_utilization']:.0%}")
    columns[3].metric("Padding waste", f"{figures['padding_waste']:.0%}")
    columns[4].metric("TTFT p50", format_seconds(figures["ttft_p50_s"]))
    st.plotly_chart(over_time_figure(run, step), key="over_time")
    st.caption(cost_caption(run.cost))
    st.dataframe(run.requests, key="request_table")


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
    """Active rows, queue depth and padded rows per busy step, with the cursor at `step`."""
    steps = with_idle_stretches(run.steps)
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
    add_cursor(figure, step)
    return figure


def with_idle_stretches(steps: pd.DataFrame) -> pd.DataFrame:
    """The busy steps' rows, plus zeros at the first and last step of each idle stretch (nothing
    runs or waits there), so a line does not join across it as if the work went on."""
    idle = steps[steps.idle_before > 0]
    zeros = {"active_rows": 0, "queue_depth": 0, "padded_rows": 0}
    first = pd.DataFrame({"step": idle.step - idle.idle_before, **zeros})
    last = pd.DataFrame({"step": idle.step - 1, **zeros})
    return pd.concat([steps, first, last]).drop_duplicates("step", keep="first").sort_values("step", kind="stable")
