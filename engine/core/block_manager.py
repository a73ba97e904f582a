"""The KV cache as a pool of fixed-size blocks: a free list and each request's block table.

A block holds the keys and values of `block_size` tokens. A request's block table is its
list of physical block ids, logical block i first; it only grows while the request runs,
and all of it is freed at once when the request finishes, is cancelled or is preempted.
The free list hands out the lowest free id, so runs are easy to follow.

Reference: W. Kwon et al., "Efficient Memory Management for Large Language Model Serving
with PagedAttention", SOSP 2023 (vLLM); nano-vllm's `block_manager.py`.
"""

from __future__ import annotations

from .request import Sequence


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, held_back: int = 0):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.held_back = held_back  # blocks an admission must leave free while rows run (the watermark)
        self.free_ids: list[int] = list(range(num_blocks))  # sorted: the lowest free id first
        # SPEED: freed blocks wait here and are sorted back in just before the next allocation,
        # so a step that frees many rows sorts once (and a row's free costs no Python loop):
        # benchmarks/run.py's headline, paged: 431 ns/token with it, 442 inserting each freed block.
        self.returned: list[int] = []

    @property
    def num_free(self) -> int:
        return len(self.free_ids) + len(self.returned)

    def blocks_for(self, tokens: int) -> int:
        """Blocks that hold `tokens` tokens."""
        return -(-tokens // self.block_size)  # ceil, in integers

    def check_fits(self, tokens: int, prompt: int = 0) -> None:
        """Refuse a request of `tokens` tokens (prompt + max_tokens) that the whole pool could never hold,
        or whose `prompt` alone needs more than the blocks an admission may take (all but `held_back`)."""
        need = self.blocks_for(tokens)
        if need > self.num_blocks:
            raise ValueError(
                f"kv_blocks: prompt + max_tokens = {tokens:,} tokens need {need:,} blocks of "
                f"{self.block_size}, but the pool has only {self.num_blocks:,}"
            )
        held_back = self.held_back
        if held_back and (need := self.blocks_for(prompt)) > self.num_blocks - held_back:
            raise ValueError(
                f"kv_watermark: the prompt's {prompt:,} tokens need {need:,} blocks of {self.block_size}, but "
                f"admissions may take only {self.num_blocks - held_back:,} of the pool's {self.num_blocks:,}"
            )

    def can_allocate(self, blocks: int) -> bool:
        return blocks <= self.num_free

    def allocate(self, seq: Sequence, blocks: int) -> list[int]:
        """Append `blocks` free blocks to `seq`'s block table; returns their ids."""
        new = self._take(blocks)
        seq.blocks.extend(new)
        return new

    def one_more_each(self, rows: list[Sequence]) -> list[int]:
        """Append one free block to each row's table (the caller checked there are enough); their ids."""
        new = self._take(len(rows))
        for seq, block in zip(rows, new):
            seq.blocks.append(block)
        return new

    def free(self, seq: Sequence) -> int:
        """Give all of `seq`'s blocks back; returns how many."""
        count = len(seq.blocks)
        self.returned.extend(seq.blocks)
        seq.blocks = []
        return count

    def _take(self, blocks: int) -> list[int]:
        """The `blocks` lowest free ids, off the free list."""
        free = self.free_ids
        if self.returned:
            free.extend(self.returned)
            free.sort()
            self.returned.clear()
        new = free[:blocks]
        del free[:blocks]
        return new
