"""Callbacks waiting to run: a step queues them and delivers them once its state is complete.

Each is taken off the queue before it runs, so none ever runs twice. A callback that
raises an Exception is logged as an `error` event and kept for `CallbackError`; one that
raises a BaseException (KeyboardInterrupt, SystemExit) is logged and stops the delivery
there, and whatever is still queued is delivered by the next `deliver()`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from .log.event_log import EventLog
from .log.events import ABSENT
from .request import Sequence


class Outbox:
    def __init__(self, log: EventLog):
        self._log = log
        self._queue: deque[tuple[Sequence, Callable, object, int]] = deque()  # (request, function, value, step)
        self.failures: list[tuple[str, BaseException]] = []  # not yet raised as CallbackError

    def __bool__(self) -> bool:
        return bool(self._queue)

    def put(self, seq: Sequence, function: Callable, value: object, step: int) -> None:
        self._queue.append((seq, function, value, step))

    def put_all(self, calls: list[tuple[Sequence, Callable, object, int]]) -> None:
        """Several calls, each (request, function, value, step), in order."""
        self._queue.extend(calls)

    def deliver(self) -> None:
        queue = self._queue
        while queue:
            seq, function, value, step = queue.popleft()
            try:
                function(value)
            except BaseException as exc:
                what = "callback" if function is seq.callback else "on_token"
                slot = ABSENT if seq.slot is None else seq.slot
                message = f"{what} of request {seq.request_id} raised {type(exc).__name__}: {exc}"
                self._log.error(step, slot, seq.log_index, message)
                if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: stop now, resume later
                    raise
                self.failures.append((seq.request_id, exc))

    def take_failures(self) -> list[tuple[str, BaseException]]:
        failures, self.failures = self.failures, []
        return failures
