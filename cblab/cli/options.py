"""The command line's shared parts: argument types with their limits, the engine's options (one
per setting of engine/lab/engine_settings.py, memory included) and the cost options, the
scenario a command runs (a file, a built-in name or a generated workload, with the flags'
changes), progress on stderr, and how a summary figure is labelled and printed."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from engine.analysis.hardware import COST_MODELS, cost_model
from engine.analysis.metrics import CostModel, format_seconds
from engine.lab.engine_settings import ENGINE_SETTINGS
from engine.lab.limits import check_batch_sizes
from engine.lab.scenario import EngineConfig, ModelConfig, Scenario, WorkloadConfig, resolve_scenario
from engine.practice.checker.sandbox import MAX_TIMEOUT
from engine.practice.checker.scale.section import MAX_BUDGET


def bounded(parse, low: float, high: float, what: str, *, above_low: bool = False):
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


def integer(low: int, high: int):
    return bounded(int, low, high, f"an integer from {low} to {high:,}")


def fraction(low: float, below: float):
    """A number from `low` up to, not including, `below`."""
    within = bounded(float, low, below, f"a number ≥ {low:g} and below {below:g}")

    def check(text: str) -> float:
        value = within(text)
        if value == below:
            raise argparse.ArgumentTypeError(f"must be a number ≥ {low:g} and below {below:g}, got {text!r}")
        return value

    return check


def count(limit: int):
    return integer(1, limit)


def batch_sizes(text: str) -> tuple[int, ...]:
    """`1,2,4,8` -> (1, 2, 4, 8), within the sweep's limits."""
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        rule = "must be comma-separated integers such as 1,2,4,8"
        raise argparse.ArgumentTypeError(f"{rule}, got {text[:60]!r}") from None
    try:
        return check_batch_sizes("--batch-sizes", sizes)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--batch-sizes: ")) from None


seed = bounded(int, 0, 2**63 - 1, "an integer from 0 to 2**63 - 1")
milliseconds = bounded(float, 0, 1e6, "a number of milliseconds from 0 to 1,000,000")
timeout = bounded(  # the checker's time limit per case (engine/practice/checker/sandbox.py)
    float, 0, MAX_TIMEOUT, f"a number of seconds more than 0 and at most {MAX_TIMEOUT:g}", above_low=True
)

scale_budget = bounded(  # the checker's scale section, in seconds (engine/practice/checker/scale/section.py)
    float, 0, MAX_BUDGET, f"a number of seconds more than 0 and at most {MAX_BUDGET:g}", above_low=True
)


def engine_options(parser: argparse.ArgumentParser, *, batching_mode: bool) -> None:
    """An option for each engine setting with a flag (engine/lab/engine_settings.py), each changing
    the scenario's own; `batching_mode`: only those of the batching mode (`run` alone has them)."""
    memory = None
    for setting in ENGINE_SETTINGS:
        if setting.flag is None or setting.batching_mode != batching_mode:
            continue
        words = f"{setting.help} (default: the scenario's)"
        if setting.group == "memory":
            memory = memory or parser.add_argument_group(
                "memory (the KV cache and chunked prefill; default: the scenario's)"
            )
            given = "" if setting.optional or setting.kind != "int" else f" ({setting.default} if not set)"
            words = setting.help + given
        place = memory if setting.group == "memory" else parser
        if setting.switch is not None:
            place.add_argument(setting.flag, action="store_const", const=setting.switch, dest=setting.name, help=words)
        elif setting.kind == "choice":
            place.add_argument(setting.flag, choices=setting.choices, dest=setting.name, help=words)
        elif setting.kind == "fraction":
            place.add_argument(setting.flag, type=fraction(setting.low, setting.high), dest=setting.name, help=words)
        else:
            place.add_argument(setting.flag, type=integer(setting.low, setting.high), dest=setting.name, help=words)


def cost_options(parser: argparse.ArgumentParser) -> None:
    default = CostModel()
    parser.add_argument(
        "--cost",
        choices=COST_MODELS,
        help="the cost model: 'default' or a hardware preset (engine/analysis/hardware.py); default: the scenario's",
    )
    parser.add_argument(
        "--step-ms", type=milliseconds, help=f"cost model: fixed ms per step ({default.step_s * 1e3:g})"
    )
    parser.add_argument("--row-ms", type=milliseconds, help=f"cost model: ms per row sent ({default.row_s * 1e3:g})")
    parser.add_argument(
        "--prefill-ms",
        type=milliseconds,
        help=f"cost model: ms per prompt token prefilled ({default.prefill_token_s * 1e3:g})",
    )


def cost_of(args: argparse.Namespace, scenario: Scenario) -> CostModel:
    """The scenario's cost model (or --cost's), with any of --step-ms, --row-ms, --prefill-ms in its place."""
    cost = cost_model(args.cost or scenario.cost)
    flags = {"step_s": args.step_ms, "row_s": args.row_ms, "prefill_token_s": args.prefill_ms}
    changes = {name: value / 1e3 for name, value in flags.items() if value is not None}
    return dataclasses.replace(cost, **changes) if changes else cost


def scenario_of(args: argparse.Namespace) -> Scenario:
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
        setting.name: getattr(args, setting.name)
        for setting in ENGINE_SETTINGS
        if getattr(args, setting.name, None) is not None
    }
    return scenario.with_engine(**changes) if changes else scenario


def progress(label: str):
    def report(step: int, done: int) -> None:
        print(f"{label}: step {step:,}, {done:,} requests done", file=sys.stderr, flush=True)

    return report


def label(name: str) -> str:
    """`ttft_p50_s` -> `ttft p50`, `throughput_tokens_per_s` -> `throughput`."""
    if name == "throughput_tokens_per_s":
        return "throughput"
    return name.removesuffix("_s").replace("_", " ")


def formatted(name: str, value) -> str:
    if value is None:
        return "-"
    if name in ("slot_utilization", "padding_waste", "kv_utilization", "kv_pool_utilization", "prefix_hit_rate"):
        return f"{value:.1%}"
    if name == "throughput_tokens_per_s":
        return f"{value:,.0f} tokens/s"
    if name.endswith("_s"):
        return format_seconds(value)
    return f"{value:,}"
