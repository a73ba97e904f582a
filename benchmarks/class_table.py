"""The classroom benchmark's table: one row per lesson, action and setting, side by side.

Times are min / median / p90 / max in seconds over the sessions that completed the step,
with the number that failed (timed out, lost their connection, or showed a traceback), then
the bytes the server sent for the step: the median per session and the sum over the sessions
(a click's: its rerun's messages; a landing's: the first run's, not the page's static files);
memory rows give the servers' resident memory (VmRSS, summed over workers) after the
landings and after the actions, and the peak (VmHWM); first-paint rows are over the fresh
Chromium pages.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from benchmarks.class_phases import Outcome

WIDTH = 44  # the settings column
HEADER = (
    f"{'lesson':<7}{'step':<18}{'settings':<{WIDTH}}{'min':>7}{'median':>8}{'p90':>8}{'max':>8}{'failed':>8}"
    f"{'kB each':>9}{'kB all':>9}"
)


@dataclass
class Measured:
    """What one server lifetime measured, for one lesson and one setting."""

    lesson: str
    settings: str
    steps: dict[str, Outcome] = field(default_factory=dict)  # "cold landing", ..., "first paint"
    memory: dict[str, float] = field(default_factory=dict)  # "after landing", "after actions", "peak": MiB
    spread: dict[str, int] = field(default_factory=dict)  # behind the proxy: sessions per worker (its cookie)
    failures: list[str] = field(default_factory=list)


def time_row(lesson: str, step: str, settings: str, outcome: Outcome) -> str:
    if not outcome.seconds:
        return f"{lesson:<7}{step:<18}{settings:<{WIDTH}}{'(none completed)':>31}{len(outcome.failures):>8}"
    low, median, p90, high = outcome.summary()
    figures = f"{low:>7.2f}{median:>8.2f}{p90:>8.2f}{high:>8.2f}"
    sent = ""
    if outcome.received:
        sent = f"{statistics.median(outcome.received) / 1000:>9.1f}{sum(outcome.received) / 1000:>9.0f}"
    return f"{lesson:<7}{step:<18}{settings:<{WIDTH}}{figures}{len(outcome.failures):>8}{sent}"


def memory_row(lesson: str, settings: str, memory: dict[str, float]) -> str:
    text = ", ".join(f"{what} {mib:,.0f} MiB" for what, mib in memory.items())
    return f"{lesson:<7}{'resident memory':<18}{settings:<{WIDTH}}{text}"


def table(results: list[Measured], steps: list[str]) -> list[str]:
    """The rows: per lesson, each step with every setting's row together, then memory."""
    lines = [HEADER]
    for lesson in dict.fromkeys(r.lesson for r in results):
        mine = [r for r in results if r.lesson == lesson]
        for step in steps:
            lines += [time_row(lesson, step, r.settings, r.steps[step]) for r in mine if step in r.steps]
        lines += [memory_row(lesson, r.settings, r.memory) for r in mine if r.memory]
        for r in mine:
            if r.spread:
                spread = ", ".join(f"{worker}: {n}" for worker, n in sorted(r.spread.items()))
                lines.append(f"{lesson:<7}{'sessions on':<18}{r.settings:<{WIDTH}}{spread}")
    return lines


def failures(results: list[Measured]) -> list[str]:
    """Every failure, once per kind, with how often it happened."""
    counts: dict[str, int] = {}
    for r in results:
        for step, outcome in r.steps.items():
            for failure in outcome.failures:
                key = f"{r.lesson}, {r.settings}, {step}: {failure}"
                counts[key] = counts.get(key, 0) + 1
        for failure in r.failures:
            counts[f"{r.lesson}, {r.settings}: {failure}"] = 1
    return [f"{n} x {what}" if n > 1 else what for what, n in counts.items()]


PAINT_OVER_FLOOR = {"1.1": 0.7, "8.4": 1.0}  # issue 35: first stage paint, seconds over the st.title floor
FIRST_LANDING_P90 = {"1.1": 3.0}  # issue 35: 30 learners landing at once on a just-started server
CLICKS = ("typed answer", "Check prediction", "Next lesson")


def against_targets(results: list[Measured]) -> list[str]:
    """The figures issue 35 set targets for, each against its target: the first paint's median over the
    floor's (measured in the same run), the cold landing's p90; and the bytes a click costs."""
    lines = []
    floor = next((r.steps["first paint"] for r in results if r.lesson == "floor" and "first paint" in r.steps), None)
    floor_median = statistics.median(floor.seconds) if floor and floor.seconds else None
    for r in results:
        where = f"{r.lesson} ({r.settings})"
        paint = r.steps.get("first paint")
        if paint and paint.seconds and floor_median is not None and r.lesson in PAINT_OVER_FLOOR:
            over, allowed = statistics.median(paint.seconds) - floor_median, PAINT_OVER_FLOOR[r.lesson]
            lines.append(
                f"first paint {where}: median {statistics.median(paint.seconds):.2f} s = floor {floor_median:.2f} "
                f"+ {over:.2f} s (target + {allowed:.1f} s): {'met' if round(over, 2) <= allowed else 'MISSED'}"
            )
        landing = r.steps.get("cold landing")
        if landing and landing.seconds and r.lesson in FIRST_LANDING_P90:
            p90 = landing.summary()[2]
            target = FIRST_LANDING_P90[r.lesson]
            lines.append(
                f"first landing {where}: p90 {p90:.2f} s for {len(landing.seconds)} at once "
                f"(target {target:g} s): {'met' if round(p90, 2) <= target else 'MISSED'}"
            )
        clicks = [r.steps[c] for c in CLICKS if c in r.steps and r.steps[c].received]
        if clicks:
            each = [statistics.median(c.received) / 1000 for c in clicks]
            every = [sum(c.received) / 1000 for c in clicks]
            lines.append(
                f"bytes per click {where}: {min(each):.1f}-{max(each):.1f} kB a session, "
                f"{min(every):,.0f}-{max(every):,.0f} kB for the {len(clicks[0].received)} sessions"
            )
    return lines
