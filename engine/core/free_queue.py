"""The prefix cache's free blocks, in the order they are taken: vLLM v1's free block queue.

Blocks join at the tail and are taken from the head; a hit on a free block takes it out of
the middle. A deque holds the order and a set says which blocks are free, so a row's blocks
join, and a step's new blocks leave, in one C call each. (An OrderedDict, a block at a time,
cost 0.8M more instructions of the 53M of benchmarks/run.py's headline run with the cache,
callgrind, 100 x 128 tokens.) A block taken out of the middle leaves its entry in the deque
behind, counted in `stale`, and the head skips it. A block's stale entries always come before
its live one (it can only be freed again, and appended, after it was taken out), so the first
entries of a block the head meets are its stale ones.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator


class FreeQueue:
    def __init__(self, num_blocks: int):
        self.order = deque(range(num_blocks))  # free blocks head first, and stale entries
        self.members = set(range(num_blocks))  # the free blocks
        self.stale: dict[int, int] = {}  # block -> its entries in `order` left by a removal from the middle

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, block: int) -> bool:
        return block in self.members

    def __iter__(self) -> Iterator[int]:
        """The free blocks, head first."""
        skip = dict(self.stale)
        for block in self.order:
            if skip.get(block):
                skip[block] -= 1
            else:
                yield block

    def extend(self, blocks: Iterable[int]) -> None:
        """Append `blocks` (none of them free) to the tail, in order."""
        blocks = list(blocks)
        self.order.extend(blocks)
        self.members.update(blocks)

    def take(self, count: int) -> list[int]:
        """Take `count` blocks from the head (the caller checked there are enough)."""
        popleft, stale = self.order.popleft, self.stale
        if not stale:
            taken = [popleft() for _ in range(count)]
        else:
            taken = []
            while len(taken) < count:
                block = popleft()
                if block not in stale:
                    taken.append(block)
                elif stale[block] == 1:
                    del stale[block]
                else:
                    stale[block] -= 1
        self.members.difference_update(taken)
        return taken

    def remove(self, block: int) -> None:
        """Take a free `block` out of the middle (a hit)."""
        self.members.remove(block)
        self.stale[block] = self.stale.get(block, 0) + 1
