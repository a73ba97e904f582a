"""A lesson's reveal kept on screen when the sidebar changes the run, beside the changed run's figures.

A lesson may ask the learner to move a setting once they have predicted (7.4: "move the
sidebar's Watermark slider"). The changed run has none of the lesson's predictions, captions
or reveal, which were written for the lesson's own run (`cblab/ui/runs/runs.py`), but what the
learner compares against is in that reveal. So once the lesson's predictions are checked, its
reveal stays, marked as the lesson's settings ("With the lesson's settings (Watermark 0)"),
with the verdict last checked, and a table puts the lesson's run and the changed one side by
side: steps, throughput, and the pool's and the cache's figures where they ran.
"""

from __future__ import annotations

FIGURES = {  # summary key -> (the row's label, its format)
    "steps": ("steps", "{:,}"),
    "throughput_tokens_per_s": ("throughput (tokens/s)", "{:,.0f}"),
    "preemptions": ("preemptions", "{:,}"),
    "recomputed_tokens": ("tokens computed again", "{:,}"),
    "cached_tokens": ("tokens found in the prefix cache", "{:,}"),
}
ON_THE_POOL = ("preemptions", "recomputed_tokens")  # shown where either run had a KV pool
WITH_THE_CACHE = ("cached_tokens",)  # shown where either run had the prefix cache on


def settings_said(changed: list[tuple[str, str, str]], which: int) -> str:
    """The changed settings (`changed_settings`' triples) at the lesson's values (`which` 1) or
    the sidebar's (2): "Watermark 0; Batch size 8"."""
    return "; ".join(f"{change[0]} {change[which]}" for change in changed)


def figures_beside(own: dict, yours: dict, pool: bool, cache: bool, headings: tuple[str, str]) -> list[dict]:
    """Rows of the lesson's run's summary figures (`own`) beside the changed run's (`yours`),
    under `headings`; the pool's figures only with a `pool`, the cache's only with a `cache`."""
    keys = [k for k in FIGURES if (k not in ON_THE_POOL or pool) and (k not in WITH_THE_CACHE or cache)]
    return [
        {"": FIGURES[k][0], headings[0]: FIGURES[k][1].format(own[k]), headings[1]: FIGURES[k][1].format(yours[k])}
        for k in keys
    ]


def kept_heading(changed: list[tuple[str, str, str]]) -> str:
    """What the kept reveal is headed with: the lesson's own values of what the sidebar changed."""
    return f"What happened with the lesson's settings ({settings_said(changed, 1)})."
