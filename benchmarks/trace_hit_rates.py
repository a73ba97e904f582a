"""The Mooncake traces' prefix hit rate against cache capacity, from the trace alone (engine/lab/trace_hits.py),
beside the paper's figures (Mooncake, FAST 2025: Table 2's cache ratio, Figure 9's capacity curve).

    python benchmarks/trace_hit_rates.py [--capacities 1e6,3e6,1e7,5e7,inf] [--json]
    python benchmarks/trace_hit_rates.py --lengths   # the four traces' length statistics (engine/lab/trace_stats.py)

For each trace and capacity in tokens: the hit rate (tokens hit / prompt tokens) and its share of the
maximum (an unbounded cache). Table 2 gives the maximum as the cache ratio: 40 % conversation, 66 % synthetic;
Figure 9 says a 3M-token cache reaches under half of the maximum in most workloads, and 50M nearly all of it.
"""

from __future__ import annotations

import argparse
import json
import math

from engine.lab.trace_file import BUILTIN_TRACES, read_builtin_trace
from engine.lab.trace_hits import trace_hit_rate, trace_max_hit_rate
from engine.lab.trace_stats import length_statistics

TRACES = {"mooncake-conversation": 0.40, "mooncake-synthetic": 0.66}  # name -> Table 2's cache ratio
CAPACITIES = "1e6,3e6,1e7,5e7,inf"


def rows(capacities: list[float]) -> list[dict]:
    out = []
    for name, paper in TRACES.items():
        table = read_builtin_trace(name)
        maximum = trace_max_hit_rate(table)
        for capacity in capacities:
            rate = trace_hit_rate(table, capacity)
            out.append(
                {
                    "trace": name,
                    "capacity_tokens": capacity if math.isinf(capacity) else int(capacity),
                    "trace_hit_rate": rate,
                    "share_of_maximum": rate / maximum if maximum else 0.0,
                    "paper_cache_ratio": paper,
                }
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacities", default=CAPACITIES, help="tokens, comma-separated (inf: unbounded)")
    parser.add_argument("--json", action="store_true", help="a list of objects instead of a table")
    parser.add_argument("--lengths", action="store_true", help="median, p90, p99 of prompt and output lengths")
    args = parser.parse_args()
    if args.lengths:
        print(f"{'trace':<24}{'prompt median, p90, p99':>26}{'output median, p90, p99':>26}")
        for name in BUILTIN_TRACES:
            lengths = length_statistics(read_builtin_trace(name))
            prompt, output = (", ".join(f"{v:,}" for v in lengths[k].values()) for k in ("prompt", "output"))
            print(f"{name:<24}{prompt:>26}{output:>26}")
        return
    results = rows([float(c) for c in args.capacities.split(",")])
    if args.json:
        finite = [
            {**r, "capacity_tokens": "inf" if math.isinf(r["capacity_tokens"]) else r["capacity_tokens"]}
            for r in results
        ]
        print(json.dumps(finite, indent=1))  # unbounded capacity as "inf" (JSON has no infinity)
        return
    print(f"{'trace':<24}{'capacity':>12}{'hit rate':>10}{'of max':>8}   paper (Table 2 maximum)")
    for r in results:
        capacity = "inf" if math.isinf(r["capacity_tokens"]) else f"{r['capacity_tokens']:,}"
        print(
            f"{r['trace']:<24}{capacity:>12}{r['trace_hit_rate']:>10.1%}{r['share_of_maximum']:>8.0%}"
            f"   {r['paper_cache_ratio']:.0%}"
        )


if __name__ == "__main__":
    main()
