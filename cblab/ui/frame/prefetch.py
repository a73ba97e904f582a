"""The next lesson, made while the class reads this one.

A class moves through the course together, so the first time a lesson is opened on a
server, the next lesson's run (at its own settings, as Next lesson opens it) and the views
it shows beside the stage (a batch-size sweep, replicas) are made in a background thread,
once per server; the class's Next lesson then finds them in the caches. For the heaviest
lesson (8.4, whose next is 8.5's sweep) that took 30 learners' Next lesson from 4.8 s to 1.0 s
(`benchmarks/classroom.py`).

The thread shares the interpreter lock with the learners' clicks (a heavy lesson is seconds
of work), so it waits for a quiet moment first: no lesson drawn for `QUIET_S`, as when a
class reads, or `MAX_WAIT_S` at most. Clicks that come while it works wait longer.
Anything that goes wrong is logged and forgotten: the lesson is then made when asked for,
as without this. `CBL_PREFETCH=off` turns it off (the test suite does, to count its runs).
"""

from __future__ import annotations

import logging
import os
import threading
import time

from cblab.ui.charts.replicas_view import cached_contrast
from cblab.ui.charts.sweep_view import cached_sweep
from cblab.ui.controls.controls import own_overrides
from cblab.ui.course.course import course
from cblab.ui.runs.runs import scenario_digest, scenario_run
from engine.lab.scenario import resolve_scenario

QUIET_S = 1.0
MAX_WAIT_S = 60.0
_started: set[str] = set()  # the lessons whose next lesson has been asked for, on this server
_guard = threading.Lock()
_last_drawn = [0.0]  # when a lesson was last drawn (time.monotonic)


def after_lesson(name: str) -> None:
    """Note that lesson `name` was drawn; the first time, make the next lesson in the background."""
    _last_drawn[0] = time.monotonic()
    if os.environ.get("CBL_PREFETCH") == "off":
        return
    following = course().following(name)
    if following is None:
        return
    with _guard:
        if following.name in _started:
            return
        _started.add(following.name)
    thread = threading.Thread(target=_make_when_quiet, args=(following.name,), name=f"prefetch {following.name}")
    thread.daemon = True  # (a server stopping does not wait for it)
    thread.start()


def make_lesson(name: str) -> None:
    """Lesson `name`'s run at its own settings and the views beside it, into the caches."""
    run = scenario_run(name, None, own_overrides(resolve_scenario(name)))
    shown = run.scenario
    if shown.sweep is not None:
        cached_sweep(scenario_digest(shown), shown, None)
    if shown.replicas is not None:
        cached_contrast(scenario_digest(shown), shown)


def _make_when_quiet(name: str) -> None:
    started = time.monotonic()
    while time.monotonic() - _last_drawn[0] < QUIET_S and time.monotonic() - started < MAX_WAIT_S:
        time.sleep(QUIET_S / 3)
    try:
        make_lesson(name)
    except Exception:  # the lesson is made when asked for instead, and says what went wrong then
        logging.getLogger(__name__).exception("lesson %s could not be made ahead", name)
