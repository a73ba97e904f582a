"""Drive an engine class through one checker case and record everything it did into a `Trace`.

Stop sequences are passed as `stop_sequences=...` when `submit_request` has a parameter
of that name (keyword-only included) or takes `**kwargs`, and as a 4th positional
argument when its 4th parameter has another name (`stops`); see `stop_style`.

Every result handed to a callback is kept and read again before each later model call and
when the run ends (`Deliveries`): an engine that hands a callback its own buffer and then
reuses it for another request is caught, though what the callback saw at the time was right.
An adapter may raise `adapting.Unsupported` for a case its solution cannot express: the
trace says so instead of failing. A case of an optional check carries an interruption
(a cancel, a model or callback fault: `interruptions.py`), which drives the run.
"""

from __future__ import annotations

import inspect
import traceback

from .adapting import Unsupported
from .interruptions import Interruption
from .trace import CheckModel, Trace, plain

KEYWORD, POSITIONAL = "keyword", "positional"  # how submit_request takes stop sequences


class Deliveries:
    """Each result handed to a callback, kept to be read again later (`reread`): the first time one
    differs from what it held when delivered, `trace.changed` gets [request, tokens now, calls so far]."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.kept: list[tuple[int, object, list]] = []  # (request index, the object delivered, its tokens then)

    def deliver(self, i: int, tokens) -> None:
        contents = plain(tokens)
        self.trace.callbacks.append([i, contents, len(self.trace.calls)])
        try:
            again = iter(tokens) is not tokens  # an iterator cannot be read twice: nothing to compare
        except TypeError:
            again = False
        if again:
            self.kept.append((i, tokens, contents))

    def reread(self, calls: int) -> None:
        unchanged = []
        for i, tokens, contents in self.kept:
            now = plain(tokens)
            if now == contents:
                unchanged.append((i, tokens, contents))
            else:
                self.trace.changed.append([i, now, calls])
        self.kept = unchanged


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


def run_case(engine_class, case: dict, with_stops: bool, trace: Trace | None = None) -> Trace:
    """Run `case` (Case.to_json()) on a fresh `engine_class(model, batch_size, stop_token)`, recording
    into `trace` (a new one by default; the worker passes its own, to report a run that hangs)."""
    model = CheckModel(case)
    trace = trace if trace is not None else Trace()
    trace.calls = model.calls
    deliveries = Deliveries(trace)
    interruption = Interruption.of(case)  # none, for a correctness case
    model.before_call = interruption.before_call(deliveries.reread)
    style = stop_style(engine_class) if with_stops else None
    where, ids = "__init__", []
    try:
        engine = engine_class(model, case["batch_size"], case["stop_token"])
        for i, request in enumerate(case["requests"]):
            where = f"submit_request r{i}"
            callback = interruption.callback(i, lambda tokens, i=i: deliveries.deliver(i, tokens))
            arguments = [list(request["prompt"]), request["max_tokens"], callback]
            stops = [list(s) for s in request["stops"]]
            if style == KEYWORD and stops:
                ids.append(engine.submit_request(*arguments, stop_sequences=stops))
            elif style == POSITIONAL and stops:
                ids.append(engine.submit_request(*arguments, stops))
            else:
                ids.append(engine.submit_request(*arguments))
        where = "run()"
        interruption.run(engine, ids, trace)
    except Unsupported as exc:  # the adapter's word: this case is beyond what the solution can express
        trace.unsupported = str(exc) or f"{type(exc).__name__} (no reason given)"
    except Exception as exc:  # the solution's own error: reported, not raised
        frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
        trace.error, trace.failed_at = "".join(frames[-3:]).strip(), where
    deliveries.reread(len(model.calls))
    return trace
