"""Small pieces of the wording shared across the app: lists of request ids (the step and the KV-cache
sentences) and durations (Metrics, Compare, the charts' titles and hovers, the CLI's tables)."""

from __future__ import annotations

import math

MAX_NAMES = 5  # request ids listed before "and N more"
NO_VALUE = "–"  # a duration that does not apply (no request got a first token, say)


def names(ids: list[str]) -> str:
    """`A, B, C, D, E and 3 more`."""
    shown = ", ".join(ids[:MAX_NAMES])
    return shown if len(ids) <= MAX_NAMES else f"{shown} and {len(ids) - MAX_NAMES} more"


def duration(seconds: float | None) -> str:
    """A duration for people, the one way the app writes one: below a minute, 3 significant figures in
    the largest unit that keeps the figure at least 1 ("500 ns", "850 µs", "7.70 ms", "53.1 ms", "2.51 s", "59.9 s");
    from a minute, whole minutes and seconds ("1 min 49 s"); from an hour, hours and minutes ("2 h 5 min").
    "–" for no value (None or NaN)."""
    if seconds is None or math.isnan(seconds):
        return NO_VALUE
    if seconds < 0:
        return f"−{duration(-seconds)}"
    if seconds == 0 or math.isinf(seconds):
        return "0 s" if seconds == 0 else "∞"
    for unit, scale, limit in (("ns", 1e-9, 1000), ("µs", 1e-6, 1000), ("ms", 1e-3, 1000), ("s", 1.0, 60)):
        figure = float(f"{seconds / scale:.3g}")  # rounded to 3 significant figures: 999.96 µs is 1.00 ms
        if figure < limit:
            decimals = max(0, 2 - math.floor(math.log10(figure)))  # keep its trailing zeros: 7.70
            return f"{figure:.{decimals}f} {unit}"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60:,} h {minutes % 60} min"
