"""A request's life: the seed's `Request` record, finish reasons, and running state.

`Sequence` is what a slot holds. Everything a request needs while it runs lives here
(its tokens, its budget, its stop-matching state), so nothing can leak into the next
request that takes the same slot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from .block_prompt import BlockPrompt
from .stops import NO_MATCH, StopMatcher, stop_matcher
from .validation import (
    INT64_MAX,
    INT64_MIN,
    MAX_ARRIVAL_STEP,
    check_callable,
    check_int,
    check_stop_sequences,
    check_tokens,
)


class Status(IntEnum):
    """Where a request is. Ordered: every state after WAITING has left the queue."""

    PENDING = 0  # submitted, its arrival step not reached yet
    WAITING = 1  # in the FIFO queue
    RUNNING = 2  # holds a slot
    FINISHED = 3  # evicted (or finished without a slot); its callback is delivered or queued


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
    # prompt + generated: the engine's own list, sent to the model as is; until the request takes a slot (or ends)
    # its prompt, as a tuple (the one the log keeps: a waiting request holds no list for the garbage collector),
    # or as the `BlockPrompt` it was given (block_prompt.py: a trace's prompt, kept as named blocks)
    tokens: list[int] | tuple[int, ...] | BlockPrompt
    prompt_len: int
    max_tokens: int  # generated tokens only
    callback: Callable[[list[int]], object] | None
    on_token: Callable[[int], object] | None
    stops: StopMatcher | None  # None: no stop sequences
    stop_sequences: tuple[tuple[int, ...], ...]
    arrival_step: int
    order: int  # submission order, breaks ties between equal arrival steps
    end: int  # len(tokens) at which the row stops: prompt + max_tokens (the engine's `_limit` hook)
    priority: int = 0  # admission: lower first, then arrival order (vLLM's priority scheduling)
    stop_state: int = 0  # automaton node in `stops`
    log_index: int = -1  # row in the event log's request table, set on arrival
    slot: int | None = None
    status: Status = Status.PENDING
    # Memory (engine/core/block_manager.py), used only with kv_blocks or token_budget set:
    # (the two lists are made at admission, `MemoryScheduler._admit`: a run without a KV pool makes none)
    blocks: list[int] | tuple = ()  # the block table: physical block ids, logical order
    block_identities: list[int] | tuple = ()  # prefix caching: first full blocks' identities
    prefilling: bool = True  # not yet sent to the model since its (last) admission
    computed: int = 0  # while prefilling: tokens whose keys and values are in the cache
    scheduled: int = 0  # tokens the current step computes for this row
    admitted_at: int = -1  # admission number: the newest running row is preempted first
    cancel_requested: bool = False
    finish_reason: FinishReason | None = field(default=None)

    @property
    def generated(self) -> int:
        return len(self.tokens) - self.prompt_len


def append_and_check(
    rows: list[Sequence],
    prefixes: list[list[int]],
    tokens: list[int],
    stop_token: int | None,
    due: list[Sequence],
    watch_stops: bool,
) -> list[tuple]:
    """Append each row's new token (`prefixes`: the rows' token lists), then check the row in the
    contract's order: the stop token, then a stop sequence, then `max_tokens`.

    Returns (row, finish reason, what matched) for the rows that end now, in row order;
    what matched is -1 for the stop token, a stop sequence's index, or None. (One call per
    step, not one per token: a call costs as much as a token's whole check.)

    SPEED: max_tokens is checked only on the `due` rows, those the scheduler filed under this
    step (a decoding row gets one token a step, so the step at which it reaches max_tokens is
    known when it starts decoding: `Scheduler.ends_at`), and stop sequences only while a running
    row has some (`watch_stops`; the second loop is the first without them): most tokens are
    checked against the stop token alone (benchmarks/run.py's headline: 0.3x the floor less than
    checking each token whole). Without stop sequences no bytecode runs a token: `map` appends
    each row's token in C (`deque(..., maxlen=0)` drains it), and `in` looks for the stop token.
    """
    finished = []
    if watch_stops:
        for seq, token in zip(rows, tokens):
            seq.tokens.append(token)
            if token == stop_token:
                finished.append((seq, FinishReason.STOP_TOKEN, -1))
            elif seq.stops is not None:
                seq.stop_state = seq.stops.advance(seq.stop_state, token)
                matched = seq.stops.matched(seq.stop_state)
                if matched != NO_MATCH:
                    finished.append((seq, FinishReason.STOP_SEQUENCE, matched))
    else:  # (the engine's hottest lines)
        deque(map(list.append, prefixes, tokens), maxlen=0)
        if stop_token is not None and stop_token in tokens:
            finished = [(seq, FinishReason.STOP_TOKEN, -1) for seq, token in zip(rows, tokens) if token == stop_token]
    if due:
        _add_max_tokens(finished, due, rows)
    return finished


def _add_max_tokens(finished: list[tuple], due: list[Sequence], rows: list[Sequence]) -> None:
    """The `due` rows that have reached max_tokens join `finished` (unless the stop token or a stop sequence
    ended them), all in row order. (A row may be filed twice, once before a preemption and once after; one
    filed before it was preempted is not running, or running and short of max_tokens.)"""
    if not finished:  # (most often: the due rows reach max_tokens, and no other row ended)
        running = Status.RUNNING
        reached = {seq for seq in due if seq.status is running and len(seq.tokens) >= seq.end}
        if len(reached) == len(rows):  # (every row, so in row order)
            finished[:] = [(seq, FinishReason.MAX_TOKENS, None) for seq in rows]
            return
    ended = {seq for seq, _, _ in finished}
    before = len(finished)
    for seq in due:
        if seq not in ended and seq.status is Status.RUNNING and len(seq.tokens) >= seq.end:
            finished.append((seq, FinishReason.MAX_TOKENS, None))
            ended.add(seq)
    if len(finished) > max(before, 1):  # (due rows come in the order they were filed): in row order, which is slot
        finished.sort(key=_slot_of)  # order (SPEED: sorting the few that end, not a pass over every row of the batch)


def _slot_of(entry: tuple) -> int:
    return entry[0].slot


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
    limit=lambda max_tokens, prompt_len: max_tokens,
    priority: int = 0,
) -> Sequence:
    """Check a submission's arguments (each error names its field) and build its state.

    `limit(max_tokens, prompt_len)` is how many tokens the row may generate (the engine's hook).
    """
    if type(prompt_tokens) is BlockPrompt:  # a compact prompt (block_prompt.py), checked when it was made
        prompt = prompt_tokens
    else:
        prompt = tuple(check_tokens("prompt_tokens", prompt_tokens))
    if not (  # SPEED: the usual arguments pass one test; the checks below name the field that does not
        type(max_tokens) is int
        and 0 <= max_tokens <= INT64_MAX
        and (callback is None or callable(callback))
        and (on_token is None or callable(on_token))
    ):
        check_int("max_tokens", max_tokens, minimum=0, maximum=INT64_MAX)
        check_callable("callback", callback)
        check_callable("on_token", on_token)
    stops = () if stop_sequences is None else check_stop_sequences("stop_sequences", stop_sequences)
    if arrival_step is None:
        arrival_step = now
    else:
        arrival_step = max(check_int("arrival_step", arrival_step, minimum=0, maximum=MAX_ARRIVAL_STEP), now)
    if type(priority) is not int or priority:  # (0, the default, needs no range check)
        check_int("priority", priority, minimum=INT64_MIN, maximum=INT64_MAX)
    length = len(prompt)
    return Sequence(
        request_id,
        prompt,
        length,
        max_tokens,
        callback,
        on_token,
        matcher(stops) if stops else None,
        stops,
        arrival_step,  # a past arrival step means "now"
        order,
        length + limit(max_tokens, length),
        priority,
    )
