"""Scheduling under a KV-cache pool and a token budget: who computes how many tokens a step.

NOTE (vLLM v1; Sarathi-Serve's "stall-free" batching): rows already running claim what
they need before anyone is admitted. Decoding rows take one token each first; then rows
part-way through their prompt continue its prefill; then the head of the queue starts its
own; each takes what the budget has left, and nobody is admitted once it is spent. A row
whose prefill completes is sent to the model and gets its first token that same step.

When a running row needs a block and none is free, the most recently admitted running row
(of the lowest priority, when requests have priorities) is preempted, by recompute (vLLM v1,
nano-vllm): it gives back its blocks, keeps its tokens, leaves its slot and goes back to
the front of the queue (of its own priority); readmitted, it prefills
prompt and generated tokens again. It may be the row itself. A step that preempts admits
nobody. Paged rows hold ceil(computed / block_size) blocks; with `kv_policy="reserve"` a
row takes blocks for its whole prompt + max_tokens at admission and never needs more.

Who is preempted, where it goes back, what it keeps and whether a cancelled row's blocks
are freed are the four plain functions of a `MemoryPolicy` (`memory_policy.py`), asked only
when that happens.

With prefix caching (`prefix_cache.py`) an admission starts from the cached blocks its tokens
hit (a row's full blocks are cached as its computed tokens fill them); with a watermark, an
admission leaves the pool's held-back blocks free while rows run (`_admit`).
"""

from __future__ import annotations

import math
from operator import attrgetter

from .block_manager import BlockManager
from .config import EngineConfig
from .log.events import EventKind
from .memory_policy import MemoryPolicy
from .prefix_cache import PrefixCache
from .request import FinishReason, Sequence, Status
from .scheduler import Action, Batch, Finished, Plan, Scheduler

SLOT, LOG_INDEX = attrgetter("slot"), attrgetter("log_index")


def _still_prefilling(seq: Sequence) -> bool:
    """Part-way through its prefill after this step's scheduled tokens: it is not sent."""
    return seq.prefilling and seq.computed + seq.scheduled < len(seq.tokens)


class MemoryScheduler(Scheduler):
    def __init__(self, config: EngineConfig, blocks: BlockManager | PrefixCache | None, policy: MemoryPolicy):
        super().__init__(config)
        self.blocks, self.reserve, self.budget = blocks, config.kv_policy == "reserve", config.token_budget
        self.policy = policy
        self.caching = config.prefix_caching  # (then `blocks` is a PrefixCache)
        self.prefilling: list[Sequence] = []  # running rows not yet sent since admission, oldest first
        self.admissions = 0  # numbers admissions: the newest running row is preempted first
        self.left = 0  # tokens of this step's budget not yet claimed
        # SPEED: a decoding row needs a new block only every block_size steps, so rows are filed
        # under the step of their next block boundary instead of being checked every step
        # (benchmarks/run.py's headline, paged: 431 ns/token with it, 575 checking every row every step).
        self.needs_block_at: dict[int, list[Sequence]] = {}

    def schedule(self, step: int, may_admit: bool) -> Plan:
        plan = Plan(step, self.started)
        if not self.num_running:
            self.forget_filed()
        may_admit = bool(self.free and self.num_waiting) and self.admits(step, may_admit)
        if self.prefilling or may_admit:
            self._share_the_step(plan, may_admit)
        elif step in self.needs_block_at:  # SPEED: every running row decodes, and some need a block: no budget to
            self._grow_decoding_rows(step, plan)  # share (1.3 % of a paged run's instructions on requests of 64 to
            # 192 tokens, where some rows cross a block boundary nearly every step: callgrind)
        # (else every running row just decodes)
        if self.caching and self.blocks.evicted:
            plan.evicted = self.blocks.take_evicted()
        plan.batch = self.batch() if self.num_running else None
        return plan

    def forget_filed(self) -> None:
        super().forget_filed()
        self.needs_block_at.clear()

    def _share_the_step(self, plan: Plan, may_admit: bool) -> None:
        """The step's tokens and blocks, in the NOTE's order."""
        self.left = math.inf if self.budget is None else self.budget
        self.left -= self.num_running - len(self.prefilling)  # 1. decoding rows: one token each
        if self.blocks is not None and not self.reserve:
            self._grow_decoding_rows(plan.step, plan)
        for seq in list(self.prefilling):  # 2. prefills under way, oldest first
            if seq.status is Status.RUNNING:
                self._prefill(seq, plan)
        if may_admit and self.preempted_at != plan.step:  # 3. new prefills from the head of the queue
            while self.free and self.left > 0 and (seq := self.head()) is not None and self._admit(seq, plan):
                pass

    def _grow_decoding_rows(self, step: int, plan: Plan) -> None:
        """Decoding rows at a block boundary take one more block, oldest first, preempting if the pool is short.

        A decoding row writes its last token this step, so it needs ceil(len(tokens) / block_size) blocks.
        """
        filed = self.needs_block_at.pop(step, None)
        if not filed:
            return
        size = self.blocks.block_size
        running = Status.RUNNING
        due = [seq for seq in filed if seq.status is running]  # (those since finished are skipped)
        # SPEED: the common case, nobody is preempted: the blocks and their events go as columns
        # (benchmarks/run.py's headline, paged: 431 ns/token with it, 549 through _claim row by row)
        if len(due) <= self.blocks.num_free:
            blocks = self.blocks.one_more_each(due)
            plan.grown = (list(map(SLOT, due)), list(map(LOG_INDEX, due)), blocks)
            grown = due
        else:
            grown = [
                seq
                for seq in sorted(due, key=lambda row: row.admitted_at)
                if seq.status is Status.RUNNING and self._claim(seq, 1, plan)  # (it may have been preempted)
            ]
        self.needs_block_at.setdefault(step + size, []).extend(grown)

    def _prefill(self, seq: Sequence, plan: Plan) -> None:
        """Schedule as much of `seq`'s prefill as the budget allows (none: it waits)."""
        remaining = len(seq.tokens) - seq.computed
        tokens = min(remaining, self.left)
        if remaining and not tokens:
            return
        if self.blocks is not None and not self.reserve:
            need = self.blocks.blocks_for(seq.computed + tokens) - len(seq.blocks)
            if need > 0 and not self._claim(seq, need, plan):
                return
        seq.scheduled = tokens
        self.left -= tokens
        plan.work.append(seq)

    def _admit(self, seq: Sequence, plan: Plan) -> bool:
        """Admit the head of the queue if the blocks it needs now are free; False if not (head-of-line).

        With prefix caching its cached leading blocks are hits: they are not computed again, and only
        the tokens after them are charged to the budget. While rows run, an admission leaves at least
        the watermark's blocks free (an empty batch admits whatever fits: nothing runs that the
        headroom would protect, and a preempted row longer than the pool less the watermark would
        otherwise wait for ever)."""
        blocks = self.blocks
        hits = blocks.match(seq, self.slots, plan.step) if self.caching else ()
        computed = len(hits) * blocks.block_size if hits else 0
        tokens = min(len(seq.tokens) - computed, self.left)
        if blocks is not None:
            need = blocks.blocks_for(seq.prompt_len + seq.max_tokens if self.reserve else computed + tokens) - len(hits)
            free = blocks.free_besides(hits) if hits else blocks.num_free
            if need > free - (blocks.held_back if self.num_running else 0):  # (the watermark)
                if not self.num_running:  # only blocks lost by a finished row can do this (the zoo's leak)
                    raise RuntimeError(
                        f"kv_blocks: request {seq.request_id} needs {need:,} blocks and nothing runs, but the pool "
                        f"has only {blocks.num_free:,} of its {blocks.num_blocks:,} free: blocks were never given back"
                    )
                return False
        self.take_slots(1)  # (`seq`, the head)
        if blocks is not None:
            seq.blocks, seq.block_identities = [], []  # (empty: a row gives all its blocks back when it leaves)
        self.admissions += 1
        seq.admitted_at, seq.prefilling, seq.computed, seq.scheduled = self.admissions, True, computed, tokens
        self.prefilling.append(seq)
        if hits:
            blocks.share(seq, hits)
        taken = blocks.allocate(seq, need) if blocks is not None and need else ()
        plan.actions.append(Action(EventKind.ADMIT, seq, seq.slot, taken, hits=hits))
        self.left -= tokens
        plan.work.append(seq)
        return True

    def _claim(self, seq: Sequence, need: int, plan: Plan) -> bool:
        """`need` more blocks for running `seq`, preempting running rows (the policy's victim: the newest
        of the lowest priority) while too few are free; False if `seq` itself was preempted."""
        while not self.blocks.can_allocate(need):
            victim = self.policy.victim(self.running())
            self._preempt(victim, plan)
            if victim is seq:
                return False
        plan.actions.append(Action(EventKind.KV_ALLOC, seq, seq.slot, self.blocks.allocate(seq, need)))
        return True

    def _preempt(self, seq: Sequence, plan: Plan) -> None:
        slot = seq.slot
        if not seq.prefilling:  # a decoding row is filed under its next block boundary: not any more
            for filed in self.needs_block_at.values():  # (at most block_size lists, and preemption is rare)
                if seq in filed:
                    filed.remove(seq)
                    break
        if seq.prefilling:
            self.prefilling.remove(seq)
            if seq in plan.work:  # already scheduled this step: its tokens go back to the budget
                plan.work.remove(seq)
                self.left += seq.scheduled
        else:
            self.left += 1
        freed = self.blocks.free(seq)
        self.leave_slots([seq])
        seq.slot, seq.status, seq.prefilling, seq.computed, seq.scheduled = None, Status.WAITING, True, 0, 0
        seq.tokens = self.policy.kept(seq)
        if self.policy.to_front:
            self.waiting.appendleft(seq)
        else:
            self.waiting.append(seq)
        self.num_waiting += 1
        plan.actions.append(Action(EventKind.PREEMPT, seq, slot, freed=freed))
        self.preempted_at = plan.step

    def postprocess(self, plan: Plan, tokens) -> list[Finished]:
        if plan.work:
            self.advance_prefills(plan, plan.step)
        return super().postprocess(plan, tokens)

    def advance_prefills(self, plan: Plan, step: int) -> None:
        """After the step's model call: the work is done; rows whose prefill completed decode from now on."""
        paged = self.blocks is not None and not self.reserve
        size, needs_block_at = self.blocks.block_size if paged else 0, self.needs_block_at
        decoding = []
        for seq in plan.work:
            seq.computed += seq.scheduled
            if seq.computed == len(seq.tokens):  # it was sent to the model, and its token is appended next
                seq.prefilling = False
                decoding.append(seq)
                if paged:  # filed under the step at which its next token no longer fits its blocks
                    needs_block_at.setdefault(step + len(seq.blocks) * size - seq.computed + 1, []).append(seq)
        if decoding:
            self.start_decoding(decoding, plan)
        self.prefilling = [seq for seq in self.prefilling if seq.prefilling]

    def batch(self) -> Batch:
        """Every running row but those whose prefill is still under way after this step."""
        if self.prefilling and any(map(_still_prefilling, self.prefilling)):
            return Batch.of([seq for seq in self.slots if seq is not None and not _still_prefilling(seq)])
        return super().batch()

    def release(self, seq: Sequence) -> int:
        """An ending row's KV blocks go back to the pool (unless the policy leaks a cancelled row's)."""
        if seq.status is Status.RUNNING and seq.prefilling:
            self.prefilling.remove(seq)
        leaked = seq.finish_reason is FinishReason.CANCELLED and not self.policy.frees_when_cancelled
        return 0 if self.blocks is None or leaked else self.blocks.free(seq)
