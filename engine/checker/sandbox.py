"""A user's solution in a subprocess, with a time limit per case.

A case that hangs is reported as a timeout and the worker is restarted; a worker that
dies (a crash, `sys.exit`, a segfault) is reported as a crash and restarted. Nothing the
solution does can take the checker down.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
import time

from .trace import Trace

DEFAULT_TIMEOUT = 5.0  # seconds per case


class LoadError(Exception):
    """The file could not be loaded or has the wrong shape (exit status 2)."""


class Solution:
    def __init__(self, path: str, class_name: str | None, timeout: float = DEFAULT_TIMEOUT):
        self.path, self.class_name, self.timeout = path, class_name, timeout
        self.process: subprocess.Popen | None = None
        self.info = self._start()

    def _start(self) -> dict:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "engine.checker.worker", self.path, self.class_name or ""],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        line = self._read_line(max(self.timeout, 10.0))
        if line is None:
            self.close()
            raise LoadError(f"{self.path}: loading it did not finish within {max(self.timeout, 10.0):g} s")
        if not line:
            self.close()
            raise LoadError(f"{self.path}: the process exited while loading it")
        info = json.loads(line)
        if "load_error" in info:
            self.close()
            raise LoadError(info["load_error"])
        return info

    def _read_line(self, timeout: float) -> str | None:
        """One line from the worker; None on timeout, '' if it died."""
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if selector.select(remaining):
                    return self.process.stdout.readline()
        finally:
            selector.close()

    def run(self, case: dict) -> Trace:
        if self.process is None or self.process.poll() is not None:
            self.info = self._start()
        try:
            self.process.stdin.write(json.dumps(case) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            line = ""
        else:
            line = self._read_line(self.timeout)
        if line:
            return Trace.from_json(json.loads(line))
        self.close()
        if line is None:
            return Trace(error=f"the case did not finish within {self.timeout:g} s (an endless loop?)", timeout=True)
        return Trace(error="the solution's process crashed (it exited or was killed while running the case)")

    def close(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.process = None
