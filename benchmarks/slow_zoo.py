"""The slow zoo's cost per token along its axis, beside the reference engine and the plain loop.

    python benchmarks/slow_zoo.py [--write] [--repeats N] [--cap SECONDS] [--only NAME]

For each engine of `engine.practice.slow_zoo.SLOW_BUGS`, at each size of its axis
(`checker.scale.workloads.AXES`): the CPU ns per generated token of the slow engine, of
`engine.BatchInferenceEngine` (the reference) and of `PlainLoopEngine`, run in turn (slow,
reference, plain; `--repeats` rounds), the median of each. Once the slow engine's next run
would take more than `--cap` CPU seconds (its cost per token extrapolated linearly from the
last two sizes measured), its remaining sizes are null, and its time at the axis's target is
extrapolated the same way (`target_from` says "measured" or "extrapolated"). `--write` stores
the figures in `engine/lab/measurements/slow_zoo.json`, the app's source (nothing is measured
at page load); without it they go to stdout. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.stored import store_or_print  # noqa: E402
from engine import BatchInferenceEngine  # noqa: E402
from engine.practice.checker.scale.runs import timed_run  # noqa: E402
from engine.practice.checker.scale.workloads import AXIS_BY_NAME  # noqa: E402
from engine.practice.plain_loop import PlainLoopEngine  # noqa: E402
from engine.practice.slow_zoo import SLOW_BUGS  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "engine" / "lab" / "measurements" / "slow_zoo.json"


def extrapolated(sizes: list[int], ns: list[float], size: int) -> float:
    """ns per token at `size`, on the line through the last two measured points (through 0 with one)."""
    if len(ns) == 1:
        return ns[0] * size / sizes[0]
    (x0, x1), (y0, y1) = sizes[-2:], ns[-2:]
    return max(y1, y1 + (y1 - y0) * (size - x1) / (x1 - x0))


def predicted(sizes: tuple[int, ...], slow: list[float | None], size: int) -> float:
    """The slow engine's ns per token at `size`, from the sizes measured so far (the first ones)."""
    measured = [ns for ns in slow if ns is not None]
    return extrapolated(list(sizes[: len(measured)]), measured, size)


def ns_per_token(engine_class, workload, seconds: list[float]) -> float:
    return round(statistics.median(seconds) / workload.tokens * 1e9, 1)


def measure(name: str, repeats: int, cap: float) -> dict:
    bug = SLOW_BUGS[name]
    axis = AXIS_BY_NAME[bug.axis]
    slow: list[float | None] = []
    reference: list[float] = []
    plain: list[float] = []
    for size in axis.sizes:
        workload = axis.workload(size)
        too_slow = bool(slow) and (slow[-1] is None or predicted(axis.sizes, slow, size) * workload.tokens / 1e9 > cap)
        runs: dict[type, list[float]] = {bug.engine: [], BatchInferenceEngine: [], PlainLoopEngine: []}
        for _ in range(repeats):
            for engine_class in runs:
                if engine_class is bug.engine and too_slow:
                    continue
                runs[engine_class].append(timed_run(engine_class, workload))
        slow.append(None if too_slow else ns_per_token(bug.engine, workload, runs[bug.engine]))
        reference.append(ns_per_token(BatchInferenceEngine, workload, runs[BatchInferenceEngine]))
        plain.append(ns_per_token(PlainLoopEngine, workload, runs[PlainLoopEngine]))
        shown = "over the cap" if too_slow else f"{slow[-1]:,.0f}"
        print(
            f"{name}: {axis.name} {size}: {shown} ns/token (reference {reference[-1]:,.0f}, plain {plain[-1]:,.0f})",
            file=sys.stderr,
            flush=True,
        )
    target = axis.workload(axis.target)
    at_target = slow[-1] if slow[-1] is not None else predicted(axis.sizes, slow, axis.target)
    return {
        "axis": axis.name,
        "unit": axis.unit,
        "sizes": list(axis.sizes),
        "ns_per_token": slow,
        "reference_ns_per_token": reference,
        "plain_ns_per_token": plain,
        "seconds_at_target": round(at_target * target.tokens / 1e9, 2),
        "target_from": "measured" if slow[-1] is not None else "extrapolated",
        "reference_seconds_at_target": round(reference[-1] * target.tokens / 1e9, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(OUT.parents[3])}")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of (slow, reference, plain) a size")
    parser.add_argument("--cap", type=float, default=20.0, help="CPU seconds a slow run may take")
    parser.add_argument("--only", choices=list(SLOW_BUGS), action="append", help="measure only these engines")
    args = parser.parse_args()
    engines = {name: measure(name, args.repeats, args.cap) for name in args.only or SLOW_BUGS}
    figures = {
        "measured_on": datetime.date.today().isoformat(),
        "load": round(os.getloadavg()[0], 2),
        "repeats": args.repeats,
        "cap_seconds": args.cap,
        "engines": engines,
    }
    store_or_print(figures, OUT, args.write)


if __name__ == "__main__":
    main()
