"""The rules of tests/spoilers.py for the questions with choices: slot, delivered, preempted, stops
and reason. Each reads one declarative sentence and says whether it gives the answer away."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.analysis.narration import tokens_text
from tests.spoiler_text import clauses, mentions, nearest_group, tokens, word_set

TAKE = word_set("take takes took taking taken gets get goes go admitted refills refilled fills reuses inherits")
LEAVE = word_set("finishes finished leaves left frees freed ends ended evicted done gives")
STOP_VERBS = word_set("stop stops stopped end ends ended finish finishes finished evicted terminates")
FINISH_CLAIM = STOP_VERBS | {"wins", "won", "logged"}
NOT_SUBJECTS = word_set("the a an its that which whose prompt token tokens output sequence tail batch step run")
RUNS_ON = re.compile(r"\b(runs (until|on)|keeps (running|going)|carries on|continues|misses it|finds it|catches it)\b")
NOT_STOPPING = re.compile(r"\b(not|NOT|never|cannot|n't|without)\s+(\w+\s+)?(stop|end|finish|complet|match)")
REASON_WORDS = {
    "stop_token": re.compile(r"stop[ _]token|<eos>|\beos\b"),
    "stop_sequence": re.compile(r"stop[ _]sequence|its stop \[|\[\d+(, \d+)+\]"),
    "max_tokens": re.compile(r"max_tokens|budget|length"),
    "cancelled": re.compile(r"cancel"),
}
REASON_VERBS = {  # a verb that says the reason without a word of finishing
    "stop_token": re.compile(r"\b(emits|emitted|generates|generated) (the )?(stop[ _]token|<eos>)"),
    "stop_sequence": re.compile(r"\b(ends|ending) (on |with )?(its|the|a) stop\b"),
    "max_tokens": re.compile(r"\b(reaches|reached|reaching|hits|uses up|exhausts) (its |the )?(max_tokens|budget)"),
    "cancelled": re.compile(r"\b(is|was|gets|got|been) cancel"),
}


@dataclass(frozen=True)
class Facts:
    """What a prediction's answer is, in the terms the rules need."""

    request: str | None
    answer: str | int
    step: int
    requests: frozenset[str]  # every request id of the run
    delivered: list[int] | None = None  # the request's prompt + generated tokens
    prompt_len: int = 0
    taken_from: str | None = None  # slot kind: the request that held the slot before
    narrated_step: int | None = None  # the sentence is the stage's narration of this (earlier) step
    tolerance: int = 0  # a number kind's: answers this far from `answer` are right too


def slot(sentence: str, f: Facts) -> bool:
    wanted = int(str(f.answer).split()[1])
    for words in clauses(tokens(sentence)):
        for at, numbers in _slot_mentions(words):
            if wanted in numbers and f.request in nearest_group(words, at, set(f.requests)):
                return True
        if (
            f.taken_from
            and mentions(words, f.taken_from)
            and {"slot", "slots"} & {w.lower() for w in words}
            and _takes(words, f)
        ):
            return True
    words = tokens(sentence)
    return bool(f.taken_from) and _takes(words, f) and _leaves(words, f.taken_from)


def _slot_mentions(words: list[str]) -> list[tuple[int, set[int]]]:
    """("slots 0 and 1" at i) -> (i, {0, 1}); a range "slots 2-5" lists every slot in it."""
    out = []
    for i, word in enumerate(words):
        if word.lower() in ("slot", "slots"):
            found, j = set(), i + 1
            while j < len(words) and (words[j].isdigit() or words[j] in (",", "and", "-", "–", "to")):
                if words[j].isdigit() and j >= 2 and words[j - 1] in ("-", "–", "to") and words[j - 2].isdigit():
                    found |= set(range(int(words[j - 2]), int(words[j]) + 1))
                elif words[j].isdigit():
                    found.add(int(words[j]))
                j += 1
            out.append((i, found))
    return out


def _takes(words: list[str], f: Facts) -> bool:
    """A verb of taking just after the request ("C takes", "C is admitted") or just before it ("goes to C")."""
    for at in mentions(words, f.request):
        if TAKE & set(words[at + 1 : at + 5]) or TAKE & set(words[max(at - 2, 0) : at]):
            return True
    return False


def _leaves(words: list[str], request: str) -> bool:
    """A verb of leaving just after `request` ("A finishes at step 2 and ...", "A frees slot 0")."""
    return any(LEAVE & set(words[at + 1 : at + 4]) for at in mentions(words, request))


def delivered(sentence: str, f: Facts) -> bool:
    full, generated = f.delivered, f.delivered[f.prompt_len :]
    joined = lambda xs: r"\s*,\s*".join(map(str, xs))  # noqa: E731
    if generated:
        if re.search(rf"(?<![\d.,\s])\s*{joined(full)}(?!\s*,\s*\d)(?!\d)", sentence) or tokens_text(full) in sentence:
            return True
        return bool(
            re.search(rf"(\.\.\.|…|\bprompt\b)[^\d\]]{{0,15}}?{joined(generated)}(?!\s*,\s*\d)(?!\d)", sentence)
        )
    said = re.escape(tokens_text(full))
    if re.search(r"\bprompt (unchanged|back|alone|only)|\b(only|just) (its|the) prompt", sentence):
        return True  # a claim about a request that generates nothing, whoever "it" is
    if not mentions(tokens(sentence), f.request):
        return False
    rest = r"(?!\s*(followed|plus|\+|and|then))"  # "the prompt followed by the generated tokens" is the rule
    return bool(
        re.search(
            rf"\b(receives?|received|gets?|got|delivered|returns?|back)\b.{{0,40}}(prompt\b{rest}|{said})", sentence
        )
    )


def preempted(sentence: str, f: Facts) -> bool:
    if f.answer == "nobody":
        return bool(re.search(r"\b(nobody|no one|no row|none)\b.{0,20}preempt|\bno preemption", sentence, re.I))
    for words in clauses(tokens(sentence)):
        for at, word in enumerate(words):
            if word.lower().startswith("preempt") and f.answer in nearest_group(words, at, set(f.requests)):
                return True
            back = word in ("back", "returns") and "head of the queue" in " ".join(words[at : at + 8])
            if back and f.answer in words[max(at - 5, 0) : at]:
                return True
    return False


def stops(sentence: str, f: Facts) -> bool:
    words = tokens(sentence)
    if not mentions(words, f.request):
        return False
    if RUNS_ON.search(sentence) or NOT_STOPPING.search(sentence) or _stop_claim(words, f):
        return True
    return f.answer == "yes" and any(reason(sentence, f, wanted) for wanted in REASON_WORDS)


def _stop_claim(words: list[str], f: Facts, verbs: set[str] = STOP_VERBS) -> bool:
    """A verb of stopping whose subject is the request or "it" ("B stops", "it must not stop"), not
    the noun ("its stop [7, 8]") nor a verb of something else ("D's prompt ends in 7")."""
    for i, word in enumerate(words):
        if word not in verbs or i + 1 < len(words) and words[i + 1] in ("token", "sequence", "[", "string"):
            continue
        for j in range(i - 1, max(i - 5, -1), -1):
            if words[j] == f.request or words[j].lower() == "it":
                return True
            if words[j].endswith("'s") or words[j] in f.requests or words[j].lower() in NOT_SUBJECTS:
                break
    return False


def reason(sentence: str, f: Facts, wanted: str | None = None) -> bool:
    wanted = wanted or str(f.answer)
    words = tokens(sentence)
    if not mentions(words, f.request):
        return False
    if REASON_VERBS[wanted].search(sentence):
        return True
    if any(w == "reason" and REASON_WORDS[wanted].search(" ".join(words[i + 1 : i + 4])) for i, w in enumerate(words)):
        return True
    return _stop_claim(words, f, FINISH_CLAIM) and bool(REASON_WORDS[wanted].search(sentence))
