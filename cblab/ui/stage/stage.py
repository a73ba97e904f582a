"""The stage: the slot grid, the KV pool (a run with one), the waiting queue and the narration,
played in the browser.

The stage is a Streamlit custom component (v2) whose CSS and JavaScript ship in
`cblab/ui/stage/stage_component/`, served by the app's own server as the package's declared assets
(`cblab/ui/components.py`; nothing is fetched from elsewhere). Python sends a run's frames
(`engine.analysis.frames.encode`, computed and compressed once per run: `cblab/ui/runs/stage_wire.py`)
the first time the session shows that run; later reruns send only the run's id, and the
browser keeps the frames it has. If the browser has lost them (it fires `missing`), the next
run sends them again.

Playback, at up to 60 steps a second, runs in the browser, and the stage reports its step
back when playback pauses or a manual move settles. Below it, the batch as the model sees
it is drawn by Python for the reported step. A checked prediction that moves the stage
costs one run more, the stage's report of its new step: Python knows the step already, but
the browser's copy of the stage's state must follow, or the learner's next click would send
the old step back. That run changes nothing on the page, and the stage's data is the same
as the run before, so Streamlit sends it as a reference to the browser's copy.
"""

from __future__ import annotations

import streamlit as st

from cblab.ui.components import PackagedComponent
from cblab.ui.controls import url
from cblab.ui.runs.runs import Run
from cblab.ui.runs.stage_wire import pack
from cblab.ui.stage.batch_view import batch_table, batch_view

# One module in the browser: stage.js imports the others (the inline form: these files in this order).
SCRIPTS = ("wire.js", "frames.js", "kv.js", "prefix.js", "pool.js", "stage.js")
SPEEDS = (0.5, 1, 2, 4, 8, 15, 30, 60)  # steps per second the speed menu offers
DEFAULT_SPEED = 2
STAGE = PackagedComponent("stage", js="stage.js", css="stage.css", scripts=SCRIPTS)


def nearest_speed(speed: float) -> float:
    """The offered speed closest to `speed` (a URL may ask for any)."""
    return min(SPEEDS, key=lambda offered: abs(offered - speed))


def last_step(runs: list[Run]) -> int:
    return max(max(len(run.replay) for run in runs) - 1, 0)


def render_stage(
    runs: list[Run], labels: list[str] | None, start: int, projector: bool, limit: int | None = None
) -> int:
    """Mount the stage for `runs` (one, or two side by side on one clock) and return its step.

    `start` is where a newly mounted stage begins (the session's step); afterwards the
    stage keeps its own place across reruns and reports it back. While a prediction is open,
    `limit` is the first step the stage may not show (0: none at all). A prediction just
    checked (`revealed`: its key and step) moves a mounted stage to its step, once; until the
    stage reports having moved, the step returned is that one, so the batch view under the
    stage follows at once. The speed the learner picks is reported too, and kept in the URL.
    """
    run_id = "|".join(run.digest for run in runs)
    sent = st.session_state.setdefault("stage_sent", set())
    goto = st.session_state.get("revealed")
    speed = nearest_speed(st.session_state.get("speed", DEFAULT_SPEED))
    data = {
        "id": run_id,
        "labels": labels,
        "start": min(start, last_step(runs)),
        "speed": speed,
        "speeds": SPEEDS,
        "projector": projector,
        "limit": limit,
        "goto": list(goto) if goto is not None else None,
    }
    frames = [] if run_id in sent else [run.wire for run in runs]
    sent.add(run_id)
    key = f"stage_{run_id}"
    result = STAGE(
        key=key,
        data=pack(data, frames),
        default={"step": data["start"], "speed": speed},
        on_step_change=lambda: None,
        on_speed_change=lambda: None,
        on_missing_change=lambda: sent.discard(run_id),  # a trigger: the browser lost the frames
    )
    if isinstance(result.speed, int | float) and not isinstance(result.speed, bool):
        st.session_state.speed = nearest_speed(result.speed)
    url.save_speed(st.session_state.get("speed", DEFAULT_SPEED), DEFAULT_SPEED)
    step = result.step if isinstance(result.step, int) else data["start"]
    step = _until_reached(goto, step)
    return min(max(step, 0), last_step(runs))


MOVING = "stage_moving"  # session state: [a checked prediction, the stage's step then, moved since]


def _until_reached(goto: list | tuple | None, reported: int) -> int:
    """The step to show: a just-checked prediction's (`goto`: its key and step) until the stage
    reports another step than the one it stood at when the prediction was checked, which means
    it has moved there; from then on, the stage's own."""
    if goto is None:
        return reported
    moving = st.session_state.get(MOVING)
    if moving is None or moving[0] != goto:  # checked just now
        moving = st.session_state[MOVING] = [goto, reported, False]
    if not moving[2] and (reported != moving[1] or reported == goto[1]):
        moving[2] = True
    return reported if moving[2] else goto[1]


def render_batch(run: Run, step: int, projector: bool) -> None:
    """The padded matrix or the ragged rows the model received at `step`, with its mask, in the
    stage's request colours (for a projector: 24 px text)."""
    step = min(step, max(len(run.replay) - 1, 0))
    view = batch_view(run.replay, step, run.frames["colours"])
    with st.expander(f"The batch as the model sees it at step {step}", expanded=True, key="batch_view"):
        st.caption(view.caption())
        if view.rows:
            st.html(batch_table(view, run.log.vocabulary, projector))
