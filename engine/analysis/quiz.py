"""Predictions: a lesson's questions, whose answers and options are computed from the run's log.

A scenario's `[[quiz]]` table names a kind, a step and (most kinds) a request; this module
turns it into a `Question` by reading the event log (`Replay`), never from text typed in a
lesson, so an answer cannot drift from what the engine does:

    question(replay, "slot", step=1, request="C")  ->  options slot 0, slot 1; answer "slot 0"

Choice kinds (a radio): `slot` (the slot a request is admitted into), `delivered` (what its
callback receives), `stops` (does it finish at this step: yes/no), `reason` (its finish
reason), `preempted` (who is preempted at this step). Number kinds: `blocks` (KV blocks a
request holds at the step), `admitted` (requests admitted at the step), `waiting` (the queue
after the step's admissions), `rows` (rows sent to the model), `cached` (a request's tokens
found in the prefix cache when it is admitted), `computed` (the tokens its prefill computes
at the step), `preemptions` (rows preempted at the step: by default the first step that
preempts) and `steps` (the whole run's length). The kinds about the whole run's figures
(`hit_rate`, `prefill_share`, `ttft_p50`, `ttft_p99`, `peak_waiting`) are asked in
`engine/analysis/run_quiz.py`, with the run's cost model. A kind that
reads a request's admission, eviction or preemption may leave `step` out: the step is then
that event's. The explanation is the fact, then the step's narration.

A number that cannot be reasoned out exactly (the queue of a run with random arrivals) takes
a `tolerance`: any answer within it of the log's count is right, and the fact says the range.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..core.log.events import EventKind
from .metrics import CostModel
from .narration import narrate, tokens_text
from .replay import Replay
from .run_quiz import BANDS, NUMBER_KINDS, RUN_ASKERS, EdgeError, RunFigures
from .wording import names

REASONS = ("stop_token", "stop_sequence", "max_tokens", "cancelled")
MAX_CHOICES = 8  # options a multiple-choice question may offer
NOBODY = "nobody"


@dataclass(frozen=True)
class Kind:
    request: bool  # the question is about one request
    default_step: EventKind | None  # the request's event whose step is the default (None: `step` required)
    numeric: bool = False
    whole_run: bool = False  # about the whole run: asked before step 0 unless the quiz gives a step


KINDS = {
    "slot": Kind(True, EventKind.ADMIT),
    "delivered": Kind(True, EventKind.EVICT),
    "stops": Kind(True, None),
    "reason": Kind(True, EventKind.EVICT),
    "preempted": Kind(False, EventKind.PREEMPT),
    "blocks": Kind(True, None, numeric=True),
    "admitted": Kind(False, None, numeric=True),
    "waiting": Kind(False, None, numeric=True),
    "rows": Kind(False, None, numeric=True),
    "cached": Kind(True, EventKind.ADMIT, numeric=True),
    "computed": Kind(True, EventKind.ADMIT, numeric=True),
    "steps": Kind(False, None, numeric=True, whole_run=True),
    "preemptions": Kind(False, EventKind.PREEMPT, numeric=True),
    **{kind: Kind(False, None, numeric=kind in NUMBER_KINDS, whole_run=True) for kind in RUN_ASKERS},
}


class QuizError(ValueError):
    """A question that does not fit this run; `field` names the quiz field to change."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Question:
    step: int  # asked before this step is shown
    options: tuple[str, ...] | None  # None: the answer is a number
    answer: str | int
    explanation: tuple[str, ...]  # the fact, then the step's narration
    tolerance: int = 0  # a number kind: answers this far from `answer` are right too


def question(
    replay: Replay,
    kind: str,
    step: int | None = None,
    request: str | None = None,
    tolerance: int = 0,
    figures: RunFigures | None = None,
) -> Question:
    """The question of this kind about `request` at `step`, answered from the log (QuizError if it does not fit);
    `figures` prices the run for the whole-run kinds (by default with metrics' default cost model)."""
    spec = KINDS[kind]
    if tolerance and not spec.numeric:
        raise QuizError("tolerance", f"is for the number kinds only, not {kind!r}")
    if spec.request and request not in replay.log.request_index:
        raise QuizError("request", f"request {request!r} is not in this run")
    if step is None:
        step = 0 if spec.whole_run else _event_step(replay, spec.default_step, request)
    if not 0 <= step < len(replay):
        raise QuizError("step", f"step {step} is not in this run (its steps: 0..{len(replay) - 1})")
    if kind in RUN_ASKERS:
        try:
            options, answer, fact = RUN_ASKERS[kind](figures or RunFigures(replay.log, CostModel()))
        except EdgeError as exc:
            raise QuizError("kind", str(exc)) from None
    else:
        options, answer, fact = ASKERS[kind](replay, step, request)
    if options is not None and answer not in options:
        options = (*options, answer)
    if tolerance:
        fact = f"{fact[:-1]} (answers from {max(answer - tolerance, 0):,} to {answer + tolerance:,} are right)."
    said = () if spec.whole_run else tuple(narrate(replay, step, replay.log.vocabulary))
    return Question(step, _shuffled(options), answer, (fact, *said), tolerance)


def grade(q: Question, given: object) -> bool:
    if q.options is None:
        return type(given) in (int, float) and abs(given - q.answer) <= q.tolerance
    return given == q.answer


def _event_step(replay: Replay, kind: EventKind | None, request: str | None) -> int:
    log = replay.log
    chosen = np.frombuffer(log.kind, dtype=np.int8) == kind
    if request is not None:
        chosen &= np.frombuffer(log.request, dtype=np.int32) == log.request_index[request]
    found = np.flatnonzero(chosen)
    if kind is None or not len(found):
        what = "give the step" if kind is None else f"nobody's {kind.label} is in this run: give the step"
        raise QuizError("step", what if request is None else f"{what} (request {request})")
    return int(log.step[found[0]])


def _events(replay: Replay, step: int, kind: str, request: str | None = None) -> list:
    log = replay.log
    found = (log[i] for i in log.step_range(step))
    return [e for e in found if e.kind == kind and (request is None or e.request_id == request)]


def _slot(replay: Replay, step: int, request: str):
    admits = _events(replay, step, "admit", request)
    if not admits:
        raise QuizError("step", f"request {request} is not admitted at step {step}")
    size = replay.log.config.batch_size
    return (
        tuple(f"slot {k}" for k in range(min(size, MAX_CHOICES))),
        f"slot {admits[0].slot}",
        (f"Request {request} is admitted into slot {admits[0].slot}."),
    )


def _delivered(replay: Replay, step: int, request: str):
    if not _events(replay, step, "evict", request):
        raise QuizError("step", f"request {request} is not delivered at step {step}")
    full, prompt = replay.outputs[request], replay.prompt_len[request]
    texts = [tokens_text(full), tokens_text(full[prompt:]), tokens_text(full[:-1]), tokens_text(full[:prompt])]
    options = tuple(dict.fromkeys(texts))
    return options, tokens_text(full), f"Request {request}'s callback receives {tokens_text(full)}."


def _stops(replay: Replay, step: int, request: str):
    evicted = _events(replay, step, "evict", request)
    if evicted:
        return ("yes", "no"), "yes", f"Yes: request {request} finishes at step {step} ({evicted[0].reason})."
    return ("yes", "no"), "no", f"No: request {request} does not finish at step {step}."


def _reason(replay: Replay, step: int, request: str):
    evicted = _events(replay, step, "evict", request)
    if not evicted:
        raise QuizError("step", f"request {request} does not finish at step {step}")
    return REASONS, evicted[0].reason, f"Request {request} finishes with reason {evicted[0].reason}."


def _preempted(replay: Replay, step: int, _request):
    before = replay[step - 1].slots if step else ()
    running = [row.request_id for row in before if row is not None and row.finish_reason is None]
    if len(running) >= MAX_CHOICES:
        raise QuizError("kind", f"{len(running)} rows run before step {step}: too many for a multiple choice")
    preempted = [e.request_id for e in _events(replay, step, "preempt")]
    answer = names(preempted) if preempted else NOBODY
    return (*running, NOBODY), answer, f"Preempted at step {step}: {answer}."


def _blocks(replay: Replay, step: int, request: str):
    if replay.log.config.kv_blocks is None:
        raise QuizError("kind", "'blocks' needs a KV pool ([engine.kv] blocks)")
    row = next((row for row in replay[step].slots if row is not None and row.request_id == request), None)
    held = len(row.blocks) if row is not None else 0
    return None, held, f"Request {request} holds {held} {'block' if held == 1 else 'blocks'} at step {step}."


def _admitted(replay: Replay, step: int, _request):
    count = len(_events(replay, step, "admit"))
    return None, count, f"{count} admitted at step {step}."


def _waiting(replay: Replay, step: int, _request):
    count = len(replay[step].waiting)
    return None, count, f"{count} waiting after the admissions of step {step}."


def _rows(replay: Replay, step: int, _request):
    count = replay[step].rows_sent
    return None, count, f"The model gets {count} {'row' if count == 1 else 'rows'} at step {step}."


def _cached(replay: Replay, step: int, request: str):
    if not replay.log.config.prefix_caching:
        raise QuizError("kind", "'cached' needs prefix caching ([engine.kv] prefix_caching = true)")
    _admitted_at(replay, step, request)
    hits = len(_events(replay, step, "prefix_hit", request))
    tokens = hits * replay.log.config.block_size
    found = f"{hits} cached {'block' if hits == 1 else 'blocks'}, {tokens:,} tokens" if hits else "no cached block"
    return None, tokens, f"Request {request} is admitted at step {step} and finds {found}."


def _computed(replay: Replay, step: int, request: str):
    _admitted_at(replay, step, request)
    prefills = _events(replay, step, "prefill", request)
    if not prefills:
        raise QuizError("kind", "'computed' needs a KV pool or a token budget (they log each prefill)")
    tokens = prefills[0].tokens
    what = f"{tokens:,} {'token' if tokens == 1 else 'tokens'}"
    return None, tokens, f"Request {request}'s prefill computes {what} at step {step}."


def _admitted_at(replay: Replay, step: int, request: str) -> None:
    if not _events(replay, step, "admit", request):
        raise QuizError("step", f"request {request} is not admitted at step {step}")


def _preemptions(replay: Replay, step: int, _request):
    count = len(_events(replay, step, "preempt"))
    return None, count, f"{count} {'row is' if count == 1 else 'rows are'} preempted at step {step}."


def _steps(replay: Replay, _step, _request):
    return None, len(replay), f"The run takes {len(replay):,} steps (0 to {len(replay) - 1:,})."


ASKERS = {
    "slot": _slot,
    "delivered": _delivered,
    "stops": _stops,
    "reason": _reason,
    "preempted": _preempted,
    "blocks": _blocks,
    "admitted": _admitted,
    "waiting": _waiting,
    "rows": _rows,
    "cached": _cached,
    "computed": _computed,
    "steps": _steps,
    "preemptions": _preemptions,
}


def _shuffled(options: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The options in a fixed order that does not give the answer away (by a hash of each text)."""
    if options is None or options in (("yes", "no"), REASONS, *BANDS) or all(o.startswith("slot ") for o in options):
        return options
    return tuple(sorted(options, key=lambda o: hashlib.sha256(o.encode()).hexdigest()))
