"""The bug zoo: classic continuous-batching mistakes, each the engine with one decision changed.

Every class here is the project's own `BatchInferenceEngine` with exactly one of its
decisions replaced: a phase of its step (`_schedule`, `_run`), a decision a request's state
follows (`_matcher`, `_limit`, `_delivered`), the batching rule (`_may_admit`) or one field
of its `memory_policy` (`engine/core/memory_policy.py`); a test holds each to that. The
correct engine carries nothing for the zoo: a bug that needs to remember something keeps
it itself. So the app can show a bug's grid beside the correct one, and the checker must
catch it. The memory mistakes show only with a KV pool, which the checker does not use (it
checks the seeds' API), so each names its own demo case (`memory_demos.py`). `BUGS` holds
the plain-words explanation of each: what goes wrong, why, and how to avoid it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from functools import cached_property

from ..core.engine import BatchInferenceEngine
from ..core.memory_policy import CORRECT
from ..core.model_call import Answer
from ..core.request import FinishReason, Sequence
from ..core.scheduler import Batch, Plan
from .memory_demos import CANCELLATION, PREEMPTION, DemoCase

DECISIONS = ("_schedule", "_run", "_matcher", "_limit", "_delivered", "_may_admit", "memory_policy")  # one a bug


class CrossedResults(BatchInferenceEngine):
    """Maps the model's answers back in submission order instead of the order the rows were sent."""

    def _run(self, plan: Plan) -> Answer:
        answers = super()._run(plan)  # one per row sent, in slot order
        plan.batch = Batch.of(sorted(plan.batch.rows, key=lambda seq: seq.order))  # the i-th answer: i-th submitted
        return answers


def _slot_tail_state(seq: Sequence, previous: Sequence | None) -> int:
    """The stop matcher's state after the last tokens the slot's previous request generated."""
    state = 0
    if seq.stops is not None and previous is not None:
        for token in previous.tokens[previous.prompt_len :][-8:]:  # the slot's tail buffer, never reset
            state = seq.stops.advance(state, token)
    return state


def _inherit_slot_tails(plan: Plan, last_in_slot: dict[int, Sequence], inherits) -> None:
    """Each request admitted fresh starts from its slot's tail where `inherits(the slot's previous request)`."""
    for action in plan.admitted():
        previous = last_in_slot.get(action.slot)
        if not action.seq.generated and inherits(previous):  # (one readmitted after a preemption keeps its own)
            action.seq.stop_state = _slot_tail_state(action.seq, previous)
        last_in_slot[action.slot] = action.seq


class LeakyStopState(BatchInferenceEngine):
    """Keeps the stop-matching tail per slot, so the next request in the slot inherits it."""

    @cached_property
    def _last_in_slot(self) -> dict[int, Sequence]:
        return {}

    def _schedule(self) -> Plan:
        plan = super()._schedule()
        _inherit_slot_tails(plan, self._last_in_slot, lambda previous: True)
        return plan


class TrimmedStopToken(BatchInferenceEngine):
    """Drops the stop token from the delivered output."""

    def _delivered(self, seq: Sequence) -> list[int]:
        return seq.tokens[:-1] if seq.finish_reason is FinishReason.STOP_TOKEN else seq.tokens


class IdleFreedSlot(BatchInferenceEngine):
    """Frees a finished row's slot only after the next step's admissions: it sits idle a step."""

    @cached_property
    def _busy_after_admission(self) -> set[int]:
        return set()

    def _schedule(self) -> Plan:
        scheduler = self._scheduler
        held = [slot for slot in scheduler.free if slot in self._busy_after_admission]  # freed since
        scheduler.free = [slot for slot in scheduler.free if slot not in held]
        heapq.heapify(scheduler.free)
        plan = super()._schedule()
        for slot in held:
            heapq.heappush(scheduler.free, slot)
        self._busy_after_admission.clear()
        self._busy_after_admission.update(seq.slot for seq in scheduler.running())
        return plan


class NaiveStopMatcher:
    """Compares the output with each stop sequence and starts over on a mismatch (misses overlaps)."""

    def __init__(self, sequences: tuple[tuple[int, ...], ...]):
        self.sequences = sequences

    def advance(self, state: tuple[int, ...] | int, token: int) -> tuple[int, ...]:
        progress = state or (0,) * len(self.sequences)
        return tuple(
            done + 1 if sequence[done] == token else int(sequence[0] == token)
            for sequence, done in zip(self.sequences, progress)
        )

    def matched(self, state: tuple[int, ...]) -> int:
        return next((i for i, (s, done) in enumerate(zip(self.sequences, state)) if done == len(s)), -1)


class NaiveStopMatching(BatchInferenceEngine):
    """Matches stop sequences with the naive matcher above instead of the Aho-Corasick automaton."""

    _matcher = NaiveStopMatcher


class ShortestTailMatcher:
    """Keeps the last tokens in a tail buffer as long as the shortest stop sequence and checks each sequence
    against it, so a longer sequence never fits and never matches."""

    def __init__(self, sequences: tuple[tuple[int, ...], ...]):
        self.sequences = sequences
        self.size = min(map(len, sequences))

    def advance(self, state: tuple[int, ...] | int, token: int) -> tuple[int, ...]:
        return (*(state or ()), token)[-self.size :]

    def matched(self, state: tuple[int, ...]) -> int:
        return next((i for i, s in enumerate(self.sequences) if tuple(state[-len(s) :]) == s), -1)


class TailSizedToShortestStop(BatchInferenceEngine):
    """Matches stop sequences in a tail buffer sized to the shortest of them: the longer ones are missed."""

    _matcher = ShortestTailMatcher


def _ended_on_a_stop_sequence(previous: Sequence | None) -> bool:
    return previous is not None and previous.finish_reason is FinishReason.STOP_SEQUENCE


class TailNotResetAfterStopSequence(BatchInferenceEngine):
    """Resets a slot's stop tail when its row ends on max_tokens or the stop token, but not on a stop sequence."""

    @cached_property
    def _last_in_slot(self) -> dict[int, Sequence]:
        return {}

    def _schedule(self) -> Plan:
        plan = super()._schedule()
        _inherit_slot_tails(plan, self._last_in_slot, _ended_on_a_stop_sequence)
        return plan


class MaxTokensCountsPrompt(BatchInferenceEngine):
    """Stops when prompt + generated reaches max_tokens, instead of generated alone."""

    def _limit(self, max_tokens: int, prompt_len: int) -> int:
        return max(max_tokens - prompt_len, 1)


class StaticInsteadOfContinuous(BatchInferenceEngine):
    """Waits for the whole batch to finish before admitting anyone: static batching."""

    def _may_admit(self, running: int) -> bool:
        return running == 0


class PreemptedToTheBack(BatchInferenceEngine):
    """Sends a preempted row to the back of the queue, behind requests that never ran."""

    memory_policy = replace(CORRECT, to_front=False)


class LeakedBlocksOnCancel(BatchInferenceEngine):
    """Forgets to free a cancelled row's KV blocks: they stay out of the pool for good."""

    memory_policy = replace(CORRECT, frees_when_cancelled=False)


def _oldest(running: list[Sequence]) -> Sequence:
    return min(running, key=lambda row: row.admitted_at)


class OldestPreempted(BatchInferenceEngine):
    """Preempts the oldest running row instead of the newest."""

    memory_policy = replace(CORRECT, victim=_oldest)


def _prompt_only(seq: Sequence) -> list[int]:
    return seq.tokens[: seq.prompt_len]


class ForgetfulRecompute(BatchInferenceEngine):
    """Keeps only the prompt of a preempted row: readmitted, it generates its tokens all over again."""

    memory_policy = replace(CORRECT, kept=_prompt_only)


@dataclass(frozen=True)
class Bug:
    engine: type[BatchInferenceEngine]
    title: str
    why: str  # what happens and why
    avoid: str  # how to avoid it
    demo: DemoCase | None = None  # a memory mistake's own case; None: the first checker case that catches it


BUGS = {
    "crossed-results": Bug(
        CrossedResults,
        "Results crossed after a refill",
        "After a refill, the rows are sent in slot order but the answers are mapped back in submission order, so a "
        "request admitted into a lower slot swaps tokens with its neighbour.",
        "Keep a dict slot id -> sequence state, build the batch from it (again after every refill, never from a "
        "batch list of your own) and zip the answers with exactly that list of rows.",
    ),
    "leaky-stop-state": Bug(
        LeakyStopState,
        "Stop-matching state leaks into the next request",
        "The tail buffer used to match stop sequences belongs to the slot, not the request, so a new request starts "
        "with the old one's last tokens and can 'complete' a stop sequence it never generated.",
        "Keep every piece of per-request state (tokens, budget, stop tail, KV cache) on the request; reset on admit.",
    ),
    "trimmed-stop-token": Bug(
        TrimmedStopToken,
        "The stop token is trimmed from the output",
        "The callback receives the sequence without its final stop token; the contract delivers it (5, 5, 0 is "
        "delivered as [..., 5, 5, 0]).",
        "Append the token first, then check termination, and deliver the row as it is.",
    ),
    "idle-freed-slot": Bug(
        IdleFreedSlot,
        "A freed slot sits idle for a step",
        "Slots freed at the end of a step are only returned after the next step's admissions, so one model call runs "
        "with an empty slot while requests wait.",
        "Evict finished rows before the next admission: refill, then call the model, then evict.",
    ),
    "naive-stop-matcher": Bug(
        NaiveStopMatching,
        "A naive stop matcher misses overlapping matches",
        "On a mismatch the matcher starts over instead of falling back to the longest suffix that is still a "
        "prefix, so stop [1, 1, 2] is missed in 1, 1, 1, 2.",
        "Match with an Aho-Corasick automaton (or KMP failure links), or compare the tail with each sequence.",
    ),
    "tail-sized-to-shortest-stop": Bug(
        TailSizedToShortestStop,
        "A stop tail sized to the shortest stop sequence",
        "r0 stops on [7, 8] or [5]. The tail buffer that stop sequences are compared with holds as many tokens as the "
        "shortest of them, 1, so [7, 8] never fits in it: r0 generates 7, 8 at steps 0 and 1 and goes on, and stops "
        "only at step 2 on [5], with a token too many.",
        "Size the tail to the longest stop sequence (or match with an Aho-Corasick automaton, which needs no tail).",
    ),
    "tail-not-reset-after-stop-sequence": Bug(
        TailNotResetAfterStopSequence,
        "The stop tail is not reset after a stop-sequence finish",
        "The slot's tail buffer is cleared when a row ends on max_tokens or the stop token, but the stop-sequence "
        "branch forgets to: r0 ends on [4, 7] at step 1, and r1, which takes its slot at step 2, starts with 7 in the "
        "tail, so its first token 8 'completes' [7, 8] and it stops after one token instead of four.",
        "Keep the stop tail on the request, or reset all of a slot's state in one place that every way out goes "
        "through.",
    ),
    "max-tokens-counts-prompt": Bug(
        MaxTokensCountsPrompt,
        "max_tokens counts the prompt",
        "The budget is compared with prompt + generated tokens, so requests with long prompts stop early.",
        "Count generated tokens only: stop when len(tokens) - len(prompt) reaches max_tokens.",
    ),
    "static-batching": Bug(
        StaticInsteadOfContinuous,
        "Static batching where continuous was meant",
        "New requests are admitted only when every slot is empty, so finished rows leave their slots idle while the "
        "queue waits.",
        "After every step, refill each free slot from the queue (lowest slot first), not only an empty batch.",
    ),
    "preempted-to-the-back": Bug(
        PreemptedToTheBack,
        "A preempted row is sent to the back of the queue",
        "At step 1 r0 needs a block and none is free, so r1, the newest row, is preempted; it goes behind r2, which "
        "has never run. At step 2 r2 is admitted first and takes both free blocks, so r1 (running since step 0) waits "
        "a step more and finishes at step 4 instead of 3; under steady load a preempted row can wait for ever.",
        "Put a preempted row back at the front of the queue (the last preempted first): it ran before anyone waiting.",
        PREEMPTION,
    ),
    "leaked-blocks": Bug(
        LeakedBlocksOnCancel,
        "Blocks leaked on cancellation",
        "r0 is cancelled at step 1 but its block 0 is never given back (no kv_free), so only 1 of the pool's 3 blocks "
        "is free and r2, which needs 2, cannot be admitted until r1 finishes: it waits a step, and the run takes 3 "
        "steps instead of 2. Every cancellation shrinks the pool for good, until the head of the queue no longer fits.",
        "Free a request's blocks on every way out: finished, cancelled or preempted (one place that ends a request).",
        CANCELLATION,
    ),
    "oldest-preempted": Bug(
        OldestPreempted,
        "The oldest row is preempted instead of the newest",
        "At step 1 r0 needs a block and none is free; the engine preempts r0 itself, the oldest row, which has done "
        "the most work (3 tokens to recompute), instead of r1, the newest (2 tokens). r0 then waits two steps for 2 "
        "free blocks and finishes at step 3 instead of step 1.",
        "Preempt the most recently admitted running row (vLLM, nano-vllm): it has the least work to redo.",
        PREEMPTION,
    ),
    "forgetful-recompute": Bug(
        ForgetfulRecompute,
        "Recompute that forgets the generated tokens",
        "When r1 is preempted at step 1 it keeps only its prompt (1 token to recompute instead of 2): readmitted at "
        "step 2, it prefills [101] and generates 20 again, so its stream (the emit events, on_token) gets 20 twice "
        "and the run takes 6 steps instead of 5. The callback still gets [101, 20, 21, 22] only because this model is "
        "deterministic; with sampling the regenerated tokens could differ from those already streamed.",
        "Keep a preempted row's generated tokens and, when it is readmitted, prefill prompt + generated tokens.",
        PREEMPTION,
    ),
}
