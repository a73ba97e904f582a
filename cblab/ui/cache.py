"""A cache shared by every session of the server, bounded by the memory its entries hold.

`st.cache_resource` bounds a cache by its number of entries only, but one run of a big
workload holds a hundred times more than one of a small scenario, so a class opening a
few heavy links could fill the server. Entries here carry an estimate of their size in
bytes; the least recently used are dropped once the total passes the budget, and an
entry bigger than the whole budget is returned without being kept. Two sessions asking
for the same missing entry wait for one computation instead of running it twice.

NOTE: a cache of `long_lived` entries (the runs) hands everything alive to the garbage
collector's permanent generation a second after it stores an entry (`gc.freeze`, after one
full collection with the objects frozen before let go again, so garbage frozen then is still
collected; a second later, so the page that made the run is drawn first). Streamlit's own
full collection after every script run is off (`.streamlit/config.toml`); the full
collections Python still starts now and then skip the frozen objects, so their cost (about
0.1 s per heavy run kept, with the interpreter lock held) stops growing with the runs kept.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from engine.lab.shared_cache import KeyLocks

SETTLE_AFTER_S = 1.0  # the page that made a run is drawn before the collection holds the interpreter lock
_settling = threading.Lock()  # held while a collection is due: several new runs share one


def _settle_soon() -> None:
    if _settling.acquire(blocking=False):
        timer = threading.Timer(SETTLE_AFTER_S, _settle)
        timer.daemon = True
        timer.start()


def _settle() -> None:
    """One full collection, the earlier frozen objects included, then everything alive is frozen."""
    try:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
    finally:
        _settling.release()


class SizedCache:
    def __init__(self, max_bytes: int, long_lived: bool = False):
        self.max_bytes = max_bytes
        self.long_lived = long_lived
        self._entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._making = KeyLocks()  # one lock per entry being computed

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return sum(size for _, size in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, make: Callable[[], object], size_of: Callable[[object], int]) -> object:
        """The cached value for `key`, or `make()`'s (exceptions are not cached)."""
        hit = self._lookup(key)
        if hit is not None:
            return hit[0]
        with self._making.held(key):
            hit = self._lookup(key)  # made by another session meanwhile
            if hit is not None:
                return hit[0]
            value = make()
            self._store(key, value, size_of(value))
        if self.long_lived:
            _settle_soon()
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _lookup(self, key: Hashable) -> tuple[object, int] | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
            return hit

    def _store(self, key: Hashable, value: object, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            self._entries[key] = (value, size)
            total = sum(s for _, s in self._entries.values())
            while total > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                total -= dropped
