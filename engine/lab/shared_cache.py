"""`shared_cache`: `functools.lru_cache` for a server's threads, each value computed once;
`KeyLocks`, the one lock per key that it (and the app's run cache, `cblab/ui/cache.py`) waits on.

`lru_cache` lets every thread that misses compute the value itself: when thirty learners
open the app at once on a fresh server, thirty threads read the whole course at the same
time, each holding the interpreter lock in turn (2.5 s of work instead of 0.085 s). Here a
miss takes the key's lock, so the other threads asking for the same key wait for the one
computation; threads asking for other keys do not wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from functools import lru_cache, wraps
from typing import TypeVar

Value = TypeVar("Value")


class KeyLocks:
    """One lock per key, made when a thread first asks for it and dropped once no thread holds
    or waits for it, so the locks never outnumber the computations under way."""

    def __init__(self):
        self._guard = threading.Lock()
        self._locks: dict[Hashable, list] = {}  # key -> [its lock, threads holding or waiting for it]

    @contextmanager
    def held(self, key: Hashable) -> Iterator[None]:
        with self._guard:
            entry = self._locks.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._guard:
                entry[1] -= 1
                if not entry[1]:
                    del self._locks[key]


def shared_cache(maxsize: int | None = None) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Decorate a function of hashable positional arguments (exceptions are not cached)."""

    def decorate(function: Callable[..., Value]) -> Callable[..., Value]:
        cached = lru_cache(maxsize)(function)
        locks = KeyLocks()

        @wraps(function)
        def call(*args):
            with locks.held(args):  # a hit takes it for a moment; a miss computes once, the others wait
                return cached(*args)

        call.cache_info = cached.cache_info
        return call

    return decorate
