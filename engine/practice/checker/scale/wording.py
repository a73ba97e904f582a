"""The scale section in words: a table per axis and one verdict line each, or JSON.

A verdict line starts with `OK`, `SLOW`, `FAIL` or `--` (not measured). A SLOW line names the
axis, the growth measured, the projected time at the target beside the reference's, the
solution's hottest functions at the largest size (`file:line` of each function, with its share
of the samples) and a hint from the catalogue of slow patterns (`patterns.py`).
"""

from __future__ import annotations

import os
from collections import Counter

from .patterns import hint_for
from .verdict import GROWTH_MARGIN, OWN_GROWTH, TARGET_MARGIN, AxisResult


def duration(seconds: float) -> str:
    """3.2 µs, 41 ms, 2.1 s, 3 min 10 s, 2 h 5 min."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {round(seconds % 60)} s"
    return f"{int(seconds // 3600)} h {round(seconds % 3600 / 60)} min"


def per_token(seconds: float) -> str:
    return f"{seconds * 1e9:,.0f} ns" if seconds < 1e-6 else f"{seconds * 1e6:,.3g} µs"


def hottest_functions(hot: list[dict], count: int = 3) -> list[str]:
    shares: Counter = Counter()
    for line in hot:
        shares[(os.path.basename(line["file"]), line["first_line"], line["function"])] += line["share"]
    return [f"{file}:{first} {function} ({share:.0%})" for (file, first, function), share in shares.most_common(count)]


def verdict_line(result: AxisResult) -> str:
    verdict, name = result.verdict, result.axis
    if verdict == "--":
        return f"  --    {name}: not measured ({result.skipped or result.stopped or 'one size only'})"
    if verdict == "FAIL":
        return f"  FAIL  {name}: the solution's run went wrong {result.error}"
    first, last = result.points[0], result.points[-1]
    span = f"{first.size:,} to {last.size:,} {result.unit}"
    span += ", at least: the last run overran" if last.lower_bound else ""
    projected = "measured" if last.size == result.target else "projected"
    at_target = (
        f"at {result.target:,} {result.unit} {duration(result.projected('solution'))}, "
        f"the reference {duration(result.projected('reference'))} ({projected})"
    )
    if verdict == "OK":
        return f"  OK    {name}: cost per token grows as the reference's ({result.growth:.2f}x, {span}); {at_target}"
    parts = [
        f"  SLOW  {name}: cost per token grew {result.growth:.1f}x more than the reference's ({span})",
        at_target,
        "hottest: " + (", ".join(hottest_functions(result.hot)) or "no line of the solution's own was sampled"),
    ]
    hint = hint_for(name, result.hot)
    if hint:
        pattern, advice, line = hint
        parts.append(f"hint: {os.path.basename(line['file'])}:{line['line']} `{line['text']}`: {pattern}: {advice}")
    return "; ".join(parts)


def axis_lines(result: AxisResult) -> list[str]:
    lines = [f"  {result.axis} (to {result.target:,} {result.unit})"]
    if result.points:
        lines.append(f"    {'size':>9}  {'solution':>11}  {'reference':>10}  {'ratio':>7}")
        for p in result.points:
            at_least = ">=" if p.lower_bound else ""
            lines.append(
                f"    {p.size:>9,}  {at_least + per_token(p.solution_per_token):>11}  "
                f"{per_token(p.reference_per_token):>10}  {at_least + format(p.ratio, '.2f'):>7}"
            )
    if result.stopped and result.verdict != "--":
        lines.append(f"    larger sizes not run: {result.stopped}")
    lines.append(verdict_line(result))
    return lines


def scale_lines(results: list[AxisResult], note: str, seconds: float) -> list[str]:
    if not results:
        return [f"Scale: not run ({note})"] if note else []
    lines = [
        f"Scale: CPU time per generated token, beside the project's engine, in one process, {seconds:.1f} s "
        f"(SLOW: the ratio grew >= {GROWTH_MARGIN:g}x, the solution's own cost >= {OWN_GROWTH:g}x, "
        f">= {TARGET_MARGIN:g}x the reference's time at the target)"
    ]
    for result in results:
        lines += axis_lines(result)
    return lines


def scale_json(results: list[AxisResult], note: str, seconds: float) -> dict:
    return {
        "note": note,
        "seconds": round(seconds, 3),
        "axes": [
            {
                "axis": r.axis,
                "verdict": r.verdict,
                "target": r.target,
                "sizes": [p.size for p in r.points],
                "solution_ns_per_token": [round(p.solution_per_token * 1e9, 1) for p in r.points],
                "reference_ns_per_token": [round(p.reference_per_token * 1e9, 1) for p in r.points],
                "growth": r.growth,
                "projected_seconds": r.projected("solution"),
                "reference_projected_seconds": r.projected("reference"),
                "hot": r.hot,
                "hint": (hint_for(r.axis, r.hot) or (None,))[0] if r.verdict == "SLOW" else None,
                "error": r.error,
                "stopped": r.stopped,
            }
            for r in results
        ],
    }
