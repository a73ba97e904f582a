"""The Streamlit app under AppTest: every scenario starts, every keyed control does its job."""

import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui.runs.stage_wire import unpack
from engine.lab.scenario import list_scenarios
from tests.helpers import start_app

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")


def stage_data(app: AppTest) -> dict:
    """What the app sent the stage on its last run (a run's frames only the first time it is shown)."""
    stages = [c for c in app.get("bidi_component") if c.proto.component_name == "continuous-batching-lab.stage"]
    assert len(stages) == 1
    header, runs = unpack(stages[0].proto.bytes)
    return {**header, "runs": runs} if runs else header


def frames(app: AppTest) -> dict:
    """The frames of the run the stage shows (the app must have sent them on its last run)."""
    data = stage_data(app)
    assert "runs" in data, "the frames were not sent on this run"
    run = data["runs"][0]
    return {**run, "narration": {step: [run["sentences"][i] for i in said] for step, said in run["narration"].items()}}


def report_step(app: AppTest, step: int) -> AppTest:
    """Act as the stage does when playback pauses: report `step`, which reruns the app."""
    app.session_state["stage_" + stage_data(app)["id"]] = {"step": step}
    return app.run()


def batch_caption(app: AppTest) -> str:
    return [e.label for e in app.expander if e.label.startswith("The batch as the model sees it")][0]


def texts(app: AppTest) -> str:
    return "\n".join(m.value for m in app.markdown)


@pytest.mark.parametrize("name", [p.stem for p in list_scenarios()])
def test_app_starts_without_exception_on_every_scenario(name):
    app = start_app(scenario=name)
    assert not app.exception and not app.error
    assert frames(app)["version"] == 1


def test_the_stage_gets_one_row_per_slot_and_every_step():
    app = start_app(scenario="part2-slot-refill")
    run = frames(app)
    assert (run["slots"], run["steps"]) == (2, 4)  # part2: 2 slots, steps 0-3
    assert [r["id"] for r in run["requests"]] == ["A", "B", "C", "D"]
    assert run["occupancy"] == [[0, 0, 0, 0, 1], [0, 2, 1, 2, 1], [0, 3, 3, 3, 1], [1, 1, 0, 2, 1]]
    assert run["narration"]["1"][0].startswith("C is admitted into slot 0, the slot A freed")  # the lesson's caption
    app.number_input(key="batch_size").set_value(3).run()
    assert frames(app)["slots"] == 3  # a new run: its frames are sent


def test_the_frames_are_sent_once_per_run():
    app = start_app(scenario="part2-slot-refill")
    first = stage_data(app)
    app.run()
    again = stage_data(app)
    assert "runs" in first and "runs" not in again and again["id"] == first["id"]


def test_the_reported_step_moves_the_batch_view_and_the_url():
    app = start_app(lesson="part2-slot-refill", predict="false")
    assert batch_caption(app) == "The batch as the model sees it at step 0"
    report_step(app, 2)
    assert app.session_state["step"] == 2 and app.query_params["step"] == "2"
    assert batch_caption(app) == "The batch as the model sees it at step 2"
    report_step(app, 99)
    assert app.session_state["step"] == 3  # clamped to the run's last step


def test_a_checked_prediction_moves_the_batch_view_on_its_own_run_before_the_stage_reports():
    app = start_app(lesson="part2-slot-refill")
    app.radio(key="quiz_part2_slot_refill_1").set_value("slot 0").run()
    app.button(key="check_part2_slot_refill_1").click().run()  # (the stage, not in a browser here, never reports)
    assert batch_caption(app) == "The batch as the model sees it at step 1"
    assert stage_data(app)["goto"] == ["quiz_part2_slot_refill_1", 1]
    report_step(app, 1)  # the stage has moved there; from now on its own reports count again
    report_step(app, 0)
    assert batch_caption(app) == "The batch as the model sees it at step 0"


def test_padded_mode_sends_batch_size_rows_every_step():
    app = start_app(scenario="part2-slot-refill", step=3)
    assert frames(app)["narration"]["3"][2] == "The model is called with 1 row."
    app.toggle(key="padded").set_value(True).run()
    run = frames(app)
    assert run["narration"]["3"][2] == (
        "The model is called with 2 rows (the fixed batch shape), 1 of them padding; active mask [1 0]."
    )
    assert run["calls"][3] == [3, 2, 1]  # step 3: 2 rows sent, 1 of them padding
    assert any("Padded batch: a 2 × 1 matrix" in c.value for c in app.caption)


def test_static_batching_and_stop_controls_change_the_run():
    app = start_app(scenario="part2-slot-refill")
    app.radio(key="batching").set_value("static").run()
    assert frames(app)["steps"] == 5  # static: 5 steps instead of 4
    app = start_app(scenario="stop-token-included", step=2)
    assert any("the stop token" in s for s in frames(app)["narration"]["1"])
    app.text_input(key="stop_token").input("99").run()
    narration = frames(app)["narration"]
    assert not any("the stop token" in s for ss in narration.values() for s in ss)  # 0 is an ordinary token now
    assert "Slot 0: request A emitted 0 ('<eos>')." in narration["2"]
    app = start_app(scenario="part2-slot-refill", step=2)
    app.text_input(key="stop_sequences").input("31 32; 7 8").run()
    assert (
        "Slot 0: request C emitted 32, completing stop sequence [31, 32]; it is evicted and its callback receives "
        "[3, 31, 32]." in frames(app)["narration"]["2"]
    )


def test_the_stop_token_field_can_be_emptied_and_that_means_none():
    app = start_app(scenario="stop-token-included")
    assert app.text_input(key="stop_token").value == "0"
    app.text_input(key="stop_token").input("").run()
    assert not app.exception and not app.error
    assert app.query_params["stop_token"] == "none"
    assert not any("the stop token" in s for ss in frames(app)["narration"].values() for s in ss)
    assert app.text_input(key="stop_token").value == ""  # it stays empty: nothing puts 0 back
    app = start_app(scenario="stop-token-included", stop_token="none")
    assert app.text_input(key="stop_token").value == ""


def test_a_bad_stop_token_shows_an_inline_error_and_keeps_the_scenario_s_own():
    app = start_app(scenario="stop-token-included")
    app.text_input(key="stop_token").input("x1").run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        "The stop token ('x1') is not an integer token id: write one, e.g. 0, or leave it empty for none"
    ]
    assert any("the stop token" in s for s in frames(app)["narration"]["1"])  # still stop token 0


def test_bad_stop_sequence_text_shows_an_inline_error_and_no_exception():
    app = start_app()
    app.text_input(key="stop_sequences").input("7 8; 3 x").run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        "Stop sequence 2 ('3 x') is not a list of integer token ids: write token ids separated by spaces, "
        "and sequences separated by ';', e.g. 7 8; 3 3 4"
    ]
    assert stage_data(app)["id"]  # the run still shows, without the extra stops


def test_model_knobs_rerun_the_scenario():
    app = start_app(scenario="first-example", step=0)
    before = frames(app)["requests"]
    app.number_input(key="model_seed").set_value(5).run()
    assert frames(app)["requests"] != before
    app = start_app(scenario="poisson-arrivals")
    app.number_input(key="workload_count").set_value(10).run()
    assert len(frames(app)["requests"]) == 10 and frames(app)["steps"] < 100


def test_the_lesson_says_which_settings_differ_from_the_ones_it_describes_and_offers_them_back():
    app = start_app(scenario="anyscale-cap128")
    assert not app.warning
    app.number_input(key="workload_count").set_value(50).run()
    assert [w.value for w in app.warning] == [
        "You changed this lesson's settings (Requests: 1,000 → 50). The text, captions and predictions below "
        "describe the lesson's own settings; the stage shows your run."
    ]
    app.number_input(key="batch_size").set_value(3).run()
    assert "(Batch size: 64 → 3; Requests: 1,000 → 50)" in app.warning[0].value
    app.button(key="own_settings").click().run()
    assert not app.warning and app.session_state["batch_size"] == 64 and app.session_state["workload_count"] == 1000


def test_query_parameters_open_the_same_view():
    app = start_app(scenario="stop-sequences", step=3, batch_size=3, tab="Grid", speed=30)
    assert not app.exception
    assert app.session_state["step"] == 3 and app.session_state["batch_size"] == 3
    data = stage_data(app)
    assert (data["start"], data["speed"], data["runs"][0]["slots"]) == (3, 30, 3)
    assert "lesson" not in app.query_params  # a session's first run writes nothing: the URL is the view
    app.run()  # any later run keeps the URL current, in its own words
    assert app.query_params["lesson"] == "stop-sequences" and app.query_params["speed"] == "30"


def test_a_speed_in_the_url_snaps_to_an_offered_one_and_a_bad_one_is_ignored():
    assert stage_data(start_app(speed=25))["speed"] == 30
    assert stage_data(start_app(speed="fast"))["speed"] == 2
    assert stage_data(start_app(speed=1000))["speed"] == 2  # out of range: ignored


def test_side_by_side_sends_static_and_continuous_runs_on_one_stage():
    app = start_app(scenario="static-vs-continuous", side_by_side="true")
    data = stage_data(app)
    assert data["labels"] == ["Static batching", "Continuous batching"]
    assert [run["batching"] for run in data["runs"]] == ["static", "continuous"]
    assert data["runs"][0]["steps"] > data["runs"][1]["steps"]


@pytest.mark.parametrize("tab", ["Timeline", "Metrics", "Compare", "Event log"])
def test_every_tab_renders(tab):
    app = start_app(scenario="static-vs-continuous", tab=tab, predict="false")
    assert not app.exception and not app.error
    if tab == "Compare":
        assert any(m.label == "Continuous / static throughput (ragged, unlimited memory)" for m in app.metric)
    if tab == "Event log":
        app.multiselect(key="log_kinds").set_value(["evict"]).run()
        assert "6 of 54 events" in [c.value for c in app.caption]


def test_presentation_mode_hides_the_controls_and_keeps_the_title_and_the_switches():
    app = start_app(presentation="true", scenario="part2-slot-refill")
    assert any("stSidebar" in m.value and "stToolbar" in m.value for m in app.markdown)
    assert [h.value for h in app.subheader] == ["1.2 Part 2: a freed slot is refilled at once"]
    lesson = [e for e in app.expander if e.label == "The lesson"][0]  # the lesson is there too, one click away
    assert [m for m in lesson.markdown if m.value.startswith("The interview problem's Part 2, dynamic slot filling")]
    assert app.radio(key="batching") not in app.sidebar.radio and app.toggle(key="padded") not in app.sidebar.toggle
    assert stage_data(app)["projector"] is True


def test_choosing_upload_without_a_file_explains_what_to_do():
    app = start_app()
    app.selectbox(key="scenario").set_value("upload").run()
    assert not app.exception
    assert "Choose a scenario TOML, an event-log JSONL or a request trace" in app.info[0].value


def test_choosing_another_scenario_starts_from_its_own_settings_at_step_0():
    app = start_app(scenario="part2-slot-refill", batch_size=3, step=2)
    assert app.session_state["step"] == 2 and app.session_state["batch_size"] == 3
    app.selectbox(key="scenario").set_value("stop-sequences").run()
    assert stage_data(app)["start"] == 0
    assert app.session_state["step"] == 0 and app.session_state["batch_size"] == 4
    assert "step" not in app.query_params and app.query_params["batch_size"] == "4"


def test_a_lesson_s_requests_are_a_markdown_table_with_only_the_columns_in_play():
    app = start_app(lesson="arrivals-mid-run")
    tables = [m.value for m in app.markdown if m.value.startswith("| request |")]
    assert tables == [
        "| request | prompt | max\\_tokens | arrives at step |\n"
        "| --- | --- | --- | --- |\n"
        "| A | \\[1\\] | 4 | 0 |\n"
        "| B | \\[2\\] | 2 | 0 |\n"
        "| C | \\[3\\] | 3 | 1 |\n"
        "| D | \\[4\\] | 2 | 3 |\n"
        "| E | \\[5\\] | 2 | 3 |\n"
        "| F | \\[6\\] | 2 | 12 |"
    ]
    assert not app.table and not app.dataframe  # (a table element would load the browser's table code)


def test_a_markdown_table_escapes_what_markdown_would_read():
    from cblab.ui.frame.lesson_view import markdown_table

    assert markdown_table([{"request": "a|b", "prompt": "[1, 2]", "stop sequences": "*_`<x>#~\\"}]) == (
        "| request | prompt | stop sequences |\n| --- | --- | --- |\n"
        "| a\\|b | \\[1, 2\\] | \\*\\_\\`\\<x\\>\\#\\~\\\\ |"
    )


def test_a_view_beside_the_lesson_is_not_drawn_while_its_predictions_are_open():
    predicting = start_app(lesson="throughput-vs-latency")  # a prediction open: the sweep starts closed
    assert [e.label for e in predicting.expander if e.label.startswith("Throughput and latency")]
    assert not predicting.get("plotly_chart")
    checked = start_app(lesson="throughput-vs-latency", predict="false")
    assert len(checked.get("plotly_chart")) == 1
