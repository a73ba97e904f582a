"""The sidebar's settings table (cblab/ui/controls/settings.py) and the small things a class sees: memory settings
bound to the URL, Back and Forward between lessons, scores kept in the browser, tables in words,
downloads named after the lesson."""

import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui.charts.compare_view import comparison_table
from cblab.ui.controls.settings import BY_KEY, SETTINGS, own_values, parse, url_text
from cblab.ui.course.course import merge_scores
from cblab.ui.frame.tabs import download_name
from cblab.ui.runs.runs import KEEP, Overrides, apply_overrides, load
from cblab.ui.stage.batch_view import lengths_text
from engine.lab.compare import compare
from engine.lab.scenario import resolve_scenario
from tests.helpers import start_app

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")


def test_every_setting_reads_back_what_it_writes_to_the_url():
    values = {
        "batch_size": 7,
        "stop_token": "none",
        "stop_sequences": "7 8; 3",
        "batching": "static",
        "padded": True,
        "fill_timeout": 5,
        "kv_blocks": None,
        "block_size": 32,
        "kv_policy": "reserve",
        "token_budget": 256,
        "kv_watermark": 0.05,
        "prefix_caching": True,
        "model_seed": 3,
        "stop_chance": 0.25,
        "workload_count": 40,
        "workload_seed": 9,
    }
    assert set(values) == {s.key for s in SETTINGS}
    for key, value in values.items():
        text = url_text(BY_KEY[key], value)
        assert parse(BY_KEY[key], text) == ("" if key == "stop_token" else value), key


@pytest.mark.parametrize(
    "key, text",
    [
        ("batch_size", "0"),
        ("batch_size", "257"),
        ("kv_policy", "lru"),
        ("kv_watermark", "0.51"),
        ("kv_watermark", "nan"),
        ("padded", "yes"),
        ("kv_blocks", "-1"),
        ("stop_chance", "2"),
        ("token_budget", "x"),
    ],
)
def test_a_setting_s_bad_url_text_is_refused(key, text):
    with pytest.raises(ValueError):
        parse(BY_KEY[key], text)


def test_a_lesson_with_memory_starts_from_its_own_memory_settings():
    own = own_values(resolve_scenario("chunked-prefill"))
    assert (own["kv_blocks"], own["block_size"], own["kv_policy"], own["token_budget"]) == (None, 16, "paged", 512)


def test_memory_settings_show_only_where_a_run_has_memory_and_change_the_run_and_the_url():
    app = start_app(lesson="1.2", predict="false")
    assert not [n for n in app.sidebar.number_input if n.key in ("kv_blocks", "token_budget")]
    app = start_app(lesson="chunked-prefill", predict="false")
    assert app.number_input(key="token_budget").value == 512
    app.number_input(key="token_budget").set_value(None).run()  # lesson 7.4: "delete token_budget, run again"
    assert app.query_params["token_budget"] == "none"
    assert app.warning[0].value.startswith("You changed this lesson's settings (Token budget per step: 512 → none)")
    app.number_input(key="kv_blocks").set_value(400).run()
    assert app.query_params["kv_blocks"] == "400" and app.query_params["kv_policy"] == "paged"
    linked = start_app(**{key: app.query_params[key] for key in app.query_params})  # a copied link, a new session
    assert linked.number_input(key="kv_blocks").value == 400 and linked.number_input(key="token_budget").value is None


def test_prefix_caching_is_offered_with_a_paged_pool_and_kept_in_the_url():
    app = start_app(lesson="preemption", predict="false")  # 7 blocks, paged
    assert app.toggle(key="prefix_caching").value is False
    app.toggle(key="prefix_caching").set_value(True).run()
    assert not app.exception and app.query_params["prefix_caching"] == "true"
    assert not [c for c in app.caption if "not drawn yet" in c.value]  # the stage draws the pool
    linked = start_app(**{key: app.query_params[key] for key in app.query_params})  # a copied link, a new session
    assert linked.toggle(key="prefix_caching").value is True and not linked.exception
    linked.radio(key="kv_policy").set_value("reserve").run()  # a reserving pool has no prefix cache
    assert not [t for t in linked.toggle if t.key == "prefix_caching"] and not linked.exception
    assert not [t for t in start_app(lesson="1.2", predict="false").toggle if t.key == "prefix_caching"]  # no pool


def test_overrides_keep_the_scenario_s_memory_unless_changed():
    scenario = resolve_scenario("chunked-prefill")
    assert apply_overrides(scenario, Overrides()) == scenario
    assert Overrides().kv_blocks is KEEP
    changed = apply_overrides(scenario, Overrides(token_budget=None, kv_blocks=64))
    assert (changed.engine.token_budget, changed.engine.kv_blocks) == (None, 64)
    assert changed.quizzes == () and changed.captions == {}  # written for the lesson's own run


def test_a_token_budget_below_the_batch_size_is_a_message_naming_it():
    app = start_app(lesson="chunked-prefill", predict="false")
    app.number_input(key="token_budget").set_value(2).run()
    assert not app.exception
    assert "token_budget" in app.error[0].value


def test_kept_scores_are_taken_for_the_course_s_questions_only_and_the_session_s_own_win():
    keys = ["quiz_part2_slot_refill_1", "quiz_part2_slot_refill_2", "quiz_part2_slot_refill_3", "quiz_stop_sequences_1"]
    saved = {
        "quiz_part2_slot_refill_1": [True, "slot 0"],
        "quiz_part2_slot_refill_2": [False, "x" * 10_000],  # too long to be an answer: ignored
        "quiz_part2_slot_refill_3": [True, 3],
        "quiz_not_a_lesson_1": [True, "slot 0"],  # not a question of the course: ignored
        "quiz_stop_sequences_1": ["yes", "slot 0"],  # not a verdict: ignored
    }
    results, given = {"quiz_part2_slot_refill_3": False}, {"quiz_part2_slot_refill_3": 4}
    merge_scores(saved, results, given, keys)
    assert results == {"quiz_part2_slot_refill_1": True, "quiz_part2_slot_refill_3": False}
    assert given == {"quiz_part2_slot_refill_1": "slot 0", "quiz_part2_slot_refill_3": 4}
    merge_scores(["not", "a", "dict"], results, given, keys)  # nothing happens
    assert len(results) == 2


def test_taken_scores_count_in_the_lesson_and_its_chapter():
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["lesson"] = "1.2"
    app.session_state["quiz_results"] = {"quiz_part2_slot_refill_1": True}
    app.session_state["quiz_given"] = {"quiz_part2_slot_refill_1": "slot 0"}
    app.run()
    assert [c.value for c in app.caption if c.value.startswith("This lesson")] == [
        "This lesson: 1/3 right · chapter 1: 1/9 right"
    ]
    assert app.radio(key="quiz_part2_slot_refill_2").label == "Your answer"  # the next question is asked


def test_the_compare_table_has_configurations_across_and_a_dash_where_a_figure_does_not_apply():
    table = comparison_table(compare(resolve_scenario("kv-paged-vs-reserve")))
    assert list(table.columns) == [
        "continuous-ragged",
        "continuous-padded",
        "static-ragged",
        "static-padded",
        "static-reserve",
        "continuous-reserve",
        "continuous-paged",
    ]
    assert table.loc["KV util", "continuous-ragged"] == "–"
    assert table.loc["KV util", "continuous-paged"] == "87%"
    assert table.loc["steps", "continuous-ragged"] == "27"
    assert "None" not in table.to_string()


def test_a_big_batch_summarises_its_prefix_lengths():
    assert lengths_text([5, 3, 7]) == "5, 3, 7"
    assert lengths_text([512] * 38 + [513, 513]) == "512 (38 rows), 513 (2 rows)"
    assert lengths_text(list(range(500, 540))) == "500 to 539, median 520"


def test_downloads_are_named_after_the_lesson_and_its_settings():
    run = load("chunked-prefill", None, Overrides(batch_size=3))
    assert download_name("chunked-prefill", run) == "chunked-prefill_batch3_continuous_ragged_budget512"
    assert download_name("part2-slot-refill", load("part2-slot-refill", None, Overrides())) == (
        "part2-slot-refill_batch2_continuous_ragged"
    )
