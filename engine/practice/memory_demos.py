"""The memory bugs' demo cases: checker-style cases run on a tiny KV pool, with cancellations.

The checker's own cases have no KV pool (it checks only the seeds' API, and memory is not
required of a solution), so the zoo's memory mistakes never show there. Spot the bug runs
each of them on one of these instead: the same scripted model and requests as a checker
case, on a pool small enough that a row's next block forces a preemption (`PREEMPTION`),
or with a request cancelled while its blocks are still needed by the queue (`CANCELLATION`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .checker.cases import Case, CaseRequest


@dataclass(frozen=True)
class DemoCase:
    """A checker case as Spot the bug runs it: on an engine with these options, with these cancellations."""

    case: Case
    kv_blocks: int | None = None  # None: unlimited memory, exactly as the checker runs it
    block_size: int = 16
    cancels: tuple[tuple[int, int], ...] = ()  # (step, request index): cancel() just before that step, in step order

    @property
    def title(self) -> str:
        return self.case.title

    @property
    def options(self) -> dict:
        """The engine's keyword options."""
        return {} if self.kv_blocks is None else {"kv_blocks": self.kv_blocks, "block_size": self.block_size}


PREEMPTION = DemoCase(
    Case(
        "memory-preemption",
        "a KV pool of 2 blocks of 2 tokens; r0's third token needs a block at step 1 and none is free",
        2,
        None,
        (
            CaseRequest((100, 1), 2, script=(10, 11)),
            CaseRequest((101,), 3, script=(20, 21, 22)),
            CaseRequest((102, 1, 2), 1, script=(30,)),
        ),
    ),
    kv_blocks=2,
    block_size=2,
)

CANCELLATION = DemoCase(
    Case(
        "memory-cancellation",
        "a KV pool of 3 blocks of 2 tokens; r0 is cancelled at step 1 while r2 waits for 2 blocks",
        2,
        None,
        (
            CaseRequest((100,), 3, script=(10, 11, 12)),
            CaseRequest((101,), 2, script=(20, 21)),
            CaseRequest((102, 1, 2), 1, script=(30,)),
        ),
    ),
    kv_blocks=3,
    block_size=2,
    cancels=((1, 0),),
)
