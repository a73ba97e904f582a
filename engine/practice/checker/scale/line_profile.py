"""Where the solution's time goes, line by line: a short tracing window in the middle of a run.

A sampling profiler cannot tell: the interpreter hands its lock over only between bytecodes
that check for it, so a long C call (a slice copy, `list.pop(0)`, `x in a_list`) is sampled at
the next such point, on another line. A tracer sees each line start, so the time until the next
one is that line's, C calls included. Tracing costs a little on every line, so it runs only for
`WINDOW` seconds, once the run is under way: `ProfiledModel`, the model of the profiled run,
starts it at the model call half-way through the run's expected calls (or once `START_AFTER`
seconds have gone, whichever comes first), and the window's end stops the run (`EnoughProfile`,
a BaseException a solution's `except Exception` does not swallow). Only the solution's own
frames are traced (`belongs(filename)`); time in anything they call (the model, builtins, the
standard library) is the calling line's.
"""

from __future__ import annotations

import linecache
import sys
import time
from collections import Counter
from collections.abc import Callable

from .workloads import ScaleModel, Workload

WINDOW = 0.2  # seconds traced
START_AFTER = 0.3  # seconds into the run at the latest


class EnoughProfile(BaseException):
    """The window is over: unwinds the solution's run."""


class LineProfile:
    def __init__(self, belongs: Callable[[str], bool]):
        self.belongs = belongs
        self.times: Counter = Counter()  # (file, line, function, its first line) -> seconds
        self._key = None  # the solution line running since `_since`
        self._since = 0.0
        self._end = 0.0

    def start(self, frame) -> None:
        """Trace from now, in `frame` (the model's caller) and every solution frame around it."""
        while frame is not None:
            if self.belongs(frame.f_code.co_filename):
                frame.f_trace, frame.f_trace_lines = self._local, True
                if self._key is None:
                    self._key = _key(frame)
            frame = frame.f_back
        self._end = time.perf_counter() + WINDOW
        self._since = time.perf_counter()
        sys.settrace(self._call)

    def _call(self, frame, event, arg):
        return self._local if self.belongs(frame.f_code.co_filename) else None

    def _local(self, frame, event, arg):
        now = time.perf_counter()
        if self._key is not None:
            self.times[self._key] += now - self._since
        if now > self._end:
            sys.settrace(None)
            raise EnoughProfile
        if event == "line":
            self._key = _key(frame)
        elif event == "return":
            caller = frame.f_back
            self._key = _key(caller) if caller is not None and self.belongs(caller.f_code.co_filename) else None
        self._since = time.perf_counter()  # the tracer's own time is nobody's
        return self._local

    def hottest(self, count: int = 8) -> list[dict]:
        """The `count` lines that took longest, with their share of the traced time and their text."""
        total = sum(self.times.values()) or 1.0
        return [
            {
                "file": file,
                "line": line,
                "function": function,
                "first_line": first,
                "share": round(seconds / total, 3),
                "text": linecache.getline(file, line).strip()[:200],
            }
            for (file, line, function, first), seconds in self.times.most_common(count)
        ]


def _key(frame) -> tuple:
    code = frame.f_code
    return (code.co_filename, frame.f_lineno or code.co_firstlineno, code.co_name, code.co_firstlineno)


class ProfiledModel(ScaleModel):
    """The scale model, starting `profile` half-way through a run of `workload` (by its expected
    model calls) or after `START_AFTER` seconds."""

    def __init__(self, profile: LineProfile, workload: Workload):
        self.profile = profile
        waves = -(-workload.requests // workload.batch_size)
        self.start_at = max(1, waves * workload.max_tokens // 2)
        self.deadline = time.perf_counter() + START_AFTER
        self.calls = 0

    def _tick(self) -> None:
        self.calls += 1
        if self.start_at and (self.calls >= self.start_at or time.perf_counter() > self.deadline):
            self.start_at = 0
            self.profile.start(sys._getframe(2))

    def generate_next_tokens(self, batch_prefixes):
        self._tick()
        return super().generate_next_tokens(batch_prefixes)

    def generate_next_tokens_padded(self, batch_prefixes, active_mask):
        self._tick()
        return super().generate_next_tokens_padded(batch_prefixes, active_mask)

    next_tokens = generate_next_tokens
    __call__ = generate_next_tokens
