"""The continuous-batching engine: a fixed set of slots, a FIFO queue, one model call a step.

NOTE: each step admits waiting requests *before* the model call (refill, then call,
then evict), so a slot freed at the end of step k is already busy at step k + 1 and no
slot sits empty during a model call while work waits. Static batching (the seeds'
Part 1) differs in one place: it admits only into an empty batch.

The order inside `step()` (see ../shared/engine-contract.md):
  0. cancellations requested since the last step take effect; arrivals join the queue
     (a request with max_tokens == 0 finishes here, without a slot);
  1. admit into free slots, lowest id first;  2. build the batch view;
  3. one model call;  4. append one token per active row;
  5. check termination: stop token, then stop sequence, then max_tokens;
  6. evict finished rows and deliver their callbacks.
"""

from __future__ import annotations

from array import array

from .batch import call_model
from .errors import CallbackError, ModelError
from .events import NONE, EventKind, EventLog, LogSettings, RequestInfo
from .hooks import EngineHooks
from .models import model_caller
from .request import FinishReason, Sequence, new_sequence
from .scheduler import Scheduler
from .stops import NO_MATCH
from .validation import MAX_BATCH_SIZE, check_bool, check_choice, check_int, check_token

STOP_MATCH = EventKind.STOP_MATCH


class BatchInferenceEngine(EngineHooks):
    def __init__(
        self, model, batch_size: int, stop_token: int | None, *, batching: str = "continuous", padded: bool = False
    ):
        check_int("batch_size", batch_size, minimum=1, maximum=MAX_BATCH_SIZE)
        if stop_token is not None:
            check_token("stop_token", stop_token)
        check_choice("batching", batching, ("continuous", "static"))
        check_bool("padded", padded)
        self.model = model
        self._call = model_caller(model, padded)
        self.batch_size, self.stop_token, self.batching, self.padded = batch_size, stop_token, batching, padded
        self.event_log = EventLog(LogSettings(batch_size, stop_token, batching, padded))
        self._scheduler = Scheduler(batch_size, static=batching == "static")
        self._live: dict[str, Sequence] = {}  # submitted, not yet delivered
        self._submitted = 0
        self._cancelled: list[Sequence] = []
        self._unreported: list[tuple[str, BaseException]] = []  # callback failures not yet raised
        self._in_step = False
        self._streams = 0  # unfinished requests with an on_token callback
        self._batch_version, self._batch_cache = -1, None
        self.clock = 0  # the next step's number

    # -- the seeds' API ----------------------------------------------------------------
    def submit_request(
        self,
        prompt_tokens: list[int],
        max_tokens: int,
        callback=None,
        stop_sequences: list[list[int]] | None = None,
        *,
        request_id: str | None = None,
        arrival_step: int | None = None,
        on_token=None,
    ) -> str:
        """Queue a request and return its id. Nothing is queued if an argument is bad.

        `callback(tokens)` gets prompt + generated tokens once, when the request ends;
        `on_token(token)` gets each generated token as it is appended (streaming);
        `arrival_step` hides the request from the scheduler until that step.
        """
        if request_id is None:
            request_id = self._fresh_id()
        elif not isinstance(request_id, str):
            raise TypeError(f"request_id: must be a str, got {type(request_id).__name__}")
        if request_id in self._live or request_id in self.event_log.request_index:
            raise ValueError(f"request_id: {request_id!r} is already in use")
        seq = new_sequence(
            request_id,
            prompt_tokens,
            max_tokens,
            callback,
            stop_sequences,
            on_token,
            arrival_step,
            order=self._submitted,
            now=self.clock,
            matcher=self._matcher,
        )
        seq.end = seq.prompt_len + self._limit(seq)
        self._submitted += 1
        self._streams += seq.on_token is not None
        self._live[request_id] = seq
        self._scheduler.add(seq)
        return request_id

    def _fresh_id(self) -> str:
        """`r<submission number>`, skipping ids a caller already chose."""
        n = self._submitted
        while f"r{n}" in self._live or f"r{n}" in self.event_log.request_index:
            n += 1
        return f"r{n}"

    def cancel(self, request_id: str) -> bool:
        """Cancel at the next step boundary; False if the request has already finished.

        Its callback still runs once, with the prompt plus what it generated so far.
        """
        seq = self._live.get(request_id)
        if seq is None:
            if request_id in self.event_log.request_index:
                return False
            raise ValueError(f"request_id: no request {request_id!r} was submitted")
        if not seq.cancel_requested:
            seq.cancel_requested = True
            self._cancelled.append(seq)
        return True

    def run(self) -> None:
        """Step until the queue is empty and every slot is free.

        A model fault raises ModelError at once (call run() again to resume); callback
        failures are collected and raised together as CallbackError once all work is done.
        """
        failures: list[tuple[str, BaseException]] = []
        while True:
            try:
                if not self.step():
                    break
            except CallbackError as exc:
                failures.extend(exc.failures)
            except ModelError:
                self._unreported[:0] = failures  # reported by the run that resumes
                raise
        if failures:
            raise CallbackError(failures)

    @property
    def next_step(self) -> int:
        """The number the next `step()` will have (it jumps ahead when only future arrivals remain)."""
        scheduler = self._scheduler
        if scheduler.num_running or scheduler.waiting or self._cancelled or not scheduler.pending:
            return self.clock
        return max(self.clock, scheduler.next_arrival())

    def has_work(self) -> bool:
        return self._scheduler.has_work() or bool(self._cancelled)

    @property
    def slot_table(self) -> dict[int, str]:
        """slot id -> request id, for the occupied slots."""
        return {seq.slot: seq.request_id for seq in self._scheduler.running()}

    @property
    def num_unfinished(self) -> int:
        """Requests submitted whose callback has not run yet."""
        return len(self._live)

    @property
    def waiting(self) -> list[str]:
        return [seq.request_id for seq in self._scheduler.waiting]

    # -- one step ----------------------------------------------------------------------
    def step(self) -> bool:
        """Advance one step (one model call if any row is active); False when idle."""
        if self._in_step:
            raise RuntimeError("step() and run() cannot be called from inside a callback")
        if not self.has_work():
            return False
        scheduler = self._scheduler
        self.clock = self.next_step  # idle until the next arrival
        self._in_step = True
        try:
            self._boundary()
            if scheduler.num_running:
                self._decode()
            self.clock += 1
        finally:
            self._in_step = False
        if self._unreported:  # includes failures of a step whose model call then failed
            failures, self._unreported = self._unreported, []
            raise CallbackError(failures)
        return True

    def _boundary(self) -> None:
        """Cancellations, arrivals and admissions: everything before the model call."""
        step, log, scheduler = self.clock, self.event_log, self._scheduler
        self._apply_cancellations()
        for seq in scheduler.due(step):
            self._arrive(seq)
            if seq.max_tokens == 0:
                self._finish(seq, FinishReason.MAX_TOKENS)
            else:
                scheduler.waiting.append(seq)
        self._apply_cancellations()  # callbacks above may have cancelled a waiting request
        for seq in scheduler.admit():
            log.append(step, EventKind.ADMIT, seq.slot, seq.log_index)
            self._admitted(seq)

    def _apply_cancellations(self) -> None:
        while self._cancelled:  # a cancelled request's callback may cancel another
            seq = self._cancelled.pop(0)
            if seq.finish_reason is not None:  # finished in the step it was cancelled in
                continue
            if seq.slot is None:
                self._scheduler.withdraw(seq)
                if seq.request_id not in self.event_log.request_index:
                    self._arrive(seq)
            self._finish(seq, FinishReason.CANCELLED)

    def _arrive(self, seq: Sequence) -> None:
        info = RequestInfo(seq.request_id, tuple(seq.tokens[: seq.prompt_len]), seq.max_tokens, seq.stop_sequences)
        seq.log_index = self.event_log.arrive(self.clock, info)

    def _batch(self) -> tuple[list[Sequence], list[list[int]], array, array]:
        """The rows in slot order, their token lists, slot ids and log indices; rebuilt only
        when a slot was taken or freed since the last step."""
        scheduler = self._scheduler
        if self._batch_version != scheduler.version:
            self._batch_cache = _row_view(scheduler.running())
            self._batch_version = scheduler.version
        return self._batch_cache

    def _decode(self) -> None:
        """Steps 2-6: one model call, one token per row, termination, eviction.

        The hot path: per row only an append and the termination checks; the emit events
        of the whole step are written column by column.
        """
        step, log, stop_token = self.clock, self.event_log, self.stop_token
        rows, prefixes, slots, requests = self._batch()
        try:
            answers = call_model(self._call, step, self._scheduler.slots, rows, prefixes, self.padded)
        except Exception as exc:
            log.error(step, NONE, NONE, str(exc))
            raise
        log.model_call(step, self.batch_size if self.padded else len(rows), self._scheduler.active_mask)
        ordered = self._answer_order(rows)
        if ordered is not rows:
            rows, prefixes, slots, requests = _row_view(ordered)
        tokens = answers.tolist()
        finished = []  # (seq, reason, matched stop: -1 the stop token, a sequence index, or None)
        for seq, token in zip(rows, tokens):
            seq.tokens.append(token)
            if token == stop_token:
                finished.append((seq, FinishReason.STOP_TOKEN, -1))
                continue
            stops = seq.stops
            if stops is not None:
                seq.stop_state = state = stops.advance(seq.stop_state, token)
                if stops.match[state] != NO_MATCH:
                    finished.append((seq, FinishReason.STOP_SEQUENCE, stops.match[state]))
                    continue
            if len(seq.tokens) >= seq.end:
                finished.append((seq, FinishReason.MAX_TOKENS, None))
        log.emits(step, slots, requests, answers, map(len, prefixes))
        if self._streams:
            for seq, token in zip(rows, tokens):
                if seq.on_token is not None:
                    self._deliver(seq, seq.on_token, token)
        for seq, _, matched in finished:  # phase 5 events, then phase 6
            if matched is not None:
                log.append(step, STOP_MATCH, seq.slot, seq.log_index, matched)
        for seq, reason, _ in finished:
            self._finish(seq, reason)

    def _finish(self, seq: Sequence, reason: FinishReason) -> None:
        """Evict (freeing its slot, if any) and deliver the callback exactly once."""
        log = self.event_log
        slot = NONE if seq.slot is None else seq.slot
        log.append(self.clock, EventKind.EVICT, slot, seq.log_index, reason)
        seq.finish_reason = reason
        self._streams -= seq.on_token is not None
        if seq.slot is not None:
            self._release(seq)
        del self._live[seq.request_id]
        if seq.callback is not None:
            self._deliver(seq, seq.callback, self._delivered(seq))

    def _deliver(self, seq: Sequence, function, value) -> None:
        try:
            function(value)
        except Exception as exc:
            what = "callback" if function is seq.callback else "on_token"
            self.event_log.error(
                self.clock,
                NONE if seq.slot is None else seq.slot,
                seq.log_index,
                f"{what} of request {seq.request_id} raised {type(exc).__name__}: {exc}",
            )
            self._unreported.append((seq.request_id, exc))


def _row_view(rows: list[Sequence]) -> tuple[list[Sequence], list[list[int]], array, array]:
    """Rows with their token lists (the ragged batch), slot ids and event-log indices."""
    return (
        rows,
        [seq.tokens for seq in rows],
        array("i", [seq.slot for seq in rows]),
        array("i", [seq.log_index for seq in rows]),
    )
