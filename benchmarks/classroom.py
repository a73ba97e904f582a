"""A whole class on one server: N learners land at once, then all act at once, measured.

    python benchmarks/classroom.py [--sessions 30] [--lessons 1.1,8.4] [--config 'NAME=OPTIONS' ...]
    python benchmarks/classroom.py --start 'streamlit run' --start 'cb-lab app'   # how the server is started
    python benchmarks/classroom.py --app before=/tmp/main/app.py --app after=app.py  # two trees side by side
    python benchmarks/classroom.py --workers 1,2            # the same class behind nginx (cb-lab serve)
    python benchmarks/classroom.py --url http://127.0.0.1:8501 [--pid PID ...]   # a server already running
    python benchmarks/classroom.py --soak [--reruns 2000]   # memory over >= 2,000 reruns by 30 sessions

For each lesson, tree, start and setting, side by side in one run, a fresh server is started on
loopback and N browserless sessions (`benchmarks/streamlit_client.py`, which speaks Streamlit's
websocket protocol; `python -m benchmarks.chromium_compare` checks it against Chromium) do, all at
once: a cold landing (the server's first sight of the lesson), then N new sessions a warm landing,
then a typed answer in the lesson's open prediction, Check prediction, and Next lesson, each after
the class has read for `--read` seconds (5; 0: back to back); while a class reads, the server makes
the next lesson (cblab/ui/frame/prefetch.py). Each step is timed from its send to Streamlit's
`script_finished` (a landing: from the page request), and the bytes the server sent for it are
counted (per session, and for the whole class). Then one learner opens the lesson in headless
Chromium three times on the warm server: seconds to the stage's first painted grid; and, last,
Streamlit's own floor: the same for a page that is only a title. Below the table, the figures
issue 35 set targets for, each against its target (`benchmarks/class_table.py`'s
`against_targets`): the first paint over the floor, the first landing's p90, and the bytes a
click costs.

A server is started (`--start`, repeatable) as `worker` (the default: a `cb-lab serve` worker,
`python -m cblab.cli.worker_start run app.py`, warmed before it answers and watching no files),
`streamlit run` (the README's `streamlit run app.py`, with only the port, the address and headless
added) or `cb-lab app` (the installed command, run as `python -m cblab app` from an empty folder
with the tree on `PYTHONPATH`), always with the setting's command-line options, e.g.
`--runner.postScriptGC false`. The server's resident memory is read from /proc. Each fresh server
gets an empty runs cache folder (`CBL_RUN_CACHE`); `--app [NAME=]PATH` (repeatable) serves another
tree's app.py (e.g. an export of another commit: `git archive REF | tar -x -C DIR`).

A setting is `NAME=OPTIONS`: Streamlit options and `VAR=value` environment entries, e.g.
`--config 'gc off=--runner.postScriptGC false'`. By default: postScriptGC true (Streamlit's
default) against false (with --workers or --soak: false only). Loopback only; at most 100
sessions; every step waits at most `--timeout` seconds and the whole run `--time-limit`,
after which it stops and prints what it has.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import class_phases as phases  # noqa: E402
from benchmarks.class_table import Measured, against_targets, failures, table  # noqa: E402
from benchmarks.streamlit_client import check_loopback  # noqa: E402
from cblab.cli.serve import serving  # noqa: E402
from cblab.cli.workers import APP, free_port, start_worker, stop, wait_healthy  # noqa: E402

MAX_SESSIONS, MAX_RERUNS = 100, 20_000
DEFAULT_SETTINGS = [
    "postScriptGC true (default)=--runner.postScriptGC true",
    "postScriptGC false=--runner.postScriptGC false",
]
STEPS = ["cold landing", "warm landing", *phases.ACTIONS, "first paint"]
ENV_ENTRY = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def setting(text: str) -> tuple[str, list[str], dict[str, str]]:
    """`NAME=OPTIONS` as (name, Streamlit options, environment)."""
    name, _, rest = text.partition("=")
    words = shlex.split(rest)
    env = dict(w.split("=", 1) for w in words if ENV_ENTRY.match(w))
    return name.strip(), [w for w in words if not ENV_ENTRY.match(w)], env


STARTS = ("worker", "streamlit run", "cb-lab app")


def start_server(start: str, port: int, options: list[str], env: dict[str, str], app: Path, folder: Path):
    """A server of `app`'s tree on 127.0.0.1:`port`, started as `start` (one of STARTS)."""
    if start == "worker":
        return start_worker(port, options, env, app=app)
    listen = ["--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"]
    if start == "streamlit run":
        command, cwd = [sys.executable, "-m", "streamlit", "run", str(app)], app.parent
    else:  # `cb-lab app`, from another folder
        command, cwd = [sys.executable, "-m", "cblab", "app", "--"], folder
        env = {**env, "PYTHONPATH": str(app.parent)}
    return subprocess.Popen(
        [*command, *listen, *options],
        cwd=cwd,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@contextlib.contextmanager
def server(args, app: Path, start: str, options: list[str], env: dict[str, str], workers: int | None):
    """(url, pids) of a fresh server of `app`'s tree with `options`: one, started as `start`, or `workers`
    behind nginx; or `--url`. A fresh server also gets an empty runs cache folder (`CBL_RUN_CACHE`, shared by
    its workers), so that its first landing is cold, unless the setting names one."""
    if args.url:
        yield check_loopback(args.url), args.pid
        return
    with tempfile.TemporaryDirectory(prefix="cbl-classroom-runs-") as cache:
        env = {"CBL_RUN_CACHE": cache, "PYTHONDONTWRITEBYTECODE": "1", **env}
        if workers is None:
            port = free_port()
            process = start_server(start, port, options, env, app, Path(cache))
            try:
                wait_healthy(f"http://127.0.0.1:{port}", process)
                yield f"http://127.0.0.1:{port}", [process.pid]
            finally:
                stop(process)
        else:
            with serving(workers, free_port(), options=options, env=env, app=app) as deployment:
                yield deployment.url, [w.pid for w in deployment.workers]


async def one_class(url: str, pids: list[int], result: Measured, args) -> None:
    query = f"lesson={result.lesson}"
    sessions, result.steps["cold landing"] = await phases.land(url, query, args.sessions, args.timeout)
    await phases.close(sessions)
    sessions, result.steps["warm landing"] = await phases.land(url, query, args.sessions, args.timeout)
    if pids:
        result.memory["after landing"] = phases.resident_mib(pids)
    if any(s.cookie("cbl_worker") for s in sessions):
        result.spread = dict(collections.Counter(s.cookie("cbl_worker") or "?" for s in sessions))
    predictions: dict = {}
    for action in phases.ACTIONS:
        await asyncio.sleep(args.read)  # the class reads before it acts
        result.steps[action] = await phases.act(sessions, action, predictions)
    if pids:
        result.memory["after actions"] = phases.resident_mib(pids)
        result.memory["peak"] = phases.resident_mib(pids, peak=True)
    await phases.close(sessions)


def measure(args, deadline: float) -> list[Measured]:
    results = []
    runs = [
        (lesson, tree, start, text, workers)
        for lesson in args.lessons
        for tree in args.app
        for start in args.start
        for text in args.config
        for workers in args.workers or [None]
    ]
    for lesson, (tree, app), start, text, workers in runs:
        name, options, env = setting(text)
        parts = [tree] * (len(args.app) > 1) + [start] * (len(args.start) > 1) + [name]
        label = ", ".join(parts) if workers is None else f"{', '.join(parts)}, {workers} worker{'s' * (workers > 1)}"
        result = Measured(lesson, label)
        results.append(result)
        print(f"lesson {lesson}, {label} ...", file=sys.stderr, flush=True)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            result.failures.append("the time limit was reached before this run")
            continue
        try:
            with server(args, app, start, options, env, workers) as (url, pids):
                try:
                    asyncio.run(asyncio.wait_for(one_class(url, pids, result, args), remaining))
                except TimeoutError:
                    result.failures.append(f"stopped at the time limit ({args.time_limit:g} s)")
                    continue
                if args.paint and not args.workers:
                    from benchmarks.first_paint import first_paints

                    paints = first_paints(url, [f"lesson={lesson}"], limit=args.timeout)
                    result.steps["first paint"] = phases.Outcome(seconds=paints[f"lesson={lesson}"])
        except RuntimeError as exc:  # the server did not start (a tree without `cb-lab app`, say)
            result.failures.append(str(exc))
    if args.paint and not args.workers and time.monotonic() < deadline:
        from benchmarks.first_paint import floor_paints

        floor = Measured("floor", "a page that is only st.title")
        floor.steps["first paint"] = phases.Outcome(seconds=floor_paints(limit=args.timeout))
        results.append(floor)
    return results


def soak(args, text: str) -> None:
    name, options, env = setting(text)
    queries = [f"lesson={lesson}" for lesson in args.lessons]
    print(f"soak: {args.sessions} sessions on {', '.join(args.lessons)}, {name}, {args.reruns:,} reruns")
    with server(args, args.app[0][1], args.start[0], options, env, None) as (url, pids):
        reports, outcome = asyncio.run(
            asyncio.wait_for(
                phases.soak(url, queries, args.sessions, args.reruns, pids, args.timeout, max(args.reruns // 20, 1)),
                args.time_limit,
            )
        )
    print(f"{'reruns':>8}{'seconds':>9}{'resident MiB':>14}")
    for done, seconds, mib in reports:
        print(f"{done:>8,}{seconds:>9.1f}{mib:>14.1f}")
    low, median, p90, high = outcome.summary()
    print(f"a rerun: min {low:.2f} s, median {median:.2f} s, p90 {p90:.2f} s, max {high:.2f} s", end="")
    print(f"; {len(outcome.failures)} sessions failed")
    later = [mib for done, _, mib in reports if done >= args.reruns // 5]
    print(f"resident memory after the first fifth of the reruns: {min(later):.1f} to {max(later):.1f} MiB")


def tree(text: str) -> tuple[str, Path]:
    """`[NAME=]PATH` of an app.py: (name, path)."""
    name, _, path = text.rpartition("=")
    app = Path(path).resolve()
    if not app.is_file():
        raise argparse.ArgumentTypeError(f"no app.py at {path}")
    return name or app.parent.name, app


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=30, help=f"learners at once, 1 to {MAX_SESSIONS} (30)")
    parser.add_argument("--lessons", default="1.1,8.4", type=lambda t: t.split(","), help="comma-separated (1.1,8.4)")
    parser.add_argument("--config", action="append", help="a setting NAME=OPTIONS (repeatable; default: GC on/off)")
    parser.add_argument("--workers", type=lambda t: [int(n) for n in t.split(",")], help="e.g. 1,2: behind nginx")
    parser.add_argument(
        "--app", action="append", type=tree, help="[NAME=]PATH: an app.py to serve (repeatable; default: this one)"
    )
    parser.add_argument("--start", action="append", choices=STARTS, help="how a server starts (repeatable; worker)")
    parser.add_argument("--url", help="measure this loopback server instead of starting one (no first paint)")
    parser.add_argument("--pid", type=int, action="append", default=[], help="with --url: a server pid (memory)")
    parser.add_argument("--soak", action="store_true", help="memory over --reruns reruns (per --config; GC off)")
    parser.add_argument("--reruns", type=int, default=2000, help=f"soak: reruns in all, at most {MAX_RERUNS:,}")
    parser.add_argument("--read", type=float, default=5.0, help="seconds the class reads before each action (5)")
    parser.add_argument("--no-paint", dest="paint", action="store_false", help="skip the first paint in Chromium")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds a step may take (180)")
    parser.add_argument("--time-limit", type=float, default=3600.0, help="seconds the whole run may take (3600)")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= MAX_SESSIONS or not 1 <= args.reruns <= MAX_RERUNS:
        parser.error(f"--sessions must be 1 to {MAX_SESSIONS} and --reruns 1 to {MAX_RERUNS:,}")
    if not 0 <= args.read <= 60:
        parser.error("--read must be 0 to 60 seconds")
    if args.url:
        check_loopback(args.url)
        args.paint = False
    args.app = args.app or [("this tree", APP)]
    args.start = args.start or ["worker"]
    if args.workers and args.start != ["worker"]:
        parser.error("--workers starts cb-lab serve's workers: --start does not apply")
    args.config = args.config or (DEFAULT_SETTINGS[1:] if args.workers or args.soak else DEFAULT_SETTINGS)
    return args


def main(argv=None) -> int:
    args = parse(argv)
    print(f"load average {load_average()} (1, 5, 15 min) on {os.cpu_count()} cores; {' '.join(sys.argv)}")
    if args.soak:
        for text in args.config:
            soak(args, text)
        return 0
    results = measure(args, time.monotonic() + args.time_limit)
    print(f"{args.sessions} sessions at once; seconds from send to script_finished; load average {load_average()}")
    for line in table(results, STEPS):
        print(line)
    for line in against_targets(results):
        print(line)
    problems = failures(results)
    for line in problems:
        print(f"failed: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
