"""One timed run of a scale workload: submit every request, `run()`, check every callback fired once.

The time is the process's CPU time (`getrusage`, user + system), not the wall clock: another
process on a busy machine takes wall time from a run but not CPU time. (`time.process_time` is
no finer than 4 ms under an RLIMIT_CPU on some kernels; `getrusage` is.)
"""

from __future__ import annotations

from ..driver import KEYWORD, POSITIONAL, stop_style
from ..resources import cpu_used
from .workloads import PROMPT, STOP_TOKEN, ScaleModel, Workload


class WrongResult(Exception):
    """The run ended without every request's callback fired exactly once with its whole answer."""


def timed_run(engine_class, workload: Workload, model=None) -> float:
    """CPU seconds for one whole run of `workload` (construction, submits, run, callbacks)."""
    style = stop_style(engine_class) if workload.stops else None
    stops = [list(s) for s in workload.stops]
    delivered: list[int] = []
    callback = lambda tokens: delivered.append(len(tokens))  # noqa: E731
    start = cpu_used()
    engine = engine_class(model or ScaleModel(), workload.batch_size, STOP_TOKEN)
    for _ in range(workload.requests):
        if style == KEYWORD:
            engine.submit_request(list(PROMPT), workload.max_tokens, callback, stop_sequences=stops)
        elif style == POSITIONAL:
            engine.submit_request(list(PROMPT), workload.max_tokens, callback, stops)
        else:
            engine.submit_request(list(PROMPT), workload.max_tokens, callback)
    engine.run()
    seconds = cpu_used() - start
    expected = len(PROMPT) + workload.max_tokens
    if len(delivered) != workload.requests or any(n != expected for n in delivered):
        wrong = len(delivered) - delivered.count(expected)
        raise WrongResult(
            f"{len(delivered)} callbacks for {workload.requests} requests, {wrong} without "
            f"{workload.max_tokens} generated tokens"
        )
    return seconds
