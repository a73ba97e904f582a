"""The lesson's reveal stays when the learner moves the setting the lesson asks them to move
(issue 33, "The slider removes the reveal"): 7.4 asks for the Watermark slider once predicted;
its reveal (the 0.01/0.05/0.1 figures) and the verdict stay, marked as the lesson's settings,
beside the changed run's own figures (`cblab/ui/course/kept_reveal.py`)."""

import pathlib

from streamlit.testing.v1 import AppTest

from cblab.ui.course.course import quiz_key
from cblab.ui.course.kept_reveal import figures_beside, kept_heading, settings_said
from engine.lab.scenario import resolve_scenario

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")
LESSON = "watermark-and-thrash"


def flat(text: str) -> str:
    return " ".join(text.split())


def page_text(app: AppTest) -> str:
    return flat(" ".join(m.value for m in app.markdown))


def predicted_7_4() -> AppTest:
    """Lesson 7.4 with both its predictions checked right (50 admitted at step 0, 5 preempted at step 1)."""
    app = AppTest.from_file(APP, default_timeout=180)
    app.query_params["lesson"] = "7.4"
    app.run()
    for n, value in ((1, 50), (2, 5)):
        app.number_input(key=quiz_key(LESSON, n)).set_value(value).run()
        app.button(key=quiz_key(LESSON, n).replace("quiz_", "check_", 1)).click().run()
    return app


def test_moving_the_slider_the_lesson_asks_for_keeps_its_reveal_and_verdict_beside_the_new_run_s_figures():
    app = predicted_7_4()
    reveal = flat(resolve_scenario(LESSON).reveal)
    assert f"**What happened.** {reveal}" in page_text(app)
    app.slider(key="kv_watermark").set_value(0.05).run()
    assert not app.exception
    text = page_text(app)
    assert f"**What happened with the lesson's settings (Watermark 0.0).** {reveal}" in text
    assert "0.05 (20 blocks) 23, 3,586 and 919 tokens/s" in text  # the figures it compares with
    assert [s.value.split(" **")[0] for s in app.success][-1].startswith("At step 1 every running row")
    table = next(m.value for m in app.markdown if "lesson's settings (Watermark 0.0)" in m.value and "|" in m.value)
    assert "| preemptions | 144 | 23 |" in table  # the lesson's run beside the changed one
    assert "| tokens computed again | 20,111 | 3,586 |" in table
    assert "| throughput (tokens/s) | 846 | 919 |" in table
    assert "yours (Watermark 0.05)" in table


def test_a_changed_run_keeps_the_reveal_hidden_while_a_prediction_is_open():
    app = AppTest.from_file(APP, default_timeout=180)
    app.query_params["lesson"] = "7.4"
    app.run()
    app.slider(key="kv_watermark").set_value(0.05).run()
    assert not app.exception
    assert "What happened" not in page_text(app)
    assert "This lesson's predictions are for its own settings" in " ".join(c.value for c in app.caption)


def test_the_figures_beside_show_the_pool_and_the_cache_only_where_they_ran():
    own = {"steps": 1079, "throughput_tokens_per_s": 846.49, "preemptions": 144, "recomputed_tokens": 20111}
    yours = {"steps": 1118, "throughput_tokens_per_s": 919.33, "preemptions": 23, "recomputed_tokens": 3586}
    own["cached_tokens"], yours["cached_tokens"] = 0, 1200
    rows = figures_beside(own, yours, pool=True, cache=False, headings=("lesson", "yours"))
    assert rows == [
        {"": "steps", "lesson": "1,079", "yours": "1,118"},
        {"": "throughput (tokens/s)", "lesson": "846", "yours": "919"},
        {"": "preemptions", "lesson": "144", "yours": "23"},
        {"": "tokens computed again", "lesson": "20,111", "yours": "3,586"},
    ]
    plain = figures_beside(own, yours, pool=False, cache=True, headings=("a", "b"))
    assert [row[""] for row in plain] == ["steps", "throughput (tokens/s)", "tokens found in the prefix cache"]


def test_the_kept_heading_names_the_lesson_s_values_of_what_changed():
    changed = [("Watermark", "0.0", "0.05"), ("Batch size", "64", "8")]
    assert settings_said(changed, 1) == "Watermark 0.0; Batch size 64"
    assert settings_said(changed, 2) == "Watermark 0.05; Batch size 8"
    assert kept_heading(changed) == "What happened with the lesson's settings (Watermark 0.0; Batch size 64)."
