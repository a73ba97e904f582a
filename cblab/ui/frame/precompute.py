"""Make the built-in lessons' Compare figures ahead, into the runs cache folder the workers share.

    python -m cblab.ui.frame.precompute [LESSON ...]

Each lesson (by name or number; by default every lesson of the course, in course order) is
compared at its own settings, as Compare opens it before the sidebar changes anything
(`cblab/ui/runs/comparisons.py`), and its figures are kept in `$CBL_RUN_CACHE` beside the runs; a
lesson whose figures are there already costs nothing. `cb-lab serve` starts this once its
workers answer (`cblab/cli/serve.py`), at the lowest CPU priority, so the learners' clicks come
first and a class opening Compare on 8.4 finds its ten configurations made instead of
waiting 20 s for them. One line a lesson says how long it took.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from cblab.ui.controls.controls import own_overrides
from cblab.ui.runs import run_cache
from cblab.ui.runs.comparisons import compared_scenario, comparison, figures_key
from engine.lab.course import load_course
from engine.lab.scenario import resolve_scenario


def precompute(lessons: list[str]) -> list[tuple[str, float, bool]]:
    """(lesson name, seconds, whether it was made now) for each lesson, its figures then on disk."""
    done = []
    for name in lessons:
        overrides = own_overrides(resolve_scenario(name))
        kept = run_cache.load_figures(figures_key(compared_scenario(name, None, overrides))) is not None
        started = time.perf_counter()
        if not kept:
            comparison(name, None, overrides)
        done.append((name, time.perf_counter() - started, not kept))
    return done


def main(argv: list[str]) -> int:
    course = load_course()
    chosen = [course.lesson(a) for a in argv] if argv else list(course.lessons)
    if None in chosen:
        print(f"no such lesson: {argv[chosen.index(None)]}", file=sys.stderr)
        return 2
    if run_cache.folder() is None:
        print("the runs cache is off (CBL_RUN_CACHE=off): nothing to keep the figures in", file=sys.stderr)
        return 2
    with contextlib.suppress(OSError):
        os.nice(19)  # (the learners first)
    for name, seconds, made in precompute([lesson.name for lesson in chosen]):
        print(f"{name}: {'made in' if made else 'kept already,'} {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
