"""A class at once: N learners' sessions land together, then all act together, each action timed.

A phase starts every session's step in the same event-loop turn and waits for all of them;
a step is timed from its send to its `script_finished` (a landing: from the page request), and
the bytes of the messages it brought are counted (a click's: what the server sends for it).
A session that fails (a timeout, a dropped connection, a traceback on its page) is counted
and named, not waited for again. The soak keeps every session rerunning, one rerun after the
other, until the class has done the reruns asked for, reporting the server's memory as it goes.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.lessons import LessonKeys, an_answer, lesson_keys
from benchmarks.streamlit_client import Session

ACTIONS = ("typed answer", "Check prediction", "Next lesson")


@dataclass
class Outcome:
    seconds: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    received: list[int] = field(default_factory=list)  # each session's bytes of the step's messages

    def summary(self) -> tuple[float, float, float, float]:
        """min, median, p90, max (seconds)."""
        times = sorted(self.seconds)
        p90 = statistics.quantiles(times, n=10, method="inclusive")[8] if len(times) > 1 else times[0]
        return times[0], statistics.median(times), p90, times[-1]


def status_kib(pid: int, field_name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field_name}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field_name} in /proc/{pid}/status")


def resident_mib(pids: list[int], peak: bool = False) -> float:
    """The servers' resident memory now (VmRSS), or their peak so far (VmHWM), in MiB, summed."""
    return sum(status_kib(pid, "VmHWM" if peak else "VmRSS") for pid in pids) / 1024


async def together(steps) -> Outcome:
    """Run `steps` ((session, coroutine returning seconds) pairs) at once; their times, bytes and failures."""
    steps = list(steps)
    outcome = Outcome()
    results = await asyncio.gather(*(step for _, step in steps), return_exceptions=True)
    for (session, _), result in zip(steps, results):
        if isinstance(result, BaseException):
            outcome.failures.append(f"{type(result).__name__}: {result}"[:300])
        else:
            outcome.seconds.append(result)
            outcome.received.append(session.run_bytes)
    return outcome


async def checked(session: Session, step) -> float:
    """`step`'s seconds, or an error if the page it left shows a traceback."""
    seconds = await step
    if session.exceptions():
        raise RuntimeError(f"the page shows an exception: {session.exceptions()[0][:200]}")
    return seconds


async def land(url: str, query: str, count: int, timeout: float) -> tuple[list[Session], Outcome]:
    """`count` sessions open `url`/?`query` at once; those that landed, and the times."""
    sessions = [Session(url, query, timeout) for _ in range(count)]
    outcome = await together((s, checked(s, s.land())) for s in sessions)
    landed = [s for s in sessions if s.session_id and not s.exceptions()]
    return landed, outcome


async def act(sessions: list[Session], action: str, predictions: dict[Session, LessonKeys]) -> Outcome:
    """Every session does `action` (one of ACTIONS, in that order) at once: a typed answer finds the
    page's open prediction (kept in `predictions`), Check checks it, Next lesson moves on."""

    def step(session: Session):
        if action == "typed answer":
            keys = predictions[session] = lesson_keys(session)
            return session.set_value(keys.answer, an_answer(session, keys.answer))
        if action == "Check prediction":
            return session.click(predictions[session].check)
        return session.click("next_lesson")

    async def one(session: Session) -> float:
        return await checked(session, step(session))

    return await together((s, one(s)) for s in sessions)


async def close(sessions: list[Session]) -> None:
    await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


async def soak(
    url: str, queries: list[str], count: int, reruns: int, pids: list[int], timeout: float, report_every: int
) -> tuple[list[tuple[int, float, float]], Outcome]:
    """`count` sessions (landing on `queries` in turn) each type answer after answer into their open
    prediction, one rerun after the other, until `reruns` in all; returns the memory reports
    (reruns done, seconds, resident MiB) and the reruns' times."""
    sessions = [Session(url, queries[i % len(queries)], timeout) for i in range(count)]
    await together((s, s.land()) for s in sessions)
    start = time.perf_counter()
    reports = [(0, 0.0, resident_mib(pids))]
    outcome = Outcome()
    done = 0

    async def keep_typing(session: Session) -> None:
        nonlocal done
        key = lesson_keys(session).answer
        n = 0
        while done < reruns:
            n += 1
            outcome.seconds.append(await session.set_value(key, n % 50))
            done += 1
            if done % report_every == 0:
                reports.append((done, time.perf_counter() - start, resident_mib(pids)))

    results = await asyncio.gather(*(keep_typing(s) for s in sessions if s.session_id), return_exceptions=True)
    outcome.failures += [repr(r)[:300] for r in results if isinstance(r, BaseException)]
    await close(sessions)
    return reports, outcome
