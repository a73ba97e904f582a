"""Each hint is pinned to the mistake it is for: small variants of a correct outside solution, one case each.

The zoo's hints are pinned in test_checker.py (`FIRST_FAILURE`) and those of the solutions of
issue 22 in test_checker_regressions.py; these are the other mistakes a hint names.
"""

import pytest

from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.checks import evaluate
from engine.practice.checker.divergence import first_divergence
from engine.practice.checker.driver import run_case
from engine.practice.checker.report import CaseResult, Report, format_report
from engine.practice.checker.run import check, reference
from engine.practice.checker.trace import Trace
from tests.solutions.correct import BatchInferenceEngine as Correct

CASES = {case.name: case for case in fixed_cases()}


class GeneratesForZeroBudget(Correct):
    """Checks the budget only after appending a token, so max_tokens = 0 gets one."""

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        stops = [list(s) for s in stop_sequences or []]
        self.waiting.append(
            {"tokens": list(prompt_tokens), "prompt_len": len(prompt_tokens), "max_tokens": max_tokens}
            | {"callback": callback, "stops": stops}
        )


class DeliversGeneratedOnly(Correct):
    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        n = len(prompt_tokens)
        super().submit_request(prompt_tokens, max_tokens, lambda tokens: callback(tokens[n:]), stop_sequences)


class MatchesStopsInThePrompt(Correct):
    def _finished(self, state, token):
        whole = state["tokens"]
        if any(whole[-len(s) :] == s for s in state["stops"] if len(whole) >= len(s)):
            return True
        return super()._finished(state, token)


class StopTokenAnywhere(Correct):
    def _finished(self, state, token):
        return self.stop_token in state["tokens"] or super()._finished(state, token)


class IgnoresTheStopToken(Correct):
    def _finished(self, state, token):
        generated = state["tokens"][state["prompt_len"] :]
        if any(len(generated) >= len(s) and generated[-len(s) :] == s for s in state["stops"]):
            return True
        return len(generated) >= state["max_tokens"]


class OverrunsItsBudget(Correct):
    def _finished(self, state, token):
        generated = state["tokens"][state["prompt_len"] :]
        return token == self.stop_token or len(generated) > state["max_tokens"]


def result_of(engine_class, case_name: str) -> CaseResult:
    case = CASES[case_name]
    got, expected = run_case(engine_class, case.to_json(), True), reference(case)
    return CaseResult(case, evaluate(case, got, expected), got, expected)


@pytest.mark.parametrize(
    ("engine_class", "case_name", "message", "hint"),
    [
        (
            GeneratesForZeroBudget,
            "max-tokens-zero",
            "r0 received [100, 1, 2, 99], expected [100, 1, 2]",
            "max_tokens = 0: this project completes such a request at once with its prompt (the seeds leave this "
            "open; docs/conventions.md); your engine generated a token before checking the budget",
        ),
        (
            DeliversGeneratedOnly,
            "part1",
            "r0 received [3, 4, 5], expected [100, 2, 3, 4, 5]",
            "r0 received only its generated tokens; the callback gets prompt + generated tokens. If your engine "
            "returns generated tokens only by design, check it through an adapter (docs/adapters.md)",
        ),
        (
            MatchesStopsInThePrompt,
            "stop-sequence-generated-only",
            "r0 received [100, 7, 8], expected [100, 7, 8, 3, 7, 8]",
            "r0 stopped after [8], completing its stop sequence [7, 8] with the end of its prompt [7]: stop sequences "
            "match generated tokens only",
        ),
        (
            StopTokenAnywhere,
            "stop-token-in-prompt",
            "r0 received [100, 0, 0, 4], expected [100, 0, 0, 4, 0]",
            "r0 stopped after [4] without generating the stop token 0; its prompt holds it: the stop token is "
            "matched against generated tokens only",
        ),
        (
            IgnoresTheStopToken,
            "stop-token-included",
            "r0 received [100, 9, 5, 5, 0, 6, 99, 99, 99, 99, 99, 99], expected [100, 9, 5, 5, 0]",
            "r0 generated the stop token 0 as its token 3 and went on: end a row as soon as it generates the stop "
            "token",
        ),
        (
            OverrunsItsBudget,
            "max-tokens-generated-only",
            "r0 received [100, 1, 2, 3, 4, 5, 6, 7, 8], expected [100, 1, 2, 3, 4, 5, 6, 7]",
            "r0 generated more than its max_tokens = 2 tokens: stop when the generated tokens (never the prompt) "
            "reach max_tokens",
        ),
    ],
)
def test_the_hint_names_the_mistake(engine_class, case_name, message, hint):
    finding = result_of(engine_class, case_name).findings[0]
    assert (finding.check, finding.message, finding.hint) == ("outputs", message, hint)


def test_the_recording_models_filler_is_explained_where_it_appears():
    report = Report("x.py", "X", [result_of(GeneratesForZeroBudget, "max-tokens-zero")])
    assert (
        "        (99 is the recording model's filler: it answers 99 to a row whose scripted continuation has run out, "
        "so a 99 means a row was sent to the model past its script)"
    ) in format_report(report).splitlines()
    clean = Report("x.py", "X", [result_of(DeliversGeneratedOnly, "part1")])
    assert "filler" not in format_report(clean)


def test_a_solution_that_refuses_max_tokens_zero_is_told_so_plainly_and_the_rest_still_runs():
    report = check("tests/solutions/refuses_zero_budget.py")
    (failed,) = report.failed
    assert failed.case.name == "max-tokens-zero"
    (finding,) = failed.findings
    assert finding.message.startswith("submit_request r0 raised:\n")
    assert finding.message.endswith("ValueError: max_tokens must be at least 1")
    assert finding.hint == (
        "submit_request refused r0, whose max_tokens is 0. The seeds leave max_tokens = 0 open; this project "
        "completes such a request at once with its prompt (docs/conventions.md). If your engine refuses it by "
        "design, its adapter can say so, and the checker then skips such cases (docs/adapters.md)"
    )
    assert report.generated == 40 and report.excluded["max_tokens = 0"] > 0
    assert (
        "  NOT SUPPORTED  max_tokens = 0: submit_request refused it (ValueError: max_tokens must be at least 1); the "
        "seeds leave it open; this project completes such a request at once with its prompt (docs/conventions.md). "
        "If your engine refuses it by design, its adapter can say so: docs/adapters.md (failed: max-tokens-zero)"
    ) in format_report(report).splitlines()


def trace(*calls, padded=False) -> Trace:
    return Trace([[*rows, len(rows)] if padded else list(rows) for rows in calls])


def test_a_ragged_batch_is_compared_as_a_set_of_rows_and_a_padded_one_in_order():
    case = CASES["part2"]
    reference_calls = trace([[100], [101]], [[102], [101, 21]], [[102, 31], [101, 21, 22]])
    reordered = trace([[100], [101]], [[101, 21], [102]], [[101, 21, 22], [102, 32]])
    assert first_divergence(case, reordered, reference_calls) == (
        "step 2: the reference sends ['r2:[102, 31]', 'r1:[101, 21, 22]'], the solution sends ['r1:[101, 21, 22]', "
        "'r2:[102, 32]'] (not sent: r2:[102, 31]; sent instead: r2:[102, 32]); before that, step 1 sent the same "
        "rows in another order, which a ragged batch allows"
    )
    padded = trace([[100], [101]], [[101, 21], [102]], padded=True)
    assert first_divergence(case, padded, reference_calls).startswith(
        "step 1: the reference sends ['r2:[102]', 'r1:[101, 21]'], the solution sends ['r1:[101, 21]', 'r2:[102]']"
    )
    assert first_divergence(case, reference_calls, reference_calls) == (
        "the model calls match; the difference is in what the callbacks receive"
    )


class ChangesResultsWhenRunEnds(Correct):
    """Delivers its own lists, then empties them all as run() returns."""

    def run(self):
        delivered = []
        for state in list(self.waiting):
            callback = state["callback"]
            state["callback"] = lambda tokens, callback=callback: (delivered.append(tokens), callback(tokens))
        super().run()
        for tokens in delivered:
            tokens.clear()


def test_a_result_changed_as_run_returns_is_caught_too():
    findings = result_of(ChangesResultsWhenRunEnds, "part1").findings
    assert [(f.check, f.message) for f in findings] == [
        (
            "results_kept",
            "the list handed to r0's callback at step 2 was later changed: when run() returned it held []",
        ),
        (
            "results_kept",
            "the list handed to r1's callback at step 2 was later changed: when run() returned it held []",
        ),
    ]
    assert findings[0].hint == (
        "the engine changed a list after handing it to a callback: hand each callback a list it may keep"
    )
