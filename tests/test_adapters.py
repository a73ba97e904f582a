"""The adapters of docs/adapters/: each passes its example solution, and neither can hide a bug.

Every zoo engine, rebuilt in each adapter's shape (tests/solutions/adapted_zoo.py), fails
through the adapter exactly the cases it fails on its own, with the same checks and hints,
among the cases the adapter accepts; a solution that reuses its output list or reports
late is caught through them too. The template, filled in, passes.
"""

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from engine.practice.checker.run import check
from engine.practice.zoo import BUGS

ADAPTED = "tests/solutions/adapted_zoo.py"
SHAPES = "tests/solutions/adapted_zoo_shapes.py"  # the five shapes of issue 32
DOCS = Path(__file__).resolve().parent.parent / "docs"
CHECKER_BUGS = [bug.engine.__name__ for bug in BUGS.values() if bug.demo is None]


def run_check(*args):
    return subprocess.run(
        [sys.executable, "-m", "engine", "check", "--no-scale", *args], capture_output=True, text=True, timeout=300
    )


def verdicts(report) -> dict[str, list[tuple[str, str]]]:
    """Each case run: its failed checks and their hints (empty if it passed)."""
    return {r.case.name: [(f.check, f.hint) for f in r.findings] for r in report.results}


def verdicts_by_case(report) -> dict:
    """Each case run, keyed by the case itself (a case run without its stop token is another case)."""
    return {r.case: [(f.check, f.hint) for f in r.findings] for r in report.results}


@functools.cache
def direct_report(engine_name: str):
    return check("engine.practice.zoo", engine_name, generated=0)


def direct(engine_name: str) -> dict:
    return verdicts(direct_report(engine_name))


@pytest.mark.parametrize("shape", ["ModelNext", "AddRequest"])
@pytest.mark.parametrize("engine_name", CHECKER_BUGS)
def test_an_adapter_lets_every_zoo_bug_through_with_its_hint(shape, engine_name):
    adapted = verdicts(check(ADAPTED, f"{shape}{engine_name}", generated=0))
    assert adapted == {name: direct(engine_name)[name] for name in adapted}
    skipped = set(direct(engine_name)) - set(adapted)
    assert skipped == (
        {"stop-sequence-prefix", "stop-sequence-lengths"} if shape == "ModelNext" else {"max-tokens-zero"}
    )


@pytest.mark.parametrize("shape", ["ModelNext", "AddRequest"])
def test_the_correct_engine_passes_through_either_adapter(shape):
    report = check(ADAPTED, f"{shape}Correct")
    assert report.exit_status == 0 and report.generated == 40


def passing_report(adapter: str, class_name: str) -> list[str]:
    """The report's lines for a worked adapter on its own solution, which must pass; the docs quote its end."""
    result = run_check(f"docs/adapters/{adapter}", "--class", class_name)
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    start = next(n for n, x in enumerate(lines) if x.startswith(("  SKIP", "  40 generated")))
    assert "\n".join(lines[start:]) in (DOCS / "adapters.md").read_text()
    return lines


def test_the_model_next_adapter_passes_its_solution_and_says_what_it_does_not_support():
    lines = passing_report("model_next_adapter.py", "ModelNextAdapter")
    assert [line for line in lines if line.startswith("  SKIP")] == [
        "  SKIP  stop-sequence-prefix: a stop that is a prefix of another completes first (not supported: several "
        "stop sequences for one request)",
        "  SKIP  stop-sequence-lengths: stop sequences of different lengths: the longer one completes first (not "
        "supported: several stop sequences for one request)",
    ]
    assert (
        "  NOT SUPPORTED  several stop sequences for one request: the solution's adapter declines it (2 cases skipped)"
    ) in lines
    assert "  40 generated workloads (seeded) run; no failure beyond the ones above" in lines
    assert lines[-1] == "14 passed, 0 failed, 2 skipped"


def test_the_add_request_adapter_passes_its_solution_without_max_tokens_zero():
    lines = passing_report("add_request_adapter.py", "AddRequestAdapter")
    assert [line for line in lines if line.startswith("  SKIP")] == [
        "  SKIP  max-tokens-zero: max_tokens = 0 completes at once with the prompt (not supported: max_tokens = 0 "
        "(add_request refuses max_new_tokens < 1))"
    ]
    assert lines[-1] == "15 passed, 0 failed, 1 skipped"


def test_a_reused_output_list_is_caught_through_the_model_next_adapter():
    report = check(ADAPTED, "ModelNextReusesItsOutputList", generated=0)
    first = report.failed[0].findings[0]
    assert first.check == "results_kept"
    assert first.message == (
        "the list handed to r0's callback at step 2 was later overwritten with r1's tokens: when run() returned it "
        "held [100, 2, 30, 40, 50]"
    )


def test_results_reported_late_are_caught_through_the_add_request_adapter():
    report = check(ADAPTED, "AddRequestReportsLate", generated=0)
    assert {f.check for r in report.failed for f in r.findings} == {"on_time"}
    assert report.failed[0].case.name == "part2"


def test_the_template_filled_in_passes(tmp_path):
    (tmp_path / "adapter.py").write_text((DOCS / "adapters" / "template.py").read_text())
    (tmp_path / "my_solution.py").write_text(
        "from tests.solutions.correct import BatchInferenceEngine\n\n\n"
        "class Model:\n"
        "    def __init__(self, model_next):\n"
        "        self.generate_next_tokens = model_next\n\n\n"
        "class MyEngine:\n"
        "    def __init__(self, model_next, batch_size, stop_token):\n"
        "        self.engine = BatchInferenceEngine(Model(model_next), batch_size, stop_token)\n\n"
        "    def add(self, prompt, max_tokens, stops, on_done):\n"
        "        n = len(prompt)\n"
        "        self.engine.submit_request(prompt, max_tokens, lambda tokens: on_done(tokens[n:]), stops)\n\n"
        "    def run(self):\n"
        "        self.engine.run()\n"
    )
    result = run_check(str(tmp_path / "adapter.py"), "--class", "Adapter")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "16 passed, 0 failed"


def test_a_class_of_another_shape_is_pointed_at_the_adapters():
    result = run_check("docs/adapters/add_request_solution.py")
    assert result.returncode == 2
    assert result.stderr == (
        "error: docs/adapters/add_request_solution.py: no class with submit_request(...) and run() methods; a "
        "solution of another shape can be checked through an adapter (docs/adapters.md)\n"
    )


STOP_TOKEN_CASES = {"stop-token-included", "stop-token-in-prompt"}
RUN_WITHOUT_STOP_TOKEN = {"part1", "part2", "first-example", "max-tokens-zero", "empty-prompt"}


@pytest.mark.parametrize("shape", ["Scheduler", "PerRequest", "Asyncio", "DigitName", "Dataclass"])
@pytest.mark.parametrize("engine_name", CHECKER_BUGS)
def test_the_five_new_adapters_let_every_zoo_bug_through_with_its_hint(shape, engine_name):
    adapted = verdicts_by_case(check(SHAPES, f"{shape}{engine_name}", generated=0))
    expected = verdicts_by_case(direct_report(engine_name))
    same = {case: verdict for case, verdict in adapted.items() if case in expected}
    assert same == {case: expected[case] for case in same}
    other = {case.name for case in adapted if case not in expected}  # run without the stop token
    skipped = {case.name for case in expected} - {case.name for case in adapted}
    if shape == "PerRequest":
        assert (other, skipped) == (RUN_WITHOUT_STOP_TOKEN, STOP_TOKEN_CASES)
    else:
        assert (other, skipped) == (set(), set())


@pytest.mark.parametrize("shape", ["Scheduler", "PerRequest", "Asyncio", "DigitName", "Dataclass"])
def test_the_correct_engine_passes_through_each_new_adapter(shape):
    report = check(SHAPES, f"{shape}Correct")
    assert report.exit_status == 0 and report.generated == 40


def test_the_scheduler_adapter_passes_its_solution_and_every_optional_check_it_claims():
    lines = passing_report("scheduler_adapter.py", "SchedulerAdapter")
    assert [line for line in lines if line.startswith("  OPTIONAL")] == [
        "  OPTIONAL  PASS  cancellation: a cancelled request, waiting or running, gets its callback once with what it "
        "has",
        "  OPTIONAL  PASS  model faults: a model that raises: run() raises, and run() again resumes with the results "
        "of a run without the fault",
        "  OPTIONAL  PASS  callback faults: a callback that raises: the other requests of its step are still "
        "delivered, and run() raises the error",
    ]
    assert lines[-1] == "16 passed, 0 failed"


def test_the_per_request_adapter_passes_its_solution_and_runs_what_needs_no_stop_token_without_it():
    lines = passing_report("per_request_adapter.py", "PerRequestAdapter")
    assert [line for line in lines if line.startswith("  SKIP")] == [
        "  SKIP  stop-token-included: the stop token is delivered inside the output (5, 5, 0) (not supported: a stop "
        "token (the engine has no end-of-sequence id))",
        "  SKIP  stop-token-in-prompt: a stop token inside the prompt never stops a row (not supported: a stop token "
        "(the engine has no end-of-sequence id))",
    ]
    assert (
        "  PASS  part1: the interview problem's Part 1: two requests processed together (run without its stop "
        "token, which is declined)" in lines
    )
    assert lines[-1] == "14 passed, 0 failed, 2 skipped"


@pytest.mark.parametrize(
    ("adapter", "class_name"),
    [
        ("asyncio_adapter.py", "AsyncioAdapter"),
        ("digit_name_adapter.py", "DigitNameAdapter"),
        ("dataclass_adapter.py", "DataclassAdapter"),
    ],
)
def test_the_asyncio_digit_name_and_dataclass_adapters_pass_their_solutions(adapter, class_name):
    lines = passing_report(adapter, class_name)
    assert not [line for line in lines if line.startswith(("  SKIP", "  FAIL", "  NOT SUPPORTED"))]
    assert lines[-1] == "16 passed, 0 failed"


def test_a_per_request_solution_behind_an_adapter_that_calls_the_model_per_row_is_caught():
    report = check(SHAPES, "PerRequestOneCallPerRow", generated=0)
    findings = {r.case.name: [f.message for f in r.findings] for r in report.failed}
    assert findings["first-example"] == [
        "the model was called once per row: 3 calls in step 0, where one batched call was expected"
    ]
    assert {f.check for r in report.failed for f in r.findings} == {"one_call"}
