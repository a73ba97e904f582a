"""The page's frame: the header rows above the lesson, and the tabs below it with their views.

`app.py` only wires the parts together; the places they are drawn in are laid out here. The
header is a title row, then the lesson's title beside Next lesson; presentation mode has one
row (the lesson's title, Next lesson, the switch), hides the sidebar and Streamlit's toolbar,
and keeps the main switches on screen in a row of their own. The lesson's place comes before
the tabs, and is filled after the sidebar, once the run is known.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import streamlit as st

from cblab.ui.charts.compare_view import render_comparison
from cblab.ui.charts.time_charts import render_metrics, render_timeline
from cblab.ui.controls import url
from cblab.ui.course.course import before_cap, shows_whole_run
from cblab.ui.frame.tabs import render_log
from cblab.ui.practice.practice import render_practice
from cblab.ui.runs.runs import Overrides, Run, load
from cblab.ui.stage.long_run import render_long_run
from cblab.ui.stage.stage import render_batch, render_stage

# Presentation mode: no sidebar, no Streamlit toolbar (Deploy, menu), larger text for the back of the room.
PRESENTATION_CSS = """<style>
[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], [data-testid='stHeader'],
[data-testid='stToolbar'], header {display: none !important;}
.block-container, .stMainBlockContainer {padding-top: 1rem;}
.stMainBlockContainer [data-testid='stVerticalBlock'] {gap: 0.5rem;}
.stMainBlockContainer p, .stMainBlockContainer label, .stMainBlockContainer td, .stMainBlockContainer th,
[data-testid='stMetricLabel'] p, [data-testid='stMetricValue'] {font-size: 24px !important;}
[data-testid='stNumberInput'] input, [data-testid='stTextInput'] input {font-size: 24px !important;}
</style>"""
TABS = ["Grid", "Timeline", "Metrics", "Compare", "Event log", "Practice"]


@dataclass
class Header:
    """The places the header leaves for the lesson, and whether the page is in presentation mode."""

    title: object  # the lesson's title
    onward: object  # its Next lesson button
    lesson: object  # the lesson, above the tabs
    switches: list | None  # presentation mode: batching, padded, side by side, predict first
    presentation: bool


def render_header() -> Header:
    presenting = st.session_state.get("presentation", st.query_params.get("presentation") == "true")
    if presenting:  # one row: the lesson's title heads the page, beside Next lesson and the switch
        title, onward, mode = st.columns([6, 2, 2], vertical_alignment="bottom")
    else:
        name_row, mode = st.columns([5, 1], vertical_alignment="bottom")
        name_row.title("Continuous Batching Lab")
        title, onward = st.columns([4, 1], vertical_alignment="bottom")
    presentation = mode.toggle("Presentation", key="presentation", bind="query-params")
    if presentation:
        st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)
    lesson = st.container()
    switches = st.columns([3, 3, 3, 2], vertical_alignment="center") if presentation else None
    return Header(title, onward, lesson, switches, presentation)


def page_place():
    """The sidebar's last place, filled at the end of the run: the page component (`cblab/ui/frame/page.py`),
    which is told whether the run drew the stage."""
    return st.sidebar.container()


def render_tabs(
    run: Run, pair: list[Run] | None, name: str, upload, overrides: Overrides, cap: int | None, presentation: bool
) -> bool:
    """The tabs under the lesson, each drawn only while open: the stage and the batch view (`pair`:
    static and continuous side by side), the charts, Compare, the event log and Practice. `cap`
    is the first step a prediction still hides; the session's step is kept below it. Whether the
    stage was drawn (the Grid tab is open)."""
    grid_tab, timeline_tab, metrics_tab, compare_tab, log_tab, practice_tab = st.tabs(
        TABS, key="tab", bind="query-params"
    )
    step = before_cap(min(st.session_state.get("step", 0), max(len(run.replay) - 1, 0)), cap)
    if grid_tab.open:
        with grid_tab:
            runs, labels = ([run], None) if pair is None else (pair, ["Static batching", "Continuous batching"])
            if run.long:  # an overview to pick a window from, and the stage plays that window
                lesson = name if upload is None else f"upload_{run.digest[:8]}"
                runs, step = render_long_run(run, runs, lesson, step, cap, presentation)
            step = render_stage(runs, labels, start=step, projector=presentation, limit=cap)
            step = before_cap(step, cap)
            if cap == 0:
                st.caption("Answer the prediction above to see step 0.")
            else:
                render_batch(run, step, projector=presentation)
    st.session_state.step = step
    url.save_step(step)
    if timeline_tab.open:
        with timeline_tab:
            if shows_whole_run("timeline", cap, run):
                render_timeline(run, step)
    if metrics_tab.open:
        with metrics_tab:
            if shows_whole_run("metrics", cap, run):
                rerun = None if run.scenario is None else lambda: without_cache(name, upload, overrides)
                render_metrics(run, step, rerun)
    if compare_tab.open:
        with compare_tab:
            if shows_whole_run("compare", cap, run):
                toml_text = None if upload is None else upload.getvalue().decode("utf-8", "replace")
                render_comparison(run, upload.name if upload else name, toml_text, overrides, projector=presentation)
    if log_tab.open:
        with log_tab:
            if shows_whole_run("log", cap, run):
                render_log(run, name if upload is None else upload.name.rsplit(".", 1)[0])
    if practice_tab.open:
        with practice_tab:
            render_practice()
    return grid_tab.open


def without_cache(name: str, upload, overrides: Overrides) -> Run:
    """The shown scenario with prefix caching off, through the runs every session shares: the run the
    sidebar's switch gives when turned off, made once for the class."""
    return load(name, upload, dataclasses.replace(overrides, prefix_caching=False))
