"""Compare a solution's trace with the reference engine's on one case, in plain words.

Each check is an invariant of the contract. A finding names the check, says what went
wrong for which request, and, where a classic mistake fits the evidence, gives a hint
(`hints.py` for wrong outputs). Two checks look past what a callback saw at the time: a
result must not change after it was delivered (`results_kept`: the checker reads every
delivered list again after each later model call), and a finished row's callback must
fire before the next model call, or when `run()` returns for rows finishing in the last
one (`on_time`: the seeds' "a finished row delivers its result and frees its slot"). A
step must make one batched model call (`one_call`, `one_call.py`); a solution that calls
the model once per row is told so, and not blamed for the late callbacks and idle slots
that counting its calls as steps would find.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cases import Case
from .hints import OutputHints
from .one_call import one_call_findings
from .rows import appearances, outputs, owner
from .run_hints import runs_hint
from .stuck import left_behind
from .trace import Trace

CHECKS = {
    "runs": "run() finishes without an error",
    "callback_once": "every request's callback is called exactly once",
    "outputs": "each request gets exactly its own prompt + generated tokens",
    "one_call": "each step makes one batched model call",
    "results_kept": "a result never changes after its callback received it",
    "on_time": "each callback fires before the next model call after its row finishes",
    "rows": "no model call gets more than batch_size rows",
    "fifo": "requests are admitted in submission order (FIFO)",
    "work_conserving": "no slot sits empty during a model call while requests wait",
}


@dataclass(frozen=True)
class Finding:
    check: str
    message: str
    hint: str = ""


def evaluate(case: Case, got: Trace, expected: Trace) -> list[Finding]:
    """The findings of one case (none for a case the solution's adapter declined: it is skipped)."""
    if got.unsupported:
        return []
    if got.error:
        message = got.error if not got.failed_at else f"{got.failed_at} raised:\n{got.error}"
        if got.timeout:
            message += "; " + left_behind(case, got)
        return [Finding("runs", message, runs_hint(case, got))]
    one_call = [Finding("one_call", message, hint) for message, hint in one_call_findings(got, expected)]
    findings = _callbacks(case, got) + _outputs(case, got, expected) + one_call + _kept(case, got)
    steps_counted = [] if one_call else _on_time(case, got) + _work_conserving(case, got)  # its calls are not steps
    return findings + _rows(case, got) + _fifo(case, got) + steps_counted


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
    hints = OutputHints(case, got, have, want)
    return [
        Finding("outputs", f"r{i} received {have[i]}, expected {want[i]}", hints.for_request(i))
        for i in sorted(want)
        if i in have and have[i] != want[i]
    ]


def _step_of(before: int) -> int:
    """The step in which a callback fired, from the model calls made before it (step n makes call n)."""
    return max(before - 1, 0)


def _kept(case: Case, got: Trace) -> list[Finding]:
    findings = []
    delivered = {i: before for i, _, before in got.callbacks}
    for i, now, seen in got.changed:
        j = _whose(case, got, i, now)
        whose = f"overwritten with r{j}'s tokens" if j is not None and j != i else "changed"
        when = f"before step {seen}'s model call" if seen < len(got.calls) else "when run() returned"
        hint = (
            f"the engine reused the list it had delivered to r{i} for r{j}: a caller that keeps its result finds "
            f"another request's tokens (results crossed after a refill). Hand each callback a new list "
            "(list(buffer)), or give each request a buffer of its own"
            if j is not None and j != i
            else "the engine changed a list after handing it to a callback: hand each callback a list it may keep"
        )
        handed = f"the list handed to r{i}'s callback at step {_step_of(delivered[i])}"
        findings.append(Finding("results_kept", f"{handed} was later {whose}: {when} it held {now}", hint))
    return findings


def _whose(case: Case, got: Trace, i: int, now: list) -> int | None:
    """The request whose tokens a changed result of r{i} now holds: its prompt's owner, or, behind an
    adapter that adds r{i}'s prompt to the solution's generated tokens, the request that generated them."""
    j = owner(case, now) if now else None
    if j != i:
        return j
    generated = now[len(case.requests[i].prompt) :]
    others = [k for k, tokens, _ in got.callbacks if k != i and tokens[len(case.requests[k].prompt) :] == generated]
    return others[0] if generated and others else None


def _on_time(case: Case, got: Trace) -> list[Finding]:
    _, last = appearances(case, got)
    first_callback: dict[int, int] = {}
    for i, _, before in got.callbacks:
        first_callback.setdefault(i, before)
    late = {i: before - last[i] - 1 for i, before in first_callback.items() if i in last and before > last[i] + 1}
    if not late:
        return []
    i = min(late, key=lambda r: (last[r], r))
    others = len(late) - 1
    message = (
        f"r{i}'s row got its last token at step {last[i]}, but its callback fired only after step "
        f"{first_callback[i] - 1}: it waited {late[i]} more model call{'s' * (late[i] != 1)}"
        + (f" ({others} more request{'s' * (others != 1)} waited too)" if others else "")
    )
    at_end = all(first_callback[r] == len(got.calls) for r in late)
    hint = (
        "every late callback fired only after the last model call: results seem collected and delivered when the "
        "run ends. Deliver each one as soon as its row finishes (and free its slot), before the next model call"
        if at_end
        else "deliver each result as soon as its row finishes (and free its slot), before the next model call"
    )
    return [Finding("on_time", message, hint)]


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
    first, last = appearances(case, got)
    for n in range(len(got.calls)):
        live = sum(1 for i in last if last[i] >= n)  # running now, or still to run later
        active = len(got.rows(n))
        if active < min(case.batch_size, live):
            message = (
                f"model call {n} had {active} active rows while {live} requests were unfinished and "
                f"batch_size is {case.batch_size}: a slot sat empty while work waited"
            )
            return [Finding("work_conserving", message, _idle_hint(case, got, n, first))]
    return []


def _idle_hint(case: Case, got: Trace, n: int, first: dict[int, int]) -> str:
    """Why a slot sat empty at model call n: the next admission came only once the whole batch had
    finished (static batching), or one model call late (a freed slot returned too late)."""
    admitted = sorted({first[i] for i in first if first[i] > n})
    if not admitted:
        return ""
    later = admitted[0]
    before = {owner(case, row) for row in got.rows(later - 1)} if later > 0 else set()
    if not before & {owner(case, row) for row in got.rows(later)}:
        return (
            f"no waiting request was admitted until the whole batch had finished (at model call {later}): that is "
            "static batching. Refill each freed slot from the queue before the next model call"
        )
    if later == n + 1:
        return (
            f"the freed slot was refilled one model call late (at call {later}): evict finished rows before the next "
            "step's admissions, so a slot freed by a step is refilled in the very next one"
        )
    return "refill free slots from the queue before every model call"
