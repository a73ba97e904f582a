"""The scale section's noise margin and its catch: each engine through it several times.

    python benchmarks/scale_check.py [--runs 5] [--load 2] [--budget 30] [--only correct|slow] [--json]

For each engine of two sets it runs the checker's scale section (`run_section`, the same code
as `python -m engine check`, in a worker process) `--runs` times and prints, per axis, the
verdicts and the range of growth measured:

- **correct**: engines whose cost per token grows as the reference's does: the reference itself,
  the candidate-sized `PlainLoopEngine`, and whatever of `engine/practice/vectorised.py` and the
  docs' adapters are O(1) a token. None may ever read SLOW: the largest growth they show is the
  noise the margin (`verdict.GROWTH_MARGIN`) must stay above.
- **slow**: the slow zoo (`engine/practice/slow_zoo.py`), each of which must read SLOW on its own
  axis with its own pattern's hint, every run.

`--load N` starts N busy processes (pure Python loops) for the whole measurement, so that the
machine is loaded on purpose, beside whatever else it runs; the 1-minute load average is printed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.practice.checker.sandbox import Solution  # noqa: E402
from engine.practice.checker.scale.patterns import hint_for  # noqa: E402
from engine.practice.checker.scale.section import run_section  # noqa: E402

CORRECT = [
    ("engine.core.engine", "BatchInferenceEngine"),
    ("engine/practice/plain_loop.py", "PlainLoopEngine"),
]


def slow_engines() -> list[tuple[str, str, str, str]]:
    """(module, class, axis, pattern) of each slow zoo engine, if the zoo is there."""
    try:
        from engine.practice.slow_zoo import SLOW_BUGS
    except ImportError:
        return []
    return [("engine.practice.slow_zoo", bug.engine.__name__, bug.axis, bug.pattern) for bug in SLOW_BUGS.values()]


def _busy() -> None:
    while True:
        pass


def measure(path: str, class_name: str, budget: float) -> list[dict]:
    solution = Solution(path, class_name)
    try:
        results = run_section(solution, budget)
    finally:
        solution.close()
    return [
        {
            "axis": r.axis,
            "verdict": r.verdict,
            "growth": r.growth,
            "hint": (hint_for(r.axis, r.hot) or (None,))[0] if r.verdict == "SLOW" else None,
        }
        for r in results
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--load", type=int, default=0, help="busy processes started beside the measurement")
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--only", choices=("correct", "slow"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    engines = []
    if args.only != "slow":
        engines += [(path, name, None, None) for path, name in CORRECT]
    if args.only != "correct":
        engines += slow_engines()
    busy = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(args.load)]
    for process in busy:
        process.start()
    table, false_alarms, misses = {}, 0, 0
    try:
        for run in range(args.runs):
            for path, name, axis, pattern in engines:
                start = time.monotonic()
                axes = measure(path, name, args.budget)
                seconds = time.monotonic() - start
                row = table.setdefault(name, {"expected": axis, "pattern": pattern, "runs": []})
                row["runs"].append({"seconds": round(seconds, 1), "load": os.getloadavg()[0], "axes": axes})
                slow = {a["axis"]: a["hint"] for a in axes if a["verdict"] == "SLOW"}
                if axis is None:
                    false_alarms += bool(slow)
                else:
                    misses += slow.get(axis, "missing") != pattern
                print(
                    f"run {run + 1} {name:28} {seconds:5.1f} s  load {os.getloadavg()[0]:4.1f}  "
                    + "  ".join(f"{a['axis']}: {a['verdict']} {a['growth'] or 0:.2f}x" for a in axes)
                    + (f"  hint: {slow.get(axis)}" if axis else ""),
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        for process in busy:
            process.terminate()
    summary = {"runs": args.runs, "load_processes": args.load, "false_alarms": false_alarms, "misses": misses}
    for row in table.values():
        by_axis = {}
        for run in row["runs"]:
            for a in run["axes"]:
                by_axis.setdefault(a["axis"], []).append(a)
        row["growth_range"] = {
            axis: [min(a["growth"] or 0 for a in runs), max(a["growth"] or 0 for a in runs)]
            for axis, runs in by_axis.items()
        }
        row["verdicts"] = {axis: sorted({a["verdict"] for a in runs}) for axis, runs in by_axis.items()}
    if args.json:
        print(json.dumps({"summary": summary, "engines": table}, indent=2))
    else:
        for name, row in table.items():
            print(
                f"{name}: "
                + "; ".join(
                    f"{axis} {'/'.join(row['verdicts'][axis])} {lo:.2f}-{hi:.2f}x"
                    for axis, (lo, hi) in row["growth_range"].items()
                )
                + f"; {max(r['seconds'] for r in row['runs'])} s at most"
            )
        print(f"false alarms: {false_alarms}, slow engines missed or mis-hinted: {misses}")
    return 1 if false_alarms or misses else 0


if __name__ == "__main__":
    sys.exit(main())
