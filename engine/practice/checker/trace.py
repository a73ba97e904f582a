"""The recording model and the `Trace`: everything one case's run did.

`CheckModel` is the recording mock model handed to the engine. It answers every method
name a seed uses (`generate_next_tokens`, `generate_next_tokens_padded`, `next_tokens`,
or a plain call) and records each call's active rows. Runs are bounded: a solution that
keeps calling the model far past what the case needs is stopped with an error.
A `Trace` is everything one run did, as plain JSON-safe data: it crosses from the worker
process to the checker (`Trace.from_json` refuses anything else). `driver.py` runs a case.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ...core.validation import int_like

MAX_CALLS = 500  # far beyond any case's needs: a run past this never ends
FILLER = 99  # what the model answers a scripted request's row once its script has run out


class RunawayError(RuntimeError):
    pass


class CheckModel:
    def __init__(self, case: dict):
        self.vocab_size = case["vocab_size"]
        self.script: dict[tuple[int, ...], int] = {}
        for request in case["requests"]:
            if request["script"] is not None:
                prefix = tuple(request["prompt"])
                for token in request["script"]:
                    self.script[prefix] = token
                    prefix = (*prefix, token)
        self.scripted = {tuple(r["prompt"]) for r in case["requests"] if r["script"] is not None}
        self.calls: list[list[list[int]]] = []  # active rows of each call, as sent
        self.before_call = None  # called with the number of calls so far, before each call is recorded

    def token(self, prefix) -> int:
        key = tuple(map(int, prefix))  # numpy integers answer like ints
        if key in self.script:
            return self.script[key]
        if any(key[: len(p)] == p for p in self.scripted):
            return FILLER
        digest = hashlib.blake2b(repr(list(key)).encode(), digest_size=4).digest()
        return int.from_bytes(digest, "little") % self.vocab_size

    def _record(self, rows) -> None:
        if self.before_call is not None:
            self.before_call(len(self.calls))
        if len(self.calls) >= MAX_CALLS:
            raise RunawayError(f"the model was called more than {MAX_CALLS} times: the run does not end")
        self.calls.append([plain(row) for row in rows])

    def generate_next_tokens(self, batch_prefixes):
        self._record(batch_prefixes)
        return [self.token(p) for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes, active_mask):
        self._record([p for p, active in zip(batch_prefixes, active_mask) if active])
        self.calls[-1].append(len(batch_prefixes))  # rows sent, padding included (last item)
        return [self.token(p) if active else 0 for p, active in zip(batch_prefixes, active_mask)]

    next_tokens = generate_next_tokens
    __call__ = generate_next_tokens


@dataclass
class Trace:
    calls: list = field(default_factory=list)  # per call: active rows (lists), then rows sent if padded (int)
    callbacks: list = field(default_factory=list)  # [request index, tokens, model calls made before it]
    error: str | None = None  # run() raised, or the case could not start
    timeout: bool = False
    changed: list = field(default_factory=list)  # a delivered result seen changed: [request, tokens now, calls before]
    failed_at: str | None = None  # where the solution raised: "__init__", "submit_request r2" or "run()"
    unsupported: str | None = None  # the solution's adapter says it cannot express the case, and why
    raised: list = field(default_factory=list)  # what run() raised when the case's interruption fired
    threads_left: int = 0  # the solution's threads still running once the case ended (the worker is then replaced)

    def rows(self, n: int) -> list[list[int]]:
        return [row for row in self.calls[n] if isinstance(row, list)]

    def rows_sent(self, n: int) -> int:
        last = self.calls[n][-1] if self.calls[n] else None
        return last if isinstance(last, int) else len(self.calls[n])

    def padded(self, n: int) -> bool:
        return bool(self.calls[n]) and type(self.calls[n][-1]) is int

    def to_json(self) -> dict:
        return {name: getattr(self, name) for name in (*REQUIRED, *OPTIONAL)}

    @classmethod
    def from_json(cls, data: object, requests: int) -> Trace:
        """A trace sent by the worker for a case of `requests` requests; ValueError if it is not one."""
        if not isinstance(data, dict) or not set(REQUIRED) <= set(data) <= {*REQUIRED, *OPTIONAL}:
            raise ValueError("not a trace object")
        calls, callbacks, error, timeout = (data[name] for name in REQUIRED)
        if not isinstance(calls, list) or not all(_is_call(call) for call in calls):
            raise ValueError("calls: not a list of model calls")
        if not isinstance(callbacks, list) or not all(_is_callback(c, requests) for c in callbacks):
            raise ValueError("callbacks: not a list of [request, tokens, calls before]")
        if not (error is None or isinstance(error, str)) or type(timeout) is not bool:
            raise ValueError("error or timeout: wrong type")
        changed = data.get("changed", [])
        if not isinstance(changed, list) or not all(_is_callback(c, requests) for c in changed):
            raise ValueError("changed: not a list of [request, tokens, calls before]")
        failed_at, unsupported = data.get("failed_at"), data.get("unsupported")
        if not all(value is None or isinstance(value, str) for value in (failed_at, unsupported)):
            raise ValueError("failed_at or unsupported: wrong type")
        raised = data.get("raised", [])
        if not isinstance(raised, list) or not all(isinstance(r, str) for r in raised):
            raise ValueError("raised: not a list of messages")
        threads_left = data.get("threads_left", 0)
        if type(threads_left) is not int or threads_left < 0:
            raise ValueError("threads_left: not a count")
        return cls(calls, callbacks, error, timeout, changed, failed_at, unsupported, raised, threads_left)


REQUIRED = ("calls", "callbacks", "error", "timeout")
OPTIONAL = ("changed", "failed_at", "unsupported", "raised", "threads_left")


def _is_row(row: object) -> bool:
    return isinstance(row, list) and all(type(t) in (int, str) for t in row)


def _is_call(call: object) -> bool:
    """Active rows, then (padded calls) the number of rows sent."""
    if not isinstance(call, list):
        return False
    rows = call[:-1] if call and type(call[-1]) is int else call
    return all(_is_row(row) for row in rows)


def _is_callback(callback: object, requests: int) -> bool:
    return (
        isinstance(callback, list)
        and len(callback) == 3
        and type(callback[0]) is int
        and 0 <= callback[0] < requests
        and _is_row(callback[1])
        and type(callback[2]) is int
        and callback[2] >= 0
    )


def plain(tokens) -> list:
    """JSON-safe tokens: ints (numpy integers converted), anything else as its repr."""
    try:
        return [t if type(t) is int else (value if (value := int_like(t)) is not None else repr(t)) for t in tokens]
    except TypeError:
        return [repr(tokens)]
