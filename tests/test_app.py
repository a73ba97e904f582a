"""The (placeholder) Streamlit app starts on every scenario and reads the engine's log."""

import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from engine.scenario import list_scenarios

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")


def test_app_starts_on_part2_and_reacts_to_controls():
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception
    assert app.caption[0].value == "4 requests, 4 steps, 23 events, slot utilisation 88%"
    app.number_input(key="batch_size").set_value(1).run()
    assert app.caption[0].value == "4 requests, 7 steps, 26 events, slot utilisation 100%"
    app.slider(key="step").set_value(1).run()
    assert "Request B is admitted into slot 0 from the queue." in [m.value for m in app.markdown]


@pytest.mark.parametrize("name", [p.stem for p in list_scenarios() if not p.stem.startswith("anyscale")])
def test_app_runs_every_small_scenario_without_exception(name):
    app = AppTest.from_file(APP, default_timeout=60).run()
    app.selectbox(key="scenario").set_value(name).run()
    assert not app.exception
