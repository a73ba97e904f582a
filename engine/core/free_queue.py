"""The prefix cache's free blocks, in the order they are taken: vLLM v1's free block queue.

Blocks join at the tail and are taken from the head; a hit on a free block takes it out of
the middle. A list and the index of its head hold the order, and a set says which blocks are
free, so a row's blocks join, and a step's new blocks leave, in a few C calls (a slice, not
a Python loop: benchmarks/run.py's headline with the cache, callgrind, 100 x 128 tokens:
1.5M instructions fewer of 51M than a deque popped a block at a time). A block taken out of
the middle leaves its entry behind, counted in `stale`, and the head skips it. A block's
stale entries always come before its live one (it can only be freed again, and appended,
after it was taken out), so the first entries of a block the head meets are its stale ones.

An entry's *position* counts entries from the queue's start and never changes (entries before
the head are dropped now and then, and `base` counts them): the prefix cache keeps where an
ended row's blocks joined, not each block.
"""

from __future__ import annotations

from collections.abc import Iterator


class FreeQueue:
    def __init__(self, num_blocks: int):
        self.order = list(range(num_blocks))  # from `head` on: free blocks head first, and stale entries
        self.head = 0
        self.base = 0  # the position of order[0]
        self.members = set(range(num_blocks))  # the free blocks
        self.stale: dict[int, int] = {}  # block -> its entries in `order` left by a removal from the middle

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, block: int) -> bool:
        return block in self.members

    def __iter__(self) -> Iterator[int]:
        """The free blocks, head first."""
        skip = dict(self.stale)
        for block in self.order[self.head :]:
            if skip.get(block):
                skip[block] -= 1
            else:
                yield block

    @property
    def head_position(self) -> int:
        """The position of the next entry the head takes or skips."""
        return self.base + self.head

    @property
    def tail_position(self) -> int:
        """The position the next block appended will have."""
        return self.base + len(self.order)

    def extend(self, blocks: list[int]) -> None:
        """Append `blocks` (none of them free) to the tail, in order."""
        self.order += blocks
        self.members.update(blocks)

    def take(self, count: int) -> list[int]:
        """Take `count` blocks from the head (the caller checked there are enough)."""
        order, head, stale = self.order, self.head, self.stale
        if not stale:
            taken = order[head : head + count]
            head += count
        else:
            taken = []
            while len(taken) < count:
                block = order[head]
                head += 1
                if block not in stale:
                    taken.append(block)
                elif stale[block] == 1:
                    del stale[block]
                else:
                    stale[block] -= 1
        if head > 4096 and 2 * head > len(order):  # the entries before the head go, now and then
            del order[:head]
            self.base += head
            head = 0
        self.head = head
        self.members.difference_update(taken)
        return taken

    def remove(self, block: int) -> None:
        """Take a free `block` out of the middle (a hit)."""
        self.members.remove(block)
        self.stale[block] = self.stale.get(block, 0) + 1
