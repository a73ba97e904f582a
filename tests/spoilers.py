"""A spoiler detector: the sentences on screen that give a prediction's answer away.

It looks for the claim, in the words a lesson would use, not only for the answer's literal
string. Per kind of question (each rule reads one declarative sentence, or one clause of it;
a question "...?" asks and claims nothing):

- slot: the request named with its slot ("C takes slot 0", "slot 0 goes to C"), or with the
  request whose slot it takes and a verb of taking ("A finishes, and C takes its slot"; "A
  finishes at step 2; D is admitted at step 3");
- delivered: the token list in any common spelling ("[9, 5, 5, 0]", "9, 5, 5, 0", "[..., 5, 5,
  0]", "[...prompt, 5, 5, 0]", "prompt + 5, 5, 0"), or, for a request that generates nothing,
  its callback said to get its prompt ("A's callback gets the prompt", "delivers the prompt
  unchanged");
- preempted: the victim nearest to "preempt" (or to "back to the head of the queue") in a
  clause; for "nobody", a claim that no one is preempted;
- stops: the request named with a claim that it stops or does not ("B must not stop", "yet it
  runs until", "a matcher that resets misses it");
- reason: the request named with the reason it finishes ("C ends with reason stop_token", "A
  reaches max_tokens", "A is cancelled");
- the whole run's figures and the stored cache curve: tests/spoiler_figures.py;
- number kinds: the answer (digits or words: "both", "one row") within a few words of the
  question's noun ("1 row", "16 still wait", "holds 4 blocks"; for blocks, in a sentence that
  names the request), or anywhere in a sentence that names the question's step and noun ("66
  wait at step 250"). The stage's narration of an earlier step counts its own step ("The model
  is called with 3 rows" at step 2 is what step 2 did), so there a count gives the answer away
  only in a sentence that names the question's step or looks ahead ("every step", "from now on").
"""

from __future__ import annotations

import dataclasses

from engine.analysis.run_quiz import RUN_ASKERS
from tests import measured_spoilers, spoiler_figures
from tests.lesson_screen import Asked
from tests.spoiler_counts import NOUNS, count, steps
from tests.spoiler_rules import Facts, delivered, preempted, reason, slot, stops
from tests.spoiler_text import sentences

RULES = {
    "slot": slot,
    "delivered": delivered,
    "preempted": preempted,
    "stops": stops,
    "reason": reason,
    "steps": steps,
    "blocks": lambda s, f: count(s, f, NOUNS["blocks"], per_request=True),
    **{kind: (lambda s, f, noun=NOUNS[kind]: count(s, f, noun, per_request=True)) for kind in ("cached", "computed")},
    "preemptions": lambda s, f: count(s, f, NOUNS["preemptions"]),
    **{kind: (lambda s, f, noun=NOUNS[kind]: count(s, f, noun)) for kind in ("admitted", "waiting", "rows")},
    **{kind: getattr(measured_spoilers, kind) for kind in ("faster", "minutes", "cause")},
    **{kind: getattr(spoiler_figures, kind) for kind in (*RUN_ASKERS, "cache_share")},
}


def facts(asked: Asked) -> Facts:
    """The answer of `asked`, from its run's log."""
    replay, quiz, q = asked.replay, asked.quiz, asked.question
    rid = quiz.request
    requests = frozenset(info.request_id for info in replay.log.requests)
    if rid is None:
        return Facts(None, q.answer, q.step, requests, tolerance=q.tolerance)
    before = None
    if quiz.kind == "slot":
        taken = int(str(q.answer).split()[1])
        admits = [e for e in replay.log if e.kind == "admit" and e.slot == taken and e.step < q.step]
        before = admits[-1].request_id if admits else None
    return Facts(rid, q.answer, q.step, requests, replay.outputs[rid], replay.prompt_len[rid], before)


def spoilers(asked: Asked) -> list[str]:
    """The sentences on `asked`'s screen that give its answer away (empty: none)."""
    rule, known = RULES[asked.quiz.kind], facts(asked)
    found = []
    for shown in asked.screen:
        for sentence in sentences(shown.text):
            if rule(sentence, known if shown.step is None else _narrating(known, shown.step)):
                found.append(sentence)
    return found


def _narrating(f: Facts, step: int) -> Facts:
    return dataclasses.replace(f, narrated_step=step)
