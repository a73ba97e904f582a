"""What `cb-lab serve`'s precompute saves the first learner who opens Compare on a heavy lesson.

    python -m benchmarks.compare_ahead [LESSON ...]      (default: 8.4 and 7.6)

Side by side in one run, per lesson, at its own settings: the comparison made from nothing (every
configuration run, as before the precompute) and the same figures read back from the runs cache
folder (what a worker does once `python -m cblab.ui.frame.precompute` has kept them), each on a fresh
in-memory cache. Prints both times and their ratio; the folder is a temporary one, removed after.
The machine is shared and loaded: read the ratio, not the seconds.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time


def main(argv: list[str]) -> int:
    os.environ["CBL_RUN_CACHE"] = tempfile.mkdtemp(prefix="cbl-compare-ahead-")
    from cblab.ui.controls.controls import own_overrides
    from cblab.ui.runs.comparisons import COMPARISONS, comparison
    from engine.lab.course import load_course
    from engine.lab.scenario import resolve_scenario

    course = load_course()
    for number in argv or ["8.4", "7.6"]:
        lesson = course.lesson(number)
        overrides = own_overrides(resolve_scenario(lesson.name))
        times = []
        for _ in ("made", "read back"):
            COMPARISONS.clear()
            started = time.perf_counter()
            figures = comparison(lesson.name, None, overrides)
            times.append(time.perf_counter() - started)
        print(
            f"{lesson.number} {lesson.name}: {len(figures)} configurations made in {times[0]:.2f} s, "
            f"read back in {times[1] * 1000:.1f} ms ({times[0] / times[1]:,.0f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
