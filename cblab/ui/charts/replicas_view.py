"""The autoscaling lesson's view: replicas behind a router, three ways (one replica, scaling on queue
depth, scaling on utilisation), as queue depth, utilisation and replica count over the steps of
one clock, and the figures as a table. The simulation is engine/lab/replicas.py."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from cblab.ui import palette
from cblab.ui.runs.runs import scenario_digest
from engine.lab.replicas import ReplicaRun, contrast, run_summary
from engine.lab.scenario import Scenario

COLOURS = {"one replica": palette.EVICT, "queue depth": palette.ADMIT, "utilization": palette.STOP_MATCH}
PANELS = (("queue_depth", "requests waiting"), ("utilization", "busy slots"), ("replicas", "replicas started"))


@st.cache_data(max_entries=8, show_spinner="Running the replicas…")
def cached_contrast(digest: str, _scenario: Scenario) -> dict[str, ReplicaRun]:
    """`contrast(scenario)`, keyed by the scenario's digest (a Scenario is not hashed)."""
    return contrast(_scenario)


def replicas_figure(runs: dict[str, ReplicaRun]) -> go.Figure:
    figure = make_subplots(rows=len(PANELS), cols=1, shared_xaxes=True, vertical_spacing=0.06)
    for name, run in runs.items():
        for row, (column, _) in enumerate(PANELS, 1):
            figure.add_scatter(
                x=run.steps.step,
                y=run.steps[column],
                name=name,
                legendgroup=name,
                showlegend=row == 1,
                line={"color": COLOURS.get(name), "shape": "hv" if column == "replicas" else "linear"},
                row=row,
                col=1,
            )
    for row, (_, title) in enumerate(PANELS, 1):
        figure.update_yaxes(title_text=title, rangemode="tozero", row=row, col=1)
    figure.update_yaxes(tickformat=".0%", range=[0, 1.05], row=2, col=1)
    figure.update_xaxes(title_text="step", row=len(PANELS), col=1)
    figure.update_layout(height=560, legend={"orientation": "h", "y": 1.06}, margin={"t": 40})
    return figure


HEADINGS = {  # run_summary's figures, as the table heads them
    "steps": "steps",
    "peak_replicas": "peak replicas",
    "replica_steps": "replica-steps (cost)",
    "scale_ups": "scale-ups",
    "tokens_per_step": "tokens per step",
    "max_queue": "longest queue",
    "mean_utilization": "mean utilisation",
    "latency_p50_steps": "latency p50 (steps)",
    "latency_p99_steps": "latency p99 (steps)",
}


def replicas_table(runs: dict[str, ReplicaRun]) -> pd.DataFrame:
    """One row per autoscaler, headed in words, utilisation as a percentage (as the lesson says it)."""
    frame = pd.DataFrame({name: run_summary(run) for name, run in runs.items()}).T
    frame["mean_utilization"] = [f"{u:.0%}" for u in frame["mean_utilization"]]
    frame["tokens_per_step"] = [f"{t:.2f}" for t in frame["tokens_per_step"]]
    frame.index.name = "autoscaler"
    return frame.rename(columns=HEADINGS).reset_index()


def render_replicas(scenario: Scenario) -> None:
    """The three runs of a scenario."""
    try:
        runs = cached_contrast(scenario_digest(scenario), scenario)
    except ValueError as exc:  # over a limit: one line, as everywhere
        st.error(str(exc))
        return
    st.plotly_chart(replicas_figure(runs), key="replicas_chart")
    st.dataframe(replicas_table(runs), key="replicas_table", hide_index=True)
