"""Continuous batching as array operations: a NumPy engine in the seeds' API, to study beside the loop engine.

It gives what the loop engine (`engine.BatchInferenceEngine`, without a KV pool) gives, the same
outputs in the same callback order, but it keeps the batch as arrays with one entry per slot, so
a step is a dozen whole-array operations and no Python loop over the rows:

- `active` (the mask), `lengths` (prompt + generated), `last` (each row's last token) and
  `remaining` (max_tokens, counted down);
- `window`: the generated tokens of the last `WINDOW` steps, time-major, shape (steps, slots), so
  a step writes one contiguous row, `window[k]`. When a row ends, and every `WINDOW` steps for the
  rows still running, the window is copied into the rows' Python lists (prompt + generated), which
  is what the callbacks receive;
- the stop token, checked by one comparison, `tokens == stop_token`;
- stop sequences as automaton tables (`stop_table.py`): one gather per step for each distinct list;
- free slots read from the mask, `np.flatnonzero(~active)`, refilled lowest first from a FIFO.

Why time-major: in a row-major buffer (slots, tokens) consecutive slots are a whole row apart and
each row's next position is its own, so a step's write is a scatter touching one cache line per
slot; the time-major window writes the B tokens side by side (`benchmarks/vectorised.py` prints
both at 100,000 rows). The tokens become Python ints in bulk, one `tolist` per window or per step's
ended rows: that conversion, which the callbacks' lists need, is most of what a token costs here.

The fast path is an array model, `next_tokens_array(last_tokens, lengths) -> one token per slot`
(`last_token_model.py`; the entries of free slots are ignored). A plain per-row model
(`generate_next_tokens`, its padded form with `padded=True`, `next_tokens`, or a callable) works
too: it reads every row's whole prefix each step, so the window is then one step long and the rows'
lists are brought up to date every step: correct, and as slow as such a model is.

Left out, as the seeds leave them out: cancel, arrival steps, the event log, static batching and
memory. Bad arguments are refused as the loop engine refuses them (its own checks); a model answer
of the wrong shape or type raises ModelError and changes no row; a callback that raises does not
stop the others (CallbackError once the step's callbacks have all run). Each distinct stop list
keeps its table for the engine's life.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from engine.core.errors import CallbackError, ModelError
from engine.core.model_call import call_model
from engine.core.models import model_caller
from engine.core.validation import (
    INT64_MAX,
    check_bool,
    check_callable,
    check_int,
    check_stop_sequences,
    check_token,
    check_tokens,
)
from engine.practice.stop_table import stop_table

SHARED_IDS = np.array(range(1 << 16), dtype=object)  # the Python int of each token id below 2**16 (`python_ints`)
WINDOW = 64  # steps of generated tokens kept in the window before they are copied into the rows' lists
FLUSH_CHUNK = 1024  # rows whose window tokens are copied at once: their temporaries (1024 x 64) stay in cache


class Row:
    """One request. `slot` and `request_id` are what a model's error message names."""

    __slots__ = ("request_id", "tokens", "max_tokens", "callback", "table", "slot")

    def __init__(self, request_id: str, tokens: list[int], max_tokens: int, callback, table: int):
        self.request_id, self.tokens, self.max_tokens, self.callback = request_id, tokens, max_tokens, callback
        self.table = table  # index of its stop table in `VectorisedEngine.tables`, -1 for none
        self.slot = -1


class VectorisedEngine:
    def __init__(self, model, batch_size: int, stop_token: int | None, *, padded: bool = False):
        self.batch_size = slots = check_int("batch_size", batch_size, minimum=1)
        self.stop_token = None if stop_token is None else check_token("stop_token", stop_token)
        self.padded = check_bool("padded", padded)
        self.array_model = getattr(model, "next_tokens_array", None)
        self.call = None if self.array_model else model_caller(model, padded)
        self.window = np.zeros((WINDOW if self.array_model else 1, slots), dtype=np.int64)
        self.k = 0  # the window row the next step writes
        self.start = np.zeros(slots, dtype=np.intp)  # the window row of each row's first token not in its list
        self.active = np.zeros(slots, dtype=bool)
        self.lengths, self.last, self.remaining = (np.zeros(slots, dtype=np.int64) for _ in range(3))
        self.table_of = np.full(slots, -1, dtype=np.intp)  # each slot's stop table, -1 for none
        self.state = np.zeros(slots, dtype=np.intp)  # each slot's state in its stop table
        self.rows: list[Row | None] = [None] * slots
        self.num_active = 0
        self.tables, self.table_ids = [], {}  # the stop tables; id(stop sequences) -> (them, their table's index)
        self.live_tables: dict[int, int] = {}  # stop table -> running rows that use it
        self.incoming: deque[Row] = deque()  # submitted since the last step's intake
        self.waiting: deque[Row] = deque()  # FIFO
        self.outbox: deque[Row] = deque()  # ended, callback not yet called
        self.submitted = self.steps = 0
        self.stepping = False  # inside step(): a callback may submit, not step

    def submit_request(self, prompt_tokens, max_tokens: int, callback=None, stop_sequences=None) -> str:
        prompt = check_tokens("prompt_tokens", prompt_tokens)
        check_int("max_tokens", max_tokens, minimum=0, maximum=INT64_MAX)
        check_callable("callback", callback)
        stops = check_stop_sequences("stop_sequences", stop_sequences)
        request_id = f"r{self.submitted}"
        self.incoming.append(Row(request_id, prompt, max_tokens, callback, self._table_id(stops) if stops else -1))
        self.submitted += 1
        return request_id

    def _table_id(self, stops: tuple[tuple[int, ...], ...]) -> int:
        """The index in `tables` of the stop table of `stops`, built the first time (it may refuse the list).

        SPEED: looked up by the checked tuple's identity first (the checks hand back the same tuple for a
        list they have seen), since hashing a long list of stop sequences costs more than a request's step."""
        known = self.table_ids.get(id(stops))
        if known is None:  # (the entry keeps `stops` alive, so its id cannot name another list)
            table = stop_table(stops)
            known = self.table_ids[id(stops)] = (stops, len(self.tables))
            self.tables.append(table)
        return known[1]

    def run(self) -> None:
        failures = []
        while self.incoming or self.waiting or self.num_active or self.outbox:
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
        arrived, self.incoming = self.incoming, deque()
        for row in arrived:
            (self.waiting if row.max_tokens else self.outbox).append(row)
        failures = self._deliver()
        self._admit()
        if self.num_active:
            ended = self._append_and_check(self._call_model())
            self._evict(ended)
            failures += self._deliver()
        self.steps += 1
        return failures

    def _admit(self) -> None:
        count = min(len(self.waiting), self.batch_size - self.num_active)
        if not count:
            return
        slots = np.flatnonzero(~self.active)[:count]  # the lowest free slots
        rows = [self.waiting.popleft() for _ in range(count)]
        for slot, row in zip(slots.tolist(), rows):
            row.slot, self.rows[slot] = slot, row
            if row.table >= 0:
                self.live_tables[row.table] = self.live_tables.get(row.table, 0) + 1
        self.active[slots] = True
        self.lengths[slots] = [len(row.tokens) for row in rows]
        self.last[slots] = [row.tokens[-1] if row.tokens else 0 for row in rows]
        self.remaining[slots] = [row.max_tokens for row in rows]
        self.table_of[slots] = [row.table for row in rows]
        self.state[slots] = 0
        self.start[slots] = self.k
        self.num_active += count

    def _call_model(self) -> np.ndarray:
        """One token per slot (free slots' entries are ignored); a wrong answer raises ModelError."""
        if self.array_model is None:  # a per-row model: the loop engine's call and checks, on the running rows
            running = [self.rows[slot] for slot in np.flatnonzero(self.active).tolist()]
            prefixes = [row.tokens for row in running]
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
        tokens = self.window[self.k]
        np.copyto(tokens, answer, casting="unsafe")  # (checked above: integers that fit in 64 bits)
        self.k += 1
        np.copyto(self.last, tokens)
        self.lengths += 1
        self.remaining -= 1
        done = self.remaining == 0
        if self.stop_token is not None:
            done |= tokens == self.stop_token
        if self.live_tables:
            self._match_stop_sequences(tokens, done)
        done &= self.active
        return np.flatnonzero(done)

    def _match_stop_sequences(self, tokens: np.ndarray, done: np.ndarray) -> None:
        """Advance each watched row's automaton by its token, one gather per distinct stop list."""
        if self.live_tables.get(self.table_of[0]) == self.batch_size:  # every slot runs one list: whole arrays
            table = self.tables[self.table_of[0]]
            self.state = table.advance(self.state, tokens)
            done |= table.ends[self.state]
            return
        watched = np.flatnonzero(self.table_of >= 0)
        groups = [watched]
        if len(self.live_tables) > 1:  # rows sorted by stop table, cut where the table changes
            watched = watched[np.argsort(self.table_of[watched], kind="stable")]
            groups = np.split(watched, np.flatnonzero(np.diff(self.table_of[watched])) + 1)
        for rows in groups:
            table = self.tables[self.table_of[rows[0]]]
            states = table.advance(self.state[rows], tokens[rows])
            self.state[rows] = states
            done[rows] |= table.ends[states]

    def _evict(self, ended: np.ndarray) -> None:
        """The ended rows take their last tokens from the window and leave their slots, lowest slot first."""
        if ended.size:
            tails, begins, ends = self._window_tokens(ended, self.k)
            for slot, begin, end in zip(ended.tolist(), begins, ends):
                row, self.rows[slot] = self.rows[slot], None
                row.tokens += tails[begin:end]
                if row.table >= 0:
                    self.live_tables[row.table] -= 1
                    if not self.live_tables[row.table]:
                        del self.live_tables[row.table]
                self.outbox.append(row)
            self.active[ended] = False
            self.table_of[ended] = -1
            self.state[ended] = 0
            self.num_active -= ended.size
        if self.k == len(self.window):
            self._flush()

    def _flush(self) -> None:
        """The window is full: the running rows' tokens in it move to their lists, and it starts again."""
        running = np.flatnonzero(self.active)
        if self.array_model is None:  # a per-row model reads the whole prefixes: each token joins its list now
            for slot, token in zip(running.tolist(), self.window[0, running].tolist()):
                self.rows[slot].tokens.append(token)
        else:  # the whole block becomes Python ints in one call, then joins the rows' lists
            rows = self.rows
            for first in range(0, running.size, FLUSH_CHUNK):  # a chunk at a time: the temporaries stay in cache
                chunk = running[first : first + FLUSH_CHUNK]
                block, begins, ends = self._window_tokens(chunk, len(self.window))
                for slot, begin, end in zip(chunk.tolist(), begins, ends):
                    rows[slot].tokens += block[begin:end]
        self.start[:] = 0
        self.k = 0

    def _window_tokens(self, slots: np.ndarray, steps: int) -> tuple[list[int], list[int], list[int]]:
        """The tokens of `slots` in the window's first `steps` rows, as one flat list of Python ints, each slot's
        tokens side by side, and where each slot's tokens not yet in its list begin and end in it."""
        tokens = python_ints(self.window[:steps, slots].T)
        ends = np.arange(steps, steps * (slots.size + 1), steps)
        return tokens, (ends - steps + self.start[slots]).tolist(), ends.tolist()

    def _deliver(self) -> list[tuple[str, BaseException]]:
        """Call the ended rows' callbacks in order; each row leaves the outbox before its callback runs."""
        failures = []
        while self.outbox:
            row = self.outbox.popleft()
            try:
                if row.callback is not None:
                    row.callback(row.tokens)
            except Exception as exc:
                failures.append((row.request_id, exc))
        return failures


def python_ints(block: np.ndarray) -> list[int]:
    """`block.ravel().tolist()`: the entries of an int64 array as one flat list of Python ints.

    NOTE: making a Python int is most of what `tolist` costs. Token ids below 2**16 (every vocabulary
    the lessons use) are looked up instead in `SHARED_IDS`, an object array holding one int per id made
    once, so a list entry only takes a reference to it: about half the cost. Others go the plain way.
    One flat list, not a list per row: a 2-D `tolist` makes a view of each row, and costs twice as much."""
    if block.size and block.min() >= 0 and block.max() < len(SHARED_IDS):
        return SHARED_IDS[block].ravel().tolist()
    return block.ravel().tolist()


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of `array` that the model cannot write through."""
    view = array.view()
    view.flags.writeable = False
    return view
