"""Run one case against an engine class and record everything it did: a `Trace`.

`CheckModel` is the recording mock model handed to the engine. It answers every method
name a seed uses (`generate_next_tokens`, `generate_next_tokens_padded`, `next_tokens`,
or a plain call) and records each call's active rows. Runs are bounded: a solution that
keeps calling the model far past what the case needs is stopped with an error.

Stop sequences are passed as `stop_sequences=...` when `submit_request` has a parameter
of that name (keyword-only included) or takes `**kwargs`, and as a 4th positional
argument when its 4th parameter has another name (`stops`); see `stop_style`.
"""

from __future__ import annotations

import hashlib
import inspect
import traceback
from dataclasses import dataclass, field

from ...core.validation import int_like

MAX_CALLS = 500  # far beyond any case's needs: a run past this never ends
KEYWORD, POSITIONAL = "keyword", "positional"  # how submit_request takes stop sequences


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

    def token(self, prefix) -> int:
        key = tuple(map(int, prefix))  # numpy integers answer like ints
        if key in self.script:
            return self.script[key]
        if any(key[: len(p)] == p for p in self.scripted):
            return 99  # past the end of a script
        digest = hashlib.blake2b(repr(list(key)).encode(), digest_size=4).digest()
        return int.from_bytes(digest, "little") % self.vocab_size

    def _record(self, rows) -> None:
        if len(self.calls) >= MAX_CALLS:
            raise RunawayError(f"the model was called more than {MAX_CALLS} times: the run does not end")
        self.calls.append([_plain(row) for row in rows])

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

    def rows(self, n: int) -> list[list[int]]:
        return [row for row in self.calls[n] if isinstance(row, list)]

    def rows_sent(self, n: int) -> int:
        last = self.calls[n][-1] if self.calls[n] else None
        return last if isinstance(last, int) else len(self.calls[n])

    def to_json(self) -> dict:
        return {"calls": self.calls, "callbacks": self.callbacks, "error": self.error, "timeout": self.timeout}

    @classmethod
    def from_json(cls, data: object, requests: int) -> Trace:
        """A trace sent by the worker for a case of `requests` requests; ValueError if it is not one."""
        if not isinstance(data, dict) or set(data) != {"calls", "callbacks", "error", "timeout"}:
            raise ValueError("not a trace object")
        calls, callbacks, error, timeout = data["calls"], data["callbacks"], data["error"], data["timeout"]
        if not isinstance(calls, list) or not all(_is_call(call) for call in calls):
            raise ValueError("calls: not a list of model calls")
        if not isinstance(callbacks, list) or not all(_is_callback(c, requests) for c in callbacks):
            raise ValueError("callbacks: not a list of [request, tokens, calls before]")
        if not (error is None or isinstance(error, str)) or type(timeout) is not bool:
            raise ValueError("error or timeout: wrong type")
        return cls(calls, callbacks, error, timeout)


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


def _plain(tokens) -> list:
    """JSON-safe tokens: ints (numpy integers converted), anything else as its repr."""
    try:
        return [t if type(t) is int else (value if (value := int_like(t)) is not None else repr(t)) for t in tokens]
    except TypeError:
        return [repr(tokens)]


def stop_style(engine_class) -> str | None:
    """How `engine_class.submit_request` takes stop sequences: KEYWORD, POSITIONAL, or None (not at all)."""
    try:
        params = list(inspect.signature(engine_class.submit_request).parameters.values())
    except (TypeError, ValueError, AttributeError):
        return None
    kinds = {p.kind for p in params}
    if any(p.name == "stop_sequences" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        return KEYWORD
    if sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) >= 5:
        return POSITIONAL  # self, prompt_tokens, max_tokens, callback, and a 4th of another name
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return KEYWORD
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return POSITIONAL
    return None


def run_case(engine_class, case: dict, with_stops: bool) -> Trace:
    """Run `case` (Case.to_json()) on a fresh `engine_class(model, batch_size, stop_token)`."""
    model = CheckModel(case)
    trace = Trace(model.calls)
    style = stop_style(engine_class) if with_stops else None
    try:
        engine = engine_class(model, case["batch_size"], case["stop_token"])
        for i, request in enumerate(case["requests"]):

            def deliver(tokens, i=i):
                trace.callbacks.append([i, _plain(tokens), len(model.calls)])

            arguments = [list(request["prompt"]), request["max_tokens"], deliver]
            stops = [list(s) for s in request["stops"]]
            if style == KEYWORD and stops:
                engine.submit_request(*arguments, stop_sequences=stops)
            elif style == POSITIONAL and stops:
                engine.submit_request(*arguments, stops)
            else:
                engine.submit_request(*arguments)
        engine.run()
    except Exception as exc:  # the solution's own error: reported, not raised
        frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
        trace.error = "".join(frames[-3:]).strip()
    return trace
