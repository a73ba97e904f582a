"""Slow engines: a correct engine that would take minutes on 100k requests, and why, guessed first.

Each engine of `engine.practice.slow_zoo.SLOW_BUGS` passes every checker case, so there is no
wrong cell to click: the learner reads the candidate's code and predicts the slow pattern (a
radio of them all); checking the guess reveals the answer, the plain loop's method beside the
slow one, and a chart of CPU time per generated token against size (log-log) for the slow
engine, the reference engine and the plain loop. The chart reads the figures stored by
`benchmarks/slow_zoo.py --write` (`engine/lab/measurements/slow_zoo.json`): nothing is run or
timed at page load, a class of 30 shares one server.
"""

from __future__ import annotations

import json
from importlib import resources

import plotly.graph_objects as go
import streamlit as st

from engine.practice.checker.scale.workloads import AXIS_BY_NAME
from engine.practice.slow_zoo import PATTERNS, SLOW_BUGS, changed_code

QUESTION = "This engine passes every case of the checker: why would it take minutes on 100k requests?"
SLOW_COLOUR, REFERENCE_COLOUR, PLAIN_COLOUR = "#b91c1c", "#1d4ed8", "#6b7280"


@st.cache_data(show_spinner=False)
def measurements() -> dict:
    """The stored figures, read once per server."""
    return json.loads(resources.files("engine.lab").joinpath("measurements/slow_zoo.json").read_text())


def figure(entry: dict, title: str) -> go.Figure:
    """ns per generated token against size, log-log: the slow engine (with its extrapolation to the target,
    dashed, past the per-run cap), the reference engine and the plain loop."""
    sizes, slow = entry["sizes"], entry["ns_per_token"]
    fig = go.Figure()
    fig.add_scatter(x=sizes, y=slow, name=title, mode="lines+markers", line={"color": SLOW_COLOUR, "width": 3})
    if entry["target_from"] == "extrapolated":
        last = max(i for i, ns in enumerate(slow) if ns is not None)
        target_ns = entry["seconds_at_target"] * 1e9 / AXIS_BY_NAME[entry["axis"]].workload(sizes[-1]).tokens
        fig.add_scatter(
            x=[sizes[last], sizes[-1]],
            y=[slow[last], target_ns],
            name="extrapolated",
            mode="lines+markers",
            line={"color": SLOW_COLOUR, "dash": "dash"},
            marker={"symbol": "circle-open"},
        )
    for name, key, colour in (
        ("reference engine", "reference_ns_per_token", REFERENCE_COLOUR),
        ("plain loop", "plain_ns_per_token", PLAIN_COLOUR),
    ):
        fig.add_scatter(x=sizes, y=entry[key], name=name, mode="lines+markers", line={"color": colour})
    fig.update_xaxes(type="log", title=entry["unit"], tickvals=sizes)
    fig.update_yaxes(type="log", title="CPU ns per generated token")
    fig.update_layout(height=380, margin={"t": 30, "b": 10}, legend={"orientation": "h", "y": -0.25})
    return fig


def _record_guess(name: str) -> None:
    """The Check button's callback: the guess is kept for this engine, so the rerun reveals the answer."""
    st.session_state["slow_answer"] = (name, st.session_state.get("slow_guess"))


def _forget_guess() -> None:
    st.session_state.pop("slow_answer", None)
    st.session_state["slow_guess"] = None


def answered(name: str) -> str | None:
    """The learner's checked guess (a key of PATTERNS) for this engine, if any."""
    answer = st.session_state.get("slow_answer")
    return answer[1] if answer and answer[0] == name and answer[1] else None


def python_block(source: str) -> str:
    """Source as a Markdown code block (st.code would count among the page's code elements, which the editor's
    report is the first of)."""
    return f"```python\n{source}```"


def render_code(name: str, revealed: bool) -> None:
    """The slow engine's changed methods; revealed, each beside the plain loop's."""
    for title, slow, plain in changed_code(name):
        if not revealed:
            st.markdown(python_block(slow))
            continue
        left, right = st.columns(2)
        left.caption(f"Slow: `{title}`")
        left.markdown(python_block(slow))
        right.caption("Plain loop" if plain else "Plain loop: nothing (it has no such member)")
        if plain:
            right.markdown(python_block(plain))


def render_answer(name: str, guess: str) -> None:
    bug, entry = SLOW_BUGS[name], measurements()["engines"][name]
    if guess == bug.pattern:
        st.success(f"Right: {PATTERNS[guess]} ({bug.title})")
    else:
        st.error(f"Not this one. {PATTERNS[bug.pattern]} ({bug.title})")
    st.markdown(f"**Why it is slow.** {bug.why}  \n**The fix.** {bug.fix}")
    render_code(name, revealed=True)
    st.plotly_chart(figure(entry, bug.title), key="slow_chart")
    st.caption(caption(entry, measurements()))


def caption(entry: dict, figures: dict) -> str:
    seconds, reference = entry["seconds_at_target"], entry["reference_seconds_at_target"]
    return (
        f"CPU time per generated token along the checker's {entry['axis']} axis, the median of side-by-side runs "
        f"measured on {figures['measured_on']} at load {figures['load']}. At {entry['sizes'][-1]:,} {entry['unit']} "
        f"this engine takes {seconds:,.1f} s ({entry['target_from']}), the reference engine {reference:,.1f} s."
    )


def label(name: str) -> str:
    """The picker's name for an engine: a number, since the title would give the answer away."""
    return f"Candidate {list(SLOW_BUGS).index(name) + 1}"


def render_slow_bugs() -> None:
    """Pick a slow engine, read its code, predict the pattern; checking reveals the rest."""
    name = st.selectbox("A correct but slow engine", list(SLOW_BUGS), key="slow_bug", format_func=label)
    if st.session_state.get("slow_for") != name:  # a new engine: a fresh question
        st.session_state["slow_for"], st.session_state["slow_guess"] = name, None
    guess = answered(name)
    st.info(QUESTION)
    if guess is None:
        if st.session_state.get("slow_answer") == (name, None):
            st.warning("Pick one of the patterns first, then Check.")
        st.caption("The candidate's code, where it differs from a plain loop:")
        render_code(name, revealed=False)
        choose, check = st.columns([3, 1], vertical_alignment="bottom")
        choose.radio("Your prediction", list(PATTERNS), index=None, key="slow_guess", format_func=PATTERNS.get)
        check.button("Check my guess", key="slow_check", on_click=_record_guess, args=(name,))
        return
    render_answer(name, guess)
    st.button("Ask me again", key="slow_again", on_click=_forget_guess)
