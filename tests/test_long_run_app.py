"""A long run in the app under AppTest (cblab/ui/stage/long_run.py): the Grid tab shows its overview and the stage plays
a window of it. The 12,000-request fixture (tests/fixtures/long-run.toml) is uploaded (a long event log too);
tests/test_long_run_course.py walks the course made long."""

import base64
import json
import pathlib

import numpy as np
import pytest
import streamlit

from cblab.ui.runs.stage_wire import unpack
from cblab.ui.stage.long_run import picked_window
from engine.analysis.overview import default_window
from engine.lab.limits import MAX_WINDOW_STEPS, OVERVIEW_BUCKETS
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from tests.helpers import Upload, start_app
from tests.test_overview import STEPS

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "long-run.toml"


def component(app, name: str):
    found = [c for c in app.get("bidi_component") if c.proto.component_name == f"continuous-batching-lab.{name}"]
    assert len(found) == 1, f"{len(found)} {name} components"
    return found[0].proto


def stage(app) -> tuple[dict, list[dict]]:
    """The stage's header and the frames sent with it (none on a rerun of the same window)."""
    return unpack(component(app, "stage").bytes)


def overview(app) -> dict:
    return json.loads(component(app, "overview").json)


def window_slider(app):
    return next(s for s in app.slider if s.label == "Window of steps the stage plays")


def upload_app(monkeypatch, **query):
    """The app with the fixture chosen in the uploader, at these query parameters."""
    real, upload = streamlit.file_uploader, Upload("long-run.toml", FIXTURE.read_bytes())

    def file_uploader(label, *args, key=None, **kwargs):
        return upload if key == "upload" else real(label, *args, key=key, **kwargs)

    monkeypatch.setattr(streamlit, "file_uploader", file_uploader)
    app = start_app(scenario="upload", **query)
    assert not app.exception and not app.error
    return app


@pytest.fixture
def long_upload(monkeypatch):
    return upload_app(monkeypatch)


def test_a_long_run_opens_on_its_overview_and_the_window_around_its_deepest_queue(long_upload):
    app = long_upload
    data = overview(app)
    assert [p["name"] for p in data["panels"]] == ["running_rows", "queue_depth", "kv_blocks_held", "hit_rate"]
    assert len(data["x"]) <= OVERVIEW_BUCKETS and all(len(p["high"]) == len(data["x"]) for p in data["panels"])
    queue = data["panels"][1]
    assert max(queue["high"]) == 170  # the run's deepest queue (step_metrics' queue_depth), kept by its bucket
    assert window_slider(app).value == (5511, 5910)  # 400 steps around it (its first step: 5,711)
    header, (frames,) = stage(app)
    assert (frames["first"], frames["steps"], frames["total"]) == (5511, 5911, 7188)
    assert len(frames["busy"]) == 400 and len(frames["requests"]) < 1_000  # of the run's 12,000
    assert len(component(app, "stage").bytes) < 200_000  # the window, compressed
    assert header["start"] == 5511 and app.session_state["step"] == 5511
    assert data["window"][0] < data["window"][1] and data["window"][1] <= data["x"][-1]
    assert any("The stage plays steps 5,511–5,910" in c.value for c in app.caption)


def test_moving_the_window_sends_its_frames_cut_to_the_longest_window_and_starts_the_stage_there(long_upload):
    app = long_upload
    window_slider(app).set_value((100, 5_000)).run()
    assert not app.exception
    assert window_slider(app).value == (100, 100 + MAX_WINDOW_STEPS - 1)
    _, (frames,) = stage(app)
    assert (frames["first"], frames["steps"]) == (100, 100 + MAX_WINDOW_STEPS)
    assert app.session_state["step"] == 100
    assert [e.label for e in app.expander if e.label.startswith("The batch")] == [
        "The batch as the model sees it at step 100"
    ]
    app.run()
    header, sent = stage(app)
    assert sent == [] and header["id"].endswith("@100-2099")  # the browser has them: only the header again


def test_a_pick_on_the_overview_centres_the_window_or_takes_the_steps_dragged_over():
    busy, total = STEPS.step.tolist(), 9
    assert default_window(STEPS, total, 4, around=6) == (4, 7)
    assert picked_window({"center": 6}, busy, total, STEPS, 4) == (3, 7)  # widened to the idle stretch 3-4 whole
    assert picked_window({"first": 6, "last": 1}, busy, total, STEPS, 4) == (1, 6)  # a drag leftwards too
    assert picked_window({"first": 0, "last": 8}, busy, total, STEPS, 4) == (0, 8)  # (at most 2,000 steps)


@pytest.mark.parametrize(
    "picked",
    [
        None,
        3,
        "x",
        [1, 2],
        {},
        {"first": 1},
        {"center": "2"},
        {"center": 1.5},
        {"center": True},
        {"first": 2**40, "last": 1},
        {"center": None, "first": None},
    ],  # fmt: skip
)
def test_anything_else_the_browser_sends_as_a_pick_is_ignored(picked):
    assert picked_window(picked, STEPS.step.tolist(), 9, STEPS, 4) is None


def test_the_metrics_tab_of_a_long_run_draws_its_steps_thinned_to_their_peaks(monkeypatch):
    app = upload_app(monkeypatch, tab="Metrics")
    assert any(c.value.startswith("A long run (7,188 busy steps)") for c in app.caption)
    charts = {c.proto.id: json.loads(c.proto.spec) for c in app.get("plotly_chart")}
    over_time = next(spec for spec in charts.values() if spec["data"][0].get("name") == "active rows")
    queue = next(trace for trace in over_time["data"] if trace["name"] == "queue depth")
    x, y = numbers(queue["x"]), numbers(queue["y"])
    assert len(x) <= 7 * OVERVIEW_BUCKETS < 7_188 and y.max() == 170  # (the deepest queue stays)


def numbers(values) -> np.ndarray:
    """A Plotly figure's array: a list, or typed and base64-encoded ({"bdata", "dtype"})."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), values["dtype"])
    return np.array(values)


def test_an_uploaded_event_log_that_is_long_is_replayed_as_a_long_run(monkeypatch):
    """poisson-arrivals on one slot: 6,391 busy steps in a 1.45 MB JSONL, replayed without the engine."""
    log = simulate(resolve_scenario("poisson-arrivals").with_engine(batch_size=1))
    data = log.to_jsonl().encode()
    assert log.num_steps > 5_000 and len(data) < 5 * 2**20
    real, upload = streamlit.file_uploader, Upload("one-slot.jsonl", data)
    monkeypatch.setattr(
        streamlit,
        "file_uploader",
        lambda label, *a, key=None, **k: upload if key == "upload" else real(label, *a, key=key, **k),
    )
    app = start_app(scenario="upload")
    assert not app.exception and not app.error
    assert [p["name"] for p in overview(app)["panels"]] == ["running_rows", "queue_depth"]
    _, (frames,) = stage(app)
    assert frames["total"] == log.num_steps and frames["steps"] - frames["first"] == 400


def test_a_link_s_step_opens_the_window_around_it_and_a_hostile_one_stays_inside_the_run(monkeypatch):
    app = upload_app(monkeypatch, step=1000)
    assert window_slider(app).value == (800, 1199) and stage(app)[0]["start"] == 1000
    app = upload_app(monkeypatch, step=2**31 - 1)
    assert window_slider(app).value == (6788, 7187)  # (the run's last 400 steps)
