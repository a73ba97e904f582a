"""The four decisions a KV pool makes when it runs short or a request is cancelled, as plain functions.

`MemoryScheduler` asks them only when that happens (docs/conventions.md, "Memory"); each
default is the correct one (vLLM v1, nano-vllm). The bug zoo (`engine/practice/zoo.py`)
swaps one of them for a classic mistake.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .request import Sequence


def newest_of_lowest_priority(running: list[Sequence]) -> Sequence:
    """The newest admitted (it has done the least work), among the lowest priority (the highest value),
    as vLLM's priority scheduling does."""
    return max(running, key=lambda row: (row.priority, row.admitted_at))


def every_token(seq: Sequence) -> list[int]:
    """Prompt + generated: readmitted, the row prefills them again, so nothing is lost or generated twice."""
    return seq.tokens


@dataclass(frozen=True)
class MemoryPolicy:
    victim: Callable[[list[Sequence]], Sequence] = newest_of_lowest_priority  # preempted when a block is short
    to_front: bool = True  # a preempted row goes back to the front of the queue: it ran before anyone waiting
    kept: Callable[[Sequence], list[int]] = every_token  # the tokens a preempted row keeps
    frees_when_cancelled: bool = True  # a cancelled row gives its blocks back to the pool


CORRECT = MemoryPolicy()
