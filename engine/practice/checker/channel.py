"""The checker's side of the worker protocol: JSON lines on two pipes, with deadlines.

Both pipe ends are non-blocking, so neither a worker that stops reading nor one that
writes half a line and hangs can hold the checker past a deadline: incoming bytes are
collected in a buffer and split on newlines.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import time

MAX_LINE_BYTES = 32 << 20  # one answer; a runaway trace (500 model calls of long rows) stays well below


class ChannelTimeout(Exception):
    """The deadline passed before a whole line was sent or received."""


class ChannelClosed(Exception):
    """The worker closed its end (it exited, or was killed)."""


class LineTooLong(Exception):
    """More than MAX_LINE_BYTES arrived without a newline."""


class Channel:
    def __init__(self, incoming: int, outgoing: int):
        self.incoming, self.outgoing = incoming, outgoing
        os.set_blocking(incoming, False)
        os.set_blocking(outgoing, False)
        self.buffer = bytearray()
        self.readable, self.writable = selectors.DefaultSelector(), selectors.DefaultSelector()
        self.readable.register(incoming, selectors.EVENT_READ)
        self.writable.register(outgoing, selectors.EVENT_WRITE)

    def send(self, line: bytes, deadline: float) -> None:
        """Write `line` whole by time.monotonic() `deadline`."""
        view = memoryview(line)
        while view:
            _wait(self.writable, deadline)
            try:
                view = view[os.write(self.outgoing, view) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise ChannelClosed from None

    def receive(self, deadline: float) -> bytes:
        """The next whole line (without its newline), by time.monotonic() `deadline`."""
        scanned = 0  # the buffer holds no newline before this
        while True:
            end = self.buffer.find(b"\n", scanned)
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return line
            scanned = len(self.buffer)
            if scanned > MAX_LINE_BYTES:
                raise LineTooLong
            _wait(self.readable, deadline)
            try:
                chunk = os.read(self.incoming, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                raise ChannelClosed
            self.buffer += chunk

    def close(self) -> None:
        self.readable.close()
        self.writable.close()
        for fd in (self.incoming, self.outgoing):
            with contextlib.suppress(OSError):
                os.close(fd)


def _wait(selector: selectors.BaseSelector, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0 or not selector.select(remaining):
        raise ChannelTimeout
