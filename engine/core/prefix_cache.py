"""The KV pool with automatic prefix caching: full blocks are kept under their identity and shared.

A block is full when it holds `block_size` tokens. Its identity is the pair (the identity of
the block before it in the same table, or none; the tuple of its tokens): a chained hash, as
in vLLM, but exact, since each distinct pair is numbered once (`_identities`). A full block
is registered under its identity in the step whose computed tokens fill it; partial blocks
are never shared. Two rows that fill a block with the same prefix in the same run both
register theirs; a hit takes the one registered first.

At admission a row's tokens are matched block by block from the first: the longest run of
leading cached blocks is a hit, capped so at least one token is still computed. Hit blocks
join the row's table without being allocated, and each gains a reference.

The free list is an eviction queue (vLLM v1's free block queue): it starts as 0 .. n-1, a
new block is taken from its head, and a row that ends (finished, cancelled or preempted)
drops one reference from each of its blocks; those left with none go to the tail in reverse
table order, so a row's last blocks are reused before its first. A free full block stays
cached, and can still be hit (which takes it out of the queue), until it is taken from the
head for a new use: then its identity is dropped (`evicted`, for the log's `kv_evict`).

References: vLLM's automatic prefix caching (docs: "design/prefix_caching"; v1
`kv_cache_manager.py`, `block_pool.py`); the contract's last section.
"""

from __future__ import annotations

from collections import OrderedDict

from .block_manager import BlockManager
from .request import Sequence, Status


class PrefixCache(BlockManager):
    def __init__(self, num_blocks: int, block_size: int, held_back: int = 0):
        super().__init__(num_blocks, block_size, held_back)
        self.queue: OrderedDict[int, None] = OrderedDict.fromkeys(range(num_blocks))  # free blocks, head first
        self.refs = [0] * num_blocks  # rows whose table holds the block
        self.identity: list[int | None] = [None] * num_blocks  # a cached block's identity
        self.cached: dict[int, list[int]] = {}  # identity -> the blocks registered under it, oldest first
        self._identities: dict[tuple[int | None, tuple[int, ...]], int] = {}  # (parent, tokens) -> identity
        self.evicted: list[int] = []  # blocks whose identity was dropped since the scheduler last took them

    @property
    def num_free(self) -> int:
        return len(self.queue)

    # -- admission ---------------------------------------------------------------
    def match(self, seq: Sequence) -> list[int]:
        """The cached blocks holding the longest prefix of `seq`'s tokens, leaving at least one token."""
        tokens, size, identities, cached = seq.tokens, self.block_size, self._identities, self.cached
        hits: list[int] = []
        parent = None
        for start in range(0, (len(tokens) - 1) // size * size, size):
            parent = identities.get((parent, tuple(tokens[start : start + size])))
            if parent not in cached:
                break
            hits.append(cached[parent][0])
        return hits

    def free_besides(self, hits: list[int]) -> int:
        """Free blocks that are not among `hits`: what a row with these hits may take."""
        return len(self.queue) - sum(1 for block in hits if not self.refs[block])

    def share(self, seq: Sequence, hits: list[int]) -> None:
        """`seq`'s table starts with the hit blocks, one more reference each."""
        for block in hits:
            if not self.refs[block]:
                del self.queue[block]
            self.refs[block] += 1
        seq.blocks.extend(hits)
        seq.block_identities = [self.identity[block] for block in hits]

    # -- full blocks -------------------------------------------------------------
    def register(self, seq: Sequence, cached_tokens: int) -> None:
        """The blocks of `seq` that `cached_tokens` tokens fill are registered under their identity."""
        size, known, tokens, blocks = self.block_size, seq.block_identities, seq.tokens, seq.blocks
        identities, identity_of, cached = self._identities, self.identity, self.cached
        for index in range(len(known), cached_tokens // size):
            key = (known[-1] if known else None, tuple(tokens[index * size : (index + 1) * size]))
            identity = identities.setdefault(key, len(identities))
            block = blocks[index]
            if identity_of[block] is None:  # (a hit block is registered already)
                identity_of[block] = identity
                cached.setdefault(identity, []).append(block)
            known.append(identity)

    def register_filled(self, rows: list[Sequence]) -> None:
        """Decoding rows whose last block this step's token filled: each registers it (one call a step)."""
        register = self.register
        for seq in rows:
            if seq.status is Status.RUNNING and not seq.prefilling:
                register(seq, len(seq.tokens))

    # -- taking and giving back --------------------------------------------------
    def _take(self, blocks: int) -> list[int]:
        """`blocks` blocks from the head of the queue; a cached one loses its identity (evicted)."""
        new, pop, identity_of, refs = [], self.queue.popitem, self.identity, self.refs
        for _ in range(blocks):
            block = pop(last=False)[0]
            identity = identity_of[block]
            if identity is not None:
                identity_of[block] = None
                holders = self.cached[identity]
                if len(holders) == 1:
                    del self.cached[identity]
                else:
                    holders.remove(block)
                self.evicted.append(block)
            refs[block] = 1
            new.append(block)
        return new

    def free(self, seq: Sequence) -> int:
        """Drop `seq`'s reference to each of its blocks; those no one holds go to the queue's tail,
        the table's last block first. Returns how many entries its table had."""
        count = len(seq.blocks)
        for block in reversed(seq.blocks):
            self.refs[block] -= 1
            if not self.refs[block]:
                self.queue[block] = None
        seq.blocks, seq.block_identities = [], []
        return count

    def take_evicted(self) -> list[int]:
        evicted, self.evicted = self.evicted, []
        return evicted
