"""The lesson "Will it run in time?" beside its stage: this machine's measurements, drawn from the
files the benchmarks write (`engine/lab/measured_files.py`), never from figures typed in a lesson.

- ns a token against the rows in the batch, for the loop engine (the course's) and the vectorised one (both
  axes logarithmic), with the crossover marked and the figures at the smallest and largest batch;
- each slow-but-correct engine's whole run at its axis's largest size, beside the reference's.

A file that is missing or cannot be read is a message naming the command that writes it; while
one is missing, the predictions graded from it are left out, and the lesson says so above them.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
import streamlit as st

from cblab.ui import palette
from engine.lab.measured_files import MeasurementError, SlowEngines, Vectorised, read_slow_engines, read_vectorised
from engine.lab.measured_quizzes import SPEED_KINDS, measurement_problem
from engine.lab.measured_text import measured_on, ns_text, seconds_text, times_text

LOOP_COLOUR, VECTORISED_COLOUR = palette.EVICT, palette.ADMIT


def render_measurement_notice(kinds=SPEED_KINDS) -> None:
    """Say which predictions are left out, and why, while the measurements `kinds` are graded from are missing."""
    problems = dict.fromkeys(p for kind in kinds if (p := measurement_problem(kind)) is not None)
    if problems:
        what = "predictions about speed are graded from this machine's measurements"
        if kinds != SPEED_KINDS:
            what = "predictions about the whole trace are graded from its stored replay"
        st.warning(
            f"This lesson's {what}, and they are left out until the measurements are here: "
            + " ".join(f"{problem}." for problem in problems),
            icon=":material/speed:",
        )


def render_measured(_scenario=None) -> None:
    try:
        vectorised = read_vectorised()
    except MeasurementError as exc:
        st.info(str(exc))
    else:
        st.plotly_chart(rows_figure(vectorised), key="measured_rows")
        st.markdown(rows_summary(vectorised))
    try:
        slow = read_slow_engines()
    except MeasurementError as exc:
        st.info(str(exc))
    else:
        st.markdown(slow_summary(slow))
        st.table(slow_rows(slow))


def rows_figure(v: Vectorised) -> go.Figure:
    figure = go.Figure()
    for name, figures, colour in (
        ("loop engine (the course's)", v.loop_ns, LOOP_COLOUR),
        ("vectorised engine", v.vectorised_ns, VECTORISED_COLOUR),
    ):
        figure.add_scatter(x=v.rows, y=figures, name=name, mode="lines+markers", line={"color": colour})
    if v.crossover_rows is not None:
        figure.add_vline(x=v.crossover_rows, line={"color": palette.CURRENT, "dash": "dash"})
    figure.update_layout(
        xaxis={"title": "rows in the batch", "type": "log", "tickvals": v.rows, "ticktext": [f"{r:,}" for r in v.rows]},
        yaxis={"title": "time a token", "type": "log", **_decades([*v.loop_ns, *v.vectorised_ns])},
        legend={"orientation": "h", "y": 1.15},
        margin={"t": 40, "r": 20},
        height=340,
    )
    return figure


def _decades(figures: list[float | None]) -> dict:
    """Ticks at each power of ten the figures span, in words ("100 ns", "1.0 µs")."""
    measured = [f for f in figures if f]
    if not measured:
        return {}
    low, high = math.floor(math.log10(min(measured))), math.ceil(math.log10(max(measured)))
    ticks = [10.0**k for k in range(low, high + 1)]
    return {"tickvals": ticks, "ticktext": [ns_text(t) for t in ticks], "range": [low, high]}  # (log10 units)


def rows_summary(v: Vectorised) -> str:
    """The figures at the smallest batch and at the largest measured for both engines, and the crossover."""
    both = [i for i, (a, b) in enumerate(zip(v.loop_ns, v.vectorised_ns)) if a and b]
    if not both:
        return "No row count is measured for both engines."
    said = [
        f"at {v.rows[i]:,} rows the loop engine took {ns_text(v.loop_ns[i])} a token and the vectorised one "
        f"{ns_text(v.vectorised_ns[i])}"
        for i in dict.fromkeys((both[0], both[-1]))
    ]
    last = both[-1]
    ratio = v.loop_ns[last] / v.vectorised_ns[last]
    faster = f"{times_text(ratio)} faster" if ratio >= 1 else f"{times_text(1 / ratio)} slower"
    crossing = (
        "The vectorised engine was faster at none of the row counts measured."
        if v.crossover_rows is None
        else f"The dashed line is the fewest rows at which the vectorised engine was faster: {v.crossover_rows:,}."
    )
    return (
        f"On this machine {'; '.join(said)} (the vectorised engine {faster} there). {crossing} "
        f"(M{measured_on(v.measured_on, v.load, v.cpu)[1:]}.)"
    )


def slow_summary(s: SlowEngines) -> str:
    return (
        "Each slow engine below is a short loop engine of the kind a candidate writes, with one slow decision, and "
        "gives the same outputs as the loop engine; its whole run at the largest size on its axis, beside the loop "
        "engine's "
        f"({measured_on(s.measured_on, s.load)}):"
    )


def slow_rows(s: SlowEngines) -> list[dict[str, object]]:
    return [
        {
            "engine": e.name,
            "grows with": e.axis,
            "at": f"{e.sizes[-1]:,} {e.unit}",
            "takes": seconds_text(e.seconds),
            "the loop engine takes": seconds_text(e.reference_seconds),
        }
        for e in s.engines.values()
    ]
