"""Each request's tokens, rebuilt from the log's `emit` events: `EventLog.outputs()` as a mapping made when
asked for, so a trace's prompts (a `BlockPrompt` each, up to 100,000s of tokens) become lists one request at
a time, and only the emitted tokens are kept (one int64 array, grouped by request, in order)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind


class Outputs(Mapping):
    """request id -> prompt + generated tokens (a new list each time), as `log.outputs()`."""

    def __init__(self, log: EventLog):
        self._requests, self._index = log.requests, log.request_index
        kind = np.frombuffer(log.kind, np.int8)
        emits = np.flatnonzero(kind == EventKind.EMIT)
        owners = np.frombuffer(log.request, np.int32)[emits]
        order = np.argsort(owners, kind="stable")  # (each request's tokens stay in the order it emitted them)
        self._tokens = np.frombuffer(log.value, np.int64)[emits][order]
        counts = np.bincount(owners, minlength=len(log.requests))[: len(log.requests)]
        self._bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()

    def generated(self, request_id: str) -> list[int]:
        i = self._index[request_id]
        return self._tokens[self._bounds[i] : self._bounds[i + 1]].tolist()

    def token(self, request: int, k: int) -> int:
        """Token k (from 0) that request index `request` emitted."""
        return int(self._tokens[self._bounds[request] + k])

    def __getitem__(self, request_id: str) -> list[int]:
        return list(self._requests[self._index[request_id]].prompt) + self.generated(request_id)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)
