"""The worker's answer for a case that overruns its time: the trace so far, marked as a timeout.

A solution that never returns from `run()` used to leave the checker with nothing but "it
did not finish". The watchdog, a thread of the worker, sends the trace as it stands a
little before the checker's own deadline: how many model calls were made, which callbacks
fired, so the report can name the request that never finished. Exactly one answer goes out
per case: the watchdog's or the finished run's, whichever comes first. The checker kills
the worker when it receives a timeout, since the solution is still running.

It needs the interpreter's lock for a moment: a solution stuck in a C call that never
releases it (a pathological regular expression, say) starves it, and the checker's own
deadline then reports the timeout without a trace.
"""

from __future__ import annotations

import json
import threading
import time

from .trace import Trace


def head_start(seconds: float) -> float:
    """How much earlier than the checker's deadline (`seconds` per case) the watchdog answers."""
    return min(0.5, seconds * 0.2)


class Watchdog:
    def __init__(self, answers):
        self._answers = answers  # the protocol's text file, one JSON line per answer
        self._wake = threading.Condition()
        self._trace: Trace | None = None
        self._deadline: float | None = None
        self._answered = True
        threading.Thread(target=self._watch, name="checker-watchdog", daemon=True).start()

    def start(self, trace: Trace, seconds: float) -> None:
        """A case starts, recording into `trace`, with `seconds` allowed by the checker."""
        with self._wake:
            self._trace, self._answered = trace, False
            self._deadline = time.monotonic() + seconds - head_start(seconds)
            self._wake.notify()

    def finish(self, trace: Trace) -> None:
        """The run returned: its trace is the answer, unless the watchdog has already sent one."""
        with self._wake:
            self._deadline = None
            self._send(trace.to_json())

    def _send(self, answer: dict) -> None:
        if self._answered:
            return
        self._answered = True
        self._answers.write(json.dumps(answer) + "\n")
        self._answers.flush()

    def _watch(self) -> None:
        with self._wake:
            while True:
                if self._deadline is None:
                    self._wake.wait()
                    continue
                remaining = self._deadline - time.monotonic()
                if remaining > 0:
                    self._wake.wait(remaining)
                    continue
                self._deadline = None
                self._send({**self._trace.to_json(), "error": None, "timeout": True})
