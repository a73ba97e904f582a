"""Issue 32, item 6: no verdict without a check.

Each published solution the issue ran through the checker, and the verdict it must get:
nothing checked is not a pass (exit 2); a model called once per row is named as such, not
as static batching; cases that need no stop token run without it when an adapter declines
it; threads left running by one case cost that case only; cancellation and the contract's
faults are checked where the solution offers them. The solutions are in tests/solutions/.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine import BatchInferenceEngine
from engine.practice.checker.adapting import load_file, row_by_row
from engine.practice.checker.cases import Case, CaseRequest, fixed_cases, without_stop_token
from engine.practice.checker.checks import evaluate
from engine.practice.checker.driver import run_case
from engine.practice.checker.one_call import one_call_findings
from engine.practice.checker.report import format_report, report_json
from engine.practice.checker.run import check
from engine.practice.checker.trace import Trace
from engine.practice.zoo import StaticInsteadOfContinuous

SOLUTIONS = "tests/solutions"
ADAPTERS = Path(__file__).resolve().parent.parent / "docs" / "adapters"
NOTHING = (
    "NOTHING CHECKED: 16 cases skipped, 120 generated workloads declined by the solution's adapter; no case ran, so "
    "this is not a pass (exit status 2)"
)


def run_check(*args):
    command = [sys.executable, "-m", "engine", "check", *args, "--no-scale"]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def failures(report) -> dict[str, list]:
    return {r.case.name: r.findings for r in report.failed}


def test_a_solution_whose_adapter_runs_nothing_is_told_nothing_was_checked_and_exits_2():
    result = run_check(f"{SOLUTIONS}/declines_everything.py", "--class", "Adapter")
    assert result.returncode == 2, result.stdout
    lines = result.stdout.splitlines()
    assert lines[-2:] == ["0 passed, 0 failed, 16 skipped", NOTHING]


def test_nothing_checked_is_in_the_json_report_too():
    result = run_check(f"{SOLUTIONS}/declines_everything.py", "--class", "Adapter", "--json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["nothing_checked"] == ("16 cases skipped, 120 generated workloads declined by the solution's adapter")
    assert report["passed"] == 0 and report["failed"] == []


def test_a_check_that_ran_reports_nothing_checked_as_none():
    report = check(f"{SOLUTIONS}/correct.py", generated=0)
    assert report.exit_status == 0 and report_json(report)["nothing_checked"] is None
    assert not any(line.startswith("NOTHING CHECKED") for line in format_report(report).splitlines())


def test_a_model_called_once_per_row_is_named_and_not_called_static_batching():
    report = check(f"{SOLUTIONS}/calls_once_per_row.py", generated=0)
    failed = failures(report)
    assert set(failed) == {"part1", "part2", "first-example", "refill-order"}
    assert {f.check for findings in failed.values() for f in findings} == {"one_call"}  # no work_conserving, on_time
    (finding,) = failed["first-example"]
    assert finding.message == (
        "the model was called once per row: 3 calls in step 0, where one batched call was expected"
    )
    assert finding.hint == (
        "make one model call a step with every active row (the batch), then append one token to each row: that is "
        "what batching buys"
    )
    assert failed["part2"][0].message == (
        "the model was called once per row: 2 calls in step 0, where one batched call was expected"
    )


def test_static_batching_whose_calls_are_parted_by_a_callback_is_not_taken_for_calls_per_row():
    case = Case(
        "static",
        "r0 ends one step after r1, and static batching admits r2 only then",
        2,
        None,
        (CaseRequest((100,), 2, (), (1, 2)), CaseRequest((101,), 1, (), (3,)), CaseRequest((102,), 1, (), (4,))),
    )
    got = run_case(StaticInsteadOfContinuous, case.to_json(), True)
    expected = run_case(BatchInferenceEngine, case.to_json(), True)
    assert [len(got.rows(n)) for n in range(len(got.calls))] == [2, 1, 1]  # the reference's step 1 in two calls
    assert one_call_findings(got, expected) == []
    (finding,) = evaluate(case, got, expected)
    assert finding.check == "work_conserving" and "that is static batching" in finding.hint


def test_a_trace_with_one_call_a_step_has_no_one_call_finding():
    case = fixed_cases()[1]
    trace = run_case(BatchInferenceEngine, case.to_json(), True)
    assert one_call_findings(trace, trace) == []


def test_the_fixed_cases_run_without_the_stop_token_are_those_whose_scripts_never_emit_it():
    plain = {case.name: without_stop_token(case) for case in fixed_cases()}
    assert [name for name, case in plain.items() if case is not None] == [
        "part1",
        "part2",
        "first-example",
        "max-tokens-zero",
        "empty-prompt",
    ]
    assert plain["part1"].stop_token is None
    assert plain["part1"].title == (
        "the interview problem's Part 1: two requests processed together (run without its stop token, which is "
        "declined)"
    )


def test_an_adapter_that_declines_the_stop_token_still_gets_the_cases_that_do_not_need_it():
    report = check(str(ADAPTERS / "per_request_adapter.py"), "PerRequestAdapter", generated=0)
    assert report.exit_status == 0
    declined = "(run without its stop token, which is declined)"
    rerun = [r.case.name for r in report.results if r.case.title.endswith(declined)]
    assert rerun == [
        "part1",
        "part2",
        "first-example",
        "max-tokens-zero",
        "empty-prompt",
    ]
    assert [s.split(":")[0] for s in report.skipped] == ["stop-token-included", "stop-token-in-prompt"]


def test_threads_left_running_by_one_case_cost_that_case_only():
    report = check(f"{SOLUTIONS}/threaded_leaves_threads.py")
    failed = failures(report)
    assert list(failed) == ["max-tokens-zero", "generated-0 (shrunk)"]
    assert [f.message for f in failed["max-tokens-zero"]] == ["r0's callback was never called"]
    assert report.skipped == [] and report.generated == 40
    assert not any(r.got.failed_at == "__init__" for r in report.results)  # no later case blamed on __init__
    hung = next(r for r in report.results if r.case.name == "max-tokens-zero")
    assert hung.got.threads_left == 1  # the case that left its thread says so, and its worker was replaced


def test_a_trace_s_threads_left_must_be_a_count():
    with pytest.raises(ValueError, match="threads_left: not a count"):
        Trace.from_json({"calls": [], "callbacks": [], "error": None, "timeout": False, "threads_left": -1}, 1)


def optional(report) -> list[tuple[str, str, str]]:
    return [(o.name, o.status, o.reason) for o in report.optional]


def test_the_optional_checks_of_a_solution_that_claims_nothing_are_not_failures():
    report = check(f"{SOLUTIONS}/correct.py", generated=0)
    assert report.exit_status == 0
    assert optional(report) == [
        ("cancellation", "--", "not offered: the class has no cancel(request_id)"),
        ("model faults", "PASS", "not claimed, but as the contract says"),
        (
            "callback faults",
            "--",
            "not claimed (no 'callback' in handles_faults), and not as the contract says: callback-fault (r0's "
            "callback raises): r1 finished in the step whose r0 callback raised, but was delivered only after 2 model "
            "calls instead of 1: the others of that step must still be delivered",
        ),
    ]
    assert "  optional checks (a FAIL only where the solution claims the feature):" in format_report(report)


def test_the_project_s_engine_passes_every_optional_check_it_claims():
    report = check(f"{SOLUTIONS}/reference_claims_faults.py", generated=0)
    assert report.exit_status == 0
    assert [(name, status) for name, status, _ in optional(report)] == [
        ("cancellation", "PASS"),
        ("model faults", "PASS"),
        ("callback faults", "PASS"),
    ]


def test_a_cancel_that_forgets_the_callback_fails_though_every_case_passes():
    report = check(f"{SOLUTIONS}/cancel_forgets_callback.py", generated=0)
    assert report.exit_status == 1 and not report.failed
    assert optional(report)[0] == (
        "cancellation",
        "FAIL",
        "cancel-waiting (r1 cancelled before run()): every request's callback is called exactly once: r1's callback "
        "was never called",
    )
    assert format_report(report).splitlines()[-1] == "16 passed, 0 failed; 1 optional check(s) failed"


def test_a_solution_that_claims_model_faults_but_swallows_them_fails_that_check():
    report = check(f"{SOLUTIONS}/swallows_model_errors.py", generated=0)
    assert report.exit_status == 1
    assert optional(report)[1] == (
        "model faults",
        "FAIL",
        "model-fault (the model raises at call 1): the model raised, but run() never did: the error was swallowed",
    )


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, batch):
        self.calls.append(batch)
        return [len(row) for row in batch]


def test_row_by_row_answers_each_row_of_a_step_from_one_batched_call():
    model, held = Recorder(), [[1], [2, 2], [3]]
    next_token = row_by_row(model, lambda: held)
    assert [next_token(row) for row in held] == [1, 2, 1]
    assert model.calls == [[[1], [2, 2], [3]]]
    held = [[1, 1], [2, 2, 2]]
    assert [next_token(row) for row in held] == [2, 3]
    assert len(model.calls) == 2


def test_row_by_row_makes_another_call_for_a_row_asked_twice_and_refuses_a_row_not_held():
    model = Recorder()
    next_token = row_by_row(model, lambda: [[7], [8]])
    next_token([7])
    next_token([7])
    assert len(model.calls) == 2  # the checker's one_call check reports the second call
    with pytest.raises(LookupError, match=r"row \[9\] is not one of the rows the solution holds"):
        next_token([9])


def test_load_file_loads_a_digit_name_and_a_dataclass_module_and_leaves_sys_modules_alone():
    before = set(sys.modules)
    batching = load_file("01_batching.py", relative_to=ADAPTERS / "any")
    solution = load_file(ADAPTERS / "dataclass_solution.py")
    assert batching.ContinuousBatcher.__name__ == "ContinuousBatcher"
    assert solution.GenerationRequest([1], 2, print).tokens == [1]
    assert set(sys.modules) == before


def test_a_dataclass_module_with_future_annotations_cannot_be_loaded_by_path_the_plain_way():
    import importlib.util

    spec = importlib.util.spec_from_file_location("plain_load", ADAPTERS / "dataclass_solution.py")
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute '__dict__'"):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
