"""Run the scale section: each axis's sizes in turn, within a budget of seconds.

The budget (`DEFAULT_BUDGET`, `--scale-budget`) is shared out as the axes go: each axis may
spend its `SHARES` part of what is left when it starts, so time an axis leaves unspent goes to
the next ones. Before each size the section estimates what it will cost, from the last size
measured (each engine's cost per token, continued at the rate it grew, times the repeats, times
the wall seconds per CPU second the last measurement took: a busy machine's share); a
size that would not fit in what is left of the axis's part is not run, and the verdict
extrapolates to the target instead (`verdict.py`). Small sizes are repeated more
(`repeats`): their runs are short, and short runs are the noisy ones; a long run may be
repeated fewer times to fit. The solution's hottest lines come from one more run at the largest
size measured, profiled part-way (`line_profile.py`; `PROFILE_SECONDS` of each part are kept for
it). A measurement that overruns its own limit stops the axis there.
"""

from __future__ import annotations

import math
import time

from ..sandbox import SCALE_GRACE, check_seconds
from .verdict import AxisResult, Point
from .workloads import AXES

DEFAULT_BUDGET = 30.0  # seconds for the whole section
MAX_BUDGET = 600.0
SHARES = {"requests": 0.4, "answer length": 1 / 3, "stop sequences": 0.4, "batch size": 1.0}  # of what is left
MIN_RUN_SECONDS = 0.05  # a size's repeats together should take at least this (else more repeats)
MAX_REPEATS = 7
MIN_REPEATS = 3
PROFILE_SECONDS = 2.0  # kept back from each axis's part for the line profile (1 s of it: SCALE_GRACE)
MIN_SECONDS = 0.2  # no measurement starts with less time than this left
SAFETY = 1.5  # a size is run only if this many times its estimate fits in what is left


def check_budget(seconds) -> float:
    return check_seconds("the scale budget", seconds, MAX_BUDGET)


def repeats(estimate_per_pair: float) -> int:
    """How many pairs of runs a size gets, given what one pair is expected to cost."""
    wanted = math.ceil(MIN_RUN_SECONDS / max(estimate_per_pair, 1e-6))
    return max(MIN_REPEATS, min(MAX_REPEATS, wanted))


def _estimate(result: AxisResult, size: int, tokens: int) -> float:
    """Seconds one pair of runs at `size` is expected to take."""
    if not result.points:
        return tokens * 2e-6  # before anything is measured: 1 µs a token for each engine
    last = result.points[-1]
    factor = 1.0
    if len(result.points) >= 2:
        before = result.points[-2]
        for engine in ("solution", "reference"):
            rate = getattr(last, f"{engine}_per_token") / max(getattr(before, f"{engine}_per_token"), 1e-12)
            factor = max(factor, rate ** (math.log(size / last.size) / math.log(last.size / before.size)))
    per_pair = (last.solution_per_token + last.reference_per_token) * tokens
    return per_pair * factor


def _at_least(result: AxisResult, size: int, tokens: int, count: int, cpu_seconds: float) -> None:
    """A size that overran its time still bounds the solution's cost from below: its runs took at least
    `cpu_seconds` beside the reference's (estimated at the last size's cost per token). The bound is
    kept only if it already makes the axis SLOW; otherwise the axis stays as measured."""
    reference = result.points[-1].reference_per_token * tokens
    solution = max(cpu_seconds - count * reference, 0.0) / count
    result.points.append(Point(size, tokens, [solution], [reference], lower_bound=True))
    if result.verdict != "SLOW":
        result.points.pop()


def run_axis(solution, axis, seconds: float, progress=None) -> AxisResult:
    result = AxisResult(axis.name, axis.unit, axis.target, axis.workload(axis.target).tokens)
    deadline = time.monotonic() + seconds
    end = deadline - PROFILE_SECONDS  # the measurements end here; the line profile has the rest
    busy = 1.0  # wall seconds per CPU second of the last measurement: other processes' share of the machine
    for size in axis.sizes:
        tokens = axis.workload(size).tokens
        per_pair = _estimate(result, size, tokens) * busy
        count = repeats(per_pair)
        left = end - time.monotonic() - SCALE_GRACE  # the worker is killed that much after its limit
        if left < MIN_SECONDS:
            result.stopped = f"no time left in the budget for {size:,} {axis.unit}"
            break
        if result.points and SAFETY * per_pair * count > left:
            count = int(max(left, 0) // (SAFETY * per_pair))  # fewer repeats of a long run (the least noisy)
            if count < 1:
                result.stopped = f"{size:,} {axis.unit} would take about {per_pair:.3g} s"
                break
        if progress:
            progress(f"scale: {axis.name} {size:,}")
        started = time.monotonic()
        answer = solution.measure({"axis": axis.name, "size": size, "repeats": count}, left)
        cpu = sum(answer.get("solution", ())) + sum(answer.get("reference", ()))
        busy = max(1.0, (time.monotonic() - started) / cpu) if cpu > 0.05 else busy
        if "error" in answer:
            if answer.get("timeout") and result.points:
                result.stopped = f"{size:,} {axis.unit} did not finish within the time left ({left:.3g} s)"
                _at_least(result, size, tokens, count, left / busy)
            else:
                result.error = f"at {size:,} {axis.unit}: {answer['error']}"
            break
        result.points.append(Point(size, answer["tokens"], answer["solution"], answer["reference"]))
    left = deadline - time.monotonic() - SCALE_GRACE
    if result.points and not result.error and left >= MIN_SECONDS:
        largest = next(p.size for p in reversed(result.points) if not p.lower_bound)
        profile = {"axis": axis.name, "size": largest, "profile": True}
        result.hot = solution.measure(profile, left).get("hot", [])
    return result


def run_section(solution, budget: float = DEFAULT_BUDGET, progress=None) -> list[AxisResult]:
    """Every axis, within `budget` seconds (an axis the solution cannot express is skipped)."""
    end = time.monotonic() + check_budget(budget)
    results = []
    for axis in AXES:
        if axis.needs_stops and not solution.info["stop_sequences"]:
            skipped = AxisResult(axis.name, axis.unit, axis.target, 0)
            skipped.skipped = "submit_request takes no stop_sequences"
            results.append(skipped)
            continue
        left = end - time.monotonic()
        results.append(run_axis(solution, axis, left * SHARES[axis.name], progress))
    return results
