"""The papers' figures from the engine, on the published traces:

    python -m engine cache-curve TRACE [--capacities 1e6,3e6,1e7,5e7,inf] [--json]   # Mooncake's Figure 9
    python -m engine splitwise [--json]                                              # Splitwise's Azure traces

TRACE is a built-in trace (`mooncake-conversation`: the scenario `trace-mooncake-conversation` gives the
deployment) or a trace scenario, by name or path, with prefix caching on (engine/lab/cache_curve.py);
`splitwise` replays both Azure traces with continuous and static batching (engine/lab/splitwise.py).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from engine.lab.cache_curve import CAPACITIES, cache_curve
from engine.lab.scenario import resolve_scenario
from engine.lab.splitwise import splitwise_table
from engine.lab.trace_file import BUILTIN_TRACES
from engine.lab.trace_replicas import replay_trace_replicas, replicas_summary

MAX_CAPACITIES = 8  # replays one command may ask for (each replays the whole trace)


def capacities(text: str) -> tuple[float, ...]:
    """`1e6,3e6,inf`: 1 to MAX_CAPACITIES token counts, each at least 1 (argparse type)."""
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        message = f"must be comma-separated numbers of tokens, e.g. 1e6,3e6,inf; got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if not 1 <= len(values) <= MAX_CAPACITIES or any(math.isnan(v) or v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"must list 1 to {MAX_CAPACITIES} token counts, each at least 1; got {text!r}")
    return values


def add_cache_curve_parser(commands) -> None:
    curve = commands.add_parser("cache-curve", help="prefix-cache hit rate against cache capacity (Mooncake Fig. 9)")
    curve.add_argument("trace", help=f"a built-in trace ({', '.join(BUILTIN_TRACES)}) or a trace scenario")
    curve.add_argument(
        "--capacities",
        type=capacities,
        default=CAPACITIES,
        help="cache capacities in tokens, comma-separated (default 1e6,3e6,1e7,5e7,inf)",
    )
    curve.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def add_splitwise_parser(commands) -> None:
    table = commands.add_parser("splitwise", help="the Azure traces' lengths, latencies and prefill share (Splitwise)")
    table.add_argument("--json", action="store_true", help="print a JSON list instead of a table")


def splitwise_command(args: argparse.Namespace) -> int:
    rows = splitwise_table(lambda what: print(f"replaying {what}", file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows[:: len(rows) // 2]:
        prompt, output = row["prompt"], row["output"]
        print(
            f"{row['trace']}: prompt median {prompt['median']:,} (paper {row['paper_median_prompt']:,}), "
            f"p90 {prompt['p90']:,}, p99 {prompt['p99']:,}; output median {output['median']:,} "
            f"(paper {row['paper_median_output']:,}), p90 {output['p90']:,}, p99 {output['p99']:,}"
        )
    print(f"\n{'trace':<19} {'batching':<11} {'TTFT p50':>9} {'p99':>9} {'TBT p50':>9} {'p99':>9} {'prefill':>8}")
    for row in rows:
        times = [f"{row[key]:>9.3f}" for key in ("ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s")]
        print(f"{row['trace']:<19} {row['batching']:<11} {' '.join(times)} {row['prefill_share']:>8.0%}")
    print("(seconds of the cost model; prefill: its share of the busy time)")
    return 0


def cache_curve_command(args: argparse.Namespace) -> int:
    name = f"trace-{args.trace}" if args.trace in BUILTIN_TRACES else args.trace
    scenario = resolve_scenario(name)
    points = cache_curve(scenario, args.capacities, lambda capacity: _replaying(scenario.trace.label, capacity))
    if args.json:
        print(json.dumps([{**p, "capacity_tokens": _json_number(p["capacity_tokens"])} for p in points], indent=2))
        return 0
    print(f"{'capacity (tokens)':>18}  {'engine':>7}  {'trace':>7}  {'engine, of its max':>18}")
    top = max(p["engine_hit_rate"] for p in points) or 1.0
    for p in points:
        capacity = "unbounded" if math.isinf(p["capacity_tokens"]) else f"{p['capacity_tokens']:,.0f}"
        engine, trace = p["engine_hit_rate"], p["trace_hit_rate"]
        print(f"{capacity:>18}  {engine:>7.1%}  {trace:>7.1%}  {engine / top:>18.0%}")
    return 0


def _replaying(trace: str, capacity: float) -> None:
    size = "an unbounded cache" if math.isinf(capacity) else f"a cache of {capacity:,.0f} tokens"
    print(f"replaying {trace} with {size}", file=sys.stderr, flush=True)


def _json_number(value: float) -> float | str:
    """JSON has no infinity: an unbounded cache is the string "inf"."""
    return "inf" if math.isinf(value) else value


def trace_replicas_command(args: argparse.Namespace, scenario) -> int:
    """`run` on a trace scenario with `[replicas]`: the service's figures over every replica's log."""
    if args.jsonl or args.csv or args.narrate:
        raise ValueError("--jsonl, --csv and --narrate read one log; a trace on replicas makes one a replica")
    start = time.perf_counter()
    figures = replicas_summary(scenario, replay_trace_replicas(scenario))
    figures["engine_wall_s"] = time.perf_counter() - start
    if args.json:
        print(json.dumps({"scenario": scenario.name, **figures}, indent=2))
        return 0
    print(f"{'scenario':<26}  {scenario.name}: {scenario.title}")
    for name, value in figures.items():
        shown = ", ".join(map(_number, value)) if isinstance(value, list) else _number(value)
        print(f"{name.replace('_', ' '):<26}  {shown}")
    return 0


def _number(value) -> str:
    if value is None:
        return "–"
    return f"{value:,.3f}" if isinstance(value, float) else f"{value:,}"
