"""Continuous Batching Lab: watch continuous batching happen, one step at a time.

Controls live in `ui/controls.py` (their table in `ui/settings.py`), the cached runs in
`ui/runs.py`, the lesson in `ui/lesson_view.py`, the views in `ui/stage.py` and `ui/tabs.py`;
this page only wires them together.
"""

import dataclasses

import streamlit as st

from ui import url
from ui.controls import UPLOAD, scenario_ui, settings_ui
from ui.course import before_cap, render_scores, shows_whole_run
from ui.lesson_view import render_lesson
from ui.page import render_page
from ui.practice import render_practice
from ui.runs import Overrides, UserError, load
from ui.stage import render_batch, render_stage
from ui.tabs import render_comparison, render_log
from ui.time_charts import render_metrics, render_timeline

# Presentation mode: no sidebar, no Streamlit toolbar (Deploy, menu), larger text for the back of the room.
PRESENTATION_CSS = """<style>
[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], [data-testid='stHeader'],
[data-testid='stToolbar'], header {display: none !important;}
.block-container, .stMainBlockContainer {padding-top: 1rem;}
.stMainBlockContainer p, .stMainBlockContainer label, .stMainBlockContainer td, .stMainBlockContainer th,
[data-testid='stMetricLabel'] p, [data-testid='stMetricValue'] {font-size: 24px !important;}
</style>"""

LESSON_HELP = "A link opens a lesson by name or number: ?lesson=part2-slot-refill or ?lesson=1.2."

st.set_page_config(page_title="Continuous Batching Lab", page_icon="🧮", layout="wide")

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
lesson_box = st.container()
# presentation mode keeps these switches on screen, in one row: batching, padded, side by side, predict first
switches = st.columns([3, 3, 3, 2], vertical_alignment="center") if presentation else None

with st.sidebar:
    name, upload, scenario = scenario_ui()
    replaying = upload is not None and upload.name.endswith(".jsonl")  # an event log: replayed as recorded
    overrides = Overrides() if replaying else settings_ui(scenario, switches)
    if replaying or upload is None and name == UPLOAD:
        url.save({"scenario": name})
    render_scores()
if name == UPLOAD and upload is None:
    st.info(
        "Choose a scenario TOML or an event-log JSONL in the sidebar (up to 5 MB). Nothing you upload is run "
        "as code: scenarios are data, and an event log is only replayed."
    )
    render_page()
    st.stop()
try:
    run = load(name, upload, overrides)
    side_by_side = not replaying and (switches[2] if presentation else st).toggle(
        "Static and continuous side by side",
        key="side_by_side",
        bind="query-params",
        help="Plays static and continuous batching of this scenario on one clock.",
        wrap=True,
    )
    if side_by_side:
        pair = [load(name, upload, dataclasses.replace(overrides, batching=b)) for b in ("static", "continuous")]
except UserError as exc:
    st.error(str(exc))
    if "the limit is" in str(exc):
        st.caption("The README's Limits table lists every limit a run, a file or a link must stay under.")
    render_page()
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

if st.session_state.get("unknown_lesson"):
    st.warning(f"There is no lesson {st.session_state.pop('unknown_lesson')!r}; here is lesson 1. {LESSON_HELP}")
cap = None  # the first step a prediction still hides
if run.scenario is not None:
    with lesson_box:
        cap = render_lesson(run, name, scenario, upload is not None, (title, onward), switches)

grid_tab, timeline_tab, metrics_tab, compare_tab, log_tab, practice_tab = st.tabs(
    ["Grid", "Timeline", "Metrics", "Compare", "Event log", "Practice"], key="tab", bind="query-params"
)
step = before_cap(min(st.session_state.get("step", 0), max(len(run.replay) - 1, 0)), cap)
if grid_tab.open:
    with grid_tab:
        runs, labels = ([run], None) if not side_by_side else (pair, ["Static batching", "Continuous batching"])
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
            render_metrics(run, step)
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
render_page()
