"""Predictions graded from stored measurements instead of the run's log.

Four `[[quiz]]` kinds (`engine/lab/quizzes.py` reads them like the others, asked before step 0):

    kind = "faster"   rows = 8                         faster a token: the loop or the vectorised engine?
    kind = "minutes"  engine = "ChecksFinishedInAList"  which takes minutes at the axis's largest size?
    kind = "cause"    engine = "ChecksFinishedInAList"  why: how does a token's cost grow along the axis?
    kind = "cache_share"  capacity = 3000000           how much of the maximum hit rate does that cache reach?

The first three are this machine's speed; `cache_share` is the engine's cache curve over a whole trace
(engine/lab/measured_cache.py), deterministic but an hour's replay too long for a lesson's run.

The loop engine is `engine.BatchInferenceEngine`, in both files (the slow engines' "reference").
The figures are noisy (a loaded machine shared by several processes), so an answer is only a fact
that a rerun cannot flip: an ordering by a factor of `ORDER_MARGIN` or more (the two engines are
measured side by side, round by round), with the row count at least `MARGIN` times from the
crossover on its side; seconds at least `MARGIN` times a minute or at most a minute over `MARGIN`;
a growth exponent (0, 1 or 2) read off at least a fourfold range of sizes, clear of the halfway
values by 0.1. Figures that do not settle the answer are a `QuizError`, so the lesson's tests fail loudly
(tests/test_measured_quizzes.py) instead of grading against noise. The explanation gives the
figures themselves, so the reveal is always this machine's.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..analysis.quiz import Question, QuizError
from .measured_cache import cache_share_question
from .measured_files import (
    MeasurementError,
    SlowEngine,
    Vectorised,
    read_cache_curve,
    read_slow_engines,
    read_vectorised,
)
from .measured_text import MINUTE, measured_on, ns_text, seconds_text, times_text
from .toml_reader import Table

MARGIN = 2.0  # how far from the crossover, or from a minute, a measured answer must be
ORDER_MARGIN = 1.5  # how much faster the faster engine must be (the two are measured side by side, paired)
MIN_SPAN = 4  # the sizes a growth is read over, largest / smallest (a slow engine's larger sizes may be skipped)
LOOP, VECTORISED = "the loop engine", "the vectorised engine"  # the loop engine: engine.BatchInferenceEngine
REFERENCE, BOTH, NEITHER = LOOP, "both", "neither"  # the slow engines' reference is the same engine
GROWTH_BANDS = ((0, -math.inf, 0.4), (1, 0.6, 1.4), (2, 1.6, math.inf))  # exponent, slope from, slope to
READERS = {
    "faster": read_vectorised,
    "minutes": read_slow_engines,
    "cause": read_slow_engines,
    "cache_share": read_cache_curve,
}
MEASURED_KINDS = tuple(READERS)
SPEED_KINDS = ("faster", "minutes", "cause")  # this machine's speed (the others are the engine's own figures)
MAX_CAPACITY = 10**10  # a cache_share quiz's capacity, in tokens


def measured_subject(t: Table, kind: str) -> int | str:
    """The quiz's `rows` (kind faster), `capacity` (cache_share) or `engine` (minutes, cause), checked."""
    if kind == "cache_share":
        return t.int("capacity", minimum=1, maximum=MAX_CAPACITY)
    return t.int("rows", minimum=1, maximum=10**7) if kind == "faster" else t.str("engine")


def asked_from(kind: str) -> str:
    """Where a measured question's answer comes from, as the app says it above the question."""
    return "from this machine's measurements" if kind in SPEED_KINDS else "from the whole trace's replay"


def measurement_problem(kind: str, directory: Path | None = None) -> str | None:
    """Why the measurements `kind` is graded from cannot be read (None: they can)."""
    try:
        READERS[kind](directory)
    except MeasurementError as exc:
        return str(exc)
    return None


def measured_question(kind: str, subject: int | str, directory: Path | None = None) -> Question:
    """The question of this kind about `subject`, answered from the measurements (QuizError if they
    are missing, do not name `subject`, or do not settle the answer)."""
    try:
        measured = READERS[kind](directory)
    except MeasurementError as exc:
        raise QuizError("kind", str(exc)) from None
    if kind == "faster":
        return _faster(measured, int(subject))
    if kind == "cache_share":
        return cache_share_question(measured, int(subject))
    engine = _engine(measured.engines, str(subject))
    asker = _minutes if kind == "minutes" else _cause
    options, answer, fact = asker(engine, str(subject))
    return Question(0, options, answer, (f"{fact[:-1]} ({measured_on(measured.measured_on, measured.load)}).",))


def _faster(v: Vectorised, rows: int) -> Question:
    both = [i for i, r in enumerate(v.rows) if r <= rows and v.loop_ns[i] and v.vectorised_ns[i]]
    if not both or v.rows[both[-1]] * MARGIN < rows:
        raise QuizError("rows", f"{rows:,} rows are not measured for both engines (rows measured: {_sizes(v.rows)})")
    at = v.rows[both[-1]]
    loop, vector = v.loop_ns[both[-1]], v.vectorised_ns[both[-1]]
    answer, ratio = (LOOP, vector / loop) if loop < vector else (VECTORISED, loop / vector)
    crossover = v.crossover_rows
    if answer == LOOP:
        clear_side = crossover is None or at * MARGIN <= crossover
    else:  # (a crossover at the fewest rows measured may lie below them)
        clear_side = crossover is not None and (at >= crossover * MARGIN or crossover == v.rows[0] <= at)
    if ratio < ORDER_MARGIN or not clear_side:
        raise QuizError(
            "rows",
            f"the measurements do not settle it at {at:,} rows ({ns_text(loop)} and {ns_text(vector)} a token, "
            f"{_crossing(crossover)}): ask about rows at least {MARGIN:g}× from the crossover",
        )
    # (not where they cross: that would answer the lesson's other row count; the chart shows it afterwards)
    where = f"{at:,} rows" if at == rows else f"{at:,} rows (the most measured for both)"
    fact = (
        f"At {where} the loop engine took {ns_text(loop)} a token and the vectorised one {ns_text(vector)}: "
        f"{answer} is {times_text(ratio)} faster ({measured_on(v.measured_on, v.load, v.cpu)})."
    )
    return Question(0, (LOOP, VECTORISED), answer, (fact,))


def _crossing(crossover: int | None) -> str:
    if crossover is None:
        return "the vectorised engine is faster at none of the row counts measured"
    return f"the vectorised engine is faster from {crossover:,} rows up"


def _minutes(e: SlowEngine, name: str):
    pairs = ((name, e.seconds), (REFERENCE, e.reference_seconds))
    slow = {who: _takes_minutes(who, seconds) for who, seconds in pairs}
    answer = BOTH if all(slow.values()) else next((who for who, s in slow.items() if s), NEITHER)
    fact = (
        f"On {e.sizes[-1]:,} {e.unit}, {name} would take {seconds_text(e.seconds)} and "
        f"{REFERENCE} {seconds_text(e.reference_seconds)}."
    )
    return (name, REFERENCE, BOTH, NEITHER), answer, fact


def _takes_minutes(who: str, seconds: float) -> bool:
    if MINUTE / MARGIN < seconds < MINUTE * MARGIN:
        raise QuizError("engine", f"{who} would take {seconds_text(seconds)}: too near a minute to say")
    return seconds >= MINUTE


def growth_options(unit: str) -> tuple[str, ...]:
    """A token's cost at exponent 0, 1 and 2 of the axis's size."""
    return (
        f"a token costs the same at any number of {unit}",
        f"a token's cost grows in proportion to the {unit}",
        f"a token's cost grows with the square of the {unit}",
    )


def _cause(e: SlowEngine, name: str):
    measured = [(size, ns) for size, ns in zip(e.sizes, e.ns) if ns is not None]
    (small, first), (large, last) = measured[0], measured[-1]
    if large < small * MIN_SPAN:
        raise QuizError(
            "engine", f"{name} is measured over {small:,} to {large:,} {e.unit}: too short to read a growth"
        )
    slope = math.log(last / first) / math.log(large / small)
    exponent = next((n for n, low, high in GROWTH_BANDS if low <= slope <= high), None)
    if exponent is None:
        raise QuizError(
            "engine", f"{name}'s cost a token grows as {e.unit} to the power {slope:.2f}: not clearly 0, 1 or 2"
        )
    fact = (
        f"From {small:,} to {large:,} {e.unit} ({times_text(large / small)}), {name}'s cost a token went from "
        f"{ns_text(first)} to {ns_text(last)} ({times_text(last / first)}){_beside(e, small, large)}."
    )
    return growth_options(e.unit), growth_options(e.unit)[exponent], fact


def _beside(e: SlowEngine, small: int, large: int) -> str:
    """The reference engine's cost a token at the same two sizes, when measured there."""
    at = dict(zip(e.sizes, e.reference_ns))
    if at.get(small) is None or at.get(large) is None:
        return ""
    return f", {REFERENCE}'s from {ns_text(at[small])} to {ns_text(at[large])}"


def _engine(engines: dict[str, SlowEngine], name: str) -> SlowEngine:
    """The engine filed under `name`: its class name or its slug (ChecksFinishedInAList, checks-finished-in-a-list)."""
    found = {_plain(key): engine for key, engine in engines.items()}
    if _plain(name) not in found:
        raise QuizError("engine", f"{name!r} is not measured (the engines: {', '.join(sorted(engines))})")
    engine = found[_plain(name)]
    if sum(ns is not None for ns in engine.ns) < 2:
        raise QuizError("engine", f"{name} is measured at fewer than two sizes")
    return engine


def _plain(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _sizes(sizes: tuple[int, ...]) -> str:
    return ", ".join(f"{size:,}" for size in sizes)
