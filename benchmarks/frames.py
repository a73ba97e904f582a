"""The cost of showing a lesson: cold frames, the payload as sent, a rerun, a restart; this tree beside another.

    python benchmarks/frames.py [--against REF] [--reruns 8]

For lessons 1.1 (part1-basic-batch) and 8.4 (anyscale-cap1536, 4,330 steps, 64 slots,
1,293 KV blocks), each measured in a fresh Python process, so every cache starts empty:

1. cold landing: one learner opens the lesson (`AppTest`, the whole page script: the run,
   its frames, the page), with an empty run cache folder (`CBL_RUN_CACHE`), after a first
   page (lesson 1.3, timed apart) has loaded the app's modules, as a server's first visitor does;
2. restart: the same in a new process, the run cache folder kept from 1 (a server restarted
   with its on-disk runs; a tree without that cache pays 1 again);
3. frames: building the stage's frames of a run already simulated (`Replay` and `encode`);
4. payload: the stage's data as Streamlit sends it on the first view (the component's
   `json` or `bytes`), and on a rerun after it;
5. a rerun (a click that changes nothing on the stage), median of `--reruns`, with
   Streamlit's post-script full garbage collection off, and that collection's own time
   (`gc.collect(2)` after a rerun), which `runner.postScriptGC` would add to each.

`--against REF` measures the tree of a git commit (`git archive REF` into a temporary
folder) in the same way, in turn with this one, and prints both side by side: ratios from
the same minutes of a shared machine. Never run inside the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = {"1.1": "part1-basic-batch", "8.4": "anyscale-cap1536"}
WARM_UP = "1.3"  # a small lesson opened first: the landings below are timed with the app's modules loaded


def measure(tree: Path, lesson: str, reruns: int) -> dict:
    """One lesson in this process (a child of `main`), on the code in `tree`."""
    import gc

    import engine

    assert Path(engine.__file__).is_relative_to(tree), f"{engine.__file__} is not from {tree}"

    from streamlit import config

    config.set_option("runner.postScriptGC", False)  # timed apart, below
    start = time.perf_counter()
    _open(tree, WARM_UP)  # the app's modules load
    modules = time.perf_counter() - start
    start = time.perf_counter()
    app = _open(tree, lesson)
    landing = time.perf_counter() - start
    first = _payload(app)
    times, collections = [], []
    for _ in range(reruns):
        start = time.perf_counter()
        app.run()
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        gc.collect(2)
        collections.append(time.perf_counter() - start)
    return {
        "modules_s": modules,
        "landing_s": landing,
        "payload_bytes": first,
        "rerun_payload_bytes": _payload(app),
        "rerun_s": statistics.median(times),
        "gc_s": statistics.median(collections),
        "frames_s": _frames_seconds(LESSONS[lesson]),
    }


def _open(tree: Path, lesson: str):
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(tree / "app.py"), default_timeout=600)
    app.query_params["lesson"] = lesson
    app.run()
    assert not app.exception, app.exception
    return app


def _payload(app) -> int:
    """The stage's data as sent: its JSON text, or its bytes."""
    (stage,) = [c for c in app.get("bidi_component") if c.proto.component_name == "continuous-batching-lab.stage"]
    return len(stage.proto.json.encode()) if stage.proto.WhichOneof("data") == "json" else len(stage.proto.bytes)


def _frames_seconds(name: str) -> float:
    from engine.analysis.frames import encode
    from engine.analysis.replay import Replay
    from engine.lab.scenario import resolve_scenario
    from engine.lab.simulate import simulate

    scenario = resolve_scenario(name)
    log = simulate(scenario)
    start = time.perf_counter()
    encode(Replay(log), scenario.captions)
    return time.perf_counter() - start


def child(tree: Path, lesson: str, reruns: int, cache: Path) -> dict:
    env = {**os.environ, "CBL_RUN_CACHE": str(cache), "PYTHONPATH": str(tree)}
    command = [sys.executable, str(Path(__file__).resolve()), "--measure", lesson, "--tree", str(tree)]
    result = subprocess.run(
        [*command, "--reruns", str(reruns)], cwd=tree, env=env, capture_output=True, text=True, timeout=900
    )
    if result.returncode:
        raise SystemExit(f"{tree} lesson {lesson} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def tree_of(ref: str, folder: Path) -> Path:
    """`git archive REF`, unpacked into `folder`."""
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", metavar="REF", help="also measure this git commit's tree, side by side")
    parser.add_argument("--reruns", type=int, default=8)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # (a child: one lesson)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.tree), args.measure, args.reruns)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"this tree": ROOT}
        if args.against:
            (Path(scratch) / "against").mkdir()
            trees = {args.against: tree_of(args.against, Path(scratch) / "against"), **trees}
        results: dict[str, dict[str, dict]] = {name: {} for name in trees}
        for lesson in LESSONS:
            for name, tree in trees.items():  # in turn, lesson by lesson
                cache = Path(tempfile.mkdtemp(dir=scratch))
                cold = child(tree, lesson, args.reruns, cache)
                restart = child(tree, lesson, 1, cache)
                results[name][lesson] = {**cold, "restart_s": restart["landing_s"]}
                shutil.rmtree(cache)
    report(results)


def report(results: dict[str, dict[str, dict]]) -> None:
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}; each figure from a fresh process")
    rows = [
        ("first page (modules load)", "modules_s", "{:.2f} s"),
        ("cold landing, one learner", "landing_s", "{:.2f} s"),
        ("restart (run cache kept)", "restart_s", "{:.2f} s"),
        ("frames: Replay + encode", "frames_s", "{:.2f} s"),
        ("stage payload, first view", "payload_bytes", "{:,} B"),
        ("stage payload, a rerun", "rerun_payload_bytes", "{:,} B"),
        ("a rerun (no post-script GC)", "rerun_s", "{:.3f} s"),
        ("post-script full GC", "gc_s", "{:.3f} s"),
    ]
    names = list(results)
    for lesson in LESSONS:
        print(f"\nlesson {lesson} ({LESSONS[lesson]})")
        print(f"{'':32}" + "".join(f"{name:>16}" for name in names))
        for label, key, form in rows:
            print(f"{label:32}" + "".join(f"{form.format(results[n][lesson][key]):>16}" for n in names))


if __name__ == "__main__":
    main()
