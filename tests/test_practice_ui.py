"""The Practice tab: spot-the-bug grids, a checker's JSONL beside the reference, the opt-in editor."""

import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui.practice.pair_view import checker_pair
from cblab.ui.practice.paired_runs import first_difference
from cblab.ui.practice.practice import ALLOW_CODE, CHECK_STEPS, ROOT
from engine import EventLog
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.driver import run_case
from engine.practice.checker.reconstruct import reconstruct
from engine.practice.checker.run import reference
from engine.practice.checker.worker import load_class
from engine.practice.zoo import BUGS, CrossedResults

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")


def practice_app() -> AppTest:
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["tab"] = "Practice"
    return app.run()


def part2_logs():
    case = next(c for c in fixed_cases() if c.name == "part2")
    return reconstruct(case, run_case(CrossedResults, case.to_json(), True)), reconstruct(case, reference(case))


def test_first_difference_is_the_earliest_differing_cell():
    buggy, correct = part2_logs()
    assert first_difference(buggy, correct) == (1, 0)
    assert first_difference(correct, correct) is None


def test_checker_pair_rebuilds_the_reference_of_the_same_case():
    buggy, _ = part2_logs()
    yours, expected = checker_pair(buggy.to_jsonl())
    assert yours == buggy
    assert expected.outputs() == {"r0": [100, 11], "r1": [101, 21, 22, 23], "r2": [102, 31, 32], "r3": [103, 41]}
    with pytest.raises(ValueError, match="not written by `python -m engine check --jsonl`"):
        checker_pair(simulate(resolve_scenario("part2-slot-refill")).to_jsonl())


@pytest.mark.parametrize("name", list(BUGS))
def test_every_bug_has_a_demo_with_a_difference_and_an_explanation(name):
    app = practice_app()
    app.toggle(key="spot_first").set_value(False).run()  # told at once, not asked first
    app.selectbox(key="bug").set_value(name).run()
    assert not app.exception
    assert any(c.value.startswith("First difference (outlined in red): step ") for c in app.caption)
    assert BUGS[name].avoid in "\n".join(m.value for m in app.markdown)
    charts = [c for c in app.get("plotly_chart") if "bug_" in c.proto.id]
    assert len(charts) == 2


def test_the_check_steps_say_what_the_file_defines_where_to_run_and_what_an_adapter_is_for():
    app = practice_app()
    shown = [m.value for m in app.markdown if "python -m engine check my_engine.py" in m.value]
    assert shown == [CHECK_STEPS.strip()]
    text = " ".join(CHECK_STEPS.split())
    assert "`__init__(model, batch_size, stop_token)`" in text  # what the file must define
    assert "`submit_request(prompt_tokens, max_tokens, callback, stop_sequences=None)`" in text and "`run()`" in text
    assert "`BatchInferenceEngine`" in text and "`--class NAME`" in text  # which class the checker loads
    assert "`python -m pip install -e .`" in text and "in the folder that holds your file" in text  # where
    assert "Write an **adapter**" in text and "`docs/adapters.md`" in text  # what an adapter is for, and where
    assert (ROOT / "docs" / "adapters.md").is_file()
    assert not app.exception


def test_the_check_steps_name_the_class_the_checker_loads(tmp_path):
    """The steps' rule, against the checker's own loader: `BatchInferenceEngine` among several, or the only engine."""
    solution = tmp_path / "my_engine.py"
    engine = "    def submit_request(self, *a): pass\n    def run(self): pass\n"
    solution.write_text(f"class Helper:\n    pass\nclass Mine:\n{engine}")
    assert load_class(str(solution), None).__name__ == "Mine"
    solution.write_text(f"class Other:\n{engine}class BatchInferenceEngine:\n{engine}")
    assert load_class(str(solution), None).__name__ == "BatchInferenceEngine"
    assert load_class(str(solution), "Other").__name__ == "Other"


def test_the_editor_is_off_unless_the_server_opts_in(monkeypatch):
    monkeypatch.delenv(ALLOW_CODE, raising=False)
    assert not practice_app().text_area
    monkeypatch.setenv(ALLOW_CODE, "1")
    app = practice_app()
    assert app.text_area(key="solution_code").value.startswith('"""A correct outside solution')
    assert "never enable it on a shared server" in app.warning[0].value.lower()
    app.text_area(key="solution_code").input(
        (pathlib.Path(__file__).parent / "solutions" / "correct.py")
        .read_text()
        .replace('state["callback"](state["tokens"])', 'state["callback"](state["tokens"][:-1])')
    ).run()
    app.button(key="run_check").click().run()
    report = app.code[0].value
    assert "FAIL" in report and report.splitlines()[-2].endswith("failed")
    assert report.splitlines()[-1] == "Scale: not run (a correctness case failed: fix that first)"
    assert not app.exception


def test_an_uploaded_checker_log_needs_the_checker_header():
    log = simulate(resolve_scenario("part2-slot-refill"))
    assert EventLog.from_jsonl(log.to_jsonl()).model is None
