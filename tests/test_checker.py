"""The practice checker: exit codes, every zoo bug caught, shrinking, hangs and crashes, JSONL."""

import json
import subprocess
import sys

import pytest

from engine import BatchInferenceEngine, EventLog
from engine.practice.checker.cases import Case, CaseRequest, fixed_cases
from engine.practice.checker.reconstruct import case_from_log, reconstruct
from engine.practice.checker.run import check, reference
from engine.practice.checker.sandbox import LoadError
from engine.practice.checker.shrink import shrink
from engine.practice.zoo import BUGS, DECISIONS

SOLUTIONS = "tests/solutions"


def run_check(*args):
    return subprocess.run(
        [sys.executable, "-m", "engine", "check", "--no-scale", *args], capture_output=True, text=True, timeout=300
    )


def test_a_correct_outside_solution_passes_with_exit_0():
    result = run_check(f"{SOLUTIONS}/correct.py")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1] == f"{len(fixed_cases())} passed, 0 failed"


def test_a_solution_without_stop_sequences_is_told_what_was_skipped_and_what_it_lacks():
    result = run_check(f"{SOLUTIONS}/no_stop_sequences.py")
    assert result.returncode == 0
    skipped = [line for line in result.stdout.splitlines() if line.startswith("  SKIP")]
    assert len(skipped) == 7 and all("(submit_request takes no stop_sequences)" in line for line in skipped)
    assert (
        "  NOT SUPPORTED  stop sequences: submit_request takes no stop_sequences parameter. If your engine takes them "
        "another way (a per-request stop_sequence, a Request object), check it through an adapter: docs/adapters.md "
        "(7 cases skipped)"
    ) in result.stdout.splitlines()
    assert result.stdout.splitlines()[-1] == "9 passed, 0 failed, 7 skipped"


FIRST_FAILURE = {  # each zoo bug: its first failing case, the check it fails there, and the hint for that mistake
    "crossed-results": (
        "part2",
        "outputs",
        "r1 got 31, a token meant for r2: results were crossed (check how the model's answers map back to rows after "
        "a refill)",
    ),
    "leaky-stop-state": (
        "stop-state-reset",
        "outputs",
        "r1 stopped after [8]: its stop sequence [7, 8] was completed with [7], the last tokens of r0, which held its "
        "slot before it: stop-matching state was left over from the slot's previous request. Keep it on the request "
        "and start it fresh on admission",
    ),
    "trimmed-stop-token": (
        "first-example",
        "outputs",
        "the stop token was trimmed; the contract delivers it inside the output (5, 5, 0 -> [..., 5, 5, 0])",
    ),
    "idle-freed-slot": (
        "part2",
        "work_conserving",
        "the freed slot was refilled one model call late (at call 2): evict finished rows before the next step's "
        "admissions, so a slot freed by a step is refilled in the very next one",
    ),
    "naive-stop-matcher": (
        "stop-sequence-overlap",
        "outputs",
        "r0 went on past its stop sequence [1, 1, 2] (complete at its token 4), which overlaps a false start in "
        "[1, 1, 1, 2]: a matcher that starts over on a mismatch misses it. Fall back to the longest suffix that is "
        "still a prefix (KMP, Aho-Corasick), or compare the tail with each stop sequence",
    ),
    "tail-sized-to-shortest-stop": (
        "stop-sequence-lengths",
        "outputs",
        "r0 went on past its stop sequence [7, 8] (complete at its token 2) and stopped only on [5]: of its stop "
        "sequences [[7, 8], [5]], only those of 1 token ever match. Is the tail buffer sized to the shortest stop "
        "sequence (1) instead of the longest (2)?",
    ),
    "tail-not-reset-after-stop-sequence": (
        "stop-tail-reset-after-stop",
        "outputs",
        "r1 stopped after [8]: its stop sequence [7, 8] was completed with [7], the tail of r0, which held its slot "
        "before it and ended on its stop sequence [4, 7]: the stop tail was not reset when the slot was refilled "
        "after a stop-sequence finish. Reset it on every way a row ends",
    ),
    "max-tokens-counts-prompt": (
        "part1",
        "outputs",
        "max_tokens seems to count the prompt; it counts generated tokens only",
    ),
    "static-batching": (
        "part2",
        "work_conserving",
        "no waiting request was admitted until the whole batch had finished (at model call 3): that is static "
        "batching. Refill each freed slot from the queue before the next model call",
    ),
}
CHECKER_BUGS = [name for name in BUGS if BUGS[name].demo is None]


def test_every_checker_visible_zoo_bug_has_its_hint_pinned():
    assert set(FIRST_FAILURE) == set(CHECKER_BUGS)
    hints = [hint for _, _, hint in FIRST_FAILURE.values()]
    assert len(set(hints)) == len(hints)  # no two mistakes share a hint


@pytest.mark.parametrize("name", CHECKER_BUGS)
def test_every_zoo_bug_is_caught_with_the_hint_for_its_own_mistake(name):
    report = check("engine.practice.zoo", BUGS[name].engine.__name__)
    assert report.exit_status == 1
    first = report.failed[0]
    assert (first.case.name, first.findings[0].check, first.findings[0].hint) == FIRST_FAILURE[name]
    assert not [r for r in report.failed if r.case.generated]  # the fixed cases catch every one


def test_the_json_report_says_what_the_solution_does_not_support():
    result = run_check(f"{SOLUTIONS}/no_stop_sequences.py", "--json")
    report = json.loads(result.stdout)
    assert report["unsupported"]["stop sequences"]["cases"] == [case.name for case in fixed_cases() if case.needs_stops]
    assert report["generated"] == {"run": 40, "excluded": {}, "declined": 0, "simplified": 0, "seconds_each": None}


@pytest.mark.parametrize("name", [name for name in BUGS if BUGS[name].demo is not None])
def test_a_memory_bug_passes_the_checker_which_uses_no_kv_pool(name):
    """The checker checks only the seeds' API: a memory mistake shows on its own demo case instead."""
    assert check("engine.practice.zoo", BUGS[name].engine.__name__).exit_status == 0


def test_the_reference_engine_passes_through_the_module_path():
    assert check("engine.core.engine", "BatchInferenceEngine").exit_status == 0


def test_a_failing_report_names_the_check_the_input_and_the_divergence():
    result = run_check("engine.practice.zoo", "--class", "TrimmedStopToken")
    assert result.returncode == 1
    text = result.stdout
    assert "  FAIL  stop-token-included: the stop token is delivered inside the output (5, 5, 0)" in text
    assert "        input: batch_size=1, stop_token=0" in text
    assert (
        "        - each request gets exactly its own prompt + generated tokens: r0 received [100, 9, 5, 5], "
        "expected [100, 9, 5, 5, 0]"
    ) in text
    assert "          hint: the stop token was trimmed; the contract delivers it inside the output" in text
    assert "        first divergence: the model calls match; the difference is in what the callbacks receive" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope.py"], "error: nope.py: no such file\n"),
        (
            [f"{SOLUTIONS}/wrong_shape.py"],
            "error: BatchInferenceEngine.__init__ must accept (model, batch_size, stop_token); a solution of another "
            "shape can be checked through an adapter (docs/adapters.md)\n",
        ),
        (
            [f"{SOLUTIONS}/correct.py", "--class", "Nope"],
            "error: tests/solutions/correct.py: no class named Nope (classes: BatchInferenceEngine)\n",
        ),
        (
            ["no.such.module"],
            "error: no.such.module: not a .py file, and no module of that name (No module named 'no')\n",
        ),
    ],
)
def test_a_file_that_cannot_be_checked_exits_2_with_one_line(args, message):
    result = run_check(*args)
    assert result.returncode == 2
    assert result.stderr == message


def test_a_syntax_error_exits_2(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("class BatchInferenceEngine(:\n")
    result = run_check(str(broken))
    assert result.returncode == 2 and result.stderr.startswith(f"error: {broken}: importing it raised SyntaxError")


def test_a_hanging_solution_is_stopped_by_the_time_limit_and_reported():
    result = run_check(f"{SOLUTIONS}/hangs.py", "--timeout", "0.5")
    assert result.returncode == 1
    assert "run() finishes without an error: the case did not finish within 0.5 s (an endless loop?)" in result.stdout
    assert "(not run: the solution hung 3 times)" in result.stdout
    assert result.stdout.splitlines()[-1] == f"0 passed, 3 failed, {len(fixed_cases()) - 3} skipped"


def test_a_crashing_solution_cannot_take_the_checker_down():
    result = run_check(f"{SOLUTIONS}/crashes.py")
    assert result.returncode == 1
    assert "the solution's process crashed" in result.stdout
    assert result.stdout.splitlines()[-1] == f"0 passed, {len(fixed_cases())} failed"


def test_a_failure_found_by_a_generated_workload_is_shrunk_to_a_minimal_case():
    report = check(f"{SOLUTIONS}/loses_fifth_request.py")
    generated = [r for r in report.failed if r.case.generated]
    assert len(generated) == 1
    case = generated[0].case
    assert case.name.endswith("(shrunk)") and case.batch_size == 4 and len(case.requests) == 5
    assert all(len(r.prompt) == 1 and not r.stops and r.max_tokens <= 1 for r in case.requests)
    assert [f.message for f in generated[0].findings] == ["r4's callback was never called"]


def test_shrink_finds_the_smallest_case_for_a_predicate():
    big = Case("g", "t", 4, 0, tuple(CaseRequest((100 + i, 1, 2), 5, ((1, 2),)) for i in range(6)), generated=True)
    small = shrink(big, lambda c: sum(r.max_tokens for r in c.requests) >= 7 and c.batch_size >= 2)
    assert small.batch_size == 2 and len(small.requests) == 2
    assert sorted(r.max_tokens for r in small.requests) == [2, 5]


def test_jsonl_of_the_failing_run_loads_and_rebuilds_what_the_callbacks_got(tmp_path):
    out = tmp_path / "failing.jsonl"
    result = run_check("engine.practice.zoo", "--class", "CrossedResults", "--jsonl", str(out))
    assert result.returncode == 1
    log = EventLog.from_jsonl(out.read_text())
    assert log.model.startswith("checker {")
    assert case_from_log(log).describe().startswith("batch_size=2, stop_token=0")
    assert log.outputs() == {"r0": [100, 11], "r1": [101, 21, 31, 99], "r2": [102, 22, 99], "r3": [103, 41]}


def test_reconstructing_the_reference_run_gives_the_reference_outputs():
    for case in fixed_cases():
        trace = reference(case)
        rebuilt = reconstruct(case, trace).outputs()
        assert rebuilt == {f"r{i}": tokens for i, tokens, _ in trace.callbacks}, case.name


def test_load_errors_raise_load_error_in_process():
    with pytest.raises(LoadError, match="no such file"):
        check("missing.py")


@pytest.mark.parametrize("name", list(BUGS))
def test_every_zoo_bug_changes_one_named_decision_of_the_engine(name):
    """A bug replaces exactly one of the correct engine's named decisions (a phase of its step, a
    decision a request's state follows, or its memory policy); anything else it defines is its own
    state, which the correct engine does not carry."""
    engine = BUGS[name].engine
    assert engine.__bases__ == (BatchInferenceEngine,)
    own = set(vars(engine)) - {"__module__", "__doc__", "__qualname__"}
    changed = {attribute for attribute in own if hasattr(BatchInferenceEngine, attribute)}
    assert len(changed) == 1 and changed <= set(DECISIONS), changed
    assert all(callable(getattr(BatchInferenceEngine, d)) or d == "memory_policy" for d in DECISIONS)


def test_a_correct_solution_using_numpy_passes_the_checker():
    pytest.importorskip("numpy")
    report = check("tests/solutions/numpy_rows.py")
    assert report.exit_status == 0, [f.message for r in report.failed for f in r.findings]
