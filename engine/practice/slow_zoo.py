"""The slow zoo: correct engines whose cost a token grows with one size, each with one slow decision.

Every class here is `PlainLoopEngine` (`plain_loop.py`, each decision a method) with exactly one
decision replaced by a slow but correct one, written the way a candidate writes it: each
passes every checker case, and only the scale section (`checker/scale/`) tells it from the
plain loop, by a cost per token that grows along one axis. `SLOW_BUGS` says, for each, what
grows, what it costs at the axis's target and the fix; `changed_code` gives each changed
method beside the plain one. The measured costs are stored in
`engine/lab/measurements/slow_zoo.json` (`benchmarks/slow_zoo.py --write`). `list.pop(0)` on
the waiting queue is one of `PATTERNS` (a wrong answer to pick) but no engine here: its memmove
cost only 1.8 times the plain loop's time at 100,000 requests, too little to call slow."""

from __future__ import annotations

import heapq
import inspect
import textwrap
from dataclasses import dataclass
from functools import cached_property

from .plain_loop import PlainLoopEngine, Row


class TrackedRow(Row):
    __slots__ = ("waiting",)


class ScansEveryRequest(PlainLoopEngine):
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


class ChecksFinishedInAList(PlainLoopEngine):
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


class RowWithStopList(Row):
    __slots__ = ("stop_sequences",)

    def __init__(self, prompt_tokens, max_tokens, callback, stop_sequences):
        super().__init__(prompt_tokens, max_tokens, callback, stop_sequences)
        self.stop_sequences = [list(stop) for stop in stop_sequences or ()]


class WholeOutputSearch(RowWithStopList):
    __slots__ = ()

    def finished(self, stop_token) -> bool:
        generated = self.tokens[self.prompt_len :]
        if generated[-1] == stop_token:
            return True
        for stop in self.stop_sequences:
            if any(generated[i : i + len(stop)] == stop for i in range(len(generated) - len(stop) + 1)):
                return True
        return len(generated) >= self.max_tokens


class SearchesTheWholeOutput(PlainLoopEngine):
    """Searches the whole generated output for each stop sequence after every token.

    Slow line: `any(generated[i : i + len(stop)] == stop ...)` in `WholeOutputSearch.finished`: O(answer length)
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


class ComparesEveryStopSequence(PlainLoopEngine):
    """Compares the tail with every stop sequence after every token.

    Slow line: `for stop in self.stop_sequences:` in `EveryStopCompared.finished`: O(stop sequences)
    a token. Fix: a dict from each length to the set of stop sequences of that length, one lookup of
    the tail a length (`plain_loop.stop_index`), or an Aho-Corasick automaton.
    """

    row_type = EveryStopCompared


class CopiesEveryPrefix(PlainLoopEngine):
    """Copies every row's tokens to build the batch, each step.

    Slow line: `list(self.slots[slot].tokens)` in `batch`: O(answer length) a row a step.
    Fix: hand the model each row's own list (it only reads it) and append to it in place.
    """

    def batch(self, running: list[int]) -> list[list[int]]:
        return [list(self.slots[slot].tokens) for slot in running]


PATTERNS = {  # the scale section's catalogue (checker/scale/patterns.py), as the page's prediction offers them
    "scanning every request each step": "It scans every request ever submitted, every step.",
    "`in` on a list": "It asks `x in some_list`, a scan of the list, where a set (or nothing) belongs.",
    "list.pop(0) queue": "It takes the head of the waiting queue with `list.pop(0)`.",
    "searching the whole output for a stop sequence": "It searches the whole generated output for each stop sequence.",
    "copying every prefix each step": "It copies every row's tokens to build the batch, every step.",
    "comparing the tail with every stop sequence": "It compares the tail with every stop sequence, every token.",
}


@dataclass(frozen=True)
class SlowBug:
    engine: type[PlainLoopEngine]
    axis: str  # the scale axis it is slow along (a name of `checker.scale.workloads.AXES`)
    pattern: str  # a key of PATTERNS: the name of the scale section's pattern that catches it
    title: str
    why: str  # what grows, and what it costs at the axis's target
    fix: str


SLOW_BUGS = {
    "scans-every-request": SlowBug(
        ScansEveryRequest,
        "requests",
        "scanning every request each step",
        "Every request scanned, every step",
        "All requests ever submitted stay in one list, and every step walks the whole of it to find the waiting "
        "ones: the work of a step grows with the number of requests, so the cost of a token does too. 100,000 "
        "requests of 16 tokens at 64 slots take 25,000 steps of 100,000 rows each, 2.5 billion visits: over two "
        "minutes of CPU, where the reference engine takes seconds.",
        "Keep only the waiting requests, in a deque, and popleft() them into free slots: O(1) an admission.",
    ),
    "checks-finished-in-a-list": SlowBug(
        ChecksFinishedInAList,
        "requests",
        "`in` on a list",
        "`row not in self.finished`, a list",
        "The finished requests are kept in a list, and building the batch asks `row not in self.finished` for each "
        "of the 64 rows, every step: each `in` compares the row with every request finished so far, so a token costs "
        "O(requests) comparisons: at 100,000 requests, 25,000 steps of 64 scans of 50,000 rows on average, 80 billion "
        "comparisons, some twenty minutes of CPU.",
        "Use a set for a membership test; here, none is needed: a finished row has already left its slot.",
    ),
    "searches-the-whole-output": SlowBug(
        SearchesTheWholeOutput,
        "answer length",
        "searching the whole output for a stop sequence",
        "The whole output searched for a stop sequence",
        "After every token, each stop sequence is searched for in the whole generated output, so a token costs "
        "O(answer length) and an answer O(length²): 64 answers of 4,096 tokens make about a billion slice "
        "comparisons, minutes of CPU, though only the newest token can have completed a stop sequence.",
        "Compare only the tail, tokens[-len(stop):], or look it up in a dict by length (or run an Aho-Corasick "
        "automaton): O(1) a token.",
    ),
    "copies-every-prefix": SlowBug(
        CopiesEveryPrefix,
        "answer length",
        "copying every prefix each step",
        "Every prefix copied into the batch",
        "Each step the batch is built from a copy of every row's tokens, prompt and all, so a row costs O(its length) "
        "a step: a token of a 4,096-token answer costs a copy of 2,000 tokens on average. A copy is a fast memcpy, so "
        "at 4,096 tokens this is only 4 to 5 times the plain loop's cost a token, but it grows with the length "
        "without bound.",
        "Hand the model each row's own list (it only reads it), and append the new token to it in place.",
    ),
    "compares-every-stop-sequence": SlowBug(
        ComparesEveryStopSequence,
        "stop sequences",
        "comparing the tail with every stop sequence",
        "The tail compared with every stop sequence",
        "After every token the tail is sliced and compared with each stop sequence in turn, so a token costs "
        "O(number of stop sequences): with 64 stop sequences, 64 slices and comparisons a token, about 13 times the "
        "reference engine's whole cost a token.",
        "Group the stop sequences by length in a dict of sets and look the tail up once a length "
        "(plain_loop.stop_index), or match with an Aho-Corasick automaton.",
    ),
}


def _source(function) -> str:
    return textwrap.dedent(inspect.getsource(function))


def changed_code(name: str) -> list[tuple[str, str, str | None]]:
    """(method, the slow engine's source, the plain loop's source or None if it has none) of each method the
    slow engine (or its row type) defines."""
    engine, changed = SLOW_BUGS[name].engine, []
    pairs = [(engine, PlainLoopEngine)]
    if engine.row_type is not PlainLoopEngine.row_type:
        pairs.append((engine.row_type, Row))
    for slow, plain in pairs:
        own_members = {}
        for cls in reversed(slow.__mro__[: slow.__mro__.index(plain)]):  # the row's parent class first
            own_members.update({member: (cls, value) for member, value in vars(cls).items()})
        for member, (cls, value) in own_members.items():
            function = value.func if isinstance(value, cached_property) else value
            if inspect.isfunction(function):
                own = getattr(plain, member, None)
                title = f"{cls.__name__}.{member}"
                changed.append((title, _source(function), _source(own) if inspect.isfunction(own) else None))
    return changed
