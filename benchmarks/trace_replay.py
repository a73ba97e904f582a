"""The whole-trace replay: `python -m engine run trace-mooncake-conversation --json` in a child process, its wall
time and its peak resident memory (the issue's targets: at most 120 s and 3 GB for all 12,031 requests, 145M
prompt tokens and 4.1M generated ones, with prefix caching).

    python benchmarks/trace_replay.py [--scenario trace-mooncake-conversation] [--json]

The child's own peak (os.wait4's rusage), so nothing this process holds is counted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

TARGET_S, TARGET_GB = 120, 3.0


def replay(scenario: str = "trace-mooncake-conversation") -> dict:
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "engine", "run", scenario, "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"python -m engine run {scenario} --json failed")
    figures = json.loads(out)
    return {
        "scenario": scenario,
        "wall_s": wall,
        "engine_wall_s": figures["engine_wall_s"],
        "peak_gb": usage.ru_maxrss * 1024 / 1e9,  # (Linux: kilobytes)
        "requests": figures["requests"],
        "generated_tokens": figures["generated_tokens"],
        "prefix_hit_rate": figures["prefix_hit_rate"],
    }


def report(figures: dict) -> str:
    return (
        f"whole-trace replay, {figures['scenario']} ({figures['requests']:,} requests, "
        f"{figures['generated_tokens']:,} generated): {figures['wall_s']:.1f} s (target <= {TARGET_S} s; the engine "
        f"{figures['engine_wall_s']:.1f} s of it), peak {figures['peak_gb']:.2f} GB (target <= {TARGET_GB:g} GB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="trace-mooncake-conversation")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = replay(args.scenario)
    print(json.dumps(figures, indent=2) if args.json else report(figures))


if __name__ == "__main__":
    main()
