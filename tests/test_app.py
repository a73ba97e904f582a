"""The (placeholder) Streamlit app starts and reads the engine's log."""

import pathlib

from streamlit.testing.v1 import AppTest

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")


def test_app_starts_and_reacts_to_batch_size():
    app = AppTest.from_file(APP, default_timeout=60).run()
    assert not app.exception
    assert app.caption[0].value == "12 requests, 48 steps, 216 events"
    app.slider(key="batch_size").set_value(8).run()
    assert app.caption[0].value == "12 requests, 31 steps, 199 events"
