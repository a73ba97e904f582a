"""Spot the slow engine (the Practice tab): the question first, a prediction gates the answer, checking it
reveals why, the fix, the plain method beside the slow one and the chart of the stored figures."""

import json
import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui.practice.slow_bugs import QUESTION, figure, measurements
from engine.practice.slow_zoo import PATTERNS, SLOW_BUGS, changed_code

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")


def practice_app() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["tab"] = "Practice"
    return app.run()


def slow_charts(app: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in app.get("plotly_chart") if "slow_chart" in c.proto.id]


def text_of(app: AppTest) -> str:
    return "\n".join(m.value for m in [*app.markdown, *app.caption, *app.info, *app.success, *app.error, *app.warning])


def wrong_pattern(name: str) -> str:
    return next(p for p in PATTERNS if p != SLOW_BUGS[name].pattern)


def test_the_answer_waits_for_a_prediction():
    app = practice_app()
    app.selectbox(key="slow_bug").set_value("copies-every-prefix").run()
    assert QUESTION in text_of(app) and not slow_charts(app)
    options = app.selectbox(key="slow_bug").options
    assert not {bug.title for bug in SLOW_BUGS.values()} & set(options)  # the picker does not give the answer away
    assert SLOW_BUGS["copies-every-prefix"].fix not in text_of(app)
    ((_, slow, plain),) = changed_code("copies-every-prefix")
    assert slow in text_of(app) and plain not in text_of(app)  # the candidate's code, not yet the plain one
    assert list(app.radio(key="slow_guess").options) == [PATTERNS[p] for p in PATTERNS]
    app.button(key="slow_check").click().run()  # no prediction picked: still the question
    assert "Pick one of the patterns first" in text_of(app) and not slow_charts(app)


@pytest.mark.parametrize("name", list(SLOW_BUGS))
def test_a_right_prediction_reveals_the_fix_the_code_and_the_chart(name):
    app = practice_app()
    app.selectbox(key="slow_bug").set_value(name).run()
    app.radio(key="slow_guess").set_value(SLOW_BUGS[name].pattern).run()
    app.button(key="slow_check").click().run()
    assert not app.exception
    assert app.success and SLOW_BUGS[name].fix in text_of(app) and SLOW_BUGS[name].why in text_of(app)
    (chart,) = slow_charts(app)
    names = [trace["name"] for trace in chart["data"]]
    assert {SLOW_BUGS[name].title, "reference engine", "plain loop"} <= set(names)
    assert chart["layout"]["xaxis"]["type"] == "log"
    shown = "\n".join(m.value for m in app.markdown)
    assert all(slow in shown and (plain is None or plain in shown) for _, slow, plain in changed_code(name))


def test_a_wrong_prediction_names_the_right_pattern_and_a_new_engine_asks_again():
    app = practice_app()
    app.selectbox(key="slow_bug").set_value("scans-every-request").run()
    app.radio(key="slow_guess").set_value(wrong_pattern("scans-every-request")).run()
    app.button(key="slow_check").click().run()
    assert app.error and PATTERNS[SLOW_BUGS["scans-every-request"].pattern] in app.error[0].value
    assert slow_charts(app)
    app.selectbox(key="slow_bug").set_value("compares-every-stop-sequence").run()
    assert not slow_charts(app) and app.radio(key="slow_guess").value is None


def test_the_chart_draws_the_stored_figures_and_the_extrapolation_past_the_cap():
    for name, entry in measurements()["engines"].items():
        spec = figure(entry, SLOW_BUGS[name].title).to_dict()
        by_name = {trace["name"]: trace for trace in spec["data"]}
        assert list(by_name[SLOW_BUGS[name].title]["y"]) == entry["ns_per_token"]
        assert list(by_name["reference engine"]["y"]) == entry["reference_ns_per_token"]
        assert ("extrapolated" in by_name) == (entry["target_from"] == "extrapolated")
