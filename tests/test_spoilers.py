"""No prediction is given away before it is answered: every one of every lesson, read as the learner
sees it (tests/lesson_screen.py), against a detector that looks for the claim, not only the answer's
string (tests/spoilers.py). The spoilers the course once had are planted back and must be caught,
so the detector stays proven; its rules are pinned on small sentences, both ways."""

import dataclasses
from functools import cache

import pytest

from engine.lab.course import load_course
from engine.lab.real_servers import Callout
from engine.lab.scenario import resolve_scenario
from tests.lesson_screen import Asked, predictions
from tests.spoiler_plants import PLANTS, SAME_STEP, Plant
from tests.spoiler_rules import Facts, delivered, preempted, reason, slot, stops
from tests.spoiler_text import sentences
from tests.spoilers import RULES, spoilers

COURSE = load_course()
ALL = [(lesson.name, n) for lesson in COURSE.lessons for n in range(1, lesson.quizzes + 1)]


@cache
def asked(name: str) -> dict[int, Asked]:
    return {a.n: a for a in predictions(name)}


@pytest.mark.parametrize(("name", "n"), ALL, ids=[f"{COURSE.lesson(name).number}-q{n}" for name, n in ALL])
def test_no_prediction_is_given_away_by_what_is_on_screen_before_it(name, n):
    prediction = asked(name)[n]
    assert spoilers(prediction) == [], f"lesson {prediction.lesson}: {prediction.quiz.ask}"


def planted(p: Plant):
    name = COURSE.lesson(p.lesson).name
    scenario = resolve_scenario(name)
    if p.where == "lesson":
        return name, dataclasses.replace(scenario, lesson=scenario.lesson + "\n\n" + p.text)
    if p.where == "callout":
        return name, dataclasses.replace(
            scenario, real_servers=(*scenario.real_servers, Callout(p.text, "https://x.org"))
        )
    n = int(p.where.split()[1])
    quizzes = list(scenario.quizzes)
    quizzes[n - 1] = dataclasses.replace(quizzes[n - 1], ask=p.text, kind=p.kind or quizzes[n - 1].kind)
    return name, dataclasses.replace(scenario, quizzes=tuple(quizzes))


@pytest.mark.parametrize("plant", PLANTS, ids=[f"{p.lesson}-{p.where}-{sorted(p.spoils)}" for p in PLANTS])
def test_a_spoiler_the_course_once_had_is_caught_when_planted_back(plant):
    name, scenario = planted(plant)
    caught = {a.n for a in predictions(name, scenario) if spoilers(a)}
    assert caught == plant.spoils


@pytest.mark.parametrize(("lesson", "n"), SAME_STEP)
def test_a_step_s_narration_would_answer_a_second_prediction_about_that_step(monkeypatch, lesson, n):
    """What `questions` prevents by keeping a step's narration for the last question about it."""
    monkeypatch.setattr("engine.lab.quizzes._without_narration", lambda q: q)
    caught = {a.n for a in predictions(COURSE.lesson(lesson).name) if spoilers(a)}
    assert caught == {n}


def facts(answer, request="C", step=1, **more) -> Facts:
    return Facts(request, answer, step, frozenset("ABCDE"), **more)


@pytest.mark.parametrize(
    ("sentence", "spoils"),
    [
        ("C takes slot 0.", True),
        ("Slot 0 goes to C at once.", True),
        ("Requests C and D are admitted into slots 0 and 1 from the queue.", True),
        ("A finishes after step 0, and C takes its slot from the queue.", True),
        ("A finishes at step 2; C is admitted at step 3.", True),
        ("A and B take slots 0 and 1; C and D wait.", False),
        ("C waits while A and B hold slots 0 and 1.", False),
        ("A has finished. Which slot does C take?", False),
    ],
)
def test_a_slot_is_given_away_by_the_request_with_its_slot_or_with_the_request_it_follows(sentence, spoils):
    assert any(slot(s, facts("slot 0", taken_from="A")) for s in sentences(sentence)) == spoils


@pytest.mark.parametrize(
    ("sentence", "spoils"),
    [
        ("A's callback receives [9, 5, 5, 0].", True),
        ("It is delivered as 9, 5, 5, 0.", True),
        ("A row that emits 5, 5, 0 is delivered as [...prompt, 5, 5, 0].", True),
        ("The callback gets [..., 5, 5, 0].", True),
        ("The callback gets [*prompt, 5, 5, 0].", True),
        ("It gets its prompt + 5, 5, 0.", True),
        ("A emits 5, 5, 0.", False),
        ("B receives [0, 0, 4, 0].", False),
        ("A's callback receives [9, 5, 5, 0, 6].", False),
    ],
)
def test_a_delivery_is_given_away_by_its_tokens_in_any_spelling(sentence, spoils):
    assert delivered(sentence, facts("[9, 5, 5, 0]", "A", delivered=[9, 5, 5, 0], prompt_len=1)) == spoils


@pytest.mark.parametrize(
    ("sentence", "spoils"),
    [
        ("A's callback gets the prompt.", True),
        ("This lab accepts it and delivers the prompt unchanged.", True),
        ("A callback receives the prompt followed by the generated tokens; A has max_tokens = 0.", False),
        ("A cancelled request is delivered with what it has: the prompt plus any tokens so far.", False),
    ],
)
def test_a_request_that_generates_nothing_is_given_away_by_its_callback_getting_the_prompt(sentence, spoils):
    assert delivered(sentence, facts("[1, 2, 3]", "A", delivered=[1, 2, 3], prompt_len=3)) == spoils


@pytest.mark.parametrize(
    ("sentence", "answer", "spoils"),
    [
        ("The newest running row, C, is preempted.", "C", True),
        ("B is preempted too.", "B", True),
        ("C goes back to the head of the queue.", "C", True),
        ("C was preempted, so B keeps running.", "B", False),
        ("The most recently admitted running row is preempted.", "C", False),
        ("Nobody is preempted at this step.", "nobody", True),
    ],
)
def test_a_preemption_is_given_away_by_the_victim_named_with_preempt(sentence, answer, spoils):
    assert preempted(sentence, facts(answer, None)) == spoils


@pytest.mark.parametrize(
    ("sentence", "answer", "spoils"),
    [
        ("B must NOT stop, because the 7 belonged to A.", "no", True),
        ("B's prompt is full of zeros, yet it runs until it generates a 0 itself.", "no", True),
        ("D: the first 8 does not complete [7, 8].", "no", True),
        ("B stops at step 3.", "yes", True),
        ("B: a matcher that resets on a mismatch misses it.", "yes", True),
        ("B's stop is [1, 1, 2]; so far it generated 1, 1, 1.", "yes", False),
        ("B's prompt ends in 7 and its stop is [7, 8].", "no", False),
    ],
)
def test_a_stop_is_given_away_by_a_claim_that_the_request_stops_or_not(sentence, answer, spoils):
    assert stops(sentence, facts(answer, "B" if "B" in sentence else "D")) == spoils


@pytest.mark.parametrize(
    ("sentence", "answer", "spoils"),
    [
        ("C ends with reason stop_token.", "stop_token", True),
        ("A reaches max_tokens = 3.", "max_tokens", True),
        ("A is cancelled at step 3.", "cancelled", True),
        ("Slot 1: request B emitted 7, completing stop sequence [6, 7]; it is evicted.", "stop_sequence", True),
        ("B's third token completes its stop [6, 7], and max_tokens is 3.", "stop_sequence", False),
        ("C's second token, 0, is the stop token, the end of its stop [5, 0].", "stop_token", False),
    ],
)
def test_a_reason_is_given_away_by_the_request_named_with_why_it_finishes(sentence, answer, spoils):
    request = next(r for r in "ABC" if r in sentence.replace("request", ""))
    assert reason(sentence, facts(answer, request)) == spoils


@pytest.mark.parametrize(
    ("sentence", "kind", "answer", "narrated", "spoils"),
    [
        ("The model is called with 1 row.", "rows", 1, None, True),
        ("Every step makes one call whose batch holds both rows.", "rows", 2, None, True),
        ("The last step runs a batch of one row.", "rows", 1, None, True),
        ("16 requests still wait.", "waiting", 16, None, True),
        ("17 wait at step 2, 66 at step 4.", "waiting", 66, None, True),
        ("The model is called with 3 rows.", "rows", 3, 2, False),  # what an earlier step did
        ("From now on the model is called with 3 rows.", "rows", 3, 2, True),
        ("The model is called with 3 rows.", "rows", 3, 4, True),  # the question's own step
        ("Requests A, B are admitted into slots 0 and 1 from the queue.", "waiting", 1, None, False),
        ("A KV pool of 24 blocks of 4 tokens.", "blocks", 24, None, False),
        ("C holds 4 blocks.", "blocks", 4, None, True),
        ("B takes block 4.", "blocks", 4, None, False),
        ("Static takes 14 steps.", "steps", 14, None, True),
        ("The run ends at step 13.", "steps", 14, None, True),
        ("It runs over steps 0-13.", "steps", 14, None, True),
        ("L wants 14 tokens, one a step.", "steps", 14, None, False),
        ("C finds 8 tokens in the prefix cache.", "cached", 8, None, True),
        ("C hits 8 cached tokens.", "cached", 8, None, True),
        ("A finds 8 tokens in the prefix cache.", "cached", 8, None, False),  # another request
        ("C computes 6 tokens.", "computed", 6, None, True),
        ("C's prefill is 6 tokens long.", "computed", 6, None, True),
        ("6 rows are preempted at step 4.", "preemptions", 6, None, True),
        ("Step 4 makes 6 preemptions.", "preemptions", 6, None, True),
        ("12 rows run at once.", "preemptions", 12, None, False),
    ],
)
def test_a_number_is_given_away_next_to_the_question_s_noun(sentence, kind, answer, narrated, spoils):
    f = dataclasses.replace(facts(answer, "C", step=4), narrated_step=narrated)
    assert RULES[kind](sentence, f) == spoils


def test_a_question_s_own_text_is_on_its_screen_and_the_reveal_is_not():
    first, second = (asked("part2-slot-refill")[n] for n in (1, 2))
    texts = [shown.text for shown in second.screen]
    assert texts[-1] == second.quiz.ask and first.quiz.ask in texts  # and the one asked before it, answered
    assert resolve_scenario("part2-slot-refill").reveal not in texts
    assert {s.step for s in second.screen} == {None, 0, 1, 2}  # the stage stops before step 3
