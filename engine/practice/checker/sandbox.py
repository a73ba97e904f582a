"""A user's solution in a subprocess (`worker.py`), with a time limit per case.

The worker runs in a session and process group of its own, under the resource limits of
`resources.py`, and talks to the checker on two pipes of its own (`channel.py`): one JSON
line per case in, one JSON line per answer out. Its stdin, stdout and stderr lead to
/dev/null, so nothing the solution prints can corrupt the protocol.

A case that hangs is reported as a timeout, with the trace up to then when the worker's
watchdog could send it (`watchdog.py`); a worker that dies (a crash, `sys.exit`, a
segfault, a resource limit) as a crash; an answer that is not a trace as unreadable. In
each of these the worker's whole process group is killed and the next case starts a
fresh worker, and so it is after a case that left the solution's threads running
(`Trace.threads_left`); after every other case, any process the solution left behind in
the group is killed. Closing the Solution kills the group. Nothing the solution does can take the
checker down. (A process that leaves the group with `setsid` escapes the kill.)
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

from .channel import MAX_LINE_BYTES, Channel, ChannelClosed, ChannelTimeout, LineTooLong
from .processes import high_pipe, kill_group, kill_leftovers
from .resources import CPU_GRACE_SECONDS, load_time_limit, worker_environment
from .trace import Trace

DEFAULT_TIMEOUT = 5.0  # seconds per case
MAX_TIMEOUT = 60.0  # seconds per case at most: 3 hung cases (run.MAX_TIMEOUTS) then cost at most 3 minutes
LEFTOVER_WAIT_SECONDS = 1.0  # after a case, how long leftovers get to die before the next case starts
SCALE_GRACE = 1.0  # seconds beyond a scale measurement's own limit before the worker is killed
UNREADABLE = "the solution's process sent something the checker could not read"


class LoadError(Exception):
    """The file could not be loaded or has the wrong shape (exit status 2)."""


def check_seconds(what: str, seconds: float, maximum: float) -> float:
    """`seconds` if it is a usable limit (finite, 0 < seconds <= maximum), else ValueError naming `what`."""
    if type(seconds) not in (int, float) or not 0 < seconds <= maximum:  # NaN fails the comparison too
        raise ValueError(f"{what} must be a number of seconds 0 < t <= {maximum:g}, got {seconds!r}")
    return float(seconds)


def check_timeout(seconds: float) -> float:
    """`seconds` if it is a usable time limit per case, else ValueError."""
    return check_seconds("the time limit per case", seconds, MAX_TIMEOUT)


class Solution:
    def __init__(self, path: str, class_name: str | None, timeout: float = DEFAULT_TIMEOUT):
        self.path, self.class_name, self.timeout = path, class_name, check_timeout(timeout)
        self.process: subprocess.Popen | None = None
        self.channel: Channel | None = None
        self.info = self._start()

    def _start(self) -> dict:
        cases_in, cases_out = high_pipe()
        answers_in, answers_out = high_pipe()
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "engine.practice.checker.worker",
                    str(cases_in),
                    str(answers_out),
                    repr(self.timeout),
                ]
                + [self.path, self.class_name or ""],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(cases_in, answers_out),
                start_new_session=True,  # its own process group: killed whole, apart from the checker's
                env=worker_environment(),
            )
        except BaseException:
            os.close(answers_in)
            os.close(cases_out)
            raise
        finally:
            os.close(cases_in)
            os.close(answers_out)
        self.channel = Channel(answers_in, cases_out)
        limit = load_time_limit(self.timeout)
        try:
            info = json.loads(self.channel.receive(time.monotonic() + limit))
        except ChannelTimeout:
            self.close()
            raise LoadError(f"{self.path}: loading it did not finish within {limit:g} s") from None
        except ChannelClosed:
            self.close()
            raise LoadError(f"{self.path}: the process exited while loading it") from None
        except (LineTooLong, ValueError, RecursionError):
            self.close()
            raise LoadError(f"{self.path}: {UNREADABLE} while loading it") from None
        if isinstance(info, dict) and isinstance(info.get("load_error"), str):
            self.close()
            raise LoadError(info["load_error"])
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("class"), str)
            or type(info.get("stop_sequences")) is not bool
        ):
            self.close()
            raise LoadError(f"{self.path}: {UNREADABLE} while loading it")
        kill_leftovers(self.process.pid, LEFTOVER_WAIT_SECONDS)
        return info

    def run(self, case: dict, timeout: float | None = None) -> Trace:
        """The solution's trace of `case`, within `timeout` seconds (default: the solution's limit)."""
        seconds = self.timeout if timeout is None else min(timeout, self.timeout)
        if self.process is None or self.process.poll() is not None:
            self.close()
            self.info = self._start()
        deadline = time.monotonic() + seconds
        try:
            self.channel.send(json.dumps({"case": case, "timeout": seconds}).encode() + b"\n", deadline)
            line = self.channel.receive(deadline)
        except ChannelTimeout:
            self.close()
            return Trace(error=timed_out(seconds), timeout=True)
        except ChannelClosed:
            return Trace(error=self._crash())
        except LineTooLong:
            self.close()
            return Trace(error=f"{UNREADABLE} (an answer of more than {MAX_LINE_BYTES >> 20} MiB)")
        try:
            trace = Trace.from_json(json.loads(line), len(case["requests"]))
        except (ValueError, RecursionError) as exc:  # not JSON (or not UTF-8), or not a trace
            self.close()
            return Trace(error=f"{UNREADABLE} ({_reason(exc)})")
        if trace.timeout:  # the worker's watchdog sent the trace so far: the solution is still running
            self.close()
            trace.error = timed_out(seconds)
            return trace
        self._clean_up_after(trace)
        return trace

    def _clean_up_after(self, trace: Trace) -> None:
        """Leave nothing of a case to the next: a worker with the solution's threads still running is replaced
        (the next case starts a fresh one), else the processes the solution left are killed."""
        if trace.threads_left:
            self.close()
        else:
            kill_leftovers(self.process.pid, LEFTOVER_WAIT_SECONDS)

    def measure(self, scale: dict, seconds: float) -> dict:
        """One measurement of the scale section (`scale/measuring.py`), within `seconds`: its answer, or
        {"error": ..., "timeout": True} when it overran (the worker is then replaced)."""
        if self.process is None or self.process.poll() is not None:
            self.close()
            self.info = self._start()
        deadline = time.monotonic() + seconds + SCALE_GRACE
        try:
            self.channel.send(json.dumps({"scale": scale, "timeout": seconds}).encode() + b"\n", deadline)
            answer = json.loads(self.channel.receive(deadline))
        except ChannelTimeout:
            self.close()
            return {"error": f"it did not finish within {seconds:.3g} s", "timeout": True}
        except ChannelClosed:
            return {"error": self._crash()}
        except (LineTooLong, ValueError, RecursionError):
            self.close()
            return {"error": UNREADABLE}
        kill_leftovers(self.process.pid, LEFTOVER_WAIT_SECONDS)
        return answer if isinstance(answer, dict) else {"error": UNREADABLE}

    def _crash(self) -> str:
        """Why the worker's end of the channel closed, and close ours."""
        try:
            status = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            status = None  # the solution closed the pipe itself; it is killed below
        self.close()
        if status == -getattr(signal, "SIGXCPU", 0):
            cpu = math.ceil(self.timeout) + CPU_GRACE_SECONDS
            return f"the solution's process crashed: it used more than {cpu} s of CPU time on the case"
        if status is not None and status < 0:
            return f"the solution's process crashed (it was killed by {_signal_name(-status)} while running the case)"
        if status is not None:
            return f"the solution's process crashed (it exited with status {status} while running the case)"
        return "the solution's process crashed (it exited or was killed while running the case)"

    def close(self) -> None:
        if self.process is not None:
            kill_group(self.process.pid)  # before wait(): an unreaped worker's pid cannot be reused
            self.process.wait()
            self.process = None
        if self.channel is not None:
            self.channel.close()
            self.channel = None


def timed_out(seconds: float) -> str:
    return f"the case did not finish within {seconds:g} s (an endless loop?)"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return "not a JSON line"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return str(exc)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
