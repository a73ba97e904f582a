"""The engine's cache curve over a whole Mooncake trace, stored for the lesson that asks about Figure 9.

    python benchmarks/cache_curve.py [--write] [--trace mooncake-conversation]

Replays the trace's scenario (`trace-<trace>`: eight H100s, blocks of 512 tokens, prefix caching) once per
capacity of `engine.lab.cache_curve.CAPACITIES` (1M, 3M, 10M and 50M tokens, and unbounded), as
`python -m engine cache-curve TRACE` does, and writes each capacity's engine and trace hit rates, and the
unbounded cache's, to `engine/lab/measurements/cache_curve.json` (`--write`; else to stdout). The figures
are deterministic, so a rerun writes the same file but for its date; the whole conversation trace takes
about 7 minutes on this machine under load. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.stored import store_or_print  # noqa: E402
from engine.lab.cache_curve import CAPACITIES, cache_curve  # noqa: E402
from engine.lab.measured_files import CACHE_CURVE, MEASUREMENTS  # noqa: E402
from engine.lab.scenario import resolve_scenario  # noqa: E402

OUT = MEASUREMENTS / CACHE_CURVE
TRACES = ("mooncake-conversation", "mooncake-synthetic")  # the traces with hash ids


def figures(trace: str) -> dict:
    """The stored form of `cache_curve` on `trace`'s scenario: finite capacities, then the unbounded cache."""
    scenario = resolve_scenario(f"trace-{trace}")
    say = lambda c: print(f"replaying {trace}, capacity {c:,.0f}", file=sys.stderr, flush=True)  # noqa: E731
    points = cache_curve(scenario, CAPACITIES, say)
    finite = [p for p in points if math.isfinite(p["capacity_tokens"])]
    unbounded = next(p for p in points if math.isinf(p["capacity_tokens"]))
    return {
        "measured_on": datetime.date.today().isoformat(),
        "trace": trace,
        "command": f"python -m engine cache-curve {trace}",
        "capacities": [int(p["capacity_tokens"]) for p in finite],
        "engine_hit_rate": [round(p["engine_hit_rate"], 6) for p in finite],
        "trace_hit_rate": [round(p["trace_hit_rate"], 6) for p in finite],
        "unbounded_engine_hit_rate": round(unbounded["engine_hit_rate"], 6),
        "unbounded_trace_hit_rate": round(unbounded["trace_hit_rate"], 6),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(OUT.parents[3])}")
    parser.add_argument("--trace", choices=TRACES, default=TRACES[0], help="the Mooncake trace to replay")
    args = parser.parse_args()
    store_or_print(figures(args.trace), OUT, args.write)


if __name__ == "__main__":
    main()
