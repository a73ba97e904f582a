"""Predictions about a whole run: figures over all its requests and steps, read from the log and priced
with the scenario's cost model, as the Metrics tab computes them (engine/analysis/metrics.py).

    hit_rate       the percent of the prompt tokens looked up that the prefix cache held (a number)
    prefill_share  the share of the busy time spent on prompt tokens: under 25 %, 25 to 50 %, ...
    ttft_p50       the median time to first token: under 0.1 s, 0.1 to 1 s, 1 to 10 s, over 10 s
    ttft_p99       its 99th percentile, in the same bands
    peak_waiting   the most requests waiting at once, after a step's admissions (a number)

The number kinds take a `tolerance` like the others. A band's answer must sit clear of the band's edges
(`EDGE_POINTS` for a share, `EDGE_FACTOR` for seconds): a figure so near an edge that a small change to
the engine, the cost model or the lesson's window would move it across is a `QuizError`, so the lesson
is changed rather than graded on a hair. Each explanation is the figure itself, from the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from ..core.log.event_log import EventLog
from .metrics import CostModel, percentile, prefill_seconds, request_metrics, step_metrics
from .prefix_hits import cache_hits
from .wording import duration

SHARE_BANDS = ("under 25 %", "25 % to 50 %", "50 % to 75 %", "over 75 %")
SHARE_EDGES = (0.25, 0.5, 0.75)
TTFT_BANDS = ("under 0.1 s", "0.1 s to 1 s", "1 s to 10 s", "over 10 s")
TTFT_EDGES = (0.1, 1.0, 10.0)
BANDS = (SHARE_BANDS, TTFT_BANDS)  # options kept in their order (quiz._shuffled)
EDGE_POINTS = 0.03  # a share's answer is at least this far from a band's edge
EDGE_FACTOR = 1.2  # a time's answer is at least this factor from a band's edge


class EdgeError(ValueError):
    """A figure too near a band's edge to ask about (quiz.question makes it a QuizError on `kind`)."""


@dataclass
class RunFigures:
    """A run's log and the cost model that prices it; the metrics computed once, when first asked for
    (`steps` and `requests` may be given: the app has them already)."""

    log: EventLog
    cost: CostModel
    given_steps: pd.DataFrame | None = None
    given_requests: pd.DataFrame | None = None

    @cached_property
    def steps(self) -> pd.DataFrame:
        return step_metrics(self.log, self.cost) if self.given_steps is None else self.given_steps

    @cached_property
    def requests(self) -> pd.DataFrame:
        given = self.given_requests
        return request_metrics(self.log, self.cost, self.steps) if given is None else given


def band(value: float, edges: tuple[float, ...], bands: tuple[str, ...], *, points=0.0, factor=1.0) -> str:
    """The band `value` falls in (an edge belongs to the band above it); EdgeError if it is nearer an edge
    than `points` (absolute) or within a `factor` of it."""
    for edge in edges:
        if abs(value - edge) < points or edge / factor < value < edge * factor:
            raise EdgeError(f"{value:.3g} is too near the edge {edge:g} between two answers to ask about")
    return bands[sum(value >= edge for edge in edges)]


def _hit_rate(f: RunFigures):
    if not f.log.config.prefix_caching:
        raise EdgeError("'hit_rate' needs prefix caching ([engine.kv] prefix_caching = true)")
    cached, looked_up = cache_hits(f.log)
    rate = cached / looked_up if looked_up else 0.0
    held = f"{rate * 100:.1f} % of the {looked_up:,} prompt tokens looked up in it"
    fact = f"The prefix cache held {held}: {cached:,} tokens."
    return None, round(rate * 100), fact


def _prefill_share(f: RunFigures):
    prefill, busy = prefill_seconds(f.steps, f.cost)
    share = prefill / busy if busy else 0.0
    fact = (
        f"Prompt tokens took {share * 100:.0f} % of the busy time: {_seconds(prefill)} of the {_seconds(busy)} "
        f"the engine was busy, for {int(f.steps.prefill_tokens.sum()):,} prompt tokens computed."
    )
    return SHARE_BANDS, band(share, SHARE_EDGES, SHARE_BANDS, points=EDGE_POINTS), fact


def _ttft(q: int):
    def asker(f: RunFigures):
        seconds = percentile(f.requests.ttft_s, q)
        if seconds is None:
            raise EdgeError("no request got a first token in this run")
        served = int(f.requests.ttft_s.notna().sum())
        what = "The median time to first token" if q == 50 else f"The p{q} time to first token"
        share = "half" if q == 50 else f"{100 - q} %"
        fact = f"{what} is {duration(seconds)}: {share} of the {served:,} requests waited longer for their first token."
        return TTFT_BANDS, band(seconds, TTFT_EDGES, TTFT_BANDS, factor=EDGE_FACTOR), fact

    return asker


def _peak_waiting(f: RunFigures):
    queue = f.steps.queue_depth.to_numpy()
    if not len(queue) or not queue.max():
        return None, 0, "Nobody waits after any step's admissions: each request is admitted at the step it arrives."
    at = int(queue.argmax())
    step, when = int(f.steps.step.iloc[at]), float(f.steps.end_s.iloc[at] - f.steps.duration_s.iloc[at])
    peak = int(queue[at])
    fact = f"The queue peaks at {peak:,} waiting, after the admissions of step {step:,}, {duration(when)} into the run."
    return None, peak, fact


def _seconds(seconds: float) -> str:
    """A busy time in seconds: as `duration` says it below a minute, then "61.7 s" rather than "1 min 2 s"."""
    return duration(seconds) if seconds < 60 else f"{seconds:,.1f} s"


RUN_ASKERS = {
    "hit_rate": _hit_rate,
    "prefill_share": _prefill_share,
    "ttft_p50": _ttft(50),
    "ttft_p99": _ttft(99),
    "peak_waiting": _peak_waiting,
}
NUMBER_KINDS = ("hit_rate", "peak_waiting")
