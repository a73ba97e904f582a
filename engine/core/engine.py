"""The continuous-batching engine: a fixed set of slots, a waiting queue (first come, first
served; by priority where requests have one), one model call a step.

One step (`_step`) reads as nano-vllm's does: schedule, run, postprocess.
  1. intake: cancellations asked for since the last step take effect; arrivals join the
     queue (a request with max_tokens == 0 finishes here, without a slot);
  2. schedule (`scheduler.py`): admit into free slots, lowest id first, and name the rows
     the model gets (the batch view, built from the slot table);
  3. run: one model call;
  4. postprocess (`scheduler.py`): append one token per row, check termination (stop token,
     stop sequence, max_tokens), evict finished rows; then deliver the step's callbacks.
The event log is written once per phase (`log/event_log.py`).

NOTE: each step admits waiting requests *before* the model call (refill, then call,
then evict), so a slot freed at the end of step k is already busy at step k + 1 and no
slot sits empty during a model call while work waits. Static batching (the seeds' Part 1:
the four problem statements the project grew out of, `engine/__init__.py`) differs in one
place, `_may_admit` (below): it admits only into an empty batch. The contract
(docs/conventions.md, the project's answers to the questions the seeds leave open) fixes
this order.

Callbacks run only after the step's state is complete (phase 4, and after phase 1's
cancellations), from a queue: a callback that raises, even with a BaseException such as
KeyboardInterrupt, leaves the engine consistent, and whatever was not yet delivered is
delivered by the next `step()` or `run()`.
"""

from __future__ import annotations

from collections import deque
from operator import attrgetter

from .block_manager import BlockManager
from .config import EngineConfig
from .errors import CallbackError, ModelError
from .log.event_log import EventLog
from .log.events import ABSENT
from .memory_policy import CORRECT, MemoryPolicy
from .memory_scheduler import MemoryScheduler
from .model_call import Answer, call_model
from .models import model_caller
from .outbox import Outbox
from .prefix_cache import PrefixCache
from .request import FinishReason, Sequence, Status, new_sequence
from .scheduler import Finished, Plan, Scheduler
from .stops import stop_matcher
from .validation import MAX_STEP

MAX_TOKENS = attrgetter("max_tokens")
NO_TOKENS: Answer = ([], b"")  # the answer of a step whose rows all prefill (never changed)


class BatchInferenceEngine:
    memory_policy: MemoryPolicy = CORRECT  # who a short KV pool preempts, and how (memory_policy.py)

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
        prefix_caching: bool = False,
        kv_watermark: float = 0.0,
    ):
        """`kv_blocks`, `block_size`, `kv_policy` and `token_budget` model the KV cache and chunked
        prefill (docs/conventions.md, "Memory"); left at their defaults, memory is unlimited.
        `prefix_caching` shares full blocks between identical prefixes and `kv_watermark` holds a
        share of the pool back from admissions (both need `kv_blocks`; `prefix_cache.py`).

        `fill_timeout` (steps; static batching only) makes an empty batch wait to fill: it admits
        only when the queue can fill every slot or the oldest waiting request has waited
        `fill_timeout` steps (Triton's `max_queue_delay`, in steps). None (or 0) runs at once with
        what is there, as the seeds' Part 1 does. Continuous batching always runs at once: a free
        slot is refilled the step it frees, so `fill_timeout` does not change it."""
        self.config = config = EngineConfig(  # checks every setting, naming it (config.py)
            batch_size, stop_token, batching, padded, kv_blocks, block_size, kv_policy, token_budget, fill_timeout,
            prefix_caching, kv_watermark,
        )  # fmt: skip
        self.model = model
        self._call = model_caller(model, config.padded)
        self.event_log = EventLog(config)
        pool = PrefixCache if config.prefix_caching else BlockManager
        self._blocks = (
            pool(config.kv_blocks, config.block_size, config.watermark_blocks) if config.kv_blocks is not None else None
        )
        if config.memory:  # the KV pool or the token budget is in play
            self._scheduler = MemoryScheduler(config, self._blocks, self.memory_policy)
        else:
            self._scheduler = Scheduler(config)
        self._live: dict[str, Sequence] = {}  # submitted, not yet finished
        self._submitted = 0
        self._chose_ids = False  # whether a caller chose a request id (else `r<n>` is always fresh)
        self._cancelled: deque[Sequence] = deque()  # cancel() was called; takes effect at the next step
        self._outbox = Outbox(self.event_log)  # callbacks waiting to run
        self._in_step = False
        # SPEED: unfinished requests with an on_token callback; at 0 a step skips the loop over its rows
        # (10 % fewer ns/token in benchmarks/run.py's headline, measured by turning it off)
        self._streams = 0
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
            request_id = self._fresh_id() if self._chose_ids else f"r{self._submitted}"  # (then r<n> is fresh)
        elif not isinstance(request_id, str):
            raise TypeError(f"request_id: must be a str, got {type(request_id).__name__}")
        elif request_id in self._live or request_id in self.event_log.request_index:
            raise ValueError(f"request_id: {request_id!r} is already in use")
        else:
            self._chose_ids = True
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
        if self._blocks is not None and seq.max_tokens:  # else it could never run
            self._blocks.check_fits(seq.prompt_len + seq.max_tokens, seq.prompt_len)
        self._submitted += 1
        if on_token is not None:
            self._streams += 1
        self._live[request_id] = seq
        self._scheduler.add(seq, self.clock)
        return request_id

    def _fresh_id(self) -> str:
        """`r<submission number>`, skipping ids a caller already chose."""
        n = self._submitted
        request_id = f"r{n}"
        while request_id in self._live or request_id in self.event_log.request_index:
            n += 1
            request_id = f"r{n}"
        return request_id

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
        if scheduler.num_running or self._cancelled or (scheduler.num_waiting and scheduler.fill_timeout is None):
            return self.clock
        arrival = scheduler.next_arrival()
        if scheduler.num_waiting:  # an empty static batch waits to fill: until it times out or someone arrives
            wake = scheduler.batch_fills_at(self.clock)
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
        """One step: intake, schedule, run, postprocess."""
        self.clock = self.next_step  # idle until the next arrival
        if self.clock >= MAX_STEP:
            raise OverflowError(f"step: {self.clock:,} is the event log's last step number")
        self._take_arrivals_and_cancellations()
        plan = self._schedule()
        if plan.batch is not None:  # some row holds a slot
            answer = self._run(plan)
            self._postprocess(plan, answer)
        self.clock += 1
        self._outbox.deliver()  # the step's callbacks, now that its state is complete

    def _take_arrivals_and_cancellations(self) -> None:
        """Intake: cancellations take effect, then arrivals join the queue."""
        if self._cancelled:
            self._apply_cancellations()
        arrived = self._scheduler.due(self.clock)
        if not arrived:
            return
        if all(map(MAX_TOKENS, arrived)):  # (most steps: every one of them is to generate)
            self.event_log.arrived(self.clock, arrived)
            self._scheduler.enqueue(arrived)
        else:
            for seq in arrived:
                self.event_log.arrived(self.clock, [seq])
                if seq.max_tokens == 0:
                    self._end(seq, FinishReason.MAX_TOKENS)  # needs no slot
                else:
                    self._scheduler.enqueue([seq])
        self._outbox.deliver()
        self._apply_cancellations()  # a callback above may have cancelled a waiting request

    def _apply_cancellations(self) -> None:
        while self._cancelled:
            while self._cancelled:
                seq = self._cancelled.popleft()
                if seq.status is Status.FINISHED:  # finished in the step it was cancelled in
                    continue
                if seq.status is Status.PENDING:  # cancelled before it arrived
                    self.event_log.arrived(self.clock, [seq])
                self._end(seq, FinishReason.CANCELLED)
            self._outbox.deliver()  # a cancelled request's callback may cancel another

    def _may_admit(self, running: int) -> bool:
        """Whether waiting requests may take free slots now, with `running` rows in the batch: the one
        place where static and continuous batching differ."""
        return self.config.batching == "continuous" or running == 0  # static batching: only into an empty batch

    def _schedule(self) -> Plan:
        """Schedule: who is admitted (or, with a KV pool, preempted), and which rows the model gets."""
        plan = self._scheduler.schedule(self.clock, self._may_admit(self._scheduler.num_running))
        self.event_log.scheduled(plan)
        return plan

    def _run(self, plan: Plan) -> Answer:
        """Run: one model call on the plan's batch; a fault changes no row and raises ModelError. A step whose
        rows all prefill logs its call with 0 rows, and the model is not called."""
        rows, answer = plan.batch.rows, NO_TOKENS
        if rows:
            try:
                config = self.config
                answer = call_model(self._call, plan.step, rows, plan.batch.prefixes, config.batch_size, config.padded)
            except Exception as exc:
                self.event_log.error(plan.step, ABSENT, ABSENT, str(exc))
                raise
        self.event_log.model_called(plan)
        return answer

    def _postprocess(self, plan: Plan, answer: Answer) -> None:
        """Postprocess: each row's token is appended and checked, finished rows are evicted; their callbacks
        (and each row's on_token) are queued for delivery."""
        tokens = answer[0]
        ended = self._scheduler.postprocess(plan, tokens)
        self.event_log.postprocessed(plan, answer, ended)
        if self._streams:
            for seq, token in zip(plan.batch.rows, tokens):
                if seq.on_token is not None:
                    self._outbox.put(seq, seq.on_token, token, plan.step)
        if ended:
            self._deliver_later(ended)

    def _end(self, seq: Sequence, reason: FinishReason) -> None:
        """A request ends outside a model call: cancelled, or with nothing to generate."""
        ended = [self._scheduler.finish(seq, reason)]
        self.event_log.ended(self.clock, ended)
        self._deliver_later(ended)

    def _deliver_later(self, ended: list[Finished]) -> None:
        """Ended requests leave the engine; each one's callback is queued, exactly once."""
        live, clock, delivered = self._live, self.clock, self._delivered
        for seq, _, _, _ in ended:
            del live[seq.request_id]
        if self._streams:
            self._streams -= sum(seq.on_token is not None for seq, _, _, _ in ended)
        calls = [(seq, seq.callback, delivered(seq), clock) for seq, _, _, _ in ended if seq.callback is not None]
        self._outbox.put_all(calls)

    # -- the decisions a request's own state follows (the bug zoo varies them) ---------------
    _matcher = staticmethod(stop_matcher)  # the stop-sequence automaton of a request's stop list

    def _limit(self, max_tokens: int, prompt_len: int) -> int:
        """Generated tokens after which a row stops (at submission)."""
        return max_tokens  # generated tokens only

    def _delivered(self, seq: Sequence) -> list[int]:
        """What the callback receives."""
        return seq.tokens  # prompt + generated, stop token included
