"""A prefix-cached KV pool rebuilt from the event log alone, one event at a time.

It follows `engine/core/prefix_cache.py`'s rules from the events that record them: each
block's reference count, which blocks are cached and under which identity (every block
filled by its row's computed tokens, from `prefill` and `emit` events, until a `kv_evict`;
the tokens are the prompt and the emitted ones), and the eviction queue's order. The JSONL
reader feeds it every event of a log with `prefix_caching`, so a file whose blocks could not
have been taken or shared that way is refused (`apply` returns why); the analysis reads the
state at any step from it (`engine/analysis/pool_state.py`).
"""

from __future__ import annotations

from collections import OrderedDict

from ..block_prompt import as_list, block_key
from .events import EventKind

KIND = {kind.value: kind for kind in EventKind}  # (SPEED: a look-up, where EventKind(value) is a call)
REFERENCE_KINDS = frozenset((EventKind.KV_ALLOC, EventKind.PREFIX_HIT, EventKind.KV_FREE))  # what moves references
NEED_TOKENS = frozenset((EventKind.PREFILL, EventKind.EMIT, EventKind.PREFIX_HIT))  # kinds that read a row's tokens
POOL_KINDS = frozenset(
    (EventKind.KV_ALLOC, EventKind.KV_FREE, EventKind.PREFIX_HIT, EventKind.KV_EVICT, EventKind.PREFILL, EventKind.EMIT)
)


class PoolReplay:
    """Memory grows with the blocks the log uses, never with the pool's size (a file may claim a pool of
    a billion blocks): the eviction queue is the blocks never used yet, in id order, then those given
    back (`returned`), in the order they were."""

    def __init__(self, num_blocks: int, block_size: int, identities: bool = True):
        """`identities=False` follows references and the queue only (what a block holds is not worked out, and
        hits are not checked against it): a whole trace's pool use, without reading its 100M tokens."""
        self.num_blocks, self.block_size, self.identities = num_blocks, block_size, identities
        self.fresh = 0  # blocks fresh .. num_blocks - 1 were never taken: the queue's head, in order
        self.returned: OrderedDict[int, None] = OrderedDict()  # then the blocks given back, oldest first
        self._refs: dict[int, int] = {}  # block -> rows holding it (absent: none)
        self.shared = 0  # references beyond each block's first (a block 3 rows hold counts 2)
        self.identity: dict[int, int] = {}  # a cached block -> its identity
        self.tables: dict[int, list[int]] = {}  # request index -> its block table
        self.tokens: dict[int, list[int]] = {}  # request index -> its tokens (prompt + emitted)
        self.known: dict[int, list[int]] = {}  # request index -> the identities of its leading full blocks
        self._identities: dict[tuple[int | None, tuple[int, ...]], int] = {}  # (parent, tokens) -> identity

    @property
    def cached(self) -> set[int]:
        return set(self.identity)

    @property
    def num_free(self) -> int:
        return self.num_blocks - self.fresh + len(self.returned)

    @property
    def queue(self) -> list[int]:
        """The eviction queue, head first (O(pool): for reading, not for replaying)."""
        return [*range(self.fresh, self.num_blocks), *self.returned]

    @property
    def refs(self) -> list[int]:
        """Each block's reference count (O(pool): for reading)."""
        return [self._refs.get(block, 0) for block in range(self.num_blocks)]

    def references(self, block: int) -> int:
        """One block's reference count (O(1), where `refs` lists the whole pool's)."""
        return self._refs.get(block, 0)

    def apply(self, log, i: int) -> str | None:
        """Apply event `i` of `log`; the reason it could not have happened, or None."""
        kind = log.kind[i]
        if kind not in POOL_KINDS:
            if kind == EventKind.EVICT:  # it has ended: its tokens are needed no more (a trace's are 100M)
                self.tokens.pop(log.request[i], None)
            return None
        request = log.request[i]
        if not self.identities:
            return self.check(KIND[kind], request, log.value[i]) if kind in REFERENCE_KINDS else None
        if request not in self.tokens and kind in NEED_TOKENS:
            self.tokens[request] = as_list(log.requests[request].prompt)
        if kind == EventKind.EMIT:  # the row's tokens in the cache after it: all but the one just sampled
            tokens = self.tokens[request]
            full = len(tokens) // self.block_size
            if full > len(self.known.get(request, ())):  # (SPEED: most emits fill no block: `check`, written out)
                self._register(request, min(full, len(self.tables.setdefault(request, []))))
            tokens.append(log.value[i])
            return None
        return self.check(KIND[kind], request, log.value[i], log.detail[i])

    def check(self, kind: EventKind, request: int, value: int, filled: int = 0) -> str | None:
        """Apply one event of a request whose tokens `self.tokens` holds; the reason it could not have
        happened, or None. `value` is the event's block (kv_alloc, prefix_hit, kv_evict) or token (emit);
        `filled` the row's tokens in the cache after a `prefill` or an `emit`."""
        table = self.tables.setdefault(request, [])
        if kind is EventKind.KV_EVICT:
            if value not in self.identity or self._head() != value:
                return f"block {value} is not the eviction queue's head with cached tokens"
            del self.identity[value]
        elif kind is EventKind.KV_ALLOC:
            if value in self.identity:
                return f"block {value} still holds cached tokens: its kv_evict comes first"
            if self._head() != value:
                return f"a new block comes from the eviction queue's head, block {self._head()}"
            self._leave_queue(value)
            self._refs[value] = 1
            table.append(value)
        elif kind is EventKind.PREFIX_HIT:
            if self.identities and (
                value not in self.identity or self.identity[value] != self._identity_at(request, len(table))
            ):
                return f"block {value} does not cache this request's tokens at block {len(table)} of its table"
            if value in self._refs:
                self.shared += 1
            else:
                self._leave_queue(value)
            self._refs[value] = self._refs.get(value, 0) + 1
            table.append(value)
            if self.identities:
                self.known.setdefault(request, []).append(self.identity[value])
        elif kind is EventKind.KV_FREE:
            for block in reversed(table):
                self._refs[block] -= 1
                if self._refs[block]:
                    self.shared -= 1
                else:
                    del self._refs[block]
                    self.returned[block] = None
            table.clear()
            self.known.pop(request, None)
        elif kind in (EventKind.PREFILL, EventKind.EMIT):
            self._register(request, min(filled // self.block_size, len(table)))
            if kind is EventKind.EMIT:
                self.tokens[request].append(value)
        return None

    def _identity_at(self, request: int, index: int) -> int | None:
        """The identity of the request's block `index`, if its tokens there were ever cached (chained)."""
        known = self.known.get(request, [])
        if len(known) != index:
            return None
        size = self.block_size
        parent = known[-1] if known else None
        return self._identities.get((parent, block_key(self.tokens[request], index * size, size)))

    def _register(self, request: int, full: int) -> None:
        """The request's first `full` blocks are full: each is cached under its identity (once)."""
        known, table, size = self.known.setdefault(request, []), self.tables[request], self.block_size
        for index in range(len(known), full):
            parent = known[-1] if known else None
            key = (parent, block_key(self.tokens[request], index * size, size))
            identity = self._identities.setdefault(key, len(self._identities))
            self.identity.setdefault(table[index], identity)  # (a hit block has its identity already)
            known.append(identity)

    def _head(self) -> int | None:
        return self.fresh if self.fresh < self.num_blocks else next(iter(self.returned), None)

    def _leave_queue(self, block: int) -> None:
        if block == self.fresh:
            self.fresh += 1
        else:
            del self.returned[block]
