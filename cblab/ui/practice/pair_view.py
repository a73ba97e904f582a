"""Two runs drawn side by side: a grid and the step's story for each, the first difference outlined.

The two grids share one x range, so step k sits at the same x in both, and the first (step,
slot) where the runs differ is outlined; one step slider drives both. A checker's uploaded
log shows the user's solution, which only the checker ran: both of its grids are rebuilt
from traces the same way (`engine.practice.checker.reconstruct`); a run that hung or raised is
drawn as far as it got, under a warning. A checker log is a user's
file: everything wrong with it (not a log, a smuggled case out of bounds, a log that does
not replay) is shown with `st.error`, never a traceback.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from cblab.ui import palette
from cblab.ui.practice.bug_story import story
from cblab.ui.practice.paired_runs import Answer, Received, first_difference
from cblab.ui.stage.grid import columns_shown, grid_data, grid_figure
from engine import EventLog
from engine.analysis.replay import Replay
from engine.practice.checker.reconstruct import case_from_log, reconstruct
from engine.practice.checker.run import reference

OUTLINE = "first difference"  # the name of the outline shape
INSET = 0.44  # the outline's half-width, in cells: inside the current step's frame, which stays visible
MARKERS = "▸ admitted · × evicted · orange square: a stop matched · black frame: this step"


def pair_figure(replay: Replay, step: int, steps: int, highlight: tuple[int, int] | None) -> go.Figure:
    """One side's grid on the x range both sides share (`steps` columns from the same first step), so
    step k is at the same x in both; a run that ended before `step` is drawn to its end.

    NOTE: no legend (`MARKERS` is one caption above both): a legend's entries depend on the markers a
    run has, and a legend that wraps takes its height from the plot, so the two grids would differ.
    The first difference is a rectangle in data coordinates, so it frames exactly its cell."""
    figure = grid_figure(grid_data(replay, {}), min(step, len(replay) - 1))
    columns = columns_shown(replay.log.config.batch_size)
    first, width = max(0, step - columns + 1), min(columns, steps)
    figure.update_xaxes(range=[first - 0.5, first + width - 0.5], dtick=1 if width <= 40 else None)
    figure.update_shapes(x0=step - 0.5, x1=step + 0.5, selector={"type": "rect"})  # the current-step frame
    figure.update_layout(showlegend=False, margin={"t": 10})
    if highlight is not None and first <= highlight[0] <= step:
        (x, y), line = highlight, {"color": palette.EVICT, "width": 4}
        box = {"x0": x - INSET, "x1": x + INSET, "y0": y - INSET, "y1": y + INSET}
        figure.add_shape(type="rect", line=line, name=OUTLINE, **box)
    return figure


def step_slider(key: str, steps: int, start: int, identity: object) -> int:
    """The pair's step slider; it moves to `start` whenever `identity` changes (another bug, spot it
    first turned on or off, an answer checked) and otherwise keeps the learner's step."""
    if steps <= 1:
        return 0
    widget, marker = f"{key}_step", f"{key}_step_for"
    if st.session_state.get(marker) != identity or widget not in st.session_state:
        st.session_state[widget], st.session_state[marker] = start, identity
    st.session_state[widget] = min(max(int(st.session_state[widget]), 0), steps - 1)
    return st.slider("Step", 0, steps - 1, key=widget)


def render_pair(
    left: EventLog,
    right: EventLog,
    labels: tuple[str, str],
    key: str,
    *,
    received: tuple[Received | None, Received | None] = (None, None),
    answer: Answer | None = None,
    identity: object = None,
    reveal: bool = True,
) -> None:
    """Two runs side by side, the step slider at their first difference (outlined, and named in a
    caption); `reveal=False` hides all three (and the facts that give it away) and starts at the last
    step, for the learner to spot it."""
    difference = first_difference(left, right, received)
    steps = max(left.num_steps, right.num_steps)
    start = (difference[0] if difference else 0) if reveal else steps - 1
    step = step_slider(key, steps, min(start, max(steps - 1, 0)), (identity, reveal))
    if reveal:
        where = f"step {difference[0]}, slot {difference[1]}" if difference else "nowhere: the grids agree"
        st.caption(f"First difference (outlined in red): {where}.")
    st.caption(MARKERS + (" · red square: the first difference" if reveal else ""))
    for column, log, label, side, got in zip(st.columns(2), (left, right), labels, ("left", "right"), received):
        with column:
            st.markdown(f"**{label}**")
            replay = Replay(log)
            if not len(replay):
                st.info("No steps.")
                continue
            figure = pair_figure(replay, step, steps, difference if reveal else None)
            st.plotly_chart(figure, key=f"{key}_{side}", config={"displayModeBar": False})
            for sentence in story(replay, step, got, answer, explain=reveal):
                st.markdown(f"- {sentence}")


@st.cache_resource(max_entries=8, show_spinner=False)
def checker_pair(text: str) -> tuple[EventLog, EventLog]:
    """A checker's JSONL and the reference run of the same case; ValueError for anything wrong with it."""
    log = EventLog.from_jsonl(text)
    case = case_from_log(log)  # bounds the case, and the log's steps and events
    if case is None:
        raise ValueError("this event log was not written by `python -m engine check --jsonl`")
    try:
        Replay(log)
    except Exception as exc:  # its events are well-formed one by one, but do not make a run
        raise ValueError(f"this checker log does not replay ({type(exc).__name__}: {exc})") from None
    return log, reconstruct(case, reference(case))


def render_checker_log(text: str, key: str) -> None:
    """A checker's failing run beside the reference, or st.error saying what is wrong with the file."""
    try:
        yours, expected = checker_pair(text)
        ended = [e.message for e in yours if e.kind == "error"]  # reconstruct's mark of a run that ended early
        if ended:
            st.warning(f"Your solution's run did not finish: {ended[-1]}.")
        render_pair(yours, expected, ("Your solution", "Reference"), key, identity=hash(text))
    except ValueError as exc:
        st.error(str(exc))
    except Exception as exc:  # a log that passes every check but still cannot be drawn
        st.error(f"this checker log cannot be shown ({type(exc).__name__}: {exc})")
