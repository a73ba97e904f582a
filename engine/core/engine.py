"""The continuous-batching engine: a fixed set of slots, a waiting queue (first come, first
served; by priority where requests have one), one model call a step.

NOTE: each step admits waiting requests *before* the model call (refill, then call,
then evict), so a slot freed at the end of step k is already busy at step k + 1 and no
slot sits empty during a model call while work waits. Static batching (the seeds' Part 1:
the four problem statements the project grew out of, `engine/__init__.py`) differs in one
place, `_may_admit` (below): it admits only into an empty batch.

One step, in the contract's order (docs/conventions.md, the project's answers to the
questions the seeds leave open):
  1. cancellations asked for since the last step take effect; arrivals join the queue
     (a request with max_tokens == 0 finishes here, without a slot);
  2. admit into free slots, lowest id first;
  3. build the batch from the slot table;  4. one model call;
  5. append one token per row and check termination: stop token, stop sequence, max_tokens;
  6. evict finished rows, then deliver the step's callbacks.

Callbacks run only after the step's state is complete (phase 6, and after phase 1's
cancellations), from a queue: a callback that raises, even with a BaseException such as
KeyboardInterrupt, leaves the engine consistent, and whatever was not yet delivered is
delivered by the next `step()` or `run()`.
"""

from __future__ import annotations

from array import array
from collections import deque
from typing import NamedTuple

from .block_manager import BlockManager
from .config import EngineConfig
from .errors import CallbackError, ModelError
from .hooks import EngineHooks
from .log.event_log import EventLog
from .log.events import ABSENT, EventKind, RequestInfo
from .memory_scheduler import MemoryScheduler
from .model_call import call_model
from .models import model_caller
from .outbox import Outbox
from .request import FinishReason, Sequence, Status, append_and_check, new_sequence
from .scheduler import NOTHING, Plan, Scheduler
from .validation import MAX_STEP


class BatchInferenceEngine(EngineHooks):
    def __init__(
        self,
        model,
        batch_size: int,
        stop_token: int | None,
        *,
        batching: str = "continuous",
        padded: bool = False,
        kv_blocks: int | None = None,
        block_size: int = 16,
        kv_policy: str = "paged",
        token_budget: int | None = None,
        fill_timeout: int | None = None,
    ):
        """`kv_blocks`, `block_size`, `kv_policy` and `token_budget` model the KV cache and chunked
        prefill (docs/conventions.md, "Memory"); left at their defaults, memory is unlimited.

        `fill_timeout` (steps; static batching only) makes an empty batch wait to fill: it admits
        only when the queue can fill every slot or the oldest waiting request has waited
        `fill_timeout` steps (Triton's `max_queue_delay`, in steps). None (or 0) runs at once with
        what is there, as the seeds' Part 1 does. Continuous batching always runs at once: a free
        slot is refilled the step it frees, so `fill_timeout` does not change it."""
        self.config = config = EngineConfig(  # checks every setting, naming it (config.py)
            batch_size, stop_token, batching, padded, kv_blocks, block_size, kv_policy, token_budget, fill_timeout
        )
        self.model = model
        self._call = model_caller(model, config.padded)
        self._fill_timeout = config.fill_timeout if config.batching == "static" and config.fill_timeout else None
        self.event_log = EventLog(config)
        self._blocks = BlockManager(config.kv_blocks, config.block_size) if config.kv_blocks is not None else None
        self._memory = config.memory  # the KV pool or the token budget is in play
        if self._memory:
            reserve = config.kv_policy == "reserve"
            self._scheduler = MemoryScheduler(config.batch_size, self._blocks, reserve, config.token_budget, self)
        else:
            self._scheduler = Scheduler(config.batch_size)
        self._preempted_at = -1  # the last step that preempted (it admits nobody, even when retried)
        self._live: dict[str, Sequence] = {}  # submitted, not yet finished
        self._submitted = 0
        self._cancelled: deque[Sequence] = deque()  # cancel() was called; takes effect at the next step
        self._outbox = Outbox(self.event_log)  # callbacks waiting to run
        self._in_step = False
        self._streams = 0  # SPEED: unfinished requests with an on_token callback (0: skip the loop)
        self._batch_version, self._batch_cache = -1, None  # SPEED: the batch view, see _build_batch
        self.clock = 0  # the next step's number

    @classmethod
    def from_config(cls, model, config: EngineConfig) -> BatchInferenceEngine:
        """An engine with the settings of one `EngineConfig` (a scenario's `[engine]` table)."""
        options = {name: getattr(config, name) for name in config.__slots__ if name not in ("batch_size", "stop_token")}
        return cls(model, config.batch_size, config.stop_token, **options)

    batch_size = property(lambda self: self.config.batch_size)
    stop_token = property(lambda self: self.config.stop_token)
    batching = property(lambda self: self.config.batching)
    padded = property(lambda self: self.config.padded)

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
        priority: int = 0,
    ) -> str:
        """Queue a request and return its id. Nothing is queued if an argument is bad.

        `callback(tokens)` gets prompt + generated tokens once, when the request ends;
        `on_token(token)` gets each generated token as it is appended (streaming);
        `arrival_step` hides the request from the scheduler until that step;
        `priority` (an int, default 0) orders admission as vLLM's priority scheduling does: among
        the requests that have arrived, the lower value first, equal values in arrival order (a
        preempted row first among its own priority). It never preempts a running row. With every
        priority equal, admission is the contract's FIFO.
        """
        if request_id is None:
            request_id = self._fresh_id()
        elif not isinstance(request_id, str):
            raise TypeError(f"request_id: must be a str, got {type(request_id).__name__}")
        if request_id in self._live or request_id in self.event_log.request_index:
            raise ValueError(f"request_id: {request_id!r} is already in use")
        seq = new_sequence(  # checks every argument, naming the field
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
            limit=self._limit,
            priority=priority,
        )
        if self._blocks is not None and seq.max_tokens:
            self._blocks.check_fits(seq.prompt_len + seq.max_tokens)  # else it could never run
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
        O(1): the request is marked and the queues skip it when they reach it.
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
                self._outbox.failures[:0] = failures  # reported by the run that resumes
                raise
        if failures:
            raise CallbackError(failures)

    # -- what a front end may read -----------------------------------------------------
    @property
    def next_step(self) -> int:
        """The number the next `step()` will have (it jumps ahead when only future arrivals remain)."""
        scheduler = self._scheduler
        if scheduler.num_running or self._cancelled or (scheduler.num_waiting and self._fill_timeout is None):
            return self.clock
        arrival = scheduler.next_arrival()
        if scheduler.num_waiting:  # an empty static batch waits to fill: until it times out or someone arrives
            wake = scheduler.batch_fills_at(self.clock, self._fill_timeout)
            return max(self.clock, wake if arrival is None else min(wake, arrival))
        return self.clock if arrival is None else max(self.clock, arrival)

    def has_work(self) -> bool:
        return bool(self._live or self._outbox)

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
        return [seq.request_id for seq in self._scheduler.queued()]

    # -- one step ----------------------------------------------------------------------
    def step(self) -> bool:
        """Advance one step (one model call if any row is active); False when idle."""
        if self._in_step:
            raise RuntimeError("step() and run() cannot be called from inside a callback")
        if not self.has_work():
            return False
        self._in_step = True
        try:
            self._outbox.deliver()  # what an interrupted step left undelivered
            if self._live:
                self._step()
        finally:
            self._in_step = False
        if self._outbox.failures:  # includes those of a step whose model call then failed
            raise CallbackError(self._outbox.take_failures())
        return True

    def _step(self) -> None:
        """One step, in the contract's order."""
        self.clock = self.next_step  # idle until the next arrival
        if self.clock >= MAX_STEP:
            raise OverflowError(f"step: {self.clock:,} is the event log's last step number")
        self._take_arrivals_and_cancellations()  # 1
        plan = self._schedule()  # 2
        if self._scheduler.num_running:
            batch = self._build_batch()  # 3
            tokens = self._call_model(batch, plan)  # 4
            finished = self._postprocess(batch, tokens, plan)  # 5
            self._evict(finished)  # 6
        self.clock += 1
        self._outbox.deliver()  # 6: the step's callbacks, now that its state is complete

    def _take_arrivals_and_cancellations(self) -> None:
        """Phase 1: cancellations take effect, then arrivals join the queue."""
        self._apply_cancellations()
        arrived = self._scheduler.due(self.clock)
        if not arrived:
            return
        for seq in arrived:
            self._arrive(seq)
            if seq.max_tokens == 0:
                self.event_log.extend(self.clock, self._finish(seq, FinishReason.MAX_TOKENS))  # needs no slot
            else:
                self._scheduler.enqueue(seq)
        self._outbox.deliver()
        self._apply_cancellations()  # a callback above may have cancelled a waiting request

    def _apply_cancellations(self) -> None:
        while self._cancelled:
            while self._cancelled:
                seq = self._cancelled.popleft()
                if seq.status is Status.FINISHED:  # finished in the step it was cancelled in
                    continue
                if seq.status is Status.PENDING:  # cancelled before it arrived
                    self._arrive(seq)
                self.event_log.extend(self.clock, self._finish(seq, FinishReason.CANCELLED))
            self._outbox.deliver()  # a cancelled request's callback may cancel another

    def _arrive(self, seq: Sequence) -> None:
        prompt = tuple(seq.tokens[: seq.prompt_len])
        info = RequestInfo(seq.request_id, prompt, seq.max_tokens, seq.stop_sequences, seq.priority)
        seq.log_index = self.event_log.arrive(self.clock, info)

    def _may_admit(self, running: int) -> bool:
        """Whether waiting requests may take free slots now, with `running` rows in the batch: the one
        place where static and continuous batching differ (a hook: the zoo varies it)."""
        return self.batching == "continuous" or running == 0  # static batching: only into an empty batch

    def _schedule(self) -> Plan:
        """Phase 2: free slots are filled from the head of the queue (static batching: only an empty
        batch). With a KV pool or a token budget, running rows first claim their blocks and tokens,
        preempting the newest if the pool runs out (engine/core/memory_scheduler.py)."""
        scheduler, log, step = self._scheduler, self.event_log, self.clock
        may_admit = self._may_admit(scheduler.num_running) and self._preempted_at != step
        if may_admit and self._fill_timeout is not None and not scheduler.num_running:
            may_admit = scheduler.batch_fills_at(step, self._fill_timeout) <= step
        plan = scheduler.schedule(step, may_admit)
        if scheduler.held:  # (only the zoo's idle-slot bug holds slots)
            scheduler.return_held_slots()
        if plan is NOTHING:
            return plan
        if plan.grown:  # SPEED: decoding rows' new blocks, a column at a time
            log.kv_allocs(step, *plan.grown)
        events = []  # (kind, slot, request, a): SPEED, written a column at a time below
        for action in plan.actions:
            seq, slot = action.seq, action.slot
            if action.kind is EventKind.ADMIT:
                events.append((EventKind.ADMIT, slot, seq.log_index, 0))
                events.extend([(EventKind.KV_ALLOC, slot, seq.log_index, block) for block in action.blocks])
                if not seq.generated:  # readmitted after a preemption, it keeps its stop-matching state
                    seq.stop_state = self._stop_state_at_admission(seq, scheduler.previous[slot])
            elif action.kind is EventKind.KV_ALLOC:  # a running row's new blocks
                events.extend([(EventKind.KV_ALLOC, slot, seq.log_index, block) for block in action.blocks])
            else:  # PREEMPT: back to the front of the queue, to recompute its tokens
                events.append((EventKind.PREEMPT, slot, seq.log_index, len(seq.tokens)))
                events.append((EventKind.KV_FREE, slot, seq.log_index, action.freed))
                self._preempted_at = step
        log.extend(step, events)
        return plan

    def _build_batch(self) -> Batch:
        """Phase 3: the rows in slot order, with their token lists, slot ids and event-log indices.
        A row whose prefill is still under way is left out.

        SPEED: rebuilt only when a slot was taken or freed since the last step.
        """
        scheduler = self._scheduler
        if scheduler.prefilling and (some := scheduler.rows_to_send()) is not None:
            return _row_view(some, self.clock)
        if self._batch_version != scheduler.version:  # (every row of a kept view emits every step)
            self._batch_cache = _row_view(scheduler.running(), self.clock)
            self._batch_version = scheduler.version
        return self._batch_cache

    def _call_model(self, batch: Batch, plan: Plan) -> array:
        """Phase 4: one model call; a fault changes no row and raises ModelError. A step whose
        rows only prefill logs its call with 0 rows, and the model is not called."""
        step, log, rows, config = self.clock, self.event_log, batch.rows, self.config
        prefill = plan.prefill_tokens() if self._memory else None
        if not rows:
            log.model_call(step, 0, 0, prefill)
            return array("q")
        try:
            tokens = call_model(self._call, step, rows, batch.prefixes, config.batch_size, config.padded)
        except Exception as exc:
            log.error(step, ABSENT, ABSENT, str(exc))
            raise
        log.model_call(step, config.batch_size if config.padded else len(rows), batch.mask, prefill)
        return tokens

    def _postprocess(self, batch: Batch, tokens: array, plan: Plan) -> list[tuple[Sequence, FinishReason, int | None]]:
        """Phase 5: the step's prefill work is done; append each row's token and check termination;
        returns the finished rows, each (row, reason, what matched: see `append_and_check`).

        SPEED: the emit events of the whole step are written column by column.
        """
        log, step = self.event_log, self.clock
        if plan.work:
            self._scheduler.advance_prefills(plan, step)
            log.prefills(step, plan.work)
        ordered = self._answer_order(batch.rows)
        if ordered is not batch.rows:
            batch = _row_view(ordered, step)
        answers = tokens.tolist()
        finished = append_and_check(batch.rows, answers, self.config.stop_token)
        log.emits(step, batch.slots, batch.requests, tokens, batch.starts)
        if self._streams:
            for seq, token in zip(batch.rows, answers):
                if seq.on_token is not None:
                    self._outbox.put(seq, seq.on_token, token, step)
        for seq, _, matched in finished:
            if matched is not None:
                log.append(step, EventKind.STOP_MATCH, seq.slot, seq.log_index, matched)
        return finished

    def _evict(self, finished: list[tuple[Sequence, FinishReason, int | None]]) -> None:
        """Phase 6: finished rows leave their slots; their callbacks are queued for delivery.

        SPEED: the step's evict and kv_free events are written a column at a time.
        """
        if not finished:  # SPEED: most steps finish nobody
            return
        events = []
        for seq, reason, _ in finished:
            events += self._finish(seq, reason)
        self.event_log.extend(self.clock, events)

    def _finish(self, seq: Sequence, reason: FinishReason) -> list[tuple[int, int, int, int]]:
        """Evict (freeing its slot, if any) and queue its callback, exactly once. Returns the events
        for the caller to log, each (kind, slot, request, a): its evict, then its kv_free if it held blocks."""
        slot = ABSENT if seq.slot is None else seq.slot
        events = [(EventKind.EVICT, slot, seq.log_index, reason)]
        seq.finish_reason = reason
        self._streams -= seq.on_token is not None
        freed = self._scheduler.finished(seq, hold_slot=not self._returns_slot_at_once())
        if freed:
            events.append((EventKind.KV_FREE, slot, seq.log_index, freed))
        del self._live[seq.request_id]
        if seq.callback is not None:
            self._outbox.put(seq, seq.callback, self._delivered(seq), self.clock)
        return events


class Batch(NamedTuple):
    """The rows of one model call, in slot order."""

    rows: list[Sequence]
    prefixes: list[list[int]]  # each row's token list: the ragged batch, as the model gets it
    slots: array  # slot ids
    requests: array  # the rows' indices in the event log's request table
    starts: array  # each row's step − position of its next token: the same every step it decodes in its slot
    mask: int  # bit i set: slot i sends a row


def _row_view(rows: list[Sequence], step: int) -> Batch:
    """The batch of `rows` at `step`."""
    return Batch(
        rows,
        [seq.tokens for seq in rows],
        array("i", [seq.slot for seq in rows]),
        array("i", [seq.log_index for seq in rows]),
        array("i", [step - seq.generated for seq in rows]),  # its next token's position is `generated`
        sum(1 << seq.slot for seq in rows),
    )
