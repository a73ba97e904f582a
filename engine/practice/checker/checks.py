"""Compare a solution's trace with the reference engine's on one case, in plain words.

Each check is an invariant of the contract. A finding names the check, says what went
wrong for which request, and, where a classic mistake fits the evidence, gives a hint.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cases import Case
from .trace import Trace

CHECKS = {
    "runs": "run() finishes without an error",
    "callback_once": "every request's callback is called exactly once",
    "outputs": "each request gets exactly its own prompt + generated tokens",
    "rows": "no model call gets more than batch_size rows",
    "fifo": "requests are admitted in submission order (FIFO)",
    "work_conserving": "no slot sits empty during a model call while requests wait",
}


@dataclass(frozen=True)
class Finding:
    check: str
    message: str
    hint: str = ""


def owner(case: Case, prefix: list[int]) -> int | None:
    """The request a row belongs to: its prompt starts with the request's id token."""
    matches = [i for i, r in enumerate(case.requests) if r.prompt and prefix[: len(r.prompt)] == list(r.prompt)]
    if matches:
        return max(matches, key=lambda i: len(case.requests[i].prompt))
    empty = [i for i, r in enumerate(case.requests) if not r.prompt]
    return empty[0] if empty else None


def appearances(case: Case, trace: Trace) -> tuple[dict[int, int], dict[int, int]]:
    """First and last model call in which each request had a row."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for n in range(len(trace.calls)):
        for row in trace.rows(n):
            i = owner(case, row)
            if i is not None:
                first.setdefault(i, n)
                last[i] = n
    return first, last


def outputs(trace: Trace) -> dict[int, list]:
    return {i: tokens for i, tokens, _ in trace.callbacks}


def evaluate(case: Case, got: Trace, expected: Trace) -> list[Finding]:
    if got.error:
        return [Finding("runs", got.error)]
    findings = _callbacks(case, got) + _outputs(case, got, expected)
    findings += _rows(case, got) + _fifo(case, got) + _work_conserving(case, got)
    return findings


def _callbacks(case: Case, got: Trace) -> list[Finding]:
    counts = {i: 0 for i in range(len(case.requests))}
    for i, _, _ in got.callbacks:
        counts[i] += 1
    return [
        Finding("callback_once", f"r{i}'s callback was {'never called' if n == 0 else f'called {n} times'}")
        for i, n in counts.items()
        if n != 1
    ]


def _outputs(case: Case, got: Trace, expected: Trace) -> list[Finding]:
    want, have = outputs(expected), outputs(got)
    findings = []
    for i in sorted(want):
        if i in have and have[i] != want[i]:
            findings.append(
                Finding(
                    "outputs", f"r{i} received {have[i]}, expected {want[i]}", _hint(case, i, have[i], want[i], want)
                )
            )
    return findings


def _hint(case: Case, i: int, have: list, want: list, all_wanted: dict[int, list]) -> str:
    request = case.requests[i]
    prompt = list(request.prompt)
    generated, expected = have[len(prompt) :], want[len(prompt) :]
    if case.stop_token is not None and want[-1] == case.stop_token and have == want[:-1]:
        return "the stop token was trimmed; the contract delivers it inside the output (5, 5, 0 -> [..., 5, 5, 0])"
    if (
        have[: len(prompt)] == prompt
        and len(generated) == max(request.max_tokens - len(prompt), 1)
        and len(expected) == request.max_tokens
        and generated == expected[: len(generated)]
    ):
        return "max_tokens seems to count the prompt; it counts generated tokens only"
    for k, token in enumerate(generated):
        if k < len(expected) and token == expected[k]:
            continue
        meant = [j for j, other in all_wanted.items() if j != i and token in other[len(case.requests[j].prompt) :]]
        if meant and case.requests[i].script is not None:
            return (
                f"r{i} got {token}, a token meant for r{meant[0]}: results were crossed "
                "(check how the model's answers map back to rows after a refill)"
            )
        break
    if len(generated) < len(expected) and generated == expected[: len(generated)] and request.stops:
        return "a stop sequence matched too early: is stop-matching state left over from the slot's previous request?"
    if len(generated) > len(expected) and generated[: len(expected)] == expected:
        return "generation went on after a stop: a stop token or (overlapping) stop sequence was missed"
    return ""


def _rows(case: Case, got: Trace) -> list[Finding]:
    return [
        Finding("rows", f"model call {n} got {got.rows_sent(n)} rows with batch_size {case.batch_size}")
        for n in range(len(got.calls))
        if got.rows_sent(n) > case.batch_size
    ][:1]


def _fifo(case: Case, got: Trace) -> list[Finding]:
    first, _ = appearances(case, got)
    order = sorted(first, key=lambda i: (first[i], i))
    if order != sorted(order):
        late = next(i for a, i in zip(sorted(order), order) if a != i)
        return [
            Finding(
                "fifo",
                f"requests reached the model in the order {[f'r{i}' for i in order]}; "
                f"r{late} went ahead of an earlier request",
            )
        ]
    return []


def _work_conserving(case: Case, got: Trace) -> list[Finding]:
    _, last = appearances(case, got)
    for n in range(len(got.calls)):
        live = sum(1 for i in last if last[i] >= n)  # running now, or still to run later
        active = len(got.rows(n))
        if active < min(case.batch_size, live):
            return [
                Finding(
                    "work_conserving",
                    f"model call {n} had {active} active rows while {live} requests were unfinished and "
                    f"batch_size is {case.batch_size}: a slot sat empty while work waited",
                    "refill free slots before every model call (static batching waits for the whole "
                    "batch; a slot freed too late idles for a step)",
                )
            ]
    return []


def first_divergence(case: Case, got: Trace, expected: Trace) -> str:
    """Where the solution's model calls first differ from the reference's, in words."""

    def label(trace: Trace, n: int) -> list[str]:
        return [f"r{owner(case, row)}:{row}" for row in trace.rows(n)]

    for n in range(max(len(got.calls), len(expected.calls))):
        a = label(got, n) if n < len(got.calls) else None
        b = label(expected, n) if n < len(expected.calls) else None
        if a != b:
            return (
                f"step {n}: the reference sends {'no model call' if b is None else b}, "
                f"the solution sends {'no model call' if a is None else a}"
            )
    return "the model calls match; the difference is in what the callbacks receive"
