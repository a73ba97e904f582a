"""The optional checks: cancellation, model faults and callback faults (the contract's "Bad input and faults").

Each runs a case or two with an interruption (`interruptions.py`) through the solution,
its adapter included, and compares it with the reference engine given the same one: every
check of `checks.evaluate`, plus what the fault itself requires (run() raises the fault,
the other requests of a step whose callback raised are still delivered in that step).
Cancellation is checked when the class (or its adapter) has `cancel(request_id)`; faults
are always tried, and claimed by `handles_faults = ("model", "callback")`. A result reads
PASS, FAIL, or `--` (not offered, declined, or failed where the solution claims nothing);
only a FAIL makes the check fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.engine import BatchInferenceEngine
from .cases import Case, CaseRequest
from .checks import CHECKS, evaluate
from .driver import run_case
from .interruptions import FAULTS
from .sandbox import Solution
from .trace import Trace


@dataclass(frozen=True)
class OptionalCheck:
    name: str  # the feature, in words
    title: str  # what it checks
    feature: str  # "cancel", or a fault of interruptions.FAULTS
    cases: tuple[tuple[Case, dict], ...]  # each case with its interruption


@dataclass(frozen=True)
class OptionalResult:
    name: str
    title: str
    status: str  # "PASS", "FAIL" or "--"
    reason: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "FAIL"


def _case(name: str, title: str, batch_size: int, *requests: tuple) -> Case:
    return Case(
        name,
        title,
        batch_size,
        None,
        tuple(CaseRequest((100 + i, *prompt), m, (), script) for i, (prompt, m, script) in enumerate(requests)),
    )


OPTIONAL_CHECKS = (
    OptionalCheck(
        "cancellation",
        "a cancelled request, waiting or running, gets its callback once with what it has",
        "cancel",
        (
            (
                _case(
                    "cancel-waiting",
                    "r1 cancelled before run()",
                    1,
                    ((), 2, (11, 12)),
                    ((), 2, (21, 22)),
                    ((), 2, (31, 32)),
                ),
                {"kind": "cancel_waiting", "request": 1},
            ),
            (
                _case(
                    "cancel-running",
                    "r1 cancelled from r0's callback while it runs",
                    2,
                    ((), 1, (11,)),
                    ((), 4, (21, 22, 23, 24)),
                    ((), 2, (31, 32)),
                ),
                {"kind": "cancel_running", "request": 1, "from": 0},
            ),
        ),
    ),
    OptionalCheck(
        "model faults",
        "a model that raises: run() raises, and run() again resumes with the results of a run without the fault",
        "model",
        (
            (
                _case(
                    "model-fault",
                    "the model raises at call 1",
                    2,
                    ((), 1, (11,)),
                    ((), 3, (21, 22, 23)),
                    ((), 2, (31, 32)),
                ),
                {"kind": "model", "at_call": 1},
            ),
        ),
    ),
    OptionalCheck(
        "callback faults",
        "a callback that raises: the other requests of its step are still delivered, and run() raises the error",
        "callback",
        (
            (
                _case("callback-fault", "r0's callback raises", 2, ((), 1, (11,)), ((), 1, (21,)), ((), 2, (31, 32))),
                {"kind": "callback", "request": 0},
            ),
        ),
    ),
)


def claims(info: dict) -> set[str]:
    """The optional features the worker says the class claims (`interruptions.offers`)."""
    offers = info.get("offers")
    if not isinstance(offers, dict):
        return set()
    faults = offers.get("faults")
    claimed = {f for f in faults if f in FAULTS} if isinstance(faults, list) else set()
    return claimed | {"cancel"} if offers.get("cancel") is True else claimed


def check_optional(solution: Solution, budget: float | None = None) -> list[OptionalResult]:
    claimed = claims(solution.info)
    return [_check(solution, check, check.feature in claimed, budget) for check in OPTIONAL_CHECKS]


def _check(solution: Solution, check: OptionalCheck, claimed: bool, budget: float | None) -> OptionalResult:
    if check.feature == "cancel" and not claimed:
        return OptionalResult(check.name, check.title, "--", "not offered: the class has no cancel(request_id)")
    for case, interruption in check.cases:
        data = {**case.to_json(), "interruption": interruption}
        got = solution.run(data, budget)
        if got.unsupported:
            return OptionalResult(check.name, check.title, "--", f"{case.name}: declined ({got.unsupported})")
        expected = run_case(BatchInferenceEngine, data, True)
        problems = [f"{CHECKS[f.check]}: {_last_line(f.message)}" for f in evaluate(case, got, expected)]
        problems += _fault_problems(interruption, got, expected)
        if problems:
            reason = f"{case.name} ({case.title}): {problems[0]}"
            if claimed:
                return OptionalResult(check.name, check.title, "FAIL", reason)
            unclaimed = f"not claimed (no {check.feature!r} in handles_faults), and not as the contract says"
            return OptionalResult(check.name, check.title, "--", f"{unclaimed}: {reason}")
    return OptionalResult(check.name, check.title, "PASS", "" if claimed else "not claimed, but as the contract says")


def _last_line(message: str) -> str:
    """An error's last line (a traceback ends with the exception)."""
    return (message.strip().splitlines() or [""])[-1].strip()


def _fault_problems(interruption: dict, got: Trace, expected: Trace) -> list[str]:
    """What a fault requires beyond the outputs: run() raised it, and (a callback's) the others of its step
    were delivered in that step."""
    if interruption["kind"] not in FAULTS or got.error:
        return []
    if not got.raised:
        what = "the model" if interruption["kind"] == "model" else f"r{interruption['request']}'s callback"
        return [f"{what} raised, but run() never did: the error was swallowed"]
    if interruption["kind"] != "callback":
        return []
    before = {i: b for i, _, b in expected.callbacks}
    same_step = [i for i, b in before.items() if b == before[interruption["request"]] and i != interruption["request"]]
    delivered = {i: b for i, _, b in got.callbacks}
    return [
        f"r{i} finished in the step whose r{interruption['request']} callback raised, but was delivered only after "
        f"{delivered[i]} model calls instead of {before[i]}: the others of that step must still be delivered"
        for i in same_step
        if i in delivered and delivered[i] != before[i]
    ][:1]
