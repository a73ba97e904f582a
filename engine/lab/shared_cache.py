"""`shared_cache`: `functools.lru_cache` for a server's threads, each value computed once.

`lru_cache` lets every thread that misses compute the value itself: when thirty learners
open the app at once on a fresh server, thirty threads read the whole course at the same
time, each holding the interpreter lock in turn (2.5 s of work instead of 0.085 s). Here a
miss takes the key's lock, so the other threads asking for the same key wait for the one
computation; threads asking for other keys do not wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar

Value = TypeVar("Value")


def shared_cache(maxsize: int | None = None) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Decorate a function of hashable positional arguments (exceptions are not cached)."""

    def decorate(function: Callable[..., Value]) -> Callable[..., Value]:
        cached = lru_cache(maxsize)(function)
        guard = threading.Lock()
        making: dict[tuple, threading.Lock] = {}  # one lock per key being computed

        @wraps(function)
        def call(*args):
            with guard:
                lock = making.setdefault(args, threading.Lock())
            try:
                with lock:
                    return cached(*args)
            finally:
                with guard:
                    if making.get(args) is lock and not lock.locked():
                        del making[args]

        call.cache_info = cached.cache_info
        return call

    return decorate
