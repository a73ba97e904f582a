"""The KV cache as a pool of fixed-size blocks: a free list and each request's block table.

A block holds the keys and values of `block_size` tokens. A request's block table is its
list of physical block ids, logical block i first; it only grows while the request runs,
and all of it is freed at once when the request finishes, is cancelled or is preempted.
The free list hands out the lowest free id, so runs are easy to follow.

Reference: W. Kwon et al., "Efficient Memory Management for Large Language Model Serving
with PagedAttention", SOSP 2023 (vLLM); nano-vllm's `block_manager.py`.
"""

from __future__ import annotations

import heapq
from math import ceil

from .request import Sequence


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.free_ids: list[int] = list(range(num_blocks))  # a heap: the lowest free id first

    @property
    def num_free(self) -> int:
        return len(self.free_ids)

    def blocks_for(self, tokens: int) -> int:
        """Blocks that hold `tokens` tokens."""
        return ceil(tokens / self.block_size)

    def can_allocate(self, blocks: int) -> bool:
        return blocks <= len(self.free_ids)

    def allocate(self, seq: Sequence, blocks: int) -> list[int]:
        """Append `blocks` free blocks to `seq`'s block table; returns their ids."""
        new = [heapq.heappop(self.free_ids) for _ in range(blocks)]
        seq.blocks.extend(new)
        return new

    def one_more_each(self, rows: list[Sequence]) -> list[int]:
        """Append one free block to each row's table (the caller checked there are enough); their ids."""
        free = self.free_ids
        new = [heapq.heappop(free) for _ in rows]
        for seq, block in zip(rows, new):
            seq.blocks.append(block)
        return new

    def free(self, seq: Sequence) -> int:
        """Give all of `seq`'s blocks back; returns how many."""
        for block in seq.blocks:
            heapq.heappush(self.free_ids, block)
        count = len(seq.blocks)
        seq.blocks = []
        return count
