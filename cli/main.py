"""`python -m engine`: run a scenario (or a generated workload), compare configurations.

    python -m engine list
    python -m engine run [SCENARIO] [--requests N] [--batch-size N] [--static] [--padded]
                         [--jsonl OUT] [--csv OUT] [--narrate]
    python -m engine compare SCENARIO [--batch-size N] [--json]
    python -m engine check SOLUTION.py [--class NAME] [--seed S] [--timeout SECONDS] [--jsonl OUT]

SCENARIO is a path or the name of a built-in scenario (`part2-slot-refill`). Errors are
one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from engine.analysis.hardware import COST_MODELS, cost_model
from engine.analysis.metrics import CostModel, format_seconds, request_metrics, summary
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.core.config import KV_POLICIES
from engine.lab.compare import (
    COMPARED,
    MEMORY_COMPARED,
    MEMORY_CONFIGURATIONS,
    compare,
    continuous_speedup,
    memory_speedups,
)
from engine.lab.limits import MAX_BATCH_SIZE, MAX_KV_BLOCKS, MAX_LENGTH, MAX_PROMPT_TOKENS, MAX_REQUESTS
from engine.lab.scenario import EngineConfig, ModelConfig, Scenario, WorkloadConfig, list_scenarios, resolve_scenario
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError
from engine.practice.checker.sandbox import DEFAULT_TIMEOUT, MAX_TIMEOUT


class OneLineErrors(argparse.ArgumentParser):
    """Bad arguments are reported like every other error: one line, exit status 2."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(
        prog="python -m engine", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="list the built-in scenarios")
    run = commands.add_parser("run", help="run a scenario or a generated workload and print a summary")
    run.add_argument("scenario", nargs="?", help="scenario file or built-in name (default: a generated workload)")
    run.add_argument(
        "--requests", type=_count(MAX_REQUESTS), help="generated workload: number of requests (default 100)"
    )
    run.add_argument(
        "--max-tokens", type=_count(MAX_LENGTH), default=64, help="generated workload: budgets drawn from 1..N"
    )
    run.add_argument("--seed", type=_seed, default=0, help="generated workload: seeds the workload and the model")
    run.add_argument("--narrate", action="store_true", help="print the narration of every step")
    run.add_argument("--jsonl", metavar="OUT", help="write the event log as JSON Lines")
    run.add_argument("--csv", metavar="OUT", help="write per-request metrics as CSV")
    compare_cmd = commands.add_parser("compare", help="run one workload under all four configurations")
    compare_cmd.add_argument("scenario", help="scenario file or built-in name")
    compare_cmd.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    check_cmd = commands.add_parser("check", help="check your own BatchInferenceEngine against the contract")
    check_cmd.add_argument("solution", help="a Python file defining the engine class")
    check_cmd.add_argument("--class", dest="class_name", help="the class to check (default: the engine class found)")
    check_cmd.add_argument("--seed", type=int, default=0, help="seeds the generated workloads")
    check_cmd.add_argument(
        "--timeout",
        type=_timeout,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds allowed per case, more than 0 and at most {MAX_TIMEOUT:g} (default {DEFAULT_TIMEOUT:g})",
    )
    check_cmd.add_argument("--jsonl", metavar="OUT", help="write the first failing run's event log")
    check_cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    for sub in (run, compare_cmd):
        sub.add_argument("--batch-size", type=_count(MAX_BATCH_SIZE), help="override the scenario's batch size")
        _memory_options(sub)
        _cost_options(sub)
    run.add_argument("--static", action="store_true", help="static batching (default: the scenario's)")
    run.add_argument("--padded", action="store_true", help="padded batches (default: the scenario's)")
    return parser


def _bounded(parse, low: float, high: float, what: str, *, above_low: bool = False):
    """An argparse type: `parse(text)` within [low, high] (or (low, high]); nan and inf never are."""

    def check(text: str):
        try:
            value = parse(text)
        except ValueError:
            value = None
        if value is None or not (low < value if above_low else low <= value) or not value <= high:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return check


def _count(limit: int):
    return _bounded(int, 1, limit, f"an integer from 1 to {limit:,}")


_seed = _bounded(int, 0, 2**63 - 1, "an integer from 0 to 2**63 - 1")
_milliseconds = _bounded(float, 0, 1e6, "a number of milliseconds from 0 to 1,000,000")
_timeout = _bounded(  # the checker's time limit per case (engine/practice/checker/sandbox.py)
    float, 0, MAX_TIMEOUT, f"a number of seconds more than 0 and at most {MAX_TIMEOUT:g}", above_low=True
)


def _memory_options(parser: argparse.ArgumentParser) -> None:
    memory = parser.add_argument_group("memory (the KV cache and chunked prefill; default: the scenario's)")
    memory.add_argument("--kv-blocks", type=_count(MAX_KV_BLOCKS), help="the KV pool, in blocks")
    memory.add_argument("--block-size", type=_count(MAX_LENGTH), help="tokens per KV block (16 if not set)")
    memory.add_argument("--kv-policy", choices=KV_POLICIES, help="paged (vLLM) or reserve (prompt + max_tokens)")
    memory.add_argument("--token-budget", type=_count(MAX_PROMPT_TOKENS), help="most tokens one step computes")


def _cost_options(parser: argparse.ArgumentParser) -> None:
    default = CostModel()
    parser.add_argument(
        "--cost",
        choices=COST_MODELS,
        help="the cost model: 'default' or a hardware preset (engine/analysis/hardware.py); default: the scenario's",
    )
    parser.add_argument(
        "--step-ms", type=_milliseconds, help=f"cost model: fixed ms per step ({default.step_s * 1e3:g})"
    )
    parser.add_argument("--row-ms", type=_milliseconds, help=f"cost model: ms per row sent ({default.row_s * 1e3:g})")
    parser.add_argument(
        "--prefill-ms",
        type=_milliseconds,
        help=f"cost model: ms per prompt token prefilled ({default.prefill_token_s * 1e3:g})",
    )


def _cost(args: argparse.Namespace, scenario: Scenario) -> CostModel:
    """The scenario's cost model (or --cost's), with any of --step-ms, --row-ms, --prefill-ms in its place."""
    cost = cost_model(args.cost or scenario.cost)
    flags = {"step_s": args.step_ms, "row_s": args.row_ms, "prefill_token_s": args.prefill_ms}
    changes = {name: value / 1e3 for name, value in flags.items() if value is not None}
    return dataclasses.replace(cost, **changes) if changes else cost


def _scenario(args: argparse.Namespace) -> Scenario:
    if getattr(args, "scenario", None):
        scenario = resolve_scenario(args.scenario)
    else:
        count = 100 if args.requests is None else args.requests
        workload = WorkloadConfig(
            count, (1, 16), args.seed, ("uniform", {"min": 1, "max": args.max_tokens}), ("burst", {})
        )
        scenario = Scenario(
            "generated",
            "generated workload",
            f"{count} generated requests",
            "",
            EngineConfig(batch_size=8),
            ModelConfig(seed=args.seed, stop_chance=0.02),
            workload=workload,
        )
    changes = {
        name: getattr(args, name)
        for name in ("batch_size", "kv_blocks", "block_size", "kv_policy", "token_budget")
        if getattr(args, name, None) is not None
    }
    if getattr(args, "static", False):
        changes["batching"] = "static"
    if getattr(args, "padded", False):
        changes["padded"] = True
    return scenario.with_engine(**changes) if changes else scenario


def _progress(label: str):
    def report(step: int, done: int) -> None:
        print(f"{label}: step {step:,}, {done:,} requests done", file=sys.stderr, flush=True)

    return report


def run_command(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    cost = _cost(args, scenario)
    start = time.perf_counter()
    log = simulate(scenario, progress=_progress(scenario.name))
    seconds = time.perf_counter() - start
    log.vocabulary = dict(scenario.vocabulary)  # in the header of --jsonl, so a replay keeps the words
    engine = scenario.engine
    rows = [
        ("scenario", f"{scenario.name}: {scenario.title}"),
        ("mode", f"{engine.batching}, {'padded' if engine.padded else 'ragged'}, batch_size {engine.batch_size}"),
    ]
    rows += [(_label(name), _format(name, value)) for name, value in summary(log, cost).items()]
    rows += [("engine wall time", f"{seconds:.3f} s")]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if args.narrate:
        _print_narration(scenario, Replay(log))
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as out:
            out.write(log.to_jsonl())
        print(f"{'event log':<{width}}  {args.jsonl}")
    if args.csv:
        request_metrics(log, cost).to_csv(args.csv)
        print(f"{'request metrics':<{width}}  {args.csv}")
    return 0


def _print_narration(scenario: Scenario, replay: Replay) -> None:
    """Every step that has events; a stretch of idle steps is one line."""
    previous = -1
    for step in map(int, replay.busy_steps()):
        if step > previous + 1:
            idle = f"step {previous + 1}" if step == previous + 2 else f"steps {previous + 1:,}-{step - 1:,}"
            print(f"\n{idle}: idle, waiting for the next arrival")
        previous = step
        print(f"\nstep {step}")
        caption = scenario.captions.get(step)
        for sentence in [caption] if caption else narrate(replay, step, replay.log.vocabulary):
            print(f"  {sentence}")


def _label(name: str) -> str:
    """`ttft_p50_s` -> `ttft p50`, `throughput_tokens_per_s` -> `throughput`."""
    if name == "throughput_tokens_per_s":
        return "throughput"
    return name.removesuffix("_s").replace("_", " ")


def _format(name: str, value) -> str:
    if value is None:
        return "-"
    if name in ("slot_utilization", "padding_waste", "kv_utilization"):
        return f"{value:.1%}"
    if name == "throughput_tokens_per_s":
        return f"{value:,.0f} tokens/s"
    if name.endswith("_s"):
        return format_seconds(value)
    return f"{value:,}"


def compare_command(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    cost = _cost(args, scenario)
    results = compare(scenario, cost, progress=_progress)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{scenario.name}: {scenario.title} (batch_size {scenario.engine.batch_size})")
    columns = [COMPARED] + ([MEMORY_COMPARED] if "continuous-paged" in results else [])
    for shown in columns:  # the memory figures as a second table, for the memory configurations
        names = list(results) if shown is COMPARED else list(MEMORY_CONFIGURATIONS)
        print(f"{'configuration':<18}" + "".join(f"{head:>16}" for head in shown.values()))
        for name in names:
            print(f"{name:<18}" + "".join(f"{_format(c, results[name][c]):>16}" for c in shown))
    speedup = continuous_speedup(results)
    print(f"continuous / static throughput (ragged): {_ratio(speedup)}")
    for name, ratio in memory_speedups(results).items():
        print(f"continuous-paged / {name} throughput: {_ratio(ratio)}")
    return 0


def _ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "- (no tokens were generated)"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            for path in list_scenarios():
                print(f"{path.stem:<36} {resolve_scenario(path.stem).title}")
            return 0
        if args.command == "check":
            from engine.practice.checker.run import main as check_main

            return check_main(args)
        return run_command(args) if args.command == "run" else compare_command(args)
    except (ScenarioError, ValueError, TypeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
