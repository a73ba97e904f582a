"""The KV pool with automatic prefix caching: full blocks are kept under their identity and shared.

A block is full when it holds `block_size` tokens. Its identity is the pair (the identity of
the block before it in the same table, or none; the tuple of its tokens): a chained hash, as
in vLLM, but exact, since each distinct pair is numbered once (`_identities`). A full block
is cached under its identity from the step whose computed tokens fill it; partial blocks are
never shared. Two rows that fill a block with the same prefix at the same time both cache
theirs; a hit takes the lowest-numbered.

At admission a row's tokens are matched block by block from the first: the longest run of
leading cached blocks is a hit, capped so at least one token is still computed. Hit blocks
join the row's table without being allocated, and each gains a reference.

The free list is an eviction queue (vLLM v1's free block queue): it starts as 0 .. n-1, a
new block is taken from its head, and a row that ends (finished, cancelled or preempted)
drops one reference from each of its blocks; those left with none go to the tail in reverse
table order, so a row's last blocks are reused before its first. A free full block stays
cached, and can still be hit (which takes it out of the queue), until it is taken from the
head for a new use: then its identity is dropped (`evicted`, for the log's `kv_evict`).

NOTE (speed): working out an identity costs about a microsecond (a tuple of `block_size`
tokens and a dictionary look-up), and only a match reads identities. So nothing is done when
a block fills (a row's first `written // block_size` blocks are full: `full_blocks`); the
identities are worked out at the next match that could hit (`resolve`): the running rows',
and those of rows that ended since. An ended row leaves one record (`Ended`): its table, and
where in the queue its full blocks joined, which is all it takes to know which of them are
still free (those the head has not reached), so neither its end nor a block's reuse loops
over blocks; the record goes when the head passes its last full block. As a hit takes the
lowest-numbered block of an identity, when identities are worked out changes nothing
(tests/test_prefix_caching.py compares the logs with a cache's that works them out after
every step). The headline of benchmarks/run.py, whose prompts fill no block, never works one
out. (A row's tokens only grow.)

Reference counts are kept only for blocks that more than one row holds (`sharers`): a block
is free exactly when it is in the queue, so a row that shares nothing gives its blocks back
in one call.

References: vLLM's automatic prefix caching (docs: "design/prefix_caching"; v1
`kv_cache_manager.py`, `block_pool.py`); the contract's last section.
"""

from __future__ import annotations

from collections import deque

from .block_manager import BlockManager
from .block_prompt import block_key
from .free_queue import FreeQueue
from .request import Sequence

Ended = tuple  # (tokens, blocks, known, first, stop): a row that ended with full blocks whose identity is not worked
# out: its tokens, its table, the identities of its first blocks worked out so far, and the queue positions
# [first, stop) where those full blocks joined, its last one first. A plain tuple: a NamedTuple's is 7x slower.


def full_blocks(seq: Sequence, block_size: int) -> int:
    """The blocks of `seq`'s table that its written tokens fill: a decoding row has written all its
    tokens but the one sampled last."""
    return (seq.computed if seq.prefilling else len(seq.tokens) - 1) // block_size


class PrefixCache(BlockManager):
    def __init__(self, num_blocks: int, block_size: int, held_back: int = 0):
        super().__init__(num_blocks, block_size, held_back)
        self.queue = FreeQueue(num_blocks)  # free blocks, head first
        self.sharers: dict[int, int] = {}  # block -> rows holding it besides the first (only blocks shared)
        self.identity: list[int | None] = [None] * num_blocks  # a cached block's identity, once worked out
        self.cached: dict[int, list[int]] = {}  # identity -> the blocks cached under it (worked out)
        self._identities: dict[tuple[int | None, tuple[int, ...]], int] = {}  # (parent, tokens) -> identity
        self.ended: deque[Ended] = deque()  # rows that ended since identities were last worked out, oldest first
        self.resolved_at = -1  # the step whose running rows' identities were last worked out
        self.evicted: set[int] = set()  # blocks whose identity was dropped since the scheduler last took them

    @property
    def num_free(self) -> int:
        return len(self.queue.members)  # (SPEED: not len(self.queue), a Python call more; asked every step)

    @property
    def refs(self) -> list[int]:
        """Each block's reference count: the rows whose table holds it (0: free, in the queue)."""
        return [0 if block in self.queue else 1 + self.sharers.get(block, 0) for block in range(self.num_blocks)]

    # -- admission ---------------------------------------------------------------
    def match(self, seq: Sequence, running: list[Sequence | None], step: int) -> list[int]:
        """The cached blocks holding the longest prefix of `seq`'s tokens, leaving at least one token.
        (The `running` rows' written tokens change only between steps: they are looked at once a step.)"""
        tokens, size = seq.tokens, self.block_size
        if len(tokens) <= size:  # (no full block to look up: nothing to work out)
            return []
        self.resolve(running if step != self.resolved_at else ())
        self.resolved_at = step
        identities, cached = self._identities, self.cached
        hits: list[int] = []
        parent = None
        for start in range(0, (len(tokens) - 1) // size * size, size):
            parent = identities.get((parent, block_key(tokens, start, size)))
            if parent not in cached:
                break
            hits.append(min(cached[parent]))
        return hits

    def free_besides(self, hits: list[int]) -> int:
        """Free blocks that are not among `hits`: what a row with these hits may take."""
        return len(self.queue) - sum(1 for block in hits if block in self.queue)

    def share(self, seq: Sequence, hits: list[int]) -> None:
        """`seq`'s table starts with the hit blocks, one more reference each."""
        queue, sharers = self.queue, self.sharers
        for block in hits:
            if block in queue:
                queue.remove(block)
            else:
                sharers[block] = sharers.get(block, 0) + 1
        seq.blocks.extend(hits)
        seq.block_identities = [self.identity[block] for block in hits]  # (worked out by the match)

    # -- identities --------------------------------------------------------------
    def resolve(self, running: list[Sequence | None]) -> None:
        """Work out the identity of every full block still cached: the free ones of the rows that ended since
        the last time (those the head has not reached) and those of the `running` rows."""
        head = self.queue.head_position
        for tokens, blocks, known, first, stop in self.ended:  # (the block at `stop - 1` is the table's known'th)
            self._work_out(tokens, blocks, known, len(known) + stop - max(first, head))
        self.ended.clear()
        size = self.block_size
        for seq in running:
            if seq is not None and (full := full_blocks(seq, size)) > len(seq.block_identities):
                self._work_out(seq.tokens, seq.blocks, seq.block_identities, full)

    def _work_out(self, tokens: list[int], blocks: list[int], known: list[int], full: int) -> None:
        """Identities of the table's first `full` blocks after the `known` ones, each block filed under its own."""
        size, identities, identity, cached = self.block_size, self._identities, self.identity, self.cached
        parent = known[-1] if known else None
        for index in range(len(known), full):
            parent = identities.setdefault((parent, block_key(tokens, index * size, size)), len(identities))
            known.append(parent)
            identity[blocks[index]] = parent
            cached.setdefault(parent, []).append(blocks[index])

    # -- taking and giving back --------------------------------------------------
    def _take(self, blocks: int) -> list[int]:
        """`blocks` blocks from the head of the queue; a cached one loses its identity (evicted)."""
        queue = self.queue
        new = queue.take(blocks)
        if self.cached:  # (blocks whose identity was worked out)
            identity, cached = self.identity, self.cached
            for block in new:
                if (old := identity[block]) is not None:
                    identity[block] = None
                    if len(holders := cached[old]) == 1:
                        del cached[old]
                    else:
                        holders.remove(block)
                    self.evicted.add(block)
        if self.ended:  # (the head's position: SPEED, without the property's call, every take)
            self._evict_ended(new, queue.base + queue.head)
        return new

    def _evict_ended(self, new: list[int], end: int) -> None:
        """The full blocks of ended rows among `new`, the blocks just taken up to the position `end`, are evicted;
        records none of whose full blocks is left go. (The ended rows' blocks are the last of `new`: the head
        skips stale entries, which only a hit leaves, and a match works all records out first.)"""
        ended, start = self.ended, end - len(new)  # (the block at position p is new[p - start])
        while ended:
            _, _, _, first, stop = ended[0]
            if first >= end:
                break
            # (SPEED: conditional expressions, not min and max: 1.4k instructions a call fewer, callgrind)
            self.evicted.update(new[first - start if first > start else 0 : (stop if stop < end else end) - start])
            if stop > end:
                break
            ended.popleft()

    def free(self, seq: Sequence) -> int:
        """Drop `seq`'s reference to each of its blocks; those no one holds go to the queue's tail,
        the table's last block first. Returns how many entries its table had."""
        blocks, known, queue, sharers = seq.blocks, seq.block_identities, self.queue, self.sharers
        if (full := full_blocks(seq, self.block_size)) > len(known):  # some not worked out: on record
            # (they join first, the table's last first: the blocks others hold are among the known ones)
            stop = queue.tail_position + len(blocks) - len(known)
            self.ended.append((seq.tokens, blocks, known, stop - full + len(known), stop))
        if not sharers or sharers.keys().isdisjoint(blocks):  # (it shares nothing: all go back)
            queue.extend(blocks[::-1])
        else:
            unheld = []
            for block in reversed(blocks):
                if block not in sharers:
                    unheld.append(block)
                elif sharers[block] == 1:
                    del sharers[block]
                else:
                    sharers[block] -= 1
            queue.extend(unheld)
        seq.blocks, seq.block_identities = [], []
        return len(blocks)

    def take_evicted(self) -> set[int]:
        evicted, self.evicted = self.evicted, set()
        return evicted
