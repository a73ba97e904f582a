"""Continuous batching as array operations: a NumPy engine in the seeds' API, to study beside the loop engine.

It gives what the loop engine (`engine.BatchInferenceEngine`, without a KV pool) gives, the same
outputs in the same callback order, but it keeps the batch as arrays with one entry per slot, so
a step is a dozen whole-array operations and no Python loop over the rows:

- `active` (the mask), `lengths` (prompt + generated), `last` (each row's last token) and
  `remaining` (max_tokens, counted down);
- `window`: the tokens of the last `WINDOW` steps, time-major, shape (steps, slots), so a step
  writes one contiguous row. Every `WINDOW` steps it is copied, transposed, into `history`, a
  ring of each slot's last `HISTORY` tokens, row-major: a row's tokens lie side by side there
  until it ends, and only then become its callback's list (a longer row moves its oldest ones
  into its list as the ring comes round);
- the stop token, checked by one comparison, `tokens == stop_token`;
- stop sequences as automaton tables (`stop_table.py`): one gather per step for each distinct list;
- free slots read from the mask, `np.flatnonzero(~active)`, refilled lowest first from a FIFO
  whose numbers are admitted as array columns.

Why time-major: in a row-major buffer (slots, tokens) consecutive slots are a whole row apart and
each row's next position is its own, so a step's write is a scatter touching one cache line per
slot; the time-major window writes the B tokens side by side (`benchmarks/vectorised.py` prints
both at 100,000 rows). Why the ring: a running row's list is not touched (a list gone cold costs
more to extend than its tokens), and its tokens become Python ints in bulk when it ends, one
`tolist` for a step's ended rows: that conversion is most of what a token costs here.

The fast path is an array model, `next_tokens_array(last_tokens, lengths) -> one token per slot`
(`last_token_model.py`; the entries of free slots are ignored). A plain per-row model
(`generate_next_tokens`, its padded form with `padded=True`, `next_tokens`, or a callable) works
too: it reads every row's whole prefix each step, so the window and the ring are then one step
long and every token joins its row's list at once: correct, and as slow as such a model is.

Left out, as the seeds leave them out: cancel, arrival steps, the event log, static batching and
memory. Bad arguments are refused as the loop engine refuses them (its own checks); a model answer
of the wrong shape or type raises ModelError and changes no row; a callback that raises does not
stop the others (CallbackError once the step's callbacks have all run). Each distinct stop list
keeps its table for the engine's life.
"""

from __future__ import annotations

from array import array
from collections import deque, namedtuple

import numpy as np

from engine.core import validation
from engine.core.errors import CallbackError, ModelError
from engine.core.model_call import call_model
from engine.core.models import model_caller
from engine.practice.stop_table import stop_table

SHARED_IDS = np.array(range(1 << 16), dtype=object)  # the Python int of each token id below 2**16 (`python_ints`)
SHARED_ADDRESSES = np.frombuffer(SHARED_IDS, dtype=np.uint64)  # where each of those ints is, as a number
WINDOW = 16  # steps of generated tokens kept time-major before they are copied into the ring
HISTORY = 256  # tokens of each slot kept in the ring (a power of two; 32 MB at 65,536 slots)
FIELDS = 4  # numbers a waiting request keeps in the queue
INT64_MAX = validation.INT64_MAX
Seq = namedtuple("Seq", "slot request_id")  # what a per-row model's error message names (`call_model` reads it)


class VectorisedEngine:
    def __init__(self, model, batch_size: int, stop_token: int | None, *, padded: bool = False):
        self.batch_size = slots = validation.check_int("batch_size", batch_size, minimum=1)
        self.stop_token = None if stop_token is None else validation.check_token("stop_token", stop_token)
        self.padded = validation.check_bool("padded", padded)
        self.array_model = getattr(model, "next_tokens_array", None)
        self.call = None if self.array_model else model_caller(model, padded)
        steps, ring = (WINDOW, HISTORY) if self.array_model else (1, 1)  # a per-row model reads whole lists
        # SPEED: uint16 while every token is in [0, 2**16) (then int64): a quarter of the bytes to copy. The window's
        # rows are a cache line longer than a row of slots, so that a slot's column does not fall in one cache set
        # (its copy into the ring had missed L1 for every token: 9.8 -> 8.5 L1 misses a token at 65,536 rows)
        self.window = np.zeros((steps, slots + 32), dtype=np.uint16)[:, :slots]
        self.history = np.zeros((slots, ring), dtype=np.uint16)  # slot s's token of step t at [s, t % ring]
        self.t = self.flushed = 0  # model steps so far; steps already copied from the window into the ring
        self.born = np.zeros(slots, dtype=np.int64)  # the step of each row's first token not in its list
        self.active = np.zeros(slots, dtype=bool)
        self.lengths, self.last, self.remaining = (np.zeros(slots, dtype=np.int64) for _ in range(3))
        self.table_of = np.full(slots, -1, dtype=np.intp)  # each slot's stop table, -1 for none
        self.state = np.zeros(slots, dtype=np.intp)  # each slot's state in its stop table
        self.row_of = np.full(slots, None, dtype=object)  # each slot's request (see `submit_request`)
        self.num_active = 0
        self.tables, self.table_ids = [], {}  # the stop tables; id(stop sequences) -> (them, their table's index)
        self.live = np.zeros(0, dtype=np.intp)  # running rows that use each stop table
        self.waiting: list[tuple] = []  # waiting requests, FIFO, from `head` on
        self.queue: list[int] = []  # their numbers, FIELDS each (see `submit_request`)
        self.head = self.arrived = 0  # the first waiting request; those that had arrived at the step's start
        self.empty: list[tuple] = []  # requests with max_tokens 0
        self.outbox: deque[tuple] = deque()  # ended, callback not yet called
        self.submitted = self.steps = 0
        self.stepping = False  # inside step(): a callback may submit, not step

    def submit_request(self, prompt_tokens, max_tokens: int, callback=None, stop_sequences=None) -> str:
        """A request is the tuple (number, tokens, callback): `tokens` a new list of the prompt, which the row's
        generated tokens join when it ends (or leaves the ring). Its numbers wait in `queue`: max_tokens, prompt
        length, the prompt's last token, stop table (-1 for none). SPEED: admission reads them as array columns."""
        prompt = plain_tokens(prompt_tokens) or validation.check_tokens("prompt_tokens", prompt_tokens)
        if type(max_tokens) is not int or not 0 <= max_tokens <= INT64_MAX:  # SPEED: the checks' fast paths inline
            validation.check_int("max_tokens", max_tokens, minimum=0, maximum=INT64_MAX)
        if callback is not None and not callable(callback):
            validation.check_callable("callback", callback)
        table = -1
        if stop_sequences is not None:
            stops = validation.check_stop_sequences("stop_sequences", stop_sequences)
            table = self._table_id(stops) if stops else -1
        number = self.submitted
        self.submitted = number + 1
        if max_tokens:
            self.waiting.append((number, prompt, callback))
            self.queue.extend((max_tokens, len(prompt), prompt[-1] if prompt else 0, table))
        else:
            self.empty.append((number, prompt, callback))
        return f"r{number}"

    def _table_id(self, stops: tuple[tuple[int, ...], ...]) -> int:
        """The index in `tables` of the stop table of `stops`, built the first time (it may refuse the list).

        SPEED: looked up by the checked tuple's identity first (the checks hand back the same tuple for a
        list they have seen), since hashing a long list of stop sequences costs more than a request's step."""
        known = self.table_ids.get(id(stops))
        if known is None:  # (the entry keeps `stops` alive, so its id cannot name another list)
            table = stop_table(stops)
            known = self.table_ids[id(stops)] = (stops, len(self.tables))
            self.tables.append(table)
            self.live = np.append(self.live, 0)
        return known[1]

    def run(self) -> None:
        failures = []
        while len(self.waiting) > self.head or self.empty or self.num_active or self.outbox:
            try:
                self.step()
            except CallbackError as exc:
                failures += exc.failures
        if failures:
            raise CallbackError(failures)

    def step(self) -> None:
        """Intake (a request with max_tokens 0 ends here), admit, one model call, append, check, evict, deliver."""
        if self.stepping:
            raise RuntimeError("step() and run() cannot be called from inside a callback")
        self.stepping = True
        try:
            failures = self._step()
        finally:
            self.stepping = False
        if failures:
            raise CallbackError(failures)

    def _step(self) -> list[tuple[str, BaseException]]:
        self.outbox += self.empty
        self.empty = []
        if self.head > 4096 and self.head * 2 > len(self.waiting):  # the admitted half of the queue goes
            del self.waiting[: self.head], self.queue[: self.head * FIELDS]
            self.head = 0
        self.arrived = len(self.waiting)
        failures = self._deliver()
        self._admit()
        if self.num_active:
            ended = self._append_and_check(self._call_model())
            self._evict(ended)
            failures += self._deliver()
        self.steps += 1
        return failures

    def _admit(self) -> None:
        count = min(self.arrived - self.head, self.batch_size - self.num_active)
        if not count:
            return
        slots = np.flatnonzero(~self.active)[:count]  # the lowest free slots
        head, self.head = self.head, self.head + count
        self.row_of[slots] = np.fromiter(self.waiting[head : self.head], object, count)  # SPEED: no loop in Python
        numbers = np.fromiter(self.queue[head * FIELDS : self.head * FIELDS], np.int64, count * FIELDS)
        max_tokens, lengths, last, tables = numbers.reshape(count, FIELDS).T
        self.active[slots] = True
        self.lengths[slots] = lengths
        self.last[slots] = last
        self.remaining[slots] = max_tokens
        self.table_of[slots] = tables
        self.state[slots] = 0
        self.born[slots] = self.t
        self.num_active += count
        if self.tables and tables.max() >= 0:
            self.live += np.bincount(tables[tables >= 0], minlength=self.live.size)

    def _call_model(self) -> np.ndarray:
        """One token per slot (free slots' entries are ignored); a wrong answer raises ModelError."""
        if self.array_model is None:  # a per-row model: the loop engine's call and checks, on the running rows
            slots = np.flatnonzero(self.active)
            rows = self.row_of[slots].tolist()
            running = [Seq(slot, f"r{row[0]}") for slot, row in zip(slots.tolist(), rows)]
            prefixes = [row[1] for row in rows]
            answer, _ = call_model(self.call, self.steps, running, prefixes, self.batch_size, self.padded)
            tokens = np.zeros(self.batch_size, dtype=np.int64)
            tokens[self.active] = answer
            return tokens
        try:
            tokens = np.asarray(self.array_model(read_only(self.last), read_only(self.lengths)))
        except Exception as exc:
            raise ModelError(self.steps, f"model call failed with {type(exc).__name__}: {exc}") from exc
        too_big = tokens.dtype == np.uint64 and tokens.size and tokens.max() > INT64_MAX
        if tokens.shape != (self.batch_size,) or tokens.dtype.kind not in "iu" or too_big:
            raise ModelError(
                self.steps,
                f"expected an array of {self.batch_size} 64-bit integer tokens (one per slot), "
                f"got shape {tokens.shape} of {tokens.dtype}",
            )
        return tokens

    def _append_and_check(self, answer: np.ndarray) -> np.ndarray:
        """Append each row's token; return the slots whose row ends (stop token, stop sequence or max_tokens)."""
        narrow = self.history.dtype == np.uint16 and not np.can_cast(answer, np.uint16)
        if narrow and np.bitwise_or.reduce(answer) >> 16:  # some token has a bit set past 16 (or is negative)
            self.window, self.history = self.window.astype(np.int64), self.history.astype(np.int64)
        tokens = self.window[self.t - self.flushed]
        np.copyto(tokens, answer, casting="unsafe")  # (checked: integers that fit)
        self.t += 1
        np.copyto(self.last, tokens)
        self.lengths += 1
        self.remaining -= 1
        done = self.remaining == 0
        if self.stop_token is not None:
            done |= tokens == self.stop_token
        if self.tables and self.live.any():
            self._match_stop_sequences(tokens.astype(np.int64), done)
        done &= self.active
        return np.flatnonzero(done)

    def _match_stop_sequences(self, tokens: np.ndarray, done: np.ndarray) -> None:
        """Advance each watched row's automaton by its token, one gather per distinct stop list."""
        first = self.table_of[0]
        if first >= 0 and self.live[first] == self.batch_size:  # every slot runs one list: whole arrays
            table = self.tables[first]
            self.state = table.advance(self.state, tokens)
            done |= table.ends[self.state]
            return
        watched = np.flatnonzero(self.table_of >= 0)
        groups = [watched]
        if np.count_nonzero(self.live) > 1:  # rows sorted by stop table, cut where the table changes
            watched = watched[np.argsort(self.table_of[watched], kind="stable")]
            groups = np.split(watched, np.flatnonzero(np.diff(self.table_of[watched])) + 1)
        for rows in groups:
            table = self.tables[self.table_of[rows[0]]]
            states = table.advance(self.state[rows], tokens[rows])
            self.state[rows] = states
            done[rows] |= table.ends[states]

    def _evict(self, ended: np.ndarray) -> None:
        """The ended rows take their tokens from the ring and leave their slots, lowest slot first."""
        if ended.size:
            self.outbox += self._join(ended)
            self.row_of[ended] = None
            if self.tables:
                tables = self.table_of[ended]
                self.live -= np.bincount(tables[tables >= 0], minlength=self.live.size)
            self.active[ended] = False
            self.table_of[ended] = -1
            self.state[ended] = 0
            self.num_active -= ended.size
        if self.t - self.flushed == len(self.window):
            self._flush()

    def _flush(self) -> None:
        """The window is full: it goes into the ring, and the rows that the next window would overwrite there
        move their tokens into their lists."""
        steps, ring = self.window.shape[0], self.history.shape[1]
        column = self.flushed % ring
        self.history[:, column : column + steps] = self.window.T
        self.flushed = self.t
        old = np.flatnonzero(self.active & (self.born <= self.t - (ring - steps) - 1))
        if old.size:
            self._join(old)
            self.born[old] = self.t

    def _join(self, slots: np.ndarray) -> list[tuple]:
        """The requests of `slots`, whose rows' tokens not yet in their lists have joined them: taken from the ring
        (this window's first) as one flat list of Python ints, each row's side by side, then a slice a row."""
        ring, unflushed = self.history.shape[1], self.t - self.flushed
        if unflushed:  # this window's tokens of these rows join the ring first
            column = self.flushed % ring
            self.history[slots, column : column + unflushed] = self.window[:unflushed, slots].T
        born = self.born[slots]
        counts = self.t - born
        ends = np.cumsum(counts)
        where = np.repeat(born - ends + counts, counts)  # each token's step: born + its place in its row's run
        where += np.arange(where.size)
        where &= ring - 1  # (HISTORY is a power of two)
        where += np.repeat(slots * ring, counts)
        tokens, ends = python_ints(self.history.reshape(-1).take(where)), ends.tolist()
        rows = self.row_of[slots].tolist()
        for (_, row_tokens, _), begin, end in zip(rows, [0, *ends], ends):
            row_tokens += tokens[begin:end]
        return rows

    def _deliver(self) -> list[tuple[str, BaseException]]:
        """Call the ended rows' callbacks in order; each row leaves the outbox before its callback runs."""
        failures = []
        outbox = self.outbox
        while outbox:
            number, tokens, callback = outbox.popleft()
            try:
                if callback is not None:
                    callback(tokens)
            except Exception as exc:
                failures.append((f"r{number}", exc))
        return failures


def python_ints(block: np.ndarray) -> list[int]:
    """`block.tolist()` for a 1-D integer array. NOTE: making an int is most of what `tolist` costs, so ids below
    2**16 (every vocabulary the lessons use) are looked up in `SHARED_IDS`, an int per id made once. SPEED: what is
    gathered is the ints' addresses, as numbers; `tolist` reads an object array over them (it owns nothing, so never
    releases them) and takes its own reference to each, where `take` on the objects counted references one by one
    (118 -> 60 instructions a token; 1.12-1.14x the engine at 65,536 rows, paired A/B of 12 rounds)."""
    if block.dtype == np.uint16 or (block.size and block.min() >= 0 and block.max() < len(SHARED_IDS)):
        addresses = SHARED_ADDRESSES.take(block.astype(np.intp))
        return np.ndarray(addresses.size, dtype=object, buffer=addresses).tolist()
    return block.tolist()


def plain_tokens(value: object) -> list[int] | None:
    """SPEED: `check_tokens`' common case in C, 410 -> 250 ns: a list in which no entry equals True or False (so
    none is a bool) and whose entries `array("q")` takes (integers that fit in 64 bits), as a new list of ints."""
    try:
        if type(value) is list and True not in value and False not in value:
            return array("q", value).tolist()
    except (TypeError, ValueError, OverflowError):
        pass
    return None


def read_only(values: np.ndarray) -> np.ndarray:
    """A view of `values` that the model cannot write through."""
    view = values.view()
    view.flags.writeable = False
    return view
