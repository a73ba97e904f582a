"""A soak: many sessions clicking for a while, to show the server's memory stays flat without
Streamlit's post-script garbage collection (`[runner] postScriptGC = false`, .streamlit/config.toml).

    python benchmarks/soak.py [--sessions 30] [--reruns 2100] [--post-script-gc]

Every session is an `AppTest` of app.py in this one process (the script runs as on a server:
one shared run cache, one session state each), landing on one of a few lessons (1.1, 1.2,
7.3, 8.3 and 8.4, the heaviest), then, round after round, each does one thing: most often
the stage reports a step (a learner scrubbing or pausing), sometimes it picks another of
those lessons. Printed: the resident memory after the landings and every 300 reruns, the
full (generation 2) collections Python ran meanwhile and their time, and the reruns per
second. Never run inside the tests.
"""

from __future__ import annotations

import argparse
import gc
import logging
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LESSONS = ["part1-basic-batch", "part2-slot-refill", "preemption", "anyscale-cap512", "anyscale-cap1536"]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Collections:
    """Generation-2 collections and their time, from gc.callbacks."""

    def __init__(self):
        self.count, self.seconds, self._start = 0, 0.0, 0.0
        gc.callbacks.append(self._on)

    def _on(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._start


def stage_key(app) -> str:
    from cblab.ui.runs.stage_wire import unpack

    (stage,) = [c for c in app.get("bidi_component") if c.proto.component_name == "continuous-batching-lab.stage"]
    return "stage_" + unpack(stage.proto.bytes)[0]["id"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--reruns", type=int, default=2100, help="after the landings, across all sessions")
    parser.add_argument("--post-script-gc", action="store_true", help="Streamlit's default: a full GC per run")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    from streamlit import config
    from streamlit.testing.v1 import AppTest

    config.set_option("runner.postScriptGC", args.post_script_gc)
    rng = random.Random(0)
    apps, lessons = [], []
    start = time.perf_counter()
    for i in range(args.sessions):
        app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        app.query_params["lesson"] = LESSONS[i % len(LESSONS)]
        app.query_params["predict"] = "false"
        apps.append(app.run())
        lessons.append(LESSONS[i % len(LESSONS)])
    print(f"{args.sessions} landings: {time.perf_counter() - start:.1f} s, resident memory {rss_mib():.0f} MiB")
    collections, done, start = Collections(), 0, time.perf_counter()
    while done < args.reruns:
        for i, app in enumerate(apps):
            if rng.random() < 0.1:
                lessons[i] = rng.choice(LESSONS)
                app.selectbox(key="scenario").select(lessons[i]).run()
            else:
                app.session_state[stage_key(app)] = {"step": rng.randrange(0, 400)}
                app.run()
            assert not app.exception, app.exception
            done += 1
            if done % 300 == 0:
                print(
                    f"{done:5} reruns: resident memory {rss_mib():4.0f} MiB, {collections.count} full collections "
                    f"({collections.seconds:.2f} s), {done / (time.perf_counter() - start):.1f} reruns/s"
                )
            if done >= args.reruns:
                break


if __name__ == "__main__":
    main()
