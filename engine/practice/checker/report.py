"""A check's report: what passed, what failed and why, what the solution does not support, in words.

`Report` is what `run.check` returns; `format_report` prints it for a terminal and
`report_json` for `--json`. The report says plainly what a solution does not support (stop
sequences, `max_tokens = 0`, or whatever its adapter declares), not only which cases were
skipped, and points at the adapters (docs/adapters.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cases import Case
from .checks import CHECKS, Finding
from .divergence import first_divergence
from .hints import ADAPTERS
from .rows import outputs
from .scale.verdict import AxisResult
from .scale.wording import scale_json, scale_lines
from .trace import FILLER, Trace

NO_STOPS = "stop sequences"
ZERO_BUDGET = "max_tokens = 0"
ADVICE = {  # what to do about a feature the solution lacks
    NO_STOPS: (
        "submit_request takes no stop_sequences parameter. If your engine takes them another way (a per-request "
        f"stop_sequence, a Request object), check it through an adapter: {ADAPTERS}"
    ),
    ZERO_BUDGET: (
        "the seeds leave it open; this project completes such a request at once with its prompt "
        f"(docs/conventions.md). If your engine refuses it by design, its adapter can say so: {ADAPTERS}"
    ),
}


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
    unsupported: dict[str, list[str]] = field(default_factory=dict)  # what is not supported -> [why, *case names]
    excluded: dict[str, int] = field(default_factory=dict)  # a shape that did not run -> generated workloads not run
    generated_unsupported: int = 0  # generated workloads the solution's adapter declined, even simplified
    generated_simplified: int = 0  # generated workloads run simplified (`cases.simpler_variants`)
    budget: float | None = None  # seconds per generated workload once a case hung (None: the usual limit)
    generated_note: str = ""  # why no generated workload ran
    optional: list = field(default_factory=list)  # optional.OptionalResult of each optional check
    scale: list[AxisResult] = field(default_factory=list)  # the scale section's axes (scale/), if it ran
    scale_note: str = ""  # why the scale section did not run
    scale_seconds: float = 0.0

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if r.findings]

    @property
    def exit_status(self) -> int:
        """1 a check failed (an optional one the solution claims, or the scale section), 2 nothing was checked
        (`nothing_checked`), else 0."""
        slow = any(axis.verdict in ("SLOW", "FAIL") for axis in self.scale)
        failed = self.failed or any(o.failed for o in self.optional) or slow
        return 1 if failed else 2 if self.nothing_checked else 0

    @property
    def nothing_checked(self) -> str:
        """Why no case was checked at all (every one skipped or declined); "" once one case ran."""
        if self.results or self.generated:
            return ""
        declined = self.generated_unsupported
        generated = (
            f"{declined} generated workload{'s' * (declined != 1)} declined by the solution's adapter"
            if declined
            else f"generated workloads not run: {self.generated_note or 'none could be run'}"
        )
        return f"{len(self.skipped)} case{'s' * (len(self.skipped) != 1)} skipped, {generated}"

    def not_supported(self, what: str, why: str, case: str) -> None:
        self.unsupported.setdefault(what, [why]).append(case)


def format_report(report: Report) -> str:
    lines = [f"Checking {report.solution}: class {report.class_name}"]
    for result in report.results:
        lines += _case_lines(result)
    lines += [f"  SKIP  {skipped}" for skipped in report.skipped]
    lines += [_unsupported_line(what, why, cases) for what, (why, *cases) in report.unsupported.items()]
    lines += _generated_lines(report)
    lines += _optional_lines(report)
    passed = len(report.results) - len(report.failed)
    summary = f"{passed} passed, {len(report.failed)} failed"
    summary += f", {len(report.skipped)} skipped" if report.skipped else ""
    optional_failed = sum(o.failed for o in report.optional)
    lines.append(summary + (f"; {optional_failed} optional check(s) failed" if optional_failed else ""))
    lines += _nothing_checked_lines(report)
    lines += scale_lines(report.scale, report.scale_note, report.scale_seconds)
    return "\n".join(lines)


def _nothing_checked_lines(report: Report) -> list[str]:
    """Nothing run must not read as a pass."""
    if not report.nothing_checked:
        return []
    return [f"NOTHING CHECKED: {report.nothing_checked}; no case ran, so this is not a pass (exit status 2)"]


def _optional_lines(report: Report) -> list[str]:
    """The optional checks, each PASS, FAIL or -- with its reason."""
    if not report.optional:
        return []
    lines = ["  optional checks (a FAIL only where the solution claims the feature):"]
    for result in report.optional:
        lines.append(f"  OPTIONAL  {result.status:<4}  {result.name}: {result.reason or result.title}")
    return lines


def _unsupported_line(what: str, why: str, cases: list[str]) -> str:
    """What the solution does not support, plainly; the adapter's own reasons are skipped cases too."""
    count = f"{len(cases)} case{'s' * (len(cases) != 1)}"
    if what == NO_STOPS:
        return f"  NOT SUPPORTED  {what}: {ADVICE[NO_STOPS]} ({count} skipped)"
    if what == ZERO_BUDGET:
        return f"  NOT SUPPORTED  {what}: {why}; {ADVICE[ZERO_BUDGET]} (failed: {', '.join(cases)})"
    return f"  NOT SUPPORTED  {what}: the solution's adapter declines it ({count} skipped)"


def _case_lines(result: CaseResult) -> list[str]:
    case = result.case
    if not result.findings:
        return [f"  PASS  {case.name}: {case.title}"]
    lines = [f"  FAIL  {case.name}: {case.title}"]
    described = case.describe().splitlines()
    lines += [("        input: " if n == 0 else "               ") + line for n, line in enumerate(described)]
    for finding in result.findings:
        lines.append(f"        - {CHECKS[finding.check]}: {finding.message}")
        if finding.hint:
            lines.append(f"          hint: {finding.hint}")
    if result.got.calls or result.got.callbacks or not result.got.error:
        lines.append(f"        expected outputs: {_outputs(result.expected)}")
        lines.append(f"        actual outputs:   {_outputs(result.got)}")
        if _shows_filler(case, result):
            lines.append(
                f"        ({FILLER} is the recording model's filler: it answers {FILLER} to a row whose scripted "
                f"continuation has run out, so a {FILLER} means a row was sent to the model past its script)"
            )
        lines.append(f"        first divergence: {first_divergence(case, result.got, result.expected)}")
    return lines


def _shows_filler(case: Case, result: CaseResult) -> bool:
    scripted = [i for i, r in enumerate(case.requests) if r.script is not None]
    return any(FILLER in tokens[len(case.requests[i].prompt) :] for i, tokens in _scripted_outputs(result, scripted))


def _scripted_outputs(result: CaseResult, scripted: list[int]):
    for trace in (result.got, result.expected):
        for i, tokens in outputs(trace).items():
            if i in scripted:
                yield i, tokens


def _generated_lines(report: Report) -> list[str]:
    if not report.generated:
        return [f"  generated workloads not run: {report.generated_note or 'none could be run'}"]
    new = sum(1 for r in report.failed if r.case.generated)
    lines = [
        f"  {report.generated} generated workloads (seeded) run; "
        + (f"{new} new failure(s), shown above" if new else "no failure beyond the ones above")
    ]
    if report.budget is not None:
        lines.append(f"  (after a case hung, each generated workload had {report.budget:g} s)")
    for shape, count in report.excluded.items():
        lines.append(f"  {count} generated workload(s) with a request of {shape} not run: that shape did not run above")
    if report.generated_simplified:
        lines.append(
            f"  {report.generated_simplified} of them run simplified (fewer stop conditions, no max_tokens = 0 "
            "request): the solution's adapter declined them whole"
        )
    if report.generated_unsupported:
        lines.append(f"  {report.generated_unsupported} generated workload(s) declined by the solution's adapter")
    return lines


def _outputs(trace: Trace) -> str:
    return ", ".join(f"r{i}: {tokens}" for i, tokens in sorted(outputs(trace).items())) or "none"


def report_json(report: Report) -> dict:
    return {
        "class": report.class_name,
        "passed": len(report.results) - len(report.failed),
        "failed": [
            {"case": r.case.name, "input": r.case.describe(), "findings": [f.__dict__ for f in r.findings]}
            for r in report.failed
        ],
        "skipped": report.skipped,
        "nothing_checked": report.nothing_checked or None,
        "unsupported": {what: {"why": why, "cases": cases} for what, (why, *cases) in report.unsupported.items()},
        "optional": [{"name": o.name, "status": o.status, "reason": o.reason} for o in report.optional],
        "generated": {
            "run": report.generated,
            "excluded": report.excluded,
            "declined": report.generated_unsupported,
            "simplified": report.generated_simplified,
            "seconds_each": report.budget,
        },
        "scale": scale_json(report.scale, report.scale_note, report.scale_seconds),
    }
