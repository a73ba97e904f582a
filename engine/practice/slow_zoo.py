"""The slow zoo: correct engines that would take minutes on 100k requests, each with one slow decision.

Every class here is `PlainLoopEngine` (in parts, `plain_loop_parts.py`) with exactly one
decision replaced by a slow but correct one, written the way a candidate writes it: each
passes every checker case, and only the scale section (`checker/scale/`) tells it from the
plain loop, by a cost per token that grows along one axis. `SLOW_BUGS` (`slow_bugs.py`) says,
for each, what grows, what it costs at the axis's target and the fix. The measured costs
are stored in `engine/lab/measurements/slow_zoo.json` (`benchmarks/slow_zoo.py --write`).
"""

from __future__ import annotations

import heapq
from functools import cached_property

from .plain_loop import Row
from .plain_loop_parts import PlainLoopInParts


class TrackedRow(Row):
    __slots__ = ("waiting",)


class ScansEveryRequest(PlainLoopInParts):
    """Keeps every request ever submitted in one list and scans it for the waiting ones, every step.

    Slow line: `for row in self.requests:` in `admit` (and `any(...)` in `run`): O(requests) a step.
    Fix: keep a `deque` of the waiting requests only and `popleft()` them.
    """

    row_type = TrackedRow

    @cached_property
    def requests(self) -> list[TrackedRow]:
        return []

    def enqueue(self, row: TrackedRow) -> None:
        row.waiting = True
        self.requests.append(row)

    def run(self) -> None:
        while any(row.waiting for row in self.requests) or len(self.free) < self.batch_size:
            self.step()

    def admit(self) -> None:
        for row in self.requests:
            if row.waiting and self.free:
                row.waiting = False
                self.slots[heapq.heappop(self.free)] = row


class ChecksFinishedInAList(PlainLoopInParts):
    """Keeps the finished requests in a list and leaves them out of the batch with `row not in self.finished`.

    Slow line: `row not in self.finished` in `running`: a scan of every request finished so far,
    for every row, every step. Fix: a set (or nothing: an evicted row is no longer in a slot).
    """

    @cached_property
    def finished(self) -> list[Row]:
        return []

    def evict(self, slot: int) -> None:
        self.finished.append(self.slots[slot])
        super().evict(slot)

    def running(self) -> list[int]:
        return [slot for slot, row in enumerate(self.slots) if row is not None and row not in self.finished]


class PopsTheFrontOfAList(PlainLoopInParts):
    """Queues the waiting requests in a list and admits the head with `pop(0)`.

    Slow line: `self.waiting.pop(0)` in `next_waiting`: it shifts every request behind the head,
    O(waiting) an admission. Fix: a `deque` and `popleft()`.
    """

    def __init__(self, model, batch_size: int, stop_token: int | None):
        super().__init__(model, batch_size, stop_token)
        self.waiting = []

    def next_waiting(self) -> Row:
        return self.waiting.pop(0)


class RowWithStopList(Row):
    __slots__ = ("stop_sequences",)

    def __init__(self, prompt_tokens, max_tokens, callback, stop_sequences):
        super().__init__(prompt_tokens, max_tokens, callback, stop_sequences)
        self.stop_sequences = [list(stop) for stop in stop_sequences or ()]


def contains(tokens: list[int], part: list[int]) -> bool:
    """Whether `part` stands anywhere in `tokens`."""
    return any(tokens[i : i + len(part)] == part for i in range(len(tokens) - len(part) + 1))


class WholeOutputSearch(RowWithStopList):
    __slots__ = ()

    def finished(self, stop_token) -> bool:
        generated = self.tokens[self.prompt_len :]
        if generated[-1] == stop_token:
            return True
        if any(contains(generated, stop) for stop in self.stop_sequences):
            return True
        return len(generated) >= self.max_tokens


class SearchesTheWholeOutput(PlainLoopInParts):
    """Searches the whole generated output for each stop sequence after every token.

    Slow line: `any(contains(generated, stop) ...)` in `WholeOutputSearch.finished`: O(answer length)
    a token, so O(length²) an answer. Fix: only the tail can have just completed a stop sequence:
    compare `tokens[-len(stop):]`, or look the tail up in a dict by length.
    """

    row_type = WholeOutputSearch


class EveryStopCompared(RowWithStopList):
    __slots__ = ()

    def finished(self, stop_token) -> bool:
        generated = len(self.tokens) - self.prompt_len
        if self.tokens[-1] == stop_token:
            return True
        for stop in self.stop_sequences:
            if len(stop) <= generated and self.tokens[-len(stop) :] == stop:
                return True
        return generated >= self.max_tokens


class ComparesEveryStopSequence(PlainLoopInParts):
    """Compares the tail with every stop sequence after every token.

    Slow line: `for stop in self.stop_sequences:` in `EveryStopCompared.finished`: O(stop sequences)
    a token. Fix: a dict from each length to the set of stop sequences of that length, one lookup of
    the tail a length (`plain_loop.stop_index`), or an Aho-Corasick automaton.
    """

    row_type = EveryStopCompared


class CopiesEveryPrefix(PlainLoopInParts):
    """Copies every row's tokens to build the batch, each step.

    Slow line: `list(self.slots[slot].tokens)` in `batch`: O(answer length) a row a step.
    Fix: hand the model each row's own list (it only reads it) and append to it in place.
    """

    def batch(self, running: list[int]) -> list[list[int]]:
        return [list(self.slots[slot].tokens) for slot in running]
