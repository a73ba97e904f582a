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

NOTE (speed): registering is cheap, working out an identity is not (a tuple of `block_size`
tokens and a dictionary look-up, about a microsecond), and a decoding row fills a block every
`block_size` steps. Only a match reads identities, so a block is registered at once as a
`Pending` (its table and place in it: `identity[block]` says "cached" from that step, for
`kv_evict`) and its identity is worked out at the next match that could hit anything
(`resolve`), pending blocks in the order they were registered, so each identity's blocks stay
oldest first, exactly as if every identity had been worked out when its block filled. A
workload whose prompts fill no block (benchmarks/run.py's headline) never works one out (its
run with the cache: 61.3M -> 52.6M instructions, paged without it 46.6M; README, Performance).
A block taken before its identity was needed simply drops its `Pending`. This relies on a
row's tokens only growing (the engine only appends to them). tests/test_prefix_caching.py
checks the logs equal a cache's that works every identity out at once.

Reference counts are kept only for blocks that more than one row holds (`sharers`): a block
is free exactly when it is in the queue, so a row that shares nothing gives its blocks back
in one call.

References: vLLM's automatic prefix caching (docs: "design/prefix_caching"; v1
`kv_cache_manager.py`, `block_pool.py`); the contract's last section.
"""

from __future__ import annotations

from .block_manager import BlockManager
from .free_queue import FreeQueue
from .request import Sequence, Status

Pending = tuple  # (block, tokens, known, index): a registered block whose identity is not worked out yet,
# block `index` of a table whose row's tokens are `tokens` and whose identities so far are `known` (an int
# once worked out, else its Pending). A plain tuple: one is built a block, and a NamedTuple's is 3x slower.


class PrefixCache(BlockManager):
    def __init__(self, num_blocks: int, block_size: int, held_back: int = 0):
        super().__init__(num_blocks, block_size, held_back)
        self.queue = FreeQueue(num_blocks)  # free blocks, head first
        self.sharers: dict[int, int] = {}  # block -> rows holding it besides the first (only blocks shared)
        self.identity: list[int | Pending | None] = [None] * num_blocks  # a cached block's identity (or Pending)
        self.cached: dict[int, list[int]] = {}  # identity -> the blocks registered under it, oldest first
        self._identities: dict[tuple[int | None, tuple[int, ...]], int] = {}  # (parent, tokens) -> identity
        self.pending: list[Pending] = []  # registered blocks whose identity is not worked out yet, oldest first
        self.evicted: list[int] = []  # blocks whose identity was dropped since the scheduler last took them

    @property
    def num_free(self) -> int:
        return len(self.queue)

    @property
    def refs(self) -> list[int]:
        """Each block's reference count: the rows whose table holds it (0: free, in the queue)."""
        return [0 if block in self.queue else 1 + self.sharers.get(block, 0) for block in range(self.num_blocks)]

    # -- admission ---------------------------------------------------------------
    def match(self, seq: Sequence) -> list[int]:
        """The cached blocks holding the longest prefix of `seq`'s tokens, leaving at least one token."""
        tokens, size = seq.tokens, self.block_size
        if len(tokens) <= size:  # (no full block to look up: nothing to work out)
            return []
        self.resolve()
        identities, cached = self._identities, self.cached
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

    # -- full blocks -------------------------------------------------------------
    def register(self, seq: Sequence, cached_tokens: int) -> None:
        """The blocks of `seq` that `cached_tokens` tokens fill are registered (their identity pending)."""
        known, tokens, blocks, identity, pending = (
            seq.block_identities,
            seq.tokens,
            seq.blocks,
            self.identity,
            self.pending,
        )
        for index in range(len(known), cached_tokens // self.block_size):
            identity[blocks[index]] = entry = (blocks[index], tokens, known, index)
            known.append(entry)
            pending.append(entry)
        self._bound_pending()

    def register_filled(self, rows: list[Sequence]) -> None:
        """Decoding rows whose last block this step's token filled: each registers it (one call a step;
        `register`'s loop for one block, written out: a call a row cost 0.1x the headline's floor)."""
        size, identity, pending, running = self.block_size, self.identity, self.pending, Status.RUNNING
        for seq in rows:
            known, tokens = seq.block_identities, seq.tokens
            index = len(tokens) // size - 1
            if index == len(known) and seq.status is running and not seq.prefilling:  # (else: registered already)
                block = seq.blocks[index]
                identity[block] = entry = (block, tokens, known, index)
                known.append(entry)
                pending.append(entry)
        self._bound_pending()

    def _bound_pending(self) -> None:
        """At most one Pending a block is live (not taken since): the others go once they are many."""
        if len(self.pending) > 2 * self.num_blocks:
            identity = self.identity
            self.pending = [entry for entry in self.pending if identity[entry[0]] is entry]

    def resolve(self) -> None:
        """Work out the identity of every pending block, oldest first; those still cached are filed under it."""
        size, identities, identity, cached = self.block_size, self._identities, self.identity, self.cached
        for entry in self.pending:
            block, tokens, known, index = entry
            start = index
            while start and type(known[start - 1]) is not int:  # (an earlier block taken before it was resolved)
                start -= 1
            parent = known[start - 1] if start else None
            for i in range(start, index + 1):
                parent = identities.setdefault((parent, tuple(tokens[i * size : (i + 1) * size])), len(identities))
                known[i] = parent
            if identity[block] is entry:
                identity[block] = parent
                cached.setdefault(parent, []).append(block)
        self.pending = []

    # -- taking and giving back --------------------------------------------------
    def _take(self, blocks: int) -> list[int]:
        """`blocks` blocks from the head of the queue; a cached one loses its identity (evicted)."""
        new, identity = self.queue.take(blocks), self.identity
        for block in new:
            if (old := identity[block]) is not None:
                identity[block] = None
                if type(old) is int:
                    holders = self.cached[old]
                    if len(holders) == 1:
                        del self.cached[old]
                    else:
                        holders.remove(block)
                self.evicted.append(block)
        return new

    def free(self, seq: Sequence) -> int:
        """Drop `seq`'s reference to each of its blocks; those no one holds go to the queue's tail,
        the table's last block first. Returns how many entries its table had."""
        blocks, queue, sharers = seq.blocks, self.queue, self.sharers
        if not sharers or sharers.keys().isdisjoint(blocks):  # (it shares nothing: all go back)
            queue.extend(reversed(blocks))
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

    def take_evicted(self) -> list[int]:
        evicted, self.evicted = self.evicted, []
        return evicted
