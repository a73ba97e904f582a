"""The KV pool's part of a long run's window (window_frames.py): the pool as the window's first step finds
it, written as ops, then the window's own ops.

The stage rebuilds the pool by applying `kv.ops` from the first entry (kv_frames.py has the vocabulary),
so a window's ops start with the pool as every step before the window left it: each request's block
table, in the order the stage's own replay would hold them (`["h", r, b, ...]` adds r's references to
blocks b, with prefix caching; `[r, n, b]` takes blocks b .. b+n-1, without), then the blocks still
caching their tokens (`["c", b, ...]`). `OpsPool` follows kv.js's rules to get there from the run's
ops, so the window draws at each of its steps exactly the pool the whole run's frames draw then.
"""

from __future__ import annotations

from bisect import bisect_left

from .kv_frames import LowestFree


class OpsPool:
    """The pool as kv.js rebuilds it from ops: each request's block table (in the order the stage's
    Map holds them), who holds each block, and, with prefix caching, the blocks caching their tokens."""

    def __init__(self, blocks: int, prefix_caching: bool):
        self.prefix = prefix_caching
        self.plain = LowestFree(blocks)  # without prefix caching: the lowest free block, owners
        self.tables: dict[int, list[int]] = self.plain.tables
        self.cached: set[int] = set()
        self.blocks = blocks

    def apply(self, entry: list) -> None:
        """Apply one ops entry, `[step, op, op, ...]`."""
        for op in entry[1:]:
            if isinstance(op, int):
                self._free(~op) if op < 0 else self._take(op, [self.plain.lowest()])
            elif op[0] == "h":
                self._take(op[1], op[2:])
            elif op[0] in ("c", "e"):
                changed = [b for b in op[1:] if 0 <= b < self.blocks]
                (self.cached.update if op[0] == "c" else self.cached.difference_update)(changed)
            elif len(op) == 2:
                for _ in range(op[1]):
                    self._take(op[0], [self.plain.lowest()])
            else:
                sign = 1 if op[1] > 0 else -1
                self._take(op[0], [op[2] + sign * n for n in range(abs(op[1]))])

    def _take(self, request: int, blocks) -> None:
        for block in blocks:
            if block is not None and 0 <= block < self.blocks:
                self.plain.take(request, block)

    def _free(self, request: int) -> None:
        if self.prefix:
            self.tables.pop(request, None)
        else:
            self.plain.free(request)

    def snapshot(self, local: dict[int, int]) -> list:
        """The pool as ops from an empty one, its requests renamed by `local` (global index -> the window's)."""
        ops: list = []
        for request, table in self.tables.items():
            if self.prefix:
                ops.append(["h", local[request], *table])
                continue
            for block in (b for b in table if self.plain.owner[b] == request):
                last = ops[-1] if ops else None
                if last and last[0] == local[request] and last[2] + last[1] == block:
                    last[1] += 1
                else:
                    ops.append([local[request], 1, block])
        if self.cached:
            ops.append(["c", *sorted(self.cached)])
        return ops

    def holders(self) -> set[int]:
        return {request for request, table in self.tables.items() if table}


def pool_before(kv: dict, step: int) -> OpsPool:
    """The pool as the stage draws it once every step before `step` has happened."""
    pool = OpsPool(kv["blocks"], bool(kv.get("prefix_caching")))
    for entry in kv["ops"][: bisect_left(kv["ops"], step, key=lambda entry: entry[0])]:
        pool.apply(entry)
    return pool


def window_kv(kv: dict, pool: OpsPool, first: int, last: int, local: dict[int, int]) -> dict:
    """`kv` (the run's) for the window `first`..`last`: the pool before it (`pool`) as its first ops,
    then the window's own, every request renamed by `local`. With prefix caching, the admissions of the
    window's requests up to `last` and, as `before`, [tokens looked up, blocks hit] of the run's other
    admissions before `first`: the hit rate so far counts them all (prefix.js)."""
    ops = kv["ops"]
    start = bisect_left(ops, first, key=lambda entry: entry[0])
    end = bisect_left(ops, last + 1, key=lambda entry: entry[0])
    entries = [[entry[0], *(_renamed(op, local) for op in entry[1:])] for entry in ops[start:end]]
    opening = pool.snapshot(local)
    if entries and entries[0][0] == first:
        entries[0][1:1] = opening
    elif opening:
        entries.insert(0, [first, *opening])
    out = {**kv, "ops": entries}
    if "admissions" in kv:
        listed = [[local[r], step, *rest] for r, step, *rest in kv["admissions"] if r in local and step <= last]
        before = [(looked, hits) for r, step, looked, hits in kv["admissions"] if step < first and r not in local]
        out["admissions"] = listed
        out["before"] = [sum(looked for looked, _ in before), sum(hits for _, hits in before)]
    return out


def _renamed(op, local: dict[int, int]):
    if isinstance(op, int):
        return local[op] if op >= 0 else ~local[~op]
    if op[0] == "h":
        return ["h", local[op[1]], *op[2:]]
    if op[0] in ("c", "e"):
        return op
    return [local[op[0]], *op[1:]]
