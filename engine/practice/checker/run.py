"""Orchestrate a check: run every case on the solution and the reference, shrink, report.

Exit status: 0 every check passed, 1 a check failed, 2 the file could not be loaded or
has the wrong shape. SIGTERM stops a check cleanly: the solution's process group is
killed on the way out (the app's editor relies on it).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from dataclasses import dataclass, field

from ...core.engine import BatchInferenceEngine
from .cases import Case, fixed_cases, generated_cases
from .checks import CHECKS, Finding, evaluate, first_divergence, outputs
from .reconstruct import reconstruct
from .sandbox import DEFAULT_TIMEOUT, LoadError, Solution
from .shrink import shrink
from .trace import Trace, run_case

GENERATED = 40  # generated workloads per check
MAX_TIMEOUTS = 3  # after this many hung cases, the rest are not run


@dataclass
class CaseResult:
    case: Case
    findings: list[Finding]
    got: Trace
    expected: Trace


@dataclass
class Report:
    solution: str
    class_name: str
    results: list[CaseResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    generated: int = 0  # generated workloads run

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if r.findings]

    @property
    def exit_status(self) -> int:
        return 1 if self.failed else 0


def timeouts(report: Report) -> int:
    return sum(1 for r in report.results if r.got.timeout)


def reference(case: Case, with_stops: bool = True) -> Trace:
    return run_case(BatchInferenceEngine, case.to_json(), with_stops)


def check_case(solution: Solution, case: Case) -> CaseResult:
    got = solution.run(case.to_json())
    expected = reference(case)
    return CaseResult(case, evaluate(case, got, expected), got, expected)


def check(
    path: str, class_name: str | None = None, seed: int = 0, timeout: float = DEFAULT_TIMEOUT, progress=None
) -> Report:
    """Raises LoadError for a file that cannot be checked."""
    solution = Solution(path, class_name, timeout)
    try:
        stops = solution.info["stop_sequences"]
        report = Report(path, solution.info["class"])
        for case in fixed_cases():
            if case.needs_stops and not stops:
                report.skipped.append(f"{case.name}: {case.title} (submit_request takes no stop_sequences)")
            elif timeouts(report) >= MAX_TIMEOUTS:
                report.skipped.append(f"{case.name}: {case.title} (not run: the solution hung {MAX_TIMEOUTS} times)")
            else:
                report.results.append(check_case(solution, case))
        failing_checks = {f.check for r in report.results for f in r.findings}
        if "runs" in failing_checks:
            return report  # generated workloads would only repeat the error
        for case in generated_cases(seed, GENERATED, with_stops=stops):
            if timeouts(report) >= MAX_TIMEOUTS:
                report.skipped.append(
                    f"the remaining generated workloads (not run: the solution hung {MAX_TIMEOUTS} times)"
                )
                break
            if progress:
                progress(case.name)
            report.generated += 1
            result = check_case(solution, case)
            new = {f.check for f in result.findings} - failing_checks
            if new:
                # a hang or crash is not shrunk: every try could cost a whole time limit
                minimal = shrink(case, _fails_check(solution, sorted(new)[0])) if "runs" not in new else case
                report.results.append(check_case(solution, minimal))
                failing_checks |= {f.check for f in report.results[-1].findings}
        return report
    finally:
        solution.close()


def _fails_check(solution: Solution, check_name: str):
    return lambda case: check_name in {f.check for f in check_case(solution, case).findings}


def format_report(report: Report) -> str:
    lines = [f"Checking {report.solution}: class {report.class_name}"]
    for result in report.results:
        if not result.findings:
            lines.append(f"  PASS  {result.case.name}: {result.case.title}")
            continue
        lines.append(f"  FAIL  {result.case.name}: {result.case.title}")
        lines += [
            "        input: " + line if n == 0 else "               " + line
            for n, line in enumerate(result.case.describe().splitlines())
        ]
        for finding in result.findings:
            lines.append(f"        - {CHECKS[finding.check]}: {finding.message}")
            if finding.hint:
                lines.append(f"          hint: {finding.hint}")
        if not result.got.error:
            lines.append(f"        expected outputs: {_outputs(result.expected)}")
            lines.append(f"        actual outputs:   {_outputs(result.got)}")
            lines.append(f"        first divergence: {first_divergence(result.case, result.got, result.expected)}")
    for skipped in report.skipped:
        lines.append(f"  SKIP  {skipped}")
    generated_failures = sum(1 for r in report.failed if r.case.generated)
    if report.generated:
        lines.append(
            f"  {report.generated} generated workloads (seeded) run; "
            + (
                f"{generated_failures} new failure(s), shrunk above"
                if generated_failures
                else "no failure beyond the ones above"
            )
        )
    else:
        lines.append("  generated workloads not run: the solution does not finish the cases above")
    passed = len(report.results) - len(report.failed)
    summary = f"{passed} passed, {len(report.failed)} failed"
    lines.append(summary + (f", {len(report.skipped)} skipped" if report.skipped else ""))
    return "\n".join(lines)


def _outputs(trace: Trace) -> str:
    return ", ".join(f"r{i}: {tokens}" for i, tokens in sorted(outputs(trace).items())) or "none"


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)  # unwinds through check(): its `finally` kills the worker's group


def main(args) -> int:
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if in_main_thread else None
    try:
        return _main(args)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _main(args) -> int:
    try:
        progress = (
            (lambda name: print(f"\rchecking {name}   ", end="", file=sys.stderr, flush=True))
            if sys.stderr.isatty()
            else None
        )
        report = check(args.solution, args.class_name, args.seed, args.timeout, progress=progress)
        if progress:
            print(file=sys.stderr)
    except LoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(
            json.dumps(
                {
                    "class": report.class_name,
                    "passed": len(report.results) - len(report.failed),
                    "failed": [
                        {"case": r.case.name, "input": r.case.describe(), "findings": [f.__dict__ for f in r.findings]}
                        for r in report.failed
                    ],
                    "skipped": report.skipped,
                },
                indent=2,
            )
        )
    else:
        print(format_report(report))
    if args.jsonl and report.failed:
        first = report.failed[0]
        with open(args.jsonl, "w", encoding="utf-8") as out:
            out.write(reconstruct(first.case, first.got).to_jsonl())
        print(f"event log of the failing run ({first.case.name}): {args.jsonl}", file=sys.stderr)
    return report.exit_status
