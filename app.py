"""Continuous Batching Lab: watch continuous batching happen, one step at a time.

Controls live in `ui/controls.py`, the cached runs in `ui/runs.py`, the views in
`ui/stage.py` and `ui/tabs.py`; this page only wires them together.
"""

import streamlit as st

from ui import url
from ui.controls import UPLOAD, playback_ui, scenario_ui, settings_ui
from ui.practice import render_practice
from ui.runs import Overrides, UserError, load
from ui.stage import render_stage
from ui.tabs import render_comparison, render_log, render_metrics, render_timeline

PRESENTATION_CSS = (
    "<style>[data-testid='stSidebar'], header {display: none;} .block-container {padding-top: 2.5rem;}</style>"
)

st.set_page_config(page_title="Continuous Batching Lab", page_icon="🧮", layout="wide")
st.session_state["full_run"] = True  # tells the playback fragment this run was not its own tick

title, mode = st.columns([4, 1], vertical_alignment="bottom")
title.title("Continuous Batching Lab")
presentation = mode.toggle("Presentation", key="presentation", bind="query-params")
if presentation:
    st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)

replaying = False  # an uploaded event log: nothing to set, it is replayed as recorded
with st.sidebar:
    name, upload, scenario = scenario_ui()
    replaying = upload is not None and upload.name.endswith(".jsonl")
    overrides = Overrides() if replaying else settings_ui(scenario)
    if replaying or upload is None and name == UPLOAD:
        url.save({"scenario": name})
if name == UPLOAD and upload is None:
    st.info(
        "Choose a scenario TOML or an event-log JSONL in the sidebar (up to 5 MB). Nothing you upload is run "
        "as code: scenarios are data, and an event log is only replayed."
    )
    st.stop()
try:
    run = load(name, upload, overrides)
except UserError as exc:
    st.error(str(exc))
    if "the limit is" in str(exc):
        st.caption("The README's Limits table lists every limit a run, a file or a link must stay under.")
    st.stop()
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

scenario = run.scenario
if scenario is not None and not presentation:
    st.subheader(scenario.title)
    st.write(scenario.lesson)
last_step = max(len(run.replay) - 1, 0)
playing, speed = playback_ui(last_step)


@st.fragment(run_every=1 / speed if playing else None)
def stage() -> None:
    """Redrawn on its own while playing: advance one step a tick, stop at the end."""
    tick = not st.session_state.pop("full_run", False)
    if playing and tick and not st.session_state.pop("dragged", False):
        if st.session_state.get("step", 0) >= last_step:
            st.session_state.play = False
            st.rerun()
        st.session_state.step = st.session_state.get("step", 0) + 1
    step = 0
    if last_step:
        step = st.slider("Step", 0, last_step, key="step", on_change=lambda: st.session_state.update(dragged=True))
    url.save_step(step)
    render_stage(run, step, presentation)


grid_tab, timeline_tab, metrics_tab, compare_tab, log_tab, practice_tab = st.tabs(
    ["Grid", "Timeline", "Metrics", "Compare", "Event log", "Practice"], key="tab", bind="query-params"
)
if grid_tab.open:
    with grid_tab:
        stage()
if timeline_tab.open:
    with timeline_tab:
        render_timeline(run)
if metrics_tab.open:
    with metrics_tab:
        render_metrics(run)
if compare_tab.open:
    with compare_tab:
        toml_text = None if upload is None else upload.getvalue().decode("utf-8", "replace")
        render_comparison(run, upload.name if upload else name, toml_text, overrides)
if log_tab.open:
    with log_tab:
        render_log(run)
if practice_tab.open:
    with practice_tab:
        render_practice()
