"""Plain words on screen: no text a learner reads (a lesson's title, text, reveal, captions and callouts,
its questions and their explanations, a chapter's title and intro, the stage's narration) uses the
project's own jargon: the problem statements' file names ("seed 000"), "the seeds", "the zoo", or a
scenario's file name where a lesson number belongs ("the slot-reuse-state-reset lesson"). A file name
inside a command (`python -m engine run poisson-arrivals`) is fine: it is what to type."""

import re

import pytest

from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.lab.course import load_course
from engine.lab.quizzes import questions
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate

COURSE = load_course()
SLUGS = [lesson.name for lesson in COURSE.lessons]
FILE_NAMES = [name for name in SLUGS if "-" in name]  # (a one-word name, such as "streaming", is a plain word)
JARGON = re.compile(r"\bseed 0\d\d\b|\bthe seeds\b|\bseeds'|\bzoo\b|\b(" + "|".join(FILE_NAMES) + r")\b", re.I)
MAX_NARRATED_STEPS = 400  # the narration of a long run repeats itself: its first steps show every sentence kind


def jargon(text: str) -> list[str]:
    """The jargon in `text`, outside `code`."""
    return [m.group(0) for m in JARGON.finditer(re.sub(r"`[^`]*`", "", text))]


def learner_texts(name: str) -> list[str]:
    scenario = resolve_scenario(name)
    chapter = COURSE.chapter_of(name)
    replay = Replay(simulate(scenario))
    texts = [scenario.title, scenario.lesson, scenario.reveal, chapter.title, chapter.intro]
    texts += list(scenario.captions.values()) + [c.text for c in scenario.real_servers]
    texts += [text for quiz in scenario.quizzes for text in (quiz.ask, quiz.why)]
    texts += [text for q in questions(scenario, replay) for text in q.explanation]
    steps = [int(step) for step in replay.busy_steps()[:MAX_NARRATED_STEPS]]
    return texts + [sentence for step in steps for sentence in narrate(replay, step, replay.log.vocabulary)]


@pytest.mark.parametrize("name", SLUGS)
def test_a_lesson_speaks_to_the_learner_in_plain_words(name):
    found = {word for text in learner_texts(name) for word in jargon(text)}
    assert not found, f"{name}: {sorted(found)}"


@pytest.mark.parametrize(
    "text",
    ["(seed 004)", "the zoo's crossed-results engine", "The seeds' Part 2.", "(the slot-reuse-state-reset lesson)"],
)
def test_the_jargon_check_finds_what_the_course_once_said(text):
    assert jargon(text)


def test_a_command_may_name_a_scenario_file():
    assert jargon("run `python -m engine run poisson-arrivals --batch-size 32`") == []
