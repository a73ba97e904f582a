"""The Timeline, Metrics and Event log tabs: bars in each request's stage colour, a cursor at
the Grid's step, only the Event log columns its shown events use, downloads that do not rerun.
"""

import base64
import json
import pathlib
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui import palette
from cblab.ui.charts.time_charts import over_time_figure, span, timeline_figure, with_idle_stretches
from cblab.ui.frame.tabs import visible_columns
from cblab.ui.runs.runs import Overrides, load
from cblab.ui.stage.batch_view import batch_table, batch_view
from engine.core.log.dataframe import KIND_LABELS, events_frame
from tests.helpers import start_app

ROOT = pathlib.Path(__file__).resolve().parent.parent
STAGE_CSS = ROOT / "cblab" / "ui" / "stage" / "stage_component" / "stage.css"
ALWAYS = ["step", "kind", "slot", "request_id"]


def chart(app: AppTest, key: str) -> dict:
    """The Plotly spec of the chart with this key."""
    charts = [c for c in app.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    assert len(charts) == 1, [c.proto.id for c in app.get("plotly_chart")]
    return json.loads(charts[0].proto.spec)


def numbers(field) -> list:
    """A chart spec's numbers: a list, or Plotly's typed array ({"dtype", "bdata": base64})."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"]).tolist()
    return list(field)


def cursor(layout: dict) -> tuple[list, list]:
    """The x positions of the layout's vertical lines and the texts of its annotations."""
    lines = [s["x0"] for s in layout.get("shapes", []) if s["type"] == "line" and s["x0"] == s["x1"]]
    return lines, [a["text"] for a in layout.get("annotations", [])]


def part2():
    return load("part2-slot-refill", None, Overrides())


def test_palette_is_the_stage_css_palette():
    found = dict(re.findall(r"--c(\d+):\s*(#[0-9a-fA-F]{6})", STAGE_CSS.read_text(encoding="utf-8")))
    assert sorted(map(int, found)) == list(range(12))
    assert [found[str(i)].lower() for i in range(12)] == palette.REQUESTS


def test_the_prefix_cache_s_marks_are_the_palette_s():
    css = STAGE_CSS.read_text(encoding="utf-8")
    found = dict(re.findall(r"--(shared|cached|cache-evicted):\s*(#[0-9a-fA-F]{6})", css))
    expected = {"shared": palette.SHARED_BLOCK, "cached": palette.CACHED_BLOCK, "cache-evicted": palette.CACHE_EVICTED}
    assert found == expected


def test_timeline_colours_running_bars_by_request_as_the_stage_does_and_puts_the_slot_in_the_hover():
    run = part2()  # A and B start in slots 0 and 1; C refills slot 0 at step 1, D at step 3
    assert run.frames["colours"] == [0, 1, 2, 3]  # D takes the colour unused longest (engine/analysis/colours.py)
    running = timeline_figure(run, 0).data[1]
    assert running.marker.color == ("#8dd3c7", "#fdb462", "#bebada", "#fb8072")
    assert running.marker.color[0] == palette.REQUESTS[run.frames["colours"][0]]  # teal is request A
    assert running.marker.color[2] != palette.REQUESTS[0]  # C holds slot 0, but is not slot 0's teal
    assert running.hovertext == (
        "A: running in slot 0, step 0",
        "B: running in slot 1, steps 0–2",
        "C: running in slot 0, steps 1–2",
        "D: running in slot 0, step 3",
    )
    assert running.name == "running (colour = request, as on the Grid)"


def test_timeline_bars_centre_on_their_steps_and_waits_are_hovered_only_when_they_happened():
    figure = timeline_figure(part2(), 0)
    waiting, running = figure.data
    assert list(running.base) == [-0.5, -0.5, 0.5, 2.5] and list(running.x) == [1, 3, 2, 1]
    assert list(waiting.y) == ["C", "D"] and list(waiting.base) == [-0.5, -0.5] and list(waiting.x) == [1, 3]
    assert waiting.hovertext == ("C: waiting, step 0", "D: waiting, steps 0–2")
    assert figure.layout.yaxis.categoryarray == ("A", "B", "C", "D")  # every request has its row, in order


def test_span_names_steps_in_words():
    assert [span(3, 3), span(1, 4), span(2, 1200)] == ["step 3", "steps 1–4", "steps 2–1,200"]


def test_a_preempted_request_has_two_running_bars_and_waits_between_them():
    figure = timeline_figure(load("preemption", None, Overrides()), 0)
    waiting, running = figure.data
    c_runs = [(base, x) for y, base, x in zip(running.y, running.base, running.x) if y == "C"]
    c_waits = [(base, x) for y, base, x in zip(waiting.y, waiting.base, waiting.x) if y == "C"]
    assert c_runs == [(-0.5, 3), (5.5, 3)]  # steps 0-2, preempted at step 3, back at step 6
    assert c_waits == [(2.5, 3)]  # steps 3-5 in the queue
    assert [t for t in running.hovertext if t.startswith("C:")] == [
        "C: running in slot 2, steps 0–2",
        "C: running in slot 1, steps 6–8",  # readmitted after B, into the lowest slot free then
    ]


@pytest.mark.parametrize("make", [timeline_figure, over_time_figure])
def test_timeline_and_metrics_charts_draw_a_labelled_cursor_at_the_step(make):
    layout = make(part2(), 2).to_plotly_json()["layout"]
    assert cursor(layout) == ([2], ["step 2"])


def test_metrics_over_time_are_lines_per_busy_step():
    figure = over_time_figure(part2(), 0)
    assert [(t.name, list(t.x), list(t.y)) for t in figure.data] == [
        ("active rows", [0, 1, 2, 3], [2, 2, 2, 1]),
        ("queue depth", [0, 1, 2, 3], [2, 1, 1, 0]),
        ("padded rows", [0, 1, 2, 3], [0, 0, 0, 0]),
    ]
    assert [t.line.color for t in figure.data] == list(palette.OVER_TIME.values())


@pytest.mark.parametrize(("tab", "key"), [("Timeline", "timeline"), ("Metrics", "over_time")])
def test_the_tabs_put_the_cursor_at_the_step_of_the_url(tab, key):
    app = start_app(scenario="part2-slot-refill", step=3, tab=tab)
    assert not app.exception and not app.error
    assert cursor(chart(app, key)["layout"]) == ([3], ["step 3"])


def test_the_timeline_tab_colours_bars_as_the_stage():
    app = start_app(scenario="long-request-among-short", tab="Timeline", predict="false")
    run = load("long-request-among-short", None, Overrides())
    colours = chart(app, "timeline")["data"][1]["marker"]["color"]
    assert colours == [palette.REQUESTS[c] for c in run.frames["colours"]]
    assert colours[:3] == ["#8dd3c7", "#fdb462", "#bebada"]  # L, A, B: L and A start side by side


def test_visible_columns_are_the_four_every_event_has_and_the_ones_the_kinds_shown_set():
    log = part2().log
    kinds = np.frombuffer(log.kind, np.int8)

    def shown(*labels):
        rows = np.flatnonzero(np.isin(kinds, [KIND_LABELS.index(label) for label in labels]))
        return visible_columns(events_frame(log, rows))

    assert shown("emit") == [*ALWAYS, "token", "position"]
    assert shown("arrive") == [*ALWAYS, "prompt", "max_tokens", "stop_sequences"]
    assert shown("model_call") == [*ALWAYS, "rows", "padded_rows", "active_mask"]
    assert shown("admit") == ALWAYS
    assert shown("emit", "evict") == [*ALWAYS, "token", "position", "reason"]
    assert shown() == ALWAYS  # no events shown: the four still head the empty table


def test_the_event_log_table_drops_columns_no_shown_event_uses():
    app = start_app(scenario="part2-slot-refill", tab="Event log", predict="false")
    assert not app.exception
    assert list(app.dataframe[0].value.columns) == [
        *ALWAYS,
        *("token", "position", "rows", "padded_rows", "active_mask", "reason"),
        *("prompt", "max_tokens", "stop_sequences"),
    ]
    app.multiselect(key="log_kinds").set_value(["evict"]).run()
    table = app.dataframe[0].value
    assert list(table.columns) == [*ALWAYS, "reason"]
    assert table.reason.tolist() == ["max_tokens"] * 4


@pytest.mark.parametrize("tab", ["Timeline", "Metrics", "Compare", "Event log"])
def test_a_tab_that_shows_the_whole_run_waits_while_a_prediction_is_open(tab):
    app = start_app(scenario="part2-slot-refill", tab=tab)  # its first prediction is open
    notices = [i.value for i in app.info if "still open above" in i.value]
    assert len(notices) == 1 and "shows the whole run, and with it the answer" in notices[0]
    assert not app.dataframe and not app.get("plotly_chart") and not app.metric
    app.toggle(key=next(t.key for t in app.toggle if t.key.startswith("whole_run_"))).set_value(True).run()
    assert not app.exception and (app.dataframe or app.get("plotly_chart") or app.metric)


def test_no_tab_waits_once_predictions_are_off():
    app = start_app(scenario="part2-slot-refill", tab="Event log", predict="false")
    assert not [i for i in app.info if "still open above" in i.value] and app.dataframe


def test_the_downloads_do_not_rerun_the_app():
    app = start_app(scenario="part2-slot-refill", tab="Event log", predict="false")
    buttons = app.get("download_button")
    assert [b.proto.label for b in buttons] == ["Download JSONL", "Download CSV"]
    assert all(b.proto.ignore_rerun for b in buttons)


def test_the_batch_view_uses_the_stage_colours_when_given_them():
    run = load("padded-vs-ragged", None, Overrides(padded=False))
    assert run.frames["colours"] == [0, 1, 2, 3, 4]  # five requests, five colours on the stage
    rows = batch_view(run.replay, 1, run.frames["colours"]).rows
    assert [(label, code) for label, _, code in rows] == [
        ("slot 0 · A", 2),
        ("slot 1 · B", 3),
        ("slot 2 · E", palette.request_code(4)),
        ("slot 3 · D", 5),
    ]
    assert palette.of_requests(run.frames["colours"], [4]) == [palette.REQUESTS[4]]


def test_the_batch_table_shows_the_last_positions_padding_and_the_stage_colours():
    run = load("padded-vs-ragged", None, Overrides())
    table = batch_table(batch_view(run.replay, 3, run.frames["colours"]), run.log.vocabulary)
    assert table.count("<tr>") == 1 + 4  # the positions, then the 4 rows sent (3 of them padding)
    assert table.count(">pad</td>") == 12  # 3 padding rows of 4 (B's prefix is the longest: no left padding)
    assert f"<td class=c{run.frames['colours'][1]}>23</td>" in table  # B's last input token, in B's colour
    assert f".c{run.frames['colours'][1]}{{background:{palette.REQUESTS[run.frames['colours'][1]]}}}" in table
    assert "slot 1 · mask 1 · B" in table and "font-size:13px" in table
    assert "font-size:24px" in batch_table(batch_view(run.replay, 3), run.log.vocabulary, projector=True)


def test_metrics_lines_drop_to_zero_over_an_idle_stretch_instead_of_joining_across_it():
    run = load("arrivals-mid-run", None, Overrides())
    steps = with_idle_stretches(run.steps)
    assert steps.step.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13]
    assert steps.active_rows.tolist() == [2, 2, 2, 2, 2, 2, 1, 0, 0, 1, 1]


def test_the_metrics_tab_charts_memory_only_for_a_run_with_a_kv_pool():
    app = start_app(scenario="preemption", tab="Metrics", step=3, predict="false")
    assert not app.exception and not app.error
    usage = chart(app, "kv_usage")  # 7 blocks of 2 tokens
    held, reserved, free = (numbers(trace["y"]) for trace in usage["data"])
    assert [trace["name"] for trace in usage["data"]] == ["tokens held", "reserved but empty", "free"]
    assert [h + r + f for h, r, f in zip(held, reserved, free)] == [14] * 9  # stacked, they fill the pool
    assert held[3] == 10 and reserved[3] == 2  # A and B hold 5 tokens each in 3 blocks: two half-full
    assert cursor(usage["layout"]) == ([3], ["step 3"])
    bars, so_far = chart(app, "preemptions")["data"]
    assert (numbers(bars["x"]), numbers(bars["y"])) == ([3, 5], [1, 1])  # C at step 3, B at step 5
    assert numbers(so_far["y"]) == [0, 1, 2, 2]
    in_steps, in_ms = chart(app, "token_gaps")["data"]
    assert in_steps["hovertext"] == ["1 step: 13 gaps", "2 steps: 1 gap", "3 steps: 0 gaps", "4 steps: 1 gap"]
    # B waits 2 steps (4 -> 6), C 4 (2 -> 6); the last bin of the ms ends at the summary's max TBT
    assert in_ms["hovertext"][-1] == "27.9–29.3 ms: 1 gap"
    plain = start_app(scenario="part2-slot-refill", tab="Metrics", predict="false")
    keys = [c.proto.id.rsplit("-", 1)[-1] for c in plain.get("plotly_chart")]
    assert keys == ["over_time"]
    budget_only = start_app(
        scenario="chunked-prefill", tab="Metrics", predict="false"
    )  # a token budget, no pool: only the gaps
    assert [c.proto.id.rsplit("-", 1)[-1] for c in budget_only.get("plotly_chart")] == ["over_time", "token_gaps"]
