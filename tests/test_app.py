"""The Streamlit app under AppTest: every scenario starts, every keyed control does its job."""

import base64
import json
import pathlib

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine.lab.scenario import list_scenarios

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")


def start(**query) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        app.query_params[key] = str(value)
    return app.run()


def decode(value):
    """Plotly sends numpy arrays as base64 `bdata`; turn them back into lists."""
    if isinstance(value, dict) and "bdata" in value:
        shape = [int(n) for n in str(value.get("shape", "-1")).split(",")]
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(shape).tolist()
    return value


def grid(app: AppTest) -> dict:
    """The grid figure's first trace (the heatmap), decoded from the chart's Plotly spec."""
    charts = [c for c in app.get("plotly_chart") if "grid" in c.proto.id]
    assert len(charts) == 1
    return {key: decode(value) for key, value in json.loads(charts[0].proto.spec)["data"][0].items()}


def texts(app: AppTest) -> str:
    return "\n".join(m.value for m in app.markdown)


@pytest.mark.parametrize("name", [p.stem for p in list_scenarios()])
def test_app_starts_without_exception_on_every_scenario(name):
    app = start(scenario=name)
    assert not app.exception and not app.error
    assert grid(app)["type"] == "heatmap"


def test_grid_has_one_row_per_slot_and_one_column_per_step():
    app = start()
    heatmap = grid(app)
    assert len(heatmap["z"]) == 2 and len(heatmap["z"][0]) == 1  # part2: 2 slots, step 0
    app.number_input(key="batch_size").set_value(3).run()
    assert len(grid(app)["z"]) == 3


def test_next_and_prev_move_the_step_by_one():
    app = start()
    app.button(key="next").click().run()
    assert app.session_state["step"] == 1
    assert len(grid(app)["z"][0]) == 2
    assert "Request C is admitted into slot 0 from the queue." in texts(app)
    app.button(key="next").click().run()
    app.button(key="prev").click().run()
    assert app.session_state["step"] == 1
    app.button(key="prev").click().run()
    app.button(key="prev").click().run()
    assert app.session_state["step"] == 0  # never below 0


def test_padded_mode_sends_batch_size_rows_every_step():
    app = start(scenario="part2-slot-refill", step=3)
    assert "The model is called with 1 row." in texts(app)
    app.toggle(key="padded").set_value(True).run()
    assert "The model is called with 2 rows (the fixed batch shape), 1 of them padding; active mask [1 0]." in texts(
        app
    )
    assert grid(app)["z"][1][3] == 1  # the padded row's colour code
    assert any("Padded batch: a 2 × 1 matrix" in c.value for c in app.caption)


def test_static_batching_and_stop_controls_change_the_run():
    app = start(scenario="part2-slot-refill")
    app.radio(key="batching").set_value("static").run()
    assert app.slider(key="step").max == 4  # static: 5 steps instead of 4
    app = start(scenario="stop-token-included", step=2)
    assert "the stop token" in texts(app)
    app.number_input(key="stop_token").set_value(99).run()
    assert "the stop token" not in texts(app)  # 0 is now an ordinary token: A runs on
    assert "Slot 0: request A emitted 0 ('<eos>')." in texts(app).replace("&#x27;", "'").replace("&lt;", "<").replace(
        "&gt;", ">"
    )
    app = start(scenario="part2-slot-refill", step=2)
    app.text_input(key="stop_sequences").input("31 32; 7 8").run()
    assert "Slot 0: request C emitted 32, completing stop sequence [31, 32]" in texts(app)


def test_bad_stop_sequence_text_shows_an_inline_error_and_no_exception():
    app = start()
    app.text_input(key="stop_sequences").input("7 8; 3 x").run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        "Stop sequence 2 ('3 x') is not a list of integer token ids: write token ids separated by spaces, "
        "and sequences separated by ';', e.g. 7 8; 3 3 4"
    ]
    assert grid(app)["type"] == "heatmap"  # the run still shows, without the extra stops


def test_model_knobs_rerun_the_scenario():
    app = start(scenario="first-example", step=0)
    before = grid(app)["text"]
    app.number_input(key="model_seed").set_value(5).run()
    assert grid(app)["text"] != before
    app = start(scenario="poisson-arrivals")
    app.number_input(key="workload_count").set_value(10).run()
    assert "10 requests arrive" not in texts(app)  # Poisson: they arrive over time
    assert app.slider(key="step").max < 100


def test_query_parameters_open_the_same_view():
    app = start(scenario="stop-sequences", step=3, batch_size=3, tab="Grid")
    assert not app.exception
    assert app.session_state["step"] == 3 and app.session_state["batch_size"] == 3
    assert len(grid(app)["z"]) == 3
    assert app.query_params["scenario"] == "stop-sequences"


@pytest.mark.parametrize("tab", ["Timeline", "Metrics", "Compare", "Event log"])
def test_every_tab_renders(tab):
    app = start(scenario="static-vs-continuous", tab=tab)
    assert not app.exception and not app.error
    if tab == "Compare":
        assert any(m.label == "Continuous / static throughput (ragged)" for m in app.metric)
    if tab == "Event log":
        app.multiselect(key="log_kinds").set_value(["evict"]).run()
        assert "6 of 54 events" in [c.value for c in app.caption]


def test_presentation_mode_hides_the_controls_and_the_lesson():
    app = start(presentation="true")
    assert any("stSidebar" in m.value for m in app.markdown)
    assert not app.subheader


def test_choosing_upload_without_a_file_explains_what_to_do():
    app = start()
    app.selectbox(key="scenario").set_value("upload").run()
    assert not app.exception
    assert "Choose a scenario TOML or an event-log JSONL" in app.info[0].value


def test_choosing_another_scenario_starts_from_its_own_settings_at_step_0():
    app = start(scenario="part2-slot-refill", batch_size=3, step=2)
    assert app.session_state["step"] == 2 and app.session_state["batch_size"] == 3
    app.selectbox(key="scenario").set_value("stop-sequences").run()
    assert app.session_state["step"] == 0 and app.session_state["batch_size"] == 4
    assert "step" not in app.query_params and app.query_params["batch_size"] == "4"
