"""Process groups: the worker leads one, and whatever the solution starts joins it.

Killing the group (`kill_group`) ends the worker and everything it started, except a
process that left the group with `setsid`. Between cases, `kill_leftovers` ends every
member but the worker, found through /proc (Linux; elsewhere only the final kill applies).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time


def high_pipe() -> tuple[int, int]:
    """os.pipe() with both ends above fd 2: a checker started with closed standard streams would get fds
    0-2, and the worker points those at /dev/null."""
    ends = []
    for fd in os.pipe():
        if fd < 3:
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            os.close(fd)
            fd = high
        ends.append(fd)
    return ends[0], ends[1]


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_leftovers(leader: int, wait_seconds: float) -> None:
    """Kill every process in `leader`'s group but `leader`, waiting up to `wait_seconds` for them to go."""
    deadline = time.monotonic() + wait_seconds
    while leftovers := [pid for pid in group_members(leader) if pid != leader]:
        for pid in leftovers:  # killed again until gone: a leftover may fork while it is killed
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return  # still dying; the whole group is killed when the worker is closed
        time.sleep(0.01)


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group `pgid`, read from /proc; [] where there is none."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    members = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()  # after "pid (command)": state ppid pgrp ...
        except OSError:
            continue
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(name))
    return members
