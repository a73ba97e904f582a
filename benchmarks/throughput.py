"""Engine throughput: generated tokens per second of `run()` on a 1,000-request workload.

    python benchmarks/throughput.py [--requests 1000] [--batch-size 64] [--repeats 3]

Every request generates exactly L tokens (stop_chance 0), for L = 64 and 4,096, so the
ratio shows whether the cost per token grows with request length. Figures are the best
of `--repeats` runs, measured side by side in one process. The model's own cost (an
O(1) hash per row) is included, as it is for any user of the engine.
"""

from __future__ import annotations

import argparse
import time

from engine import BatchInferenceEngine, SimulatedLLM


def tokens_per_second(requests: int, length: int, batch_size: int, repeats: int, **options) -> float:
    best = float("inf")
    for _ in range(repeats):
        engine = BatchInferenceEngine(SimulatedLLM(stop_chance=0.0), batch_size, 0, **options)
        for i in range(requests):
            engine.submit_request([1 + i % 997, 2, 3], length)
        start = time.perf_counter()
        engine.run()
        best = min(best, time.perf_counter() - start)
    return requests * length / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    short = tokens_per_second(args.requests, 64, args.batch_size, args.repeats)
    long = tokens_per_second(args.requests, 4096, args.batch_size, args.repeats)
    print(f"{args.requests} requests, batch {args.batch_size}, best of {args.repeats}")
    print(f"  64-token requests:    {short:>12,.0f} tokens/s")
    print(f"  4,096-token requests: {long:>12,.0f} tokens/s")
    print(f"  ratio (64 / 4,096):   {short / long:.2f}x")


if __name__ == "__main__":
    main()
