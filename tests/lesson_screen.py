"""What a learner has on screen when a lesson asks a prediction, as plain texts (tests/test_spoilers.py).

Before a prediction about step s is answered, the page shows: the chapter's intro, the lesson's
text and its table of requests, the "How real servers differ" callouts, the stage's caption or
generated narration of every step before s (the stage can be scrubbed to any of them), the
question itself, and the explanations (the question, the fact, the quiz's why and the step's
narration) of the lesson's predictions asked before it; the fact and the narration tell what
that question's step did, so they are marked with it, like the stage's texts. The app asks them earliest step first,
then in file order. The reveal, the answer options and the tabs that draw the whole run are not
in it: the reveal waits for the last prediction, the options are the choices by design, and the
tabs wait for "Show the whole run anyway".
"""

from __future__ import annotations

from dataclasses import dataclass

from cblab.ui.frame.lesson_view import requests_table
from engine.analysis.narration import narrate
from engine.analysis.quiz import Question
from engine.analysis.replay import Replay
from engine.lab.course import load_course
from engine.lab.quizzes import Quiz, questions
from engine.lab.scenario import Scenario, resolve_scenario
from engine.lab.simulate import simulate


@dataclass(frozen=True)
class Shown:
    """One text on screen; `step` is the stage step it narrates (None: the lesson, a question, an answer)."""

    text: str
    step: int | None = None


@dataclass(frozen=True)
class Asked:
    """One prediction as the learner meets it."""

    lesson: str  # "1.2"
    n: int  # its place in the file, from 1
    quiz: Quiz
    question: Question
    screen: tuple[Shown, ...]  # every text on screen while it is open
    replay: Replay


def predictions(name: str, scenario: Scenario | None = None) -> list[Asked]:
    """The predictions of lesson `name` in the order the app asks them, each with its screen;
    `scenario` replaces the lesson's file (a planted spoiler)."""
    course = load_course()
    scenario = scenario or resolve_scenario(name)
    replay = Replay(simulate(scenario))
    asked = questions(scenario, replay)
    order = sorted(range(len(asked)), key=lambda i: (asked[i].step, i))
    setup = [course.chapter_of(name).intro, scenario.lesson, *table_text(scenario)]
    setup += [callout.text for callout in scenario.real_servers]
    busy = [int(step) for step in replay.busy_steps()]
    out, earlier = [], []
    for i in order:
        quiz, q = scenario.quizzes[i], asked[i]
        stage = [Shown(text, step) for step in busy if step < q.step for text in said_at(scenario, replay, step)]
        screen = (*map(Shown, setup), *earlier, *stage, Shown(quiz.ask))
        out.append(Asked(course.lesson(name).number, i + 1, quiz, q, screen, replay))
        earlier += [Shown(quiz.ask), *(Shown(text, q.step) for text in q.explanation), Shown(quiz.why)]
    return out


def said_at(scenario: Scenario, replay: Replay, step: int) -> list[str]:
    """The stage's text at `step`: its caption, else its generated narration."""
    if step in scenario.captions:
        return [scenario.captions[step]]
    return narrate(replay, step, replay.log.vocabulary)


def table_text(scenario: Scenario) -> list[str]:
    """The lesson's table of requests, one sentence a row ("Request A: prompt [1], max_tokens 2.")."""
    table = requests_table(scenario)
    if table is None:
        return []
    return [
        f"Request {row['request']}: " + ", ".join(f"{c} {v}" for c, v in row.items() if c != "request") + "."
        for row in table
    ]
