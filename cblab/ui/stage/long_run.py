"""A long run on the Grid tab: its overview over simulated time, the window of steps the learner picks from it,
and that window cut for the stage.

A run is long when `engine.lab.limits.is_long` says so (more than LONG_RUN_STEPS busy steps or LONG_RUN_EVENTS
events): its stage cannot take it whole, so it plays at most MAX_WINDOW_STEPS steps at a time
(`engine.analysis.window_frames`). The window opens on the DEFAULT_WINDOW_STEPS steps around the session's step
(a link's), else just before an open prediction's step, else around the run's deepest queue; a checked
prediction of the lesson moves it to that prediction's step. The learner moves it on the overview (a click
centres it there, a drag picks the steps under it: `picked_window`) or with the range slider under it; the
overview's shading follows. Each lesson keeps its window for the session (through Next lesson, Back and the
picker), as `kept_open.py` keeps boxes. A window's frames are made once for the class (`WINDOWS`).

While a prediction is open, the overview and the window stop before its step, as the stage does: the window's
frames never hold a step the prediction hides.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from cblab.ui.cache import SizedCache
from cblab.ui.course.course import quiz_key
from cblab.ui.kept_open import kept_expander
from cblab.ui.runs.runs import Run
from cblab.ui.runs.stage_wire import compress
from cblab.ui.stage.overview_chart import buckets, overview_data, render_overview
from engine.analysis.overview import default_window, step_times
from engine.analysis.window_frames import window_bounds, window_frames
from engine.lab.limits import DEFAULT_WINDOW_STEPS, MAX_WINDOW_STEPS

WINDOWS = SizedCache(max_bytes=64 * 2**20)  # (run, first step, last step) -> the window's frames, compressed
KEPT = "long_windows"  # session state: lesson -> [first, last], the window the learner left
MOVED_FOR = "long_windows_goto"  # session state: lesson -> the checked prediction the window last moved to


def render_long_run(run: Run, runs: list[Run], lesson: str, step: int, cap: int | None, projector: bool):
    """Draw `run`'s overview and window picker; return `runs` (it, or a static and a continuous run) cut to the
    window for the stage, and the step the stage starts at (the session's, moved into the window)."""
    total = len(run.replay) if cap is None else max(cap, 1)  # the steps that may be shown
    busy = [s for s in run.frames["busy"] if s < total]
    first, last = _window(run, lesson, busy, total, step, cap)
    start_s, end_s = step_times(run.steps, first, last)
    # (on a projector the stage comes first: the overview is one click away, as the lesson's text is)
    box = "long_overview_projector" if projector else "long_overview"
    with kept_expander("Overview of the whole run", key=box, expanded=not projector):
        if cap == 0:
            st.caption("Answer the prediction above to see the run's overview.")
        else:
            data = overview_data(run, buckets(run, cap), (start_s, end_s), projector)
            render_overview(data, lambda picked: _picked(picked, lesson, busy, total, run, last - first + 1))
            st.caption("Click the overview to centre the window there, or drag across it to pick its steps.")
    key = f"window_{run.digest[:12]}_{total}"
    st.session_state[key] = (first, last)  # (the kept window, moved by a prediction or clamped to this run)
    st.slider(
        "Window of steps the stage plays",
        0,
        max(total - 1, 1),
        key=key,
        on_change=_moved,
        args=(key, lesson, busy, total),
        disabled=total <= 1,
        help=f"Drag either end: the stage plays at most {MAX_WINDOW_STEPS:,} steps of a long run at once.",
    )
    whole = "" if cap is None else f" (a prediction hides step {cap:,} on)"
    st.caption(
        f"The stage plays steps {first:,}–{last:,}, {start_s:,.1f}–{end_s:,.1f} s of simulated time (shaded), "
        f"of this run's {len(run.replay):,} steps{whole}: a run this long is played a window at a time."
    )
    return [_cut(shown, first, last, total) for shown in runs], min(max(step, first), last)


def _cut(run: Run, first: int, last: int, total: int) -> Run:
    """`run` (the one shown, or the other of a side-by-side pair, maybe shorter) cut to the window."""
    total = min(len(run.replay), total)
    busy = [s for s in run.frames["busy"] if s < total]
    return windowed(run, *window_bounds(busy, total, first, last, MAX_WINDOW_STEPS))


def windowed(run: Run, first: int, last: int) -> Run:
    """`run` with its stage frames those of steps `first`..`last` (made once for every session)."""

    def make() -> bytes:
        captions = run.scenario.captions if run.scenario is not None else {}
        return compress(window_frames(run.replay, run.frames, first, last, captions))

    wire = WINDOWS.get((run.digest, first, last), make, len)
    return dataclasses.replace(run, digest=f"{run.digest}@{first}-{last}", wire=wire)


def _window(run: Run, lesson: str, busy: list[int], total: int, step: int, cap: int | None) -> tuple[int, int]:
    """The lesson's window: as the learner left it, moved to a newly checked prediction's step, else the default."""
    kept = st.session_state.setdefault(KEPT, {})
    goto, moved = st.session_state.get("revealed"), st.session_state.setdefault(MOVED_FOR, {})
    window = kept.get(lesson)
    if _asked_here(goto, lesson) and moved.get(lesson) != goto:
        moved[lesson] = goto
        if window is None or not window[0] <= goto[1] <= window[1]:
            window = default_window(run.steps, total, DEFAULT_WINDOW_STEPS, around=goto[1])
    if window is None:
        around = step if step > 0 else (total - 1 if cap is not None else None)
        window = default_window(run.steps, total, DEFAULT_WINDOW_STEPS, around=around)
    kept[lesson] = list(window_bounds(busy, total, *window, MAX_WINDOW_STEPS))
    return kept[lesson][0], kept[lesson][1]


def _asked_here(goto: object, lesson: str) -> bool:
    """Whether `goto` (the prediction checked last: its key and step) is one of `lesson`'s (quiz_<lesson>_<n>)."""
    prefix = quiz_key(lesson, 0).removesuffix("0")
    return isinstance(goto, tuple) and str(goto[0]).startswith(prefix) and str(goto[0])[len(prefix) :].isdigit()


def _moved(key: str, lesson: str, busy: list[int], total: int) -> None:
    """The slider moved: keep the window (at most MAX_WINDOW_STEPS, whole columns), and start the stage at its start."""
    value = st.session_state.get(key)
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        return
    first, last = window_bounds(busy, total, value[0], value[1], MAX_WINDOW_STEPS)
    st.session_state.setdefault(KEPT, {})[lesson] = [first, last]
    st.session_state.step = first


def picked_window(picked: object, busy: list[int], total: int, steps, length: int) -> tuple[int, int] | None:
    """The window a pick on the overview asks for: a click (`{"center": step}`: a window `length` steps long
    centred there) or a drag (`{"first": step, "last": step}`), as `window_bounds` makes it; None for
    anything else the browser may send."""
    if not isinstance(picked, dict):
        return None
    center, first, last = (picked.get(k) for k in ("center", "first", "last"))
    if any(v is not None and (type(v) is not int or abs(v) > 2**31) for v in (center, first, last)):
        return None
    if center is not None:
        first, last = default_window(steps, total, length, around=center)
    elif first is None or last is None:
        return None
    return window_bounds(busy, total, first, last, MAX_WINDOW_STEPS)


def _picked(picked: object, lesson: str, busy: list[int], total: int, run: Run, length: int) -> None:
    """A pick on the overview: keep the window it asks for, and start the stage at its start."""
    window = picked_window(picked, busy, total, run.steps, length)
    if window is not None:
        st.session_state.setdefault(KEPT, {})[lesson] = list(window)
        st.session_state.step = window[0]
