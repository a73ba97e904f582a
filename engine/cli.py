"""`python -m engine run ...`: run the built-in model on a generated workload, print a summary."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from .engine import BatchInferenceEngine
from .events import EventKind
from .models import SimulatedLLM
from .request import FinishReason
from .workload import submit_all, uniform_workload


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a generated workload and print a summary")
    run.add_argument("--requests", type=int, default=100, help="number of requests (default 100)")
    run.add_argument("--batch-size", type=int, default=8, help="slots in the batch (default 8)")
    run.add_argument("--max-tokens", type=int, default=64, help="budgets drawn from 1..N (default 64)")
    run.add_argument("--stop-chance", type=float, default=0.02, help="model's per-token chance of the stop token")
    run.add_argument("--seed", type=int, default=0, help="seeds the workload and the model")
    run.add_argument("--static", action="store_true", help="static batching (default: continuous)")
    run.add_argument("--padded", action="store_true", help="fixed-shape padded batches (default: ragged)")
    run.add_argument("--jsonl", metavar="OUT", help="write the event log as JSON Lines")
    return parser


def summarize(engine: BatchInferenceEngine, seconds: float) -> list[tuple[str, object]]:
    log = engine.event_log
    kinds = Counter(log.kind)
    calls = kinds[EventKind.MODEL_CALL]
    tokens = kinds[EventKind.EMIT]
    reasons = Counter(a for k, a in zip(log.kind, log.a) if k == EventKind.EVICT)
    return [
        ("mode", f"{engine.batching}, {'padded' if engine.padded else 'ragged'}, batch_size {engine.batch_size}"),
        ("requests", len(log.requests)),
        ("steps", log.num_steps),
        ("model calls", calls),
        ("generated tokens", tokens),
        ("mean active rows per call", f"{tokens / calls:.2f}" if calls else "-"),
        ("slot utilisation", f"{tokens / (calls * engine.batch_size):.1%}" if calls else "-"),
        ("finish reasons", ", ".join(f"{FinishReason(r).label} {n}" for r, n in sorted(reasons.items()))),
        ("wall time", f"{seconds:.3f} s"),
        ("tokens per second", f"{tokens / seconds:,.0f}" if seconds else "-"),
    ]


def run_command(args: argparse.Namespace) -> int:
    model = SimulatedLLM(seed=args.seed, stop_chance=args.stop_chance)
    engine = BatchInferenceEngine(
        model, args.batch_size, model.eos_token, batching="static" if args.static else "continuous", padded=args.padded
    )
    submit_all(engine, uniform_workload(args.requests, seed=args.seed, max_tokens=args.max_tokens))
    start = time.perf_counter()
    engine.run()
    seconds = time.perf_counter() - start
    width = max(len(name) for name, _ in summarize(engine, seconds))
    for name, value in summarize(engine, seconds):
        print(f"{name:<{width}}  {value}")
    if args.jsonl:
        with open(args.jsonl, "w") as out:
            out.write(engine.event_log.to_jsonl())
        print(f"{'event log':<{width}}  {args.jsonl}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run_command(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
