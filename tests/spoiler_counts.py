"""The rules of tests/spoilers.py for the number questions: a count next to the question's noun."""

from __future__ import annotations

import re

from tests.spoiler_rules import Facts
from tests.spoiler_text import clauses, mentions, number, tokens, word_set

NOUNS = {
    "blocks": re.compile(r"blocks?$"),
    "admitted": re.compile(r"(admit\w*|admission\w*|fill|fills|filled)$"),
    "waiting": re.compile(r"(wait\w*|queue\w*)$"),
    "rows": re.compile(r"rows?$"),
    "steps": re.compile(r"steps?$"),
    "cached": re.compile(r"(cached|cache|hits?|finds|found|reus\w*)$"),
    "computed": re.compile(r"(comput\w*|prefill\w*)$"),
    "preemptions": re.compile(r"(preempt\w*)$"),
}
AHEAD = re.compile(r"\b(every step|each step|next step|from now on|will|always|until)\b", re.I)
ID_WORDS = word_set("step steps slot slots block blocks position call calls priority / × x")  # an id follows
ID_LISTS = word_set("slots blocks steps positions")  # "slots 0 and 1": every number of the list is an id
NOT_COUNTS = word_set("- % / × x")  # a number before these is not a count ("4-token", "41.7 %")


def count(sentence: str, f: Facts, noun: re.Pattern, per_request: bool = False) -> bool:
    words = tokens(sentence)
    if per_request and not mentions(words, f.request):
        return False
    ahead = _names_step(words, f.step) or AHEAD.search(sentence)
    if f.narrated_step not in (None, f.step) and not ahead:
        return False
    for clause in clauses(words):
        nouns = [i for i, w in enumerate(clause) if noun.match(w.lower())]
        counts = [i for i in _counts(clause) if number(clause[i]) == f.answer]
        if any(1 <= n - c <= 3 or 1 <= c - n <= 2 for n in nouns for c in counts):
            return True
        if nouns and counts and _names_step(clause, f.step):
            return True
    return False


def _counts(words: list[str]) -> list[int]:
    """The positions of the numbers that count something: not ids ("slots 0 and 1", "step 4"), not
    parts of a word ("4-token") or of a ratio, and not a pool's size ("24 blocks of 4 tokens")."""
    out, in_ids = [], False
    for i, word in enumerate(words):
        before, after = (words[i - 1] if i else ""), (words[i + 1] if i + 1 < len(words) else "")
        if number(word) is None:
            in_ids = word.lower() in ID_LISTS or in_ids and word in (",", "and", "-", "–", "to")
            continue
        pool = (
            after.startswith("block") and words[i + 2 : i + 3] == ["of"] and "token" in " ".join(words[i + 3 : i + 5])
        )
        if not (in_ids or before.lower() in ID_WORDS or after in NOT_COUNTS or pool):
            out.append(i)
    return out


def _names_step(words: list[str], step: int) -> bool:
    return any(w == "step" and words[i + 1 : i + 2] == [str(step)] for i, w in enumerate(words))


def steps(sentence: str, f: Facts) -> bool:
    last = f.answer - 1
    if re.search(rf"\bsteps 0 ?(-|–|to) ?{last}\b|\b(ends|last|final)\b[^.]{{0,30}}\bstep {last}\b", sentence):
        return True
    return count(sentence, f, NOUNS["steps"])
