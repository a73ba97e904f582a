"""The app's page: `render()` draws it once per script run (Streamlit reruns it on every click); `app.py` runs it.

Header, sidebar, the run, the lesson, the tabs. The page's frame is laid out in
`cblab/ui/frame/layout.py` (the header, the tabs), the controls live in `cblab/ui/controls/controls.py`
(their table in `cblab/ui/controls/settings.py`), the cached runs in `cblab/ui/runs/runs.py`, the lesson
in `cblab/ui/frame/lesson_view.py`, the views in `cblab/ui/stage/stage.py` and `cblab/ui/frame/tabs.py`;
this module only wires them together.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from cblab.ui.controls import url
from cblab.ui.controls.controls import UPLOAD, scenario_ui, settings_ui
from cblab.ui.course.course import render_scores
from cblab.ui.frame.layout import Header, page_place, render_header, render_tabs
from cblab.ui.frame.lesson_view import render_lesson
from cblab.ui.frame.page import render_page, sidebar_waits
from cblab.ui.runs.runs import Overrides, UserError, is_event_log, load

LESSON_HELP = "A link opens a lesson by name or number: ?lesson=part2-slot-refill or ?lesson=1.2."


def render() -> None:
    """The page, drawn once per script run."""
    st.set_page_config(page_title="Continuous Batching Lab", page_icon="🧮", layout="wide")

    header = render_header()
    switches = header.switches
    waits = sidebar_waits()  # a browser's first page: the sidebar's widgets come once the stage has painted

    with st.sidebar:
        name, upload, scenario = scenario_ui(drawn=not waits)
        replaying = is_event_log(upload)  # an event log: replayed as recorded
        overrides = Overrides() if replaying else settings_ui(scenario, switches, drawn=not waits)
        if replaying or upload is None and name == UPLOAD:
            url.save({"scenario": name})
        if not waits:
            render_scores()
        page = page_place()
    stage = False
    try:
        stage = render_run(header, name, upload, scenario, overrides, replaying)
    finally:
        with page:
            render_page(waits, stage)


def render_run(header: Header, name: str, upload, scenario, overrides: Overrides, replaying: bool) -> bool:
    """The main area under the header: the lesson and the tabs (or why there is no run). Whether it drew the stage."""
    switches, presentation = header.switches, header.presentation
    if name == UPLOAD and upload is None:
        st.info(
            "Choose a scenario TOML, an event-log JSONL or a request trace in the sidebar (up to 5 MB). Nothing you "
            "upload is run as code: scenarios and traces are data, and an event log is only replayed."
        )
        return False
    try:
        run = load(name, upload, overrides)
        side_by_side = not replaying and (switches[2] if presentation else st).toggle(
            "Static and continuous side by side",
            key="side_by_side",
            bind="query-params",
            help="Plays static and continuous batching of this scenario on one clock.",
            wrap=True,
        )
        pair = None  # static and continuous, side by side on one clock
        if side_by_side:
            pair = [load(name, upload, dataclasses.replace(overrides, batching=b)) for b in ("static", "continuous")]
    except UserError as exc:
        st.error(str(exc))
        if "the limit is" in str(exc):
            st.caption("docs/limits.md lists every limit a run, a file or a link must stay under.")
        return False
    if replaying:
        settings = run.log.config
        st.sidebar.info(
            f"Replaying {upload.name} as recorded: batch_size {settings.batch_size}, {settings.batching}, "
            f"{'padded' if settings.padded else 'ragged'}, stop token {settings.stop_token}."
        )
        if run.undelivered:
            st.warning(
                f"This log ends before the run did: {run.undelivered:,} of its {len(run.log.requests):,} requests "
                f"were never delivered. It replays as recorded, up to step {len(run.replay) - 1:,}."
            )

    if st.session_state.get("unknown_lesson"):
        st.warning(f"There is no lesson {st.session_state.pop('unknown_lesson')!r}; here is lesson 1. {LESSON_HELP}")
    cap = None  # the first step a prediction still hides
    if run.scenario is not None:
        with header.lesson:
            cap = render_lesson(run, name, scenario, upload is not None, (header.title, header.onward), switches)

    return render_tabs(run, pair, name, upload, overrides, cap, presentation)
