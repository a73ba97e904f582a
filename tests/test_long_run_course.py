"""The course's lessons made long (every run is, by a lowered threshold), under AppTest: each lesson keeps its
window through Next lesson and the picker, an open prediction keeps the overview and the window before its step,
presentation mode and side by side draw a long run, and a long run read back from the run cache plays the same."""

import pytest

from cblab.ui.runs import runs
from cblab.ui.runs.stage_wire import inflate
from cblab.ui.stage.long_run import windowed
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from tests.helpers import start_app
from tests.test_long_run_app import overview, stage, window_slider


@pytest.fixture
def all_long(monkeypatch):
    """Every run is long: the course's small lessons take the long run's view. Their runs (an outline for frames)
    are kept neither on disk nor, after the test, in memory: the other tests' must be their own."""
    monkeypatch.setattr(runs, "is_long", lambda busy_steps, events: True)
    monkeypatch.setenv("CBL_RUN_CACHE", "off")
    runs.RUNS.clear()
    yield
    runs.RUNS.clear()


def test_each_lesson_keeps_its_window_through_next_lesson_and_the_picker(all_long):
    app = start_app(lesson="poisson-arrivals", predict="false")
    assert not app.exception and overview(app)
    window_slider(app).set_value((50, 120)).run()
    app.button(key="next_lesson").click().run()
    assert app.session_state["scenario"] == "streaming" and not app.exception
    app.selectbox(key="scenario").set_value("poisson-arrivals").run()
    assert window_slider(app).value == (50, 120)
    header, _ = stage(app)
    assert header["id"].endswith("@50-120")  # (its frames were sent before: the browser keeps them)


def test_an_open_prediction_keeps_the_overview_and_the_window_before_its_step(all_long):
    app = start_app(lesson="part2-slot-refill")  # its first prediction asks about step 1
    assert window_slider(app).value == (0, 0) and overview(app)["last_step"] == [0]
    _, (frames,) = stage(app)
    assert frames["steps"] == 1 and frames["busy"] == [0]  # nothing the prediction hides is sent
    app.radio(key="quiz_part2_slot_refill_1").set_value("slot 0").run()
    app.button(key="check_part2_slot_refill_1").click().run()
    assert not app.exception
    assert window_slider(app).value[0] <= 1 <= window_slider(app).value[1]  # the window moves to show step 1
    app.toggle(key="predict").set_value(False).run()
    app.selectbox(key="scenario").set_value("poisson-arrivals").run()  # its window is its own, not at 1.2's step 1
    fresh = window_slider(start_app(lesson="poisson-arrivals", predict="false")).value
    assert window_slider(app).value == fresh == (40, 439)  # around its deepest queue (at 1.2's step 1: 0-399)


def test_presentation_mode_and_side_by_side_draw_a_long_run(all_long):
    app = start_app(lesson="poisson-arrivals", predict="false", presentation="true", side_by_side="true")
    assert not app.exception and not app.error
    assert overview(app)["projector"] is True
    header, frames = stage(app)
    assert len(frames) == 2 and frames[0]["first"] == frames[1]["first"]  # static and continuous, one window


def test_a_long_run_read_back_from_the_run_cache_keeps_its_outline_and_plays_the_same_windows(all_long):
    """A built-in long lesson's run is kept on disk as its log and its compressed outline (runs/run_cache.py)."""
    scenario = resolve_scenario("poisson-arrivals")
    made = runs._run(simulate(scenario), scenario, "made")
    read = runs._run(made.log, scenario, "read", wire=made.wire)
    assert made.frames == read.frames and made.frames["narration"] == {} and "tokens" not in made.frames["requests"][0]
    assert inflate(windowed(made, 100, 199).wire) == inflate(windowed(read, 100, 199).wire)
