"""What the scale section concludes from one axis's measurements: OK, SLOW, or FAIL.

At each size measured, the cost per token of the solution and of the reference are the
medians of their repeats, and their ratio is the median of the paired ratios (both ran on
the same workload, one just after the other). An axis's **growth** is how much that ratio
rose from the smallest size to the largest measured: 1 when the solution's cost per token
grows as the reference's does, whatever their constant factors.

An axis is SLOW when all three hold:
- the growth is at least `GROWTH_MARGIN` (noise on a busy machine moves a correct engine's
  growth by far less: docs/scale.md gives the measured noise margin);
- the solution's own cost per token grew at least `OWN_GROWTH` times (a flat engine beside
  a reference that got cheaper is not slow);
- its projected time at the target size is at least `TARGET_MARGIN` times the reference's.

The projection continues each engine's cost per token from its last two measured sizes as a
power of the size (never falling), times the target's tokens; a size measured is never
projected. A run that failed (an exception, a wrong result, a crash) makes the axis FAIL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median

GROWTH_MARGIN = 2.0
OWN_GROWTH = 1.5
TARGET_MARGIN = 2.0


@dataclass
class Point:
    size: int
    tokens: int
    solution: list[float]  # CPU seconds of each repeat
    reference: list[float]
    lower_bound: bool = False  # the solution's run overran: its time is at least this (section._at_least)

    @property
    def solution_per_token(self) -> float:
        return median(self.solution) / self.tokens

    @property
    def reference_per_token(self) -> float:
        return median(self.reference) / self.tokens

    @property
    def ratio(self) -> float:
        return median(s / max(r, 1e-9) for s, r in zip(self.solution, self.reference))


@dataclass
class AxisResult:
    axis: str
    unit: str
    target: int
    target_tokens: int
    points: list[Point] = field(default_factory=list)
    error: str | None = None  # the run that failed, and why
    stopped: str | None = None  # why larger sizes were not run (the budget), if they were not
    hot: list[dict] = field(default_factory=list)  # hottest solution lines at the largest size
    skipped: str | None = None  # the axis did not run at all, and why

    @property
    def growth(self) -> float | None:
        if len(self.points) < 2:
            return None
        return self.points[-1].ratio / max(self.points[0].ratio, 1e-9)

    @property
    def own_growth(self) -> float | None:
        if len(self.points) < 2:
            return None
        return self.points[-1].solution_per_token / max(self.points[0].solution_per_token, 1e-12)

    def projected(self, engine: str) -> float | None:
        """Seconds a whole run at the target size takes (or would take) for "solution" or "reference"."""
        if not self.points:
            return None
        per_token = [getattr(p, f"{engine}_per_token") for p in self.points]
        last = self.points[-1]
        if last.size == self.target:
            return per_token[-1] * self.target_tokens
        slope = 0.0
        if len(self.points) >= 2:
            before = self.points[-2]
            slope = max(0.0, math.log(per_token[-1] / per_token[-2]) / math.log(last.size / before.size))
        return per_token[-1] * (self.target / last.size) ** slope * self.target_tokens

    @property
    def verdict(self) -> str:
        if self.skipped:
            return "--"
        if self.error:
            return "FAIL"
        growth, own = self.growth, self.own_growth
        if growth is None:
            return "--"
        solution, reference = self.projected("solution"), self.projected("reference")
        if growth >= GROWTH_MARGIN and own >= OWN_GROWTH and solution >= TARGET_MARGIN * reference:
            return "SLOW"
        return "OK"
