"""Regression tests for problems found in review: each pins the behaviour now promised."""

import os
import pathlib
import subprocess
import sys
import time

import pytest

from engine import BatchInferenceEngine, CallbackError, ModelError
from engine.lab.scenario import ScenarioError, parse_scenario
from engine.lab.simulate import simulate
from engine.practice.checker.run import check
from tests.helpers import FlakyModel, HashModel, Upload
from ui.controls import scenario_defaults
from ui.runs import uploaded_scenario


def test_an_uploaded_scenario_starts_from_its_own_settings():
    text = (
        b'title = "t"\n[engine]\nbatch_size = 8\nbatching = "static"\npadded = true\n'
        b"[[requests]]\nprompt = [1]\nmax_tokens = 2\n"
    )
    defaults = scenario_defaults(uploaded_scenario(Upload("mine.toml", text)))
    assert (defaults["batch_size"], defaults["batching"], defaults["padded"]) == (8, "static", True)
    assert uploaded_scenario(Upload("bad.toml", b"title = ")) is None


def test_model_tokens_out_of_64_bits_are_refused_when_loading():
    with pytest.raises(ScenarioError, match=r"^x.toml: model.eos_token: must be an integer"):
        parse_scenario(
            'title = "t"\n[model]\neos_token = 18446744073709551616\n[[requests]]\nprompt = [1]\nmax_tokens = 1\n',
            "x.toml",
        )
    with pytest.raises(ScenarioError, match=r"prompt_len: must be an integer 0..65536"):
        parse_scenario(
            'title = "t"\n[workload]\ncount = 1\nprompt_len = 100000000\n[workload.output]\n'
            'distribution = "fixed"\nvalue = 1\n',
            "x.toml",
        )


def test_a_cancel_before_a_later_arrival_happens_before_admission():
    log = simulate(
        parse_scenario(
            'title = "t"\n[model]\nstop_chance = 0.0\n[[requests]]\nprompt = [1]\n'
            "max_tokens = 3\narrival_step = 10\ncancel_step = 5\n"
        )
    )
    assert [(e.step, e.kind, e.reason) for e in log] == [(5, "arrive", None), (5, "evict", "cancelled")]


def test_run_keeps_callback_failures_across_a_model_fault():
    engine = BatchInferenceEngine(FlakyModel(HashModel(), {1: "raise"}), 2, None)
    engine.submit_request([1], 1, lambda tokens: 1 / 0)
    engine.submit_request([2], 3)
    with pytest.raises(ModelError):
        engine.run()
    with pytest.raises(CallbackError, match=r"^1 callback\(s\) raised: r0 \(ZeroDivisionError"):
        engine.run()


def test_compare_with_no_generated_tokens_does_not_crash(tmp_path):
    scenario = tmp_path / "zero.toml"
    scenario.write_text('title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = 0\n')
    result = subprocess.run(
        [sys.executable, "-m", "engine", "compare", str(scenario)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "continuous / static throughput (ragged): - (no tokens were generated)"
    bad = subprocess.run(
        [sys.executable, "-m", "engine", "run", "--requests", "0"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "must be an integer from 1 to 100,000, got '0'" in bad.stderr


def test_a_correct_solution_using_numpy_passes_the_checker():
    pytest.importorskip("numpy")
    report = check("tests/solutions/numpy_rows.py")
    assert report.exit_status == 0, [f.message for r in report.failed for f in r.findings]


def test_the_editor_stops_the_checker_and_its_worker_on_timeout(monkeypatch):
    from streamlit.testing.v1 import AppTest

    import ui.practice

    monkeypatch.setenv(ui.practice.ALLOW_CODE, "1")
    monkeypatch.setattr(ui.practice, "EDITOR_TIMEOUT", 2)
    app = AppTest.from_file(os.path.join(os.path.dirname(__file__), "..", "app.py"), default_timeout=60)
    app.query_params["tab"] = "Practice"
    app.run()
    hangs = pathlib.Path(__file__).parent / "solutions" / "hangs.py"
    app.text_area(key="solution_code").input(hangs.read_text()).run()
    app.button(key="run_check").click().run()
    assert app.error[0].value == "The check did not finish within 2 s."
    time.sleep(0.5)
    left = subprocess.run(
        ["pgrep", "-f", "engine.practice.checker.worker .*solution.py"], capture_output=True, text=True
    )
    assert left.stdout == ""
