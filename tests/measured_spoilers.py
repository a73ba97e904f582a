"""The rules of tests/spoilers.py for the predictions graded from measurements
(engine/lab/measured_quizzes.py): each reads one declarative sentence and says whether it
claims the answer.

- faster: the answer's engine ("loop"; "vectorised" or "NumPy") a few words before a word of
  winning ("faster", "wins", "beats", "cheaper"), or the other one before a word of losing
  ("slower", "loses");
- minutes: "minute(s)" or "hour(s)" with the engine that takes them (or "neither", "both");
- cause: a claim of the answer's growth ("the same at any number", "in proportion", "linear",
  "with the square", "quadratic") in a sentence that speaks of a token's cost or a step's work.
"""

from __future__ import annotations

import re

from engine.lab.measured_quizzes import BOTH, LOOP, NEITHER, REFERENCE
from tests.spoiler_rules import Facts

LOOP_WORDS, VECTORISED_WORDS = r"\bloop\b", r"\bvectori[sz]ed\b|\bnumpy\b"
WINS, LOSES = r"\b(faster|quicker|wins|win|beats|cheaper|outruns)\b", r"\b(slower|loses|lose)\b"
NEAR = r"[^.;:]{0,30}?"  # a few words, in the same clause
GROWTH_WORDS = {
    0: re.compile(r"\b(the same at any|does not grow|constant|flat)\b", re.I),
    1: re.compile(r"\b(in proportion|proportional|linear|linearly|with the square|quadratic)\b", re.I),
    2: re.compile(r"\b(square of the|with the cube|cubic)\b", re.I),
}
COST_WORDS = re.compile(r"\b(cost|costs|work|time|grows|takes)\b", re.I)


def faster(sentence: str, f: Facts) -> bool:
    winner, loser = (LOOP_WORDS, VECTORISED_WORDS) if f.answer == LOOP else (VECTORISED_WORDS, LOOP_WORDS)
    said = rf"({winner}){NEAR}{WINS}|({loser}){NEAR}{LOSES}"
    return bool(re.search(said, sentence, re.I))


def minutes(sentence: str, f: Facts) -> bool:
    if not re.search(r"\b(minutes?|hours?)\b", sentence):
        return False
    who = {BOTH: r"\bboth\b", NEITHER: r"\bneither\b", REFERENCE: r"\bloop engine\b"}.get(str(f.answer))
    return bool(re.search(who or re.escape(str(f.answer)), sentence, re.I))


def cause(sentence: str, f: Facts) -> bool:
    exponent = next(n for n, said in enumerate(("the same at any", "in proportion", "square")) if said in str(f.answer))
    return bool(GROWTH_WORDS[exponent].search(sentence) and COST_WORDS.search(sentence))
