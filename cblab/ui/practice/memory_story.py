"""The memory mistakes in a step's story: what the log shows that `narrate` (which assumes a
correct engine) gets wrong or leaves implicit, for a log with a KV pool.

`memory_fixes` retells the KV sentences from what the engine really holds: the free blocks
without those a finished request never gave back, a prefill's target from the tokens the
row still holds (a recompute may have forgotten some), where a preempted row really went
back. `memory_facts` adds what the log implies, for Spot the bug's explanation: a leak, a
row preempted while a newer one runs on, a preempted row overtaken, tokens forgotten.

What a request holds (`held_at`) is its prompt and its emitted tokens, cut back to what each
of its preemptions kept (the event's `recompute`); in a correct engine, the log's output.
"""

from __future__ import annotations

from dataclasses import replace

from engine.analysis.memory_narration import before_call, prefilled, taken_blocks
from engine.analysis.narration import plural, tokens_text
from engine.analysis.replay import Replay
from engine.core.log.events import EventKind

Held = dict[str, list[int]]  # request id -> the tokens the engine holds for it


def held_at(log, step: int) -> Held:
    """What each request holds at the end of `step` (its emitted tokens, cut back by its preemptions)."""
    held = {info.request_id: list(info.prompt) for info in log.requests}
    for i in range(log.step_range(step).stop if step >= 0 else 0):
        if log.kind[i] in (EventKind.EMIT, EventKind.PREEMPT):
            e = log[i]
            if e.kind == "emit":
                held[e.request_id].append(e.token)
            else:
                del held[e.request_id][e.recompute :]
    return held


def _leaked(replay: Replay, step: int) -> dict[str, tuple[int, ...]]:
    """Blocks still held at `step` by requests that ended before its model call (a correct engine
    frees them all): request id -> its block ids."""
    log, kv = replay.log, replay.kv
    cut = kv.cut(step)
    ended = sorted({log.request[i] for i in range(cut) if log.kind[i] == EventKind.EVICT})
    tables = {log.requests[r].request_id: kv.blocks(r, step) for r in ended}
    return {rid: blocks for rid, blocks in tables.items() if blocks}


def _requeued(log) -> dict[str, tuple[int, str, int]]:
    """Preempted requests that a request from behind them overtook, where a correct engine puts a
    preempted row at the front of the queue (the last preempted first): request id -> (the step it
    was preempted at, the first request admitted ahead of it, that admission's step)."""
    waiting: dict[str, int] = {}  # preempted, still waiting -> its preempt event's index
    overtaken = {}
    for i, e in enumerate(log):
        if e.kind == "preempt":
            waiting[e.request_id] = i
        elif e.kind == "admit" or (e.kind == "evict" and e.slot is None):
            mine = waiting.pop(e.request_id, -1)  # (-1: it was never preempted, so it is behind them all)
            for rid, j in waiting.items():
                if e.kind == "admit" and mine < j and rid not in overtaken:
                    overtaken[rid] = (log[j].step, e.request_id, e.step)
    return overtaken


def memory_fixes(replay: Replay, step: int, held: Held, sentences: list[str]) -> list[str]:
    """The KV sentences of `narrate` told from what the engine really holds, where the replay assumes a
    correct engine: free blocks without those a finished request kept, a prefill's target from the tokens
    the row holds (a recompute may have forgotten some), and where a preempted row really went."""
    state, log = replay[step], replay.log
    leaked = {block for blocks in _leaked(replay, step).values() for block in blocks}
    rows = tuple(row and replace(row, generated=len(held[row.request_id]) - row.prompt_len) for row in state.slots)
    free = state.free_blocks and tuple(block for block in state.free_blocks if block not in leaked)
    real, events = replace(state, slots=rows, free_blocks=free), [log[i] for i in log.step_range(step)]
    told, fixed = (_memory_sentences(events, s) for s in (state, real))
    fixes = dict(zip(told, fixed))
    for rid, (preempted, first, _) in _requeued(log).items():
        if preempted == step:
            text = next(s for s in told if s.startswith(f"Request {rid} is preempted"))
            fixes[text] = fixes[text].replace(
                "back to the head of the queue", f"back into the queue behind request {first}"
            )
    return [fixes.get(sentence, sentence) for sentence in sentences]


def _memory_sentences(events: list, state) -> list[str]:
    """`before_call` and `prefilled` of a step's events, told from `state`."""

    def row_of(rid: str):
        return next((row for row in state.slots if row is not None and row.request_id == rid), None)

    def blocks_of(rid: str) -> int | None:
        row = row_of(rid)
        return None if row is None else len(row.blocks)

    free = None if state.free_blocks is None else len(state.free_blocks)
    return before_call(events, taken_blocks(events), blocks_of, free) + prefilled(events, row_of)


def memory_facts(replay: Replay, step: int) -> list[str]:
    """What a memory mistake leaves implicit: blocks a finished request never gave back, a row preempted
    while a newer one runs on, a preempted row overtaken in the queue, tokens a recompute forgot."""
    state, log, facts = replay[step], replay.log, []
    before = held_at(log, step - 1)
    admits = [e.request_id for e in log if e.kind == "admit" and e.step <= step]
    admitted = {rid: k for k, rid in enumerate(admits)}  # each request's last admission, in order
    for i in log.step_range(step):
        if log.kind[i] == EventKind.PREEMPT:
            e = log[i]
            lost = before[e.request_id][e.recompute :]
            newer = [row.request_id for row in state.slots if row and admitted[row.request_id] > admitted[e.request_id]]
            if newer:
                facts.append(
                    f"Request {e.request_id} is preempted though request {newer[0]}, admitted after it, runs on: "
                    "the newest row has the least work to redo."
                )
            if lost:
                facts.append(
                    f"Request {e.request_id} keeps only {plural(e.recompute, 'token')} of its "
                    f"{len(before[e.request_id])}: its generated {tokens_text(lost)} is forgotten and will be "
                    "generated again."
                )
    for rid, (preempted, first, admitted) in _requeued(log).items():
        if admitted == step:
            facts.append(
                f"Request {first} is admitted ahead of request {rid}, which was preempted at step {preempted} "
                "and should be first in the queue."
            )
    leaked = _leaked(replay, step)
    free = len(state.free_blocks or ()) - sum(map(len, leaked.values()))
    for rid, blocks in leaked.items():
        facts.append(
            f"Request {rid} has ended but never gave back {'block' if len(blocks) == 1 else 'blocks'} "
            f"{', '.join(map(str, blocks))} (no kv_free): {free} of the pool's {log.config.kv_blocks} blocks "
            f"{'is' if free == 1 else 'are'} free."
        )
    return facts
