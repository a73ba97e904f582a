"""Plain-sentence narration of one step, from the event log alone (so loaded files work too).

    Slot 2: request C emitted 8, completing stop sequence [7, 8]; it is evicted and its
    callback receives [5, 6, 7, 8].

`narrate(replay, step)` returns the sentences in the order things happen inside the step:
cancellations, arrivals, admissions, the model call, then each row's token and fate.
"""

from __future__ import annotations

from ..core.log.events import Event, mask_tuple
from . import memory_narration
from .replay import Replay
from .step_events import StepEvents
from .wording import MAX_NAMES, names

MAX_QUIET_ROWS = 4  # rows that just emit a token, narrated one by one up to this many
MAX_TOKENS_SHOWN = 12


def tokens_text(tokens: list[int]) -> str:
    if len(tokens) <= MAX_TOKENS_SHOWN:
        return str(list(tokens))
    head, tail = ", ".join(map(str, tokens[:5])), ", ".join(map(str, tokens[-3:]))
    return f"[{head}, …, {tail}] ({len(tokens)} tokens)"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def narrate(replay: Replay, step: int, vocabulary: dict[int, str] | None = None) -> list[str]:
    vocabulary = vocabulary or {}
    log, counts = replay.log, replay.counts
    grouped = StepEvents(replay, step)
    waiting = counts.waiting(step)
    if not grouped.any:
        return [_idle(log, step, waiting)]
    out: list[str] = []
    arrived = [e.request_id for e in grouped.before if e.kind == "arrive"]
    admitted = [e for e in grouped.before if e.kind == "admit"]
    for e in grouped.before:
        if e.kind == "evict" and e.reason == "cancelled":
            out.append(_cancelled(replay, e))
    if arrived:
        out.append(_arrivals(arrived))
    for e in grouped.before:
        if e.kind == "evict" and e.reason == "max_tokens":
            out.append(
                f"Request {e.request_id} has max_tokens = 0: it completes at once, without a slot; "
                f"its callback receives {tokens_text(replay.outputs[e.request_id])}."
            )
    if admitted:
        out.append(_admissions(admitted))
    if log.config.memory:
        free = counts.free_blocks(step)
        out.extend(memory_narration.before_call(grouped.before, grouped.taken, grouped.blocks_of, free))
    if arrived or admitted or any(e.kind == "preempt" for e in grouped.before + grouped.after):
        out.append(_queue(waiting))
    if waiting and log.config.batching == "static" and counts.occupied(step) < log.config.batch_size:
        out.append(_static_wait(log.config, empty=counts.occupied(step) == 0))
    out.extend(
        f"The model call failed, so no row changed ({e.message})."
        if e.request_id is None
        else f"Request {e.request_id}: {e.message}."
        for e in grouped.before + grouped.after
        if e.kind == "error"
    )
    if grouped.call is not None:
        out.append(_model_call(log, grouped.call))
        if log.config.memory:
            found = (lambda rid: replay.found_in_cache(rid, step)) if log.config.prefix_caching else None
            out.extend(memory_narration.prefilled(grouped.after, grouped.row_of, grouped.before, found))
        out.extend(_rows(replay, grouped, vocabulary))
        if log.config.memory:
            out.extend(memory_narration.freed(grouped.after, shared=log.config.prefix_caching))
    return out


def _idle(log, step: int, waiting: int) -> str:
    """A step without events: the engine's clock jumped over it, to the next arrival (or, with a
    fill timeout, to the step at which the waiting requests may start)."""
    following = log.step_range(step).stop
    if following >= len(log):
        return "Nothing happens at this step."
    if waiting:
        return (
            f"The empty batch waits to fill: {plural(waiting, 'request')} {'waits' if waiting == 1 else 'wait'} for "
            f"{log.config.batch_size} slots "
            f"(fill_timeout = {log.config.fill_timeout}); nothing runs until step {log.step[following]:,}."
        )
    return f"Idle: nothing runs or waits until step {log.step[following]:,}, when the next request arrives."


def _static_wait(config, empty: bool) -> str:
    """Why static batching admits nobody although a slot is free (`empty`: every slot is)."""
    if config.fill_timeout and empty:
        return (
            f"Static batching with fill_timeout = {config.fill_timeout}: the empty batch waits until "
            f"{config.batch_size} requests wait or the oldest has waited {config.fill_timeout} steps."
        )
    return "Static batching: the queue waits until every slot is free."


def _cancelled(replay: Replay, e: Event) -> str:
    received = tokens_text(replay.outputs[e.request_id])
    if e.slot is None:
        return f"Request {e.request_id} is cancelled before it was admitted; its callback receives {received}."
    return f"Request {e.request_id} is cancelled: slot {e.slot} is freed and its callback receives {received}."


def _arrivals(arrived: list[str]) -> str:
    if len(arrived) == 1:
        return f"Request {arrived[0]} arrives and joins the queue."
    if len(arrived) <= MAX_NAMES:
        return f"Requests {names(arrived)} arrive and join the queue."
    return f"{len(arrived)} requests arrive and join the queue ({names(arrived)})."


def _admissions(admitted: list[Event]) -> str:
    if len(admitted) == 1:
        return f"Request {admitted[0].request_id} is admitted into slot {admitted[0].slot} from the queue."
    slots = [e.slot for e in admitted]
    if len(slots) == 2:
        where = f"slots {slots[0]} and {slots[1]}"
    elif slots == list(range(slots[0], slots[-1] + 1)):
        where = f"slots {slots[0]}–{slots[-1]}"
    else:
        where = f"slots {', '.join(map(str, slots))}"
    return f"Requests {names([e.request_id for e in admitted])} are admitted into {where} from the queue."


def _queue(waiting: int) -> str:
    if waiting == 0:
        return "The queue is empty."
    return f"{plural(waiting, 'request')} still {'waits' if waiting == 1 else 'wait'}."


def _model_call(log, i: int) -> str:
    """The sentence of the model call at event `i` (read from the columns: only a padded call shows its mask)."""
    rows, (bits, _), width = log.value[i], log.call_at(i), log.config.batch_size
    padded = rows - (bits & ((1 << width) - 1)).bit_count()
    if not rows:
        return "No row is sent to the model at this step: every running row is still prefilling."
    if not padded:
        return f"The model is called with {plural(rows, 'row')}."
    mask = " ".join("1" if m else "0" for m in mask_tuple(bits, width))
    return (
        f"The model is called with {plural(rows, 'row')} (the fixed batch shape), "
        f"{padded} of them padding; active mask [{mask}]."
    )


def _rows(replay: Replay, grouped: StepEvents, vocabulary: dict[int, str]) -> list[str]:
    """One sentence per row that emitted, in slot order; rows that only emitted are summed up when many."""
    ending = {slot: grouped.row(slot) for slot in grouped.emitted if slot in grouped.reasons}
    finished = [slot for slot, row in ending.items() if row is not None and row.finish_reason is not None]
    quiet = len(grouped.emitted) - len(finished)
    if quiet > MAX_QUIET_ROWS:
        said = [_row(replay, slot, ending[slot], vocabulary) for slot in finished]
        other = "other row" if said else "row"
        return [f"{plural(quiet, other).capitalize()} emitted one token each.", *said]
    rows = ((slot, ending[slot] if slot in ending else grouped.row(slot)) for slot in grouped.emitted)
    return [_row(replay, slot, row, vocabulary) for slot, row in rows if row is not None and row.token is not None]


def _row(replay: Replay, slot: int, row, vocabulary: dict[int, str]) -> str:
    token = f"{row.token} ({vocabulary[row.token]!r})" if row.token in vocabulary else str(row.token)
    head = f"Slot {slot}: request {row.request_id} emitted {token}"
    if row.finish_reason is None:
        return f"{head}."
    why = {
        "stop_token": ", the stop token",
        "stop_sequence": f", completing stop sequence {list(row.stop_sequence or ())}",
        "max_tokens": f", reaching max_tokens = {row.generated}",
    }.get(row.finish_reason, f" and ends ({row.finish_reason})")
    received = tokens_text(replay.outputs[row.request_id])
    return f"{head}{why}; it is evicted and its callback receives {received}."
