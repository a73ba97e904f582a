"""The `python -m engine check` command: run a check, print its report, write the failing run's log.

Exit status: 0 every check passed, 1 a check failed or the scale section found the solution
SLOW (or its run failing at scale), 2 the file could not be loaded or has the wrong shape,
or nothing was checked (every case skipped or declined). SIGTERM stops a check cleanly:
the solution's process group is killed on the way out (the app's editor relies on it).
"""

from __future__ import annotations

import json
import signal
import sys
import threading

from .reconstruct import ended_early, reconstruct
from .report import format_report, report_json
from .run import check
from .sandbox import LoadError
from .scale.section import DEFAULT_BUDGET


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)  # unwinds through check(): its `finally` kills the worker's group


def main(args) -> int:
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if in_main_thread else None
    try:
        return _main(args)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _main(args) -> int:
    try:
        progress = (
            (lambda name: print(f"\rchecking {name}   ", end="", file=sys.stderr, flush=True))
            if sys.stderr.isatty()
            else None
        )
        budget = None if getattr(args, "no_scale", False) else getattr(args, "scale_budget", DEFAULT_BUDGET)
        report = check(args.solution, args.class_name, args.seed, args.timeout, progress=progress, scale_budget=budget)
        if progress:
            print(file=sys.stderr)
    except LoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report_json(report), indent=2) if args.json else format_report(report))
    if args.jsonl and report.failed:
        first = report.failed[0]
        with open(args.jsonl, "w", encoding="utf-8") as out:
            out.write(reconstruct(first.case, first.got).to_jsonl())
        early = ended_early(first.case, first.got)
        written = f"event log of the failing run ({first.case.name}): {args.jsonl}"
        print(written + (f"; {early}" if early else ""), file=sys.stderr)
    return report.exit_status
