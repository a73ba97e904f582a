"""Measured figures in words, the same way in a prediction's answer and in the lesson's chart:
"650 ns", "4.1 µs", "2.1 s", "about 14 minutes", "6.2×"."""

from __future__ import annotations

MINUTE, HOUR = 60.0, 3600.0


def ns_text(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{_figure(ns / scale)} {unit}"
    return f"{ns:.0f} ns"


def seconds_text(seconds: float) -> str:
    if seconds >= 2 * HOUR:
        return f"about {seconds / HOUR:.0f} hours"
    if seconds >= 2 * MINUTE:
        return f"about {seconds / MINUTE:.0f} minutes"
    if seconds >= 1:
        return f"{_figure(seconds)} s"
    return f"{seconds * 1e3:.0f} ms"


def times_text(ratio: float) -> str:
    return f"{_figure(ratio)}×"


def measured_on(day: str, load: float, cpu: str | None = None) -> str:
    """Where the figures come from: "measured on 2026-12-04, load average 3.1, on AMD EPYC"."""
    return f"measured on {day}, load average {load:.1f}" + (f", on {cpu}" if cpu else "")


def _figure(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"
