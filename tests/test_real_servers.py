"""The "How real servers differ" callouts: read and checked from `[[real_servers]]`, shown
under the lesson by the app, printed by `--narrate`."""

import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui.course.real_servers import callout_markdown
from engine.lab.real_servers import MAX_CALLOUTS, Callout
from engine.lab.scenario import list_scenarios, load_scenario, parse_scenario
from engine.lab.toml_reader import ScenarioError

REQUESTS = "[[requests]]\nprompt = [1]\nmax_tokens = 2\n"
CALLOUT = '[[real_servers]]\ntext = "vLLM differs."\nsource = "https://docs.vllm.ai/en/latest/"\n'


def scenario_with(callouts: str):
    return parse_scenario('title = "t"\n' + callouts + REQUESTS, "foo.toml")


def test_callouts_are_read_in_order_and_a_scenario_without_them_has_none():
    two = CALLOUT + CALLOUT.replace("vLLM differs.", "So does the OpenAI API.")
    assert scenario_with(two).real_servers == (
        Callout("vLLM differs.", "https://docs.vllm.ai/en/latest/"),
        Callout("So does the OpenAI API.", "https://docs.vllm.ai/en/latest/"),
    )
    assert scenario_with("").real_servers == ()


@pytest.mark.parametrize(
    ("callouts", "message"),
    [
        (
            CALLOUT.replace("https://docs.vllm.ai/en/latest/", "javascript:alert(1)"),
            "foo.toml: real_servers[0].source: must be an https:// address without spaces, quotes or brackets, "
            "got 'javascript:alert(1)'",
        ),
        (
            CALLOUT.replace("https://", "http://"),
            "foo.toml: real_servers[0].source: must be an https:// address without spaces, quotes or brackets, "
            "got 'http://docs.vllm.ai/en/latest/'",
        ),
        (
            CALLOUT.replace("latest/", "a page)"),
            "foo.toml: real_servers[0].source: must be an https:// address without spaces, quotes or brackets, "
            "got 'https://docs.vllm.ai/en/a page)'",
        ),
        (CALLOUT.replace('text = "vLLM differs."', 'text = "  "'), "foo.toml: real_servers[0].text: must be 1 to "),
        (CALLOUT.replace("text =", "txt ="), "foo.toml: real_servers[0].text: is required"),
        (CALLOUT + "url = 'x'\n", "foo.toml: real_servers[0].url: unknown key (known here: source, text)"),
        ("real_servers = 'no'\n", "foo.toml: real_servers: must be an array of tables ([[real_servers]])"),
        (CALLOUT * (MAX_CALLOUTS + 1), f"foo.toml: real_servers: has {MAX_CALLOUTS + 1} tables; the limit is 10"),
    ],
)
def test_a_bad_callout_names_its_field(callouts, message):
    with pytest.raises(ScenarioError) as error:
        scenario_with(callouts)
    assert str(error.value).startswith(message)


def test_every_built_in_callout_cites_an_https_source():
    callouts = [c for path in list_scenarios() for c in load_scenario(path).real_servers]
    assert len(callouts) >= 8
    assert all(c.source.startswith("https://") and c.text for c in callouts)


def test_a_callout_links_its_source_by_the_site_name():
    callout = Callout("Text.", "https://github.com/vllm-project/vllm/blob/main/vllm/sampling_params.py")
    assert callout_markdown(callout) == (
        "Text.\n\nSource: [github.com](https://github.com/vllm-project/vllm/blob/main/vllm/sampling_params.py)"
    )


def show(name: str) -> None:
    from cblab.ui.course.real_servers import render_callouts
    from engine.lab.scenario import resolve_scenario

    render_callouts(resolve_scenario(name))


@pytest.mark.parametrize(("name", "boxes"), [("stop-sequences", 2), ("part2-slot-refill", 0)])
def test_the_app_shows_the_callouts_in_one_open_box(name, boxes):
    app = AppTest.from_function(show, args=(name,)).run()
    assert not app.exception
    assert [e.label for e in app.expander] == (["How real servers differ"] if boxes else [])
    assert len(app.info) == boxes
    if boxes:
        assert "include_stop_str_in_output" in app.info[0].value and "[github.com](https://" in app.info[0].value


def show_extras(name: str, predicting: bool) -> None:
    from cblab.ui.frame.lesson_extras import render_lesson_extras
    from engine.lab.scenario import resolve_scenario

    render_lesson_extras(resolve_scenario(name), name, projector=False, predicting=predicting)


@pytest.mark.parametrize("predicting", [True, False])
def test_the_box_starts_closed_while_a_prediction_is_open(predicting):
    """Open, it pushed the lesson's first prediction below the fold of a 1,400 x 900 screen."""
    app = AppTest.from_function(show_extras, args=("stop-sequences", predicting)).run()
    assert not app.exception
    assert [(e.label, e.proto.expanded) for e in app.expander] == [("How real servers differ", not predicting)]


def test_narrate_prints_the_callouts_before_the_steps():
    result = subprocess.run(
        [sys.executable, "-m", "engine", "run", "zero-budget-and-empty-prompt", "--narrate"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert 'How real servers differ: vLLM refuses request A: `SamplingParams` raises "max_tokens must be' in out
    assert "  source: https://github.com/vllm-project/vllm/blob/main/vllm/v1/engine/input_processor.py" in out
    assert out.index("How real servers differ") < out.index("\nstep 0")
