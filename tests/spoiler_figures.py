"""The rules of tests/spoilers.py for the predictions about a whole run's figures (engine/analysis/run_quiz.py)
and the stored cache curve (engine/lab/measured_cache.py). Each reads one declarative sentence and says
whether it claims the answer:

- hit_rate: a percent within the tolerance of the answer in a sentence about the cache's hits;
- prefill_share: the answer's band in words ("50 % to 75 %"), a percent inside it, or "most of the time"
  (a band above half) / "a small part" (the lowest), in a sentence about the prompt tokens' time;
- ttft_p50, ttft_p99: a duration inside the answer's band in a sentence about the first token, with the
  median (p50) or the slowest (p99) named;
- peak_waiting: a count within the tolerance of the answer next to a word of waiting or queueing
  ("270 waiting", "a queue of 270"), or, for 0, a claim that nobody waits;
- cache_share: the answer's band, or a percent inside it, in a sentence about the maximum hit rate.
"""

from __future__ import annotations

import re

from engine.analysis.run_quiz import SHARE_BANDS, SHARE_EDGES, TTFT_BANDS, TTFT_EDGES
from tests.spoiler_rules import Facts
from tests.spoiler_text import clauses, number, tokens

PERCENT = re.compile(r"(\d+(?:\.\d+)?) ?%")
SECONDS = re.compile(r"(\d+(?:\.\d+)?) ?(ms|s)\b")
CACHE_WORDS = re.compile(r"\b(cache\w*|hits?|hit rate|found|finds|reus\w*)\b", re.I)
PREFILL_WORDS = re.compile(r"\b(prefill\w*|prompt tokens?|prompt phase)\b", re.I)
TIME_WORDS = re.compile(r"\b(time|busy|share|seconds|work\w*)\b", re.I)
MOST = re.compile(r"\b(most|majority|bulk|dominat\w*)\b", re.I)
SMALL = re.compile(r"\b(small|little|minor|fraction)\b", re.I)
FIRST_TOKEN = re.compile(r"\b(first tokens?|TTFT)\b", re.I)
WHICH_TTFT = {50: re.compile(r"\b(median|p50|typical|half)\b", re.I), 99: re.compile(r"\b(p99|slowest|99)\b", re.I)}
WAIT_NOUNS = re.compile(r"(wait\w*|queu\w*)$", re.I)
NOBODY_WAITS = re.compile(
    r"\b(nobody|no one|no request\w*|none)\b[^.;]{0,30}\bwaits?\b|\bqueue (stays|is|remains) empty", re.I
)
MAXIMUM = re.compile(r"\b(maximum|max|unbounded|most it can)\b", re.I)


def _range(band: str, bands: tuple[str, ...], edges: tuple[float, ...]) -> tuple[float, float]:
    i = bands.index(band)
    return (0.0, *edges)[i], (*edges, float("inf"))[i]


def _percents(sentence: str) -> list[float]:
    return [float(m.group(1)) / 100 for m in PERCENT.finditer(sentence)]


def _in_band(values: list[float], low: float, high: float) -> bool:
    return any(low <= v < high for v in values)


def hit_rate(sentence: str, f: Facts) -> bool:
    near = [v * 100 for v in _percents(sentence) if abs(v * 100 - f.answer) <= max(f.tolerance, 0.5)]
    return bool(near and CACHE_WORDS.search(sentence))


def prefill_share(sentence: str, f: Facts) -> bool:
    if not PREFILL_WORDS.search(sentence):
        return False
    low, high = _range(f.answer, SHARE_BANDS, SHARE_EDGES)
    if f.answer in sentence or (TIME_WORDS.search(sentence) and _in_band(_percents(sentence), low, high)):
        return True
    said = MOST if low >= 0.5 else SMALL if high <= 0.25 else None
    return bool(said and said.search(sentence) and TIME_WORDS.search(sentence))


def _ttft(q: int):
    def rule(sentence: str, f: Facts) -> bool:
        if not (FIRST_TOKEN.search(sentence) and WHICH_TTFT[q].search(sentence)):
            return False
        low, high = _range(f.answer, TTFT_BANDS, TTFT_EDGES)
        seconds = [float(m.group(1)) / (1000 if m.group(2) == "ms" else 1) for m in SECONDS.finditer(sentence)]
        return f.answer in sentence or _in_band(seconds, low, high)

    return rule


ttft_p50, ttft_p99 = _ttft(50), _ttft(99)


def peak_waiting(sentence: str, f: Facts) -> bool:
    if f.answer == 0 and NOBODY_WAITS.search(sentence):
        return True
    for clause in clauses(tokens(sentence)):
        nouns = [i for i, w in enumerate(clause) if WAIT_NOUNS.match(w)]
        counts = [i for i, w in enumerate(clause) if (n := number(w)) is not None and abs(n - f.answer) <= f.tolerance]
        if any(abs(n - c) <= 3 for n in nouns for c in counts):
            return True
    return False


def cache_share(sentence: str, f: Facts) -> bool:
    if not MAXIMUM.search(sentence):
        return False
    low, high = _range(f.answer, SHARE_BANDS, SHARE_EDGES)
    halves = {"under half", "less than half", "below half"} if high <= 0.5 else {"over half", "more than half"}
    said = any(h in sentence.lower() for h in halves)
    return f.answer in sentence or said or _in_band(_percents(sentence), low, high)
