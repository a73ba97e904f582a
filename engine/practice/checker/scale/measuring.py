"""The solution's side of the scale section: time it and the reference on one workload, in turn.

Runs in the checker's worker process, beside the solution (`worker.py` hands it a `scale`
message). Each repeat runs both engines on the same workload, the solution first in even
repeats and the reference first in odd ones, so a slow patch of the machine falls on both.
The collector is paused during a timed run (and run in between): its passes cost more the
more objects are alive, which says more about the heap than about the engine. A `profile`
message runs the solution once more, with a line profile part-way (`line_profile.py`).
"""

from __future__ import annotations

import gc
import os
import sys
import sysconfig
from pathlib import Path

from ....core.engine import BatchInferenceEngine
from .line_profile import EnoughProfile, LineProfile, ProfiledModel
from .runs import WrongResult, timed_run
from .workloads import AXIS_BY_NAME

ENGINE_PACKAGE = str(Path(__file__).resolve().parents[3])
PYTHON_DIRS = tuple({sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")})


def solution_files(checked_file: str):
    """Whether a frame's file is the solution's own code: the checked file, or any file outside the
    engine package and the Python installation (an adapter, the solution it wraps)."""
    checked = os.path.realpath(checked_file) if checked_file else None

    def belongs(filename: str) -> bool:
        if filename.startswith("<"):
            return False
        path = os.path.realpath(filename)
        if path == checked:
            return True
        return not path.startswith(ENGINE_PACKAGE) and not path.startswith(PYTHON_DIRS)

    return belongs


def _timed(engine_class, workload, model=None) -> float:
    gc.collect()
    gc.disable()
    try:
        return timed_run(engine_class, workload, model)
    finally:
        gc.enable()


def _profiled(engine_class, checked_file: str, workload) -> list[dict]:
    profile = LineProfile(solution_files(checked_file))
    try:
        _timed(engine_class, workload, ProfiledModel(profile, workload))
    except EnoughProfile:
        pass
    finally:
        sys.settrace(None)
    return profile.hottest()


def measure(engine_class, checked_file: str, message: dict) -> dict:
    """`message`: {"axis", "size", "repeats"} or {"axis", "size", "profile": true}. The answer: CPU
    seconds of each run of the solution and of the reference, or the solution's hottest lines, or
    an error."""
    workload = AXIS_BY_NAME[message["axis"]].workload(message["size"])
    solution, reference = [], []
    try:
        if message.get("profile"):
            return {"hot": _profiled(engine_class, checked_file, workload)}
        for repeat in range(message["repeats"]):
            order = ((engine_class, solution), (BatchInferenceEngine, reference))
            for engine, times in order if repeat % 2 == 0 else reversed(order):
                times.append(_timed(engine, workload))
        return {"solution": solution, "reference": reference, "tokens": workload.tokens}
    except WrongResult as exc:
        return {"error": f"wrong result: {exc}"}
    except Exception as exc:  # the solution's own error at this size
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
