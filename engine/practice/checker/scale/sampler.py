"""Which lines of the solution a run spends its time on: a sampling profiler on a thread.

Every `INTERVAL` seconds the thread looks at the main thread's stack (`sys._current_frames`)
and counts the innermost frame that belongs to the solution (`belongs(filename)`): the line
running, or the line that called into a builtin or the standard library. It costs the run
almost nothing (one look per interval), unlike a tracing profiler, so the profile is of the run as timed.
"""

from __future__ import annotations

import dis
import functools
import linecache
import sys
import threading
from collections import Counter
from collections.abc import Callable

INTERVAL = 0.001  # seconds between looks, and the interpreter's switch interval while sampling


@functools.lru_cache(maxsize=4096)
def _lines(code) -> dict[int, int]:
    """Each instruction's line, by offset; a jump back to the top of a loop (where the interpreter
    most often hands the lock over, and which has no line of its own) takes the line it jumps to."""
    lines, last = {}, code.co_firstlineno
    instructions = list(dis.get_instructions(code))
    for instruction in instructions:
        if instruction.positions and instruction.positions.lineno is not None:
            last = instruction.positions.lineno
        lines[instruction.offset] = last
    for instruction in instructions:
        if instruction.opname.startswith("JUMP_BACKWARD") and instruction.argval in lines:
            lines[instruction.offset] = lines[instruction.argval]
    return lines


def line_of(frame) -> int:
    if frame.f_lineno is not None:
        return frame.f_lineno
    return _lines(frame.f_code).get(frame.f_lasti, frame.f_code.co_firstlineno)


class Sampler:
    """Samples the calling thread while inside `with sampler:` (any number of times, adding up)."""

    def __init__(self, belongs: Callable[[str], bool]):
        self.belongs = belongs
        self.lines: Counter = Counter()  # (file, line, function, its first line) -> samples
        self.samples = 0  # looks at the stack, whoever's frame it was
        self._target = threading.get_ident()

    def __enter__(self) -> Sampler:
        self._stop = threading.Event()
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(INTERVAL)  # the main thread hands the lock over often enough to be looked at
        self._thread = threading.Thread(target=self._sample, name="scale-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        sys.setswitchinterval(self._switch)

    def _sample(self) -> None:
        while not self._stop.wait(INTERVAL):
            frame = sys._current_frames().get(self._target)
            self.samples += 1
            while frame is not None and not self.belongs(frame.f_code.co_filename):
                frame = frame.f_back
            if frame is not None:
                code = frame.f_code
                self.lines[(code.co_filename, line_of(frame), code.co_name, code.co_firstlineno)] += 1

    def hottest(self, count: int = 8) -> list[dict]:
        """The `count` lines most often running, with their share of all samples and their text."""
        total = max(self.samples, 1)
        return [
            {
                "file": file,
                "line": line,
                "function": function,
                "first_line": first,
                "share": round(n / total, 3),
                "text": linecache.getline(file, line).strip()[:200],
            }
            for (file, line, function, first), n in self.lines.most_common(count)
        ]
