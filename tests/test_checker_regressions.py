"""Issue 22: the checker on solutions of the shapes it used to misjudge, each with a careful reviewer's verdict.

A buffer-reusing engine and a late-delivering one used to pass; a threaded engine that
hangs on max_tokens = 0 hid every generated workload; an engine that sends rows in
admission order was reported at a harmless reorder. Each solution is in tests/solutions/.
"""

import subprocess
import sys

from engine import EventLog
from engine.practice.checker.divergence import first_divergence
from engine.practice.checker.run import check

SOLUTIONS = "tests/solutions"


def failures(report) -> dict[str, list]:
    return {r.case.name: r.findings for r in report.failed}


def test_a_buffer_reusing_engine_fails_because_a_delivered_list_is_overwritten():
    report = check(f"{SOLUTIONS}/reuses_buffers.py")
    failed = failures(report)
    assert set(failed) == {"part2", "stop-state-reset", "refill-order", "stop-tail-reset-after-stop"}
    assert {f.check for findings in failed.values() for f in findings} == {"results_kept"}
    first, second = failed["part2"]
    assert first.message == (
        "the list handed to r0's callback at step 0 was later overwritten with r2's tokens: before step 1's model "
        "call it held [102]"
    )
    assert second.message.startswith("the list handed to r2's callback at step 2 was later overwritten with r3's")
    assert first.hint == (
        "the engine reused the list it had delivered to r0 for r2: a caller that keeps its result finds another "
        "request's tokens (results crossed after a refill). Hand each callback a new list (list(buffer)), or give "
        "each request a buffer of its own"
    )
    result = next(r for r in report.failed if r.case.name == "part2")
    assert result.got.callbacks[0][:2] == [0, [100, 11]]  # what r0's callback saw at the time was right


def test_a_late_delivering_engine_fails_because_results_wait_for_the_last_model_call():
    report = check(f"{SOLUTIONS}/delivers_at_the_end.py")
    failed = failures(report)
    assert set(failed) == {"part2", "first-example", "stop-state-reset", "refill-order", "stop-tail-reset-after-stop"}
    assert {f.check for findings in failed.values() for f in findings} == {"on_time"}
    (finding,) = failed["part2"]
    assert finding.message == (
        "r0's row got its last token at step 0, but its callback fired only after step 3: it waited 3 more model "
        "calls (2 more requests waited too)"
    )
    assert finding.hint == (
        "every late callback fired only after the last model call: results seem collected and delivered when the "
        "run ends. Deliver each one as soon as its row finishes (and free its slot), before the next model call"
    )
    assert "part1" not in failed  # both rows finish in the last model call: delivering as run() returns is on time


def test_a_threaded_engine_that_hangs_on_max_tokens_zero_names_the_request_and_still_runs_the_workloads(tmp_path):
    out = tmp_path / "failing.jsonl"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "check",
            "--no-scale",
            f"{SOLUTIONS}/threaded_hangs_on_zero.py",
            "--timeout",
            "2",
        ]
        + ["--jsonl", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("  FAIL")] == [
        "  FAIL  max-tokens-zero: max_tokens = 0 completes at once with the prompt"
    ]
    assert (
        "        - run() finishes without an error: the case did not finish within 2 s (an endless loop?); when it "
        "was stopped, the model had been called 500 times (the checker's limit: it refuses any call past 500), and "
        "no result had come for r0 (max_tokens = 0), whose row was in 500 of them; r1 was delivered"
    ) in lines
    assert (
        "          hint: r0 has max_tokens = 0, yet it was sent to the model and nothing ended it: a budget check made "
        "only after a token is appended (generated == max_tokens) never holds for 0. Complete such a request at once "
        "with its prompt (docs/conventions.md)"
    ) in lines
    assert "  40 generated workloads (seeded) run; no failure beyond the ones above" in lines
    assert "  (after a case hung, each generated workload had 1 s)" in lines
    excluded = [line for line in lines if "with a request of max_tokens = 0 not run" in line]
    assert len(excluded) == 1 and int(excluded[0].split()[0]) > 0
    assert lines[-1] == "15 passed, 1 failed"
    assert result.stderr.endswith("(it did not finish in time), so this log ends early; r0 never delivered\n"), (
        result.stderr
    )
    log = EventLog.from_jsonl(out.read_text())
    assert log.num_steps == 500
    errors = [e for e in log if e.kind == "error"]
    assert [(e.step, e.request_id) for e in errors] == [(499, "r0")]
    assert errors[0].message.startswith("the solution's run was stopped after 500 model calls")
    assert log.outputs()["r1"] == [101, 3, 4, 5]
    assert [e.request_id for e in log if e.kind == "evict"] == ["r1"]  # r0 is never delivered


def test_an_admission_order_engine_diverges_where_a_request_is_wrongly_sent_not_at_the_reorder():
    report = check(f"{SOLUTIONS}/admission_order.py")
    failed = failures(report)
    assert set(failed) == {"part2", "stop-state-reset", "refill-order", "stop-tail-reset-after-stop"}
    result = next(r for r in report.failed if r.case.name == "refill-order")
    assert first_divergence(result.case, result.got, result.expected) == (
        "step 3: the reference sends ['r3:[103, 41, 42]', 'r1:[101, 21, 22, 23]', 'r2:[102, 31, 32, 33]'], the "
        "solution sends ['r1:[101, 21, 22, 23]', 'r2:[102, 31, 32, 33]', 'r4:[104]'] (not sent: r3:[103, 41, 42]; "
        "sent instead: r4:[104]); before that, steps 1, 2 sent the same rows in another order, which a ragged batch "
        "allows"
    )
    r3, r4 = failed["refill-order"]
    assert r3.message == "r3 received [103, 41, 42], expected [103, 41, 42, 43]"
    assert r3.hint == (
        "r3 stopped after 2 of its max_tokens = 3 tokens, as if the 1 generated before it in its slot (last by r0) "
        "were its own: is the count of generated tokens kept per slot and not reset when the slot is refilled? Keep "
        "it on the request"
    )
    assert r4.hint.startswith("r4 stopped after 1 of its max_tokens = 2 tokens, as if the 3 generated before it")
    assert "max_tokens seems to count the prompt" not in failed["part2"][0].hint  # r1, a first occupant, is whole
