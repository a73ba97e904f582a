"""Small pieces of the narration's wording, shared by the step and the KV-cache sentences."""

from __future__ import annotations

MAX_NAMES = 5  # request ids listed before "and N more"


def names(ids: list[str]) -> str:
    """`A, B, C, D, E and 3 more`."""
    shown = ", ".join(ids[:MAX_NAMES])
    return shown if len(ids) <= MAX_NAMES else f"{shown} and {len(ids) - MAX_NAMES} more"
