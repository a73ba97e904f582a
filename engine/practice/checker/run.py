"""Orchestrate a check: run every case on the solution and the reference, shrink, report.

The fixed cases run first (after `MAX_TIMEOUTS` hung ones the rest are skipped; one the
solution's adapter declines runs again without its stop token where that is not what it
checks), then the generated workloads, even when some case hung or raised: only those
with a request of a shape that did not run (`stuck.shape`: a `max_tokens = 0` request, say) are left out, and
after a hang each gets `AFTER_A_HANG` seconds instead of the full limit. They stop after
`MAX_TIMEOUTS` more cases that do not run to the end. A generated workload the solution's
adapter declines (`adapting.Unsupported`) is simplified until it is accepted
(`cases.simpler_variants`), else replaced by the next one, up to three times as many drawn as run.

Last come the optional checks (`optional.py`: cancellation, model and callback faults).
`command.py` is the `python -m engine check` command around `check`.
"""

from __future__ import annotations

import time

from ...core.engine import BatchInferenceEngine
from .cases import Case, fixed_cases, generated_stream, simpler_variants, without_stop_token
from .checks import evaluate
from .driver import run_case
from .optional import check_optional
from .report import NO_STOPS, ZERO_BUDGET, CaseResult, Report
from .sandbox import DEFAULT_TIMEOUT, Solution
from .scale.section import run_section
from .shrink import shrink
from .stuck import culprit, has_shape, shape
from .trace import Trace

GENERATED = 40  # generated workloads per check
MAX_TIMEOUTS = 3  # after this many hung fixed cases, the other fixed cases are not run (and the same for generated)
AFTER_A_HANG = 1.0  # seconds per generated workload once a case has hung


def reference(case: Case, with_stops: bool = True) -> Trace:
    return run_case(BatchInferenceEngine, case.to_json(), with_stops)


def check_case(solution: Solution, case: Case, timeout: float | None = None) -> CaseResult:
    got = solution.run(case.to_json(), timeout)
    expected = reference(case)
    return CaseResult(case, evaluate(case, got, expected), got, expected)


def _check_fixed(solution: Solution, case: Case) -> CaseResult:
    """A fixed case; one the solution's adapter declines is run again without the stop token where the stop
    token is not what it checks (`cases.without_stop_token`), and that run counts if the adapter accepts it."""
    result = check_case(solution, case)
    plain = without_stop_token(case) if result.got.unsupported else None
    if plain is not None:
        rerun = check_case(solution, plain)
        if not rerun.got.unsupported:
            return rerun
    return result


def _did_not_run(result: CaseResult) -> bool:
    return bool(result.findings) and result.findings[0].check == "runs"


def check(
    path: str,
    class_name: str | None = None,
    seed: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    progress=None,
    generated: int = GENERATED,
    scale_budget: float | None = None,
) -> Report:
    """Check the solution on the fixed cases and `generated` generated workloads, then, with a
    `scale_budget` in seconds and every case passed, how its cost grows (`scale/`); raises LoadError
    for a file that cannot be checked."""
    solution = Solution(path, class_name, timeout)
    try:
        stops = solution.info["stop_sequences"]
        report = Report(path, solution.info["class"])
        for case in fixed_cases():
            if case.needs_stops and not stops:
                report.skipped.append(f"{case.name}: {case.title} (submit_request takes no stop_sequences)")
                report.not_supported(NO_STOPS, NO_STOPS, case.name)
            elif sum(r.got.timeout for r in report.results) >= MAX_TIMEOUTS:
                report.skipped.append(f"{case.name}: {case.title} (not run: the solution hung {MAX_TIMEOUTS} times)")
            else:
                _record(report, _check_fixed(solution, case))
        _check_generated(report, solution, seed, stops, progress, generated)
        report.optional = check_optional(solution, report.budget)
        if scale_budget is not None:
            _check_scale(report, solution, scale_budget, progress)
        return report
    finally:
        solution.close()


def _check_scale(report: Report, solution: Solution, budget: float, progress) -> None:
    """The scale section, after the correctness cases; a solution that fails one is not timed."""
    if report.failed:
        report.scale_note = "a correctness case failed: fix that first"
        return
    if not report.results:
        report.scale_note = "no correctness case ran"
        return
    start = time.monotonic()
    report.scale = run_section(solution, budget, progress)
    report.scale_seconds = time.monotonic() - start


def _record(report: Report, result: CaseResult) -> bool:
    """Add a case's result to the report; False if the solution's adapter declined the case."""
    case, got = result.case, result.got
    if got.unsupported:
        if not case.generated:
            report.skipped.append(f"{case.name}: {case.title} (not supported: {got.unsupported})")
            report.not_supported(got.unsupported, got.unsupported, case.name)
        return False
    i = culprit(case, got)
    if got.failed_at and i is not None and got.failed_at == f"submit_request r{i}" and not case.requests[i].max_tokens:
        refused = ((got.error or "").strip().splitlines() or ["no reason given"])[-1]
        report.not_supported(ZERO_BUDGET, f"submit_request refused it ({refused})", case.name)
    report.results.append(result)
    return True


def _check_generated(report: Report, solution: Solution, seed: int, stops: bool, progress, count: int) -> None:
    ran = list(report.results)
    if not count:
        report.generated_note = "none asked for"
        return
    if ran and all(_did_not_run(r) for r in ran):
        report.generated_note = "the solution does not finish any of the cases above"
        return
    failing = {f.check for r in ran for f in r.findings}
    left_out = {shape(r.case, culprit(r.case, r.got)) for r in ran if _did_not_run(r)}  # shapes seen not to run
    reported = set(left_out)
    if any(r.got.timeout for r in ran):
        report.budget = min(AFTER_A_HANG, solution.timeout)
    not_run = 0  # generated workloads that hung or raised
    for drawn, case in enumerate(generated_stream(seed, with_stops=stops)):
        if report.generated >= count or drawn >= 3 * count:
            break
        if not_run >= MAX_TIMEOUTS:
            report.skipped.append(
                f"the remaining generated workloads (not run: {not_run} of them did not run to the end)"
            )
            break
        excluded = next((s for s in left_out if has_shape(case, s)), None)
        if excluded is not None:
            name = " and ".join(sorted(excluded))
            report.excluded[name] = report.excluded.get(name, 0) + 1
            continue
        if progress:
            progress(case.name)
        result = check_case(solution, case, report.budget)
        for simpler in simpler_variants(case) if result.got.unsupported else ():
            result = check_case(solution, simpler, report.budget)
            if not result.got.unsupported:
                report.generated_simplified += 1
                break
        if result.got.unsupported:
            report.generated_unsupported += 1
            continue
        case = result.case
        report.generated += 1
        if result.got.timeout and report.budget is None:
            report.budget = min(AFTER_A_HANG, solution.timeout)
        if _did_not_run(result):
            not_run += 1
            seen = shape(case, culprit(case, result.got))
            left_out.add(seen)
            if seen not in reported:  # a hang or crash is not shrunk: every try could cost a whole time limit
                reported.add(seen)
                _record(report, result)
            continue
        new = {f.check for f in result.findings} - failing
        if new:
            still = _fails_check(solution, sorted(new)[0], left_out, report.budget)
            _record(report, check_case(solution, shrink(case, still), report.budget))
            failing |= {f.check for f in report.results[-1].findings}


def _fails_check(solution: Solution, check_name: str, left_out: set, budget: float | None):
    """Whether a smaller case still fails `check_name`; a shrink that hangs MAX_TIMEOUTS times stops
    trying (each hang costs a whole time limit)."""
    hangs = []

    def still_fails(case: Case) -> bool:
        if len(hangs) >= MAX_TIMEOUTS or any(has_shape(case, s) for s in left_out):
            return False
        result = check_case(solution, case, budget)
        if result.got.timeout:
            hangs.append(case.name)
        return check_name in {f.check for f in result.findings}

    return still_fails
