"""The lesson "Will it run in time?" in the app (Streamlit's AppTest): its predictions graded from
the fixture measurements are asked, checked and explained with their figures, the chart and the
slow-engine table wait for the last one, and without measurements the lesson says why it asks
only its stage's prediction."""

from pathlib import Path

import pytest

from cblab.ui.course.course import quiz_key
from cblab.ui.runs import runs
from engine.lab import course, scenario
from tests.helpers import start_app

FIXTURES = Path(__file__).parent / "fixtures" / "measurements"
LESSON = "will-it-run-in-time"


@pytest.fixture
def measured(monkeypatch):
    """Point the app at `folder`'s measurements, with the caches that hold a parsed lesson bypassed."""

    def use(folder: Path) -> None:
        monkeypatch.setenv("CBL_MEASUREMENTS", str(folder))
        monkeypatch.setattr(scenario, "_builtin", scenario._builtin.__wrapped__)
        monkeypatch.setattr("cblab.ui.course.course.load_course", course.load_course.__wrapped__)
        monkeypatch.setattr(runs.RUNS, "get", lambda key, make, *sizes: make())

    return use


def check(app, n: int, value):
    key = quiz_key(LESSON, n)
    widget = app.number_input(key=key) if isinstance(value, int) else app.radio(key=key)
    widget.set_value(value).run()
    return app.button(key=key.replace("quiz_", "check_", 1)).click().run()


def texts(app) -> str:
    return "\n".join([e.value for e in (*app.success, *app.error, *app.markdown, *app.caption, *app.info)])


def test_a_learner_predicts_checks_and_reads_this_machine_s_figures(measured):
    measured(FIXTURES)
    app = start_app(lesson=LESSON)
    assert not app.exception
    asked = [m.value for m in app.markdown if m.value.startswith("**Predict**")]
    assert asked == [
        "**Predict** (from this machine's measurements): Which engine takes less time a token with a batch of 8 "
        "rows: the loop engine or the vectorised one?"
    ]
    assert "Check this lesson's predictions first" in texts(app)  # the chart waits
    app = check(app, 1, "the vectorised engine")
    wrong = [e.value for e in app.error if "with a batch of 8 rows" in e.value][0]
    assert "**Not quite: you said the vectorised engine, the answer is the loop engine.**" in wrong
    assert "At 8 rows the loop engine took 1.0 µs a token and the vectorised one 1.7 µs" in wrong
    app = check(app, 2, "the vectorised engine")
    app = check(app, 3, "ChecksFinishedInAList")
    assert "ChecksFinishedInAList would take about 12 minutes and the loop engine 1.5 s" in texts(app)
    app = check(app, 4, "a token's cost grows in proportion to the requests")
    assert "went from 5.0 µs to 73 µs (15×)" in texts(app)
    assert "What happened." not in texts(app)  # the stage's prediction is still open
    app = check(app, 5, 2)
    assert not app.exception
    said = texts(app)
    assert "This lesson: 4/5 right" in said and "**What happened.**" in said
    assert "On this machine at 8 rows the loop engine took 1.0 µs a token and the vectorised one 1.7 µs" in said
    assert "the fewest rows at which the vectorised engine was faster: 64." in said
    assert app.get("plotly_chart")  # ns a token against the rows
    table = app.table[0].value
    assert list(table["engine"]) == ["checks-finished-in-a-list", "copies-every-prefix"]
    assert list(table["takes"]) == ["about 12 minutes", "1.5 s"]


def test_without_measurements_the_lesson_says_so_and_asks_its_stage_prediction(measured, tmp_path):
    measured(tmp_path)
    app = start_app(lesson=LESSON)
    assert not app.exception
    notice = [w.value for w in app.warning if "predictions about speed" in w.value]
    assert notice and "vectorised.json is missing: `python benchmarks/vectorised.py --write`" in notice[0]
    assert "slow_zoo.json is missing" in notice[0]
    asked = [m.value for m in app.markdown if m.value.startswith("**Predict**")]
    assert asked == ["**Predict** (before step 5): How many rows does the model get at the run's last step?"]
    app = check(app, 1, 2)
    assert not app.exception
    assert "This lesson: 1/1 right" in texts(app)
    assert "is missing" in "\n".join(i.value for i in app.info)  # the measurements' view says why it is empty
