"""A scenario's `[[quiz]]` tables: predictions the app asks before it shows a step.

Each table is read and checked like every other field (errors name `quiz[1].request`),
and only names what to ask: `question(...)` in `engine/analysis/quiz.py` computes the
options, the answer and the explanation from the run's log. A question that does not fit
the run (say, the request is not admitted at that step) is a `ScenarioError` naming the
field too, raised when the run's questions are built (`questions`).

    [[quiz]]
    ask = "Which slot does C take?"
    kind = "slot"
    request = "C"
    step = 1          # optional for slot, delivered, reason, preempted
    why = "The lowest free slot is refilled first."   # optional, added to the explanation
    tolerance = 10    # optional, number kinds: answers this far from the log's count are right

A tolerance is said in the question (`tolerance_note`), so the learner knows an estimate is
asked for. When two questions are about the same step, the step's narration, which tells
everything that step did, joins the explanation of the last of them to be asked only (they
are asked earliest step first, then in file order): answering one never answers the other.

The kinds `faster`, `minutes` and `cause` are answered from this machine's speed measurements,
and `cache_share` from a whole trace's stored cache curve, instead of the log
(`engine/lab/measured_quizzes.py`; they take `rows`, `engine` or `capacity`, no step), and are
left out of the scenario while the file they are graded from is missing. The whole-run kinds
(`hit_rate`, `prefill_share`, `ttft_p50`, `ttft_p99`, `peak_waiting`) are priced with the
scenario's cost model (`engine/analysis/run_quiz.py`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis.hardware import cost_model
from ..analysis.quiz import KINDS, Question, QuizError, question
from ..analysis.run_quiz import RunFigures
from .limits import MAX_STEPS
from .measured_quizzes import MEASURED_KINDS, measured_question, measured_subject, measurement_problem
from .toml_reader import ScenarioError, Table

if TYPE_CHECKING:
    import pandas as pd

    from ..analysis.replay import Replay
    from .scenario_types import Scenario

ENGINE_NAME = re.compile(r"r[0-9]{1,9}")  # how the engine names a request without an id
MAX_QUIZZES = 50  # [[quiz]] tables in one scenario
PERCENT_KINDS = ("hit_rate",)  # number kinds answered in percent


@dataclass(frozen=True)
class Quiz:
    ask: str  # the question, as the learner reads it
    kind: str  # one of KINDS
    step: int | None = None  # asked before this step; None: the request's own event decides
    request: str | None = None
    why: str = ""  # the teacher's reason, shown after the answer
    tolerance: int = 0  # a number kind: answers this far from the log's count are right too
    subject: int | str | None = None  # a measured kind's `rows` or `engine` (engine/lab/measured_quizzes.py)


def tolerance_note(tolerance: int, kind: str = "") -> str:
    """The sentence a question with a tolerance ends with (a percent's in points of the log's figure)."""
    if kind in PERCENT_KINDS:
        return f"(An estimate: answers within {tolerance:,} points of the log's figure are right.)"
    return f"(An estimate: answers within {tolerance:,} of the log's count are right.)"


def parse_quizzes(top: Table, named: set[str | None], unnamed: int) -> tuple[Quiz, ...]:
    """The checked `[[quiz]]` tables; `named` holds the requests' own ids, and `unnamed` requests
    are named by the engine (r0, r1, ...)."""
    quizzes = []
    for t in top.tables("quiz", MAX_QUIZZES) if top.has("quiz") else []:
        kind = t.str("kind", choices=(*KINDS, *MEASURED_KINDS))
        if kind in MEASURED_KINDS:  # left out while its measurements are missing (the lesson says so)
            subject, ask, why = measured_subject(t, kind), t.str("ask"), t.str("why", "")
            quizzes += [] if measurement_problem(kind) else [Quiz(ask, kind, 0, None, why, subject=subject)]
            t.check_no_unknown_keys()
            continue
        step = t.int("step", None, minimum=0, maximum=MAX_STEPS)
        if step is None and KINDS[kind].default_step is None:
            if not KINDS[kind].whole_run:
                raise t.fail("step", f"is required for kind {kind!r}")
            step = 0
        request = t.str("request") if KINDS[kind].request else None
        if request is not None and not (request in named or unnamed and ENGINE_NAME.fullmatch(request)):
            raise t.fail("request", f"is not a request of this scenario (its ids: {_ids(named, unnamed)})", request)
        ask, why = t.str("ask"), t.str("why", "")
        tolerance = t.int("tolerance", 0, minimum=0, maximum=MAX_STEPS)
        if tolerance and not KINDS[kind].numeric:
            raise t.fail("tolerance", f"is for the number kinds only, not {kind!r}", tolerance)
        if tolerance:
            ask = f"{ask} {tolerance_note(tolerance, kind)}"
        quizzes.append(Quiz(ask, kind, step, request, why, tolerance))
        t.check_no_unknown_keys()
    return tuple(quizzes)


def questions(scenario: Scenario, replay: Replay, steps: pd.DataFrame | None = None) -> list[Question]:
    """The scenario's questions about this run, in file order; ScenarioError naming `quiz[i].field`. The
    whole-run kinds price the run with the scenario's cost model (`steps`: its step_metrics, if made already)."""
    figures = RunFigures(replay.log, cost_model(scenario.cost), given_steps=steps)
    out = []
    for i, quiz in enumerate(scenario.quizzes):
        try:
            if quiz.kind in MEASURED_KINDS:
                out.append(measured_question(quiz.kind, quiz.subject))
            else:
                out.append(question(replay, quiz.kind, quiz.step, quiz.request, quiz.tolerance, figures))
        except QuizError as exc:
            raise ScenarioError(f"{scenario.source}: quiz[{i}].{exc.field}: {exc}") from None
    last_asked = {q.step: i for i, q in enumerate(out)}  # per step, the question asked last (file order)
    return [q if last_asked[q.step] == i else _without_narration(q) for i, q in enumerate(out)]


def _without_narration(q: Question) -> Question:
    return dataclasses.replace(q, explanation=q.explanation[:1])


def _ids(named: set[str | None], unnamed: int) -> str:
    shown = sorted((i for i in named if i is not None), key=lambda i: (len(i), i))[:8]
    return ", ".join(shown + (["r0, r1, ..."] if unnamed else []))
