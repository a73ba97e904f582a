"""A request's life: the seed's `Request` record, finish reasons, and running state.

`Sequence` is what a slot holds. Everything a request needs while it runs lives here
(its tokens, its budget, its stop-matching state), so nothing can leak into the next
request that takes the same slot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from .stops import StopMatcher, stop_matcher
from .validation import MAX_STEP, check_callable, check_int, check_stop_sequences, check_tokens


class FinishReason(IntEnum):
    """Why a request left the engine. Values are stored in the event log."""

    STOP_TOKEN = 0
    STOP_SEQUENCE = 1
    MAX_TOKENS = 2
    CANCELLED = 3
    ERROR = 4

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Request:
    """The second seed's request: an id, a prompt and a budget of generated tokens."""

    request_id: str
    prompt: list[int]
    max_tokens: int


@dataclass(eq=False, slots=True)
class Sequence:
    """One request inside the engine, from submission to delivery."""

    request_id: str
    tokens: list[int]  # prompt + generated; the engine's own copy, sent to the model as is
    prompt_len: int
    max_tokens: int  # generated tokens only
    callback: Callable[[list[int]], object] | None
    on_token: Callable[[int], object] | None
    stops: StopMatcher | None  # None: no stop sequences
    stop_sequences: tuple[tuple[int, ...], ...]
    arrival_step: int
    order: int  # submission order, breaks ties between equal arrival steps
    end: int  # len(tokens) at which the row stops: prompt + max_tokens (the zoo's variants change it)
    stop_state: int = 0  # automaton node in `stops`
    log_index: int = -1  # row in the event log's request table, set on arrival
    slot: int | None = None
    cancel_requested: bool = False
    finish_reason: FinishReason | None = field(default=None)

    @property
    def generated(self) -> int:
        return len(self.tokens) - self.prompt_len


_last_compiled: list = [None, None, None]  # stops, matcher factory, automaton: the previous request's


def _compiled(stops: tuple, matcher) -> StopMatcher:
    """The automaton for `stops`, reused without hashing when a request repeats the previous stops."""
    if stops is not _last_compiled[0] or matcher is not _last_compiled[1]:
        _last_compiled[:] = [stops, matcher, matcher(stops)]
    return _last_compiled[2]


def new_sequence(
    request_id,
    prompt_tokens,
    max_tokens,
    callback,
    stop_sequences,
    on_token,
    arrival_step,
    *,
    order: int,
    now: int,
    matcher=stop_matcher,
) -> Sequence:
    """Check a submission's arguments (each error names its field) and build its state."""
    prompt = check_tokens("prompt_tokens", prompt_tokens)
    check_int("max_tokens", max_tokens, minimum=0)
    check_callable("callback", callback)
    check_callable("on_token", on_token)
    stops = check_stop_sequences("stop_sequences", stop_sequences)
    if arrival_step is not None:
        check_int("arrival_step", arrival_step, minimum=0, maximum=MAX_STEP)
    return Sequence(
        request_id,
        prompt,
        len(prompt),
        max_tokens,
        callback,
        on_token,
        _compiled(stops, matcher) if stops else None,
        stops,
        arrival_step=max(arrival_step or 0, now),  # a past arrival step means "now"
        order=order,
        end=len(prompt) + max_tokens,
    )
