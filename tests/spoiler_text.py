"""Reading lesson texts for tests/spoilers.py: sentences, clauses, tokens, request mentions, numbers.

sentences("A finishes. Which slot does C take?")  ->  ["A finishes."]   (questions ask, not claim)
clauses(tokens("A and B take slots 0 and 1; C waits"))  ->  [[A, and, B, take, slots, 0, and, 1], [C, waits]]
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|[A-Za-z_][\w<>]*(?:'s)?|\.\.\.|…|[^\s\w]")
CLAUSE_BREAKS = {";", ":", "—"}
NUMBER_WORDS = {
    "zero": 0, "no": 0, "none": 0, "nobody": 0, "one": 1, "single": 1, "alone": 1, "two": 2, "both": 2,
    "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
    "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "twenty": 20, "forty": 40,
}  # fmt: skip


def word_set(text: str) -> frozenset[str]:
    """A set of words written as one string: `word_set("take takes took")`."""
    return frozenset(text.split())


# After a lone "A", these words make it request A rather than the article ("A has finished" vs "A row").
VERBS_AFTER_A = word_set(
    """has is was emits emitted ends ended finishes finished takes took leaves left gets got stops stopped reaches
    reached waits waited runs ran holds held frees freed needs still and or with then must can does starts keeps
    arrives arrived wants asks asked goes gives gave would will could should streams streamed in into to at first
    now only never also"""
)


def clean(text: str) -> str:
    """The text as a reader sees it: no Markdown marks, one space between words, spaced dashes as —."""
    text = re.sub(r"[`*]", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r" [-–] ", " — ", text)


def sentences(text: str) -> list[str]:
    """The declarative sentences of `text` (a sentence ending in "?" asks, so it is left out); one
    that starts with "It" or "Its" is read with the sentence before, whose subject it names."""
    text = clean(text).replace("e.g.", "eg").replace("i.e.", "ie").replace("vs.", "vs")
    found: list[str] = []
    for s in re.split(r"(?<=[.!?])\s+", text):
        if found and re.match(r"Its? ", s) and not found[-1].endswith("?"):
            found[-1] += " " + s
        elif s:
            found.append(s)
    return [s for s in found if not s.endswith("?")]


def tokens(sentence: str) -> list[str]:
    return TOKEN.findall(sentence)


def clauses(words: list[str]) -> list[list[str]]:
    """`words` split at ; : and — (a comma does not end a clause: "A finishes, and C takes its slot")."""
    out = [[]]
    for word in words:
        if word in CLAUSE_BREAKS:
            out.append([])
        else:
            out[-1].append(word)
    return [clause for clause in out if clause]


def is_request(words: list[str], i: int, request: str) -> bool:
    """Whether words[i] names `request` ("C", "C's"); a lone "A" before a noun is the article."""
    word = words[i]
    if word not in (request, f"{request}'s"):
        return False
    if word != "A" or i + 1 == len(words):
        return True
    following = words[i + 1]
    return not (following.isalpha() and following.islower()) or following in VERBS_AFTER_A


def mentions(words: list[str], request: str) -> list[int]:
    return [i for i in range(len(words)) if is_request(words, i, request)]


def groups(words: list[str], requests: set[str]) -> list[tuple[int, int, set[str]]]:
    """Runs of request names joined by "," or "and" ("A, B and C"), as (first, last, names)."""
    out: list[tuple[int, int, set[str]]] = []
    for i in range(len(words)):
        named = next((r for r in requests if is_request(words, i, r)), None)
        if named is None:
            continue
        if out and all(w in (",", "and") for w in words[out[-1][1] + 1 : i]) and i - out[-1][1] <= 2:
            first, _, names = out[-1]
            out[-1] = (first, i, names | {named})
        else:
            out.append((i, i, {named}))
    return out


def nearest_group(words: list[str], at: int, requests: set[str]) -> set[str]:
    """The names of the request group nearest to words[at] (empty when the clause names nobody)."""
    found = groups(words, requests)
    if not found:
        return set()
    distance = lambda g: 0 if g[0] <= at <= g[1] else min(abs(at - g[0]), abs(at - g[1]))  # noqa: E731
    return min(found, key=distance)[2]


def number(word: str) -> float | None:
    """The value a word says: "1,293" -> 1293, "both" -> 2, "0.8" -> 0.8; None for other words."""
    if word[0].isdigit():
        return float(word.replace(",", ""))
    return NUMBER_WORDS.get(word.lower())
