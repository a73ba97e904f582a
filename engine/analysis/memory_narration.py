"""Narration of a step's KV-cache events, in plain sentences (logs with a KV pool or a token budget).

Request D is preempted: its 12 blocks are freed; it goes back to the head of the queue
and will recompute 187 tokens.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.log.events import Event
from .replay import SlotState
from .wording import MAX_NAMES, names

RowOf = Callable[[str], SlotState | None]  # a request id -> its row at the step (None: it holds no slot)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def listed(numbers: list[int]) -> str:
    """`3`, `3 and 4`, `3, 4 and 7`; a run of 3 or more consecutive ids as `8–31`."""
    texts, start = [], 0
    while start < len(numbers):
        end = start
        while end + 1 < len(numbers) and numbers[end + 1] == numbers[end] + 1:
            end += 1
        if end - start >= 2:
            texts.append(f"{numbers[start]}–{numbers[end]}")
        else:
            texts.extend(str(n) for n in numbers[start : end + 1])
        start = end + 1
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def taken_blocks(events: list[Event]) -> dict[str, list[int]]:
    """Request id -> the blocks it takes in `events` (its `kv_alloc`s), in order."""
    taken: dict[str, list[int]] = {}
    for e in events:
        if e.kind == "kv_alloc":
            taken.setdefault(e.request_id, []).append(e.block)
    return taken


def before_call(
    events: list[Event], taken: dict[str, list[int]], blocks_of: Callable[[str], int | None], free: int | None
) -> list[str]:
    """Preemptions, then the blocks each row takes (`taken_blocks` of the step's events before its
    model call; `blocks_of(request id)`: how many it holds then, None if it holds no slot) and how
    many of the pool's blocks are left `free` (None: no pool)."""
    out, frees = [], {e.request_id: e.blocks for e in events if e.kind == "kv_free"}
    out.extend(cache_use(events))
    for e in events:
        if e.kind == "preempt":
            freed = frees.get(e.request_id, 0)
            out.append(
                f"Request {e.request_id} is preempted: its {plural(freed, 'block')} {'is' if freed == 1 else 'are'} "
                f"freed; it goes back to the head of the queue and will recompute {plural(e.recompute, 'token')}."
            )
    if len(taken) > MAX_NAMES:  # a crowd: one sentence
        total = sum(map(len, taken.values()))
        out.append(f"Requests {names(list(taken))} take {plural(total, 'block')} between them.")
    else:
        for rid, blocks in taken.items():
            count = blocks_of(rid)
            held = f" ({plural(count, 'block')} now)" if count is not None else ""
            out.append(f"Request {rid} takes {'block' if len(blocks) == 1 else 'blocks'} {listed(blocks)}{held}.")
    if free is not None and (taken or frees):
        out.append(f"{plural(free, 'block')} of the KV cache {'is' if free == 1 else 'are'} free.")
    return out


def cache_use(events: list[Event]) -> list[str]:
    """With prefix caching: the cached blocks each admitted row starts from, and the cached blocks
    dropped to be reused."""
    hits: dict[str, list[int]] = {}
    evicted = [e.block for e in events if e.kind == "kv_evict"]
    for e in events:
        if e.kind == "prefix_hit":
            hits.setdefault(e.request_id, []).append(e.block)
    out = [
        f"Request {rid} finds {'block' if len(blocks) == 1 else 'blocks'} {listed(blocks)} in the prefix cache: "
        "tokens it does not compute again."
        for rid, blocks in hits.items()
    ]
    if evicted:
        one = len(evicted) == 1
        which = f"{'block' if one else 'blocks'} {listed(sorted(evicted))} {'is' if one else 'are'}"
        out.append(f"Cached {which} evicted to be reused.")
    return out


def prefilled(
    events: list[Event], row_of: RowOf, before: list[Event] = (), found: Callable[[str], int] | None = None
) -> list[str]:
    """What each prefilling row computed at the step's model call (said before the rows' tokens);
    `row_of(request id)` is that request's row at the step, None if it holds no slot; `before`, the
    step's events before the call, says who found blocks in the prefix cache at admission, and
    `found(request id)`, how many tokens a row admitted earlier found there (a chunked prefill's
    later steps: said apart from what it computed, as its cell on the stage does)."""
    out = []
    prefills = [e for e in events if e.kind == "prefill" and e.tokens]
    if len(prefills) > MAX_NAMES:  # a crowd: one sentence
        total = sum(e.tokens for e in prefills)
        out.append(f"Requests {names([e.request_id for e in prefills])} prefill {plural(total, 'token')} between them.")
        events = [e for e in events if e.kind != "prefill"]
    hit = {e.request_id for e in before if e.kind == "prefix_hit"}
    for e in events:
        if e.kind == "prefill":
            row = row_of(e.request_id)
            target = row.prompt_len + row.generated - (row.token is not None) if row is not None else e.computed
            progress = f"{e.computed:,}/{target:,}"
            # found at its admission (without `found`: only at this step's, what it computed before the step)
            cached = found(e.request_id) if found else (e.computed - e.tokens if e.request_id in hit else 0)
            if cached:
                progress = f"{e.computed - cached:,}/{target:,}, and {cached:,} found in the prefix cache"
            if e.computed < target:
                out.append(
                    f"Request {e.request_id} prefills {plural(e.tokens, 'token')} ({progress}); "
                    "the rest waits for the next steps' budget, so it gets no token yet."
                )
            elif e.tokens:
                again = row is not None and row.generated > 1
                out.append(
                    f"Request {e.request_id} prefills {plural(e.tokens, 'token')} ({progress}) and "
                    + ("is sent to the model again at this step." if again else "gets its first token at this step.")
                )
    return out


def freed(events: list[Event], shared: bool = False) -> list[str]:
    """The blocks that rows evicted after the model call give back (`shared`: with prefix caching, where
    a block another row holds stays in use, and a full one stays cached while free)."""
    said = (
        "lets go of its {}: those no other row holds are free again, and the full ones stay in the prefix cache "
        "until they are reused."
        if shared
        else "gives its {} back to the pool."
    )
    return [f"Request {e.request_id} " + said.format(plural(e.blocks, "block")) for e in events if e.kind == "kv_free"]
