"""A prediction graded from the stored cache curve (`engine/lab/measurements/cache_curve.json`): Mooncake's
Figure 9 asked as a question.

    [[quiz]]
    kind = "cache_share"
    capacity = 3000000    # tokens: how much of the maximum hit rate does a cache this large reach?

A lesson's own run is a minute of a trace; the curve is the whole trace replayed at each capacity
(`python benchmarks/cache_curve.py --write`), so the question is answered from that file. The answer is
a band of the share (`run_quiz.SHARE_BANDS`), and a share within `MARGIN_POINTS` of a band's edge is
too close to call: a `QuizError`, so the lesson's tests fail loudly rather than grade on a hair.
"""

from __future__ import annotations

from ..analysis.quiz import Question, QuizError
from ..analysis.run_quiz import SHARE_BANDS, SHARE_EDGES, EdgeError, band
from .measured_files import CacheCurve

MARGIN_POINTS = 0.05  # a share this near a band's edge is too close to call


def cache_share_question(curve: CacheCurve, capacity: int) -> Question:
    """How much of the maximum hit rate a cache of `capacity` tokens reaches over the whole trace."""
    if capacity not in curve.capacities or curve.engine_hit_rate[curve.capacities.index(capacity)] is None:
        measured = ", ".join(f"{c:,}" for c in curve.capacities)
        raise QuizError("capacity", f"{capacity:,} tokens is not on the stored curve (its capacities: {measured})")
    rate, maximum = curve.engine_hit_rate[curve.capacities.index(capacity)], curve.unbounded_engine_hit_rate
    if not maximum:
        raise QuizError("kind", f"the stored curve of {curve.trace} finds no hit even with an unbounded cache")
    share = rate / maximum
    try:
        answer = band(share, SHARE_EDGES, SHARE_BANDS, points=MARGIN_POINTS)
    except EdgeError:
        raise QuizError("capacity", f"{share:.1%} of the maximum is too close to a band's edge to call") from None
    fact = (
        f"Over the whole trace {curve.trace}, the engine's hit rate with a cache of {capacity:,} tokens is "
        f"{rate * 100:.1f} %, and {maximum * 100:.1f} % with an unbounded one: {share * 100:.0f} % of the maximum "
        f"(`python -m engine cache-curve {curve.trace}`, stored on {curve.measured_on})."
    )
    return Question(0, SHARE_BANDS, answer, (fact,))
