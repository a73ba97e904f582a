"""`python -m engine`: run a scenario (or a generated workload), compare configurations.

    python -m engine list
    python -m engine run [SCENARIO] [--requests N] [--batch-size N] [--static] [--padded]
                         [--fill-timeout STEPS] [--jsonl OUT] [--csv OUT] [--narrate]
    python -m engine compare SCENARIO [--batch-size N] [--json]
    python -m engine sweep SCENARIO [--batch-sizes 1,2,4,...] [--json]
    python -m engine replicas SCENARIO [--json]
    python -m engine check SOLUTION.py [--class NAME] [--seed S] [--timeout SECONDS] [--jsonl OUT]
                           [--scale-budget SECONDS | --no-scale]
    python -m engine serve [--workers N] [--port P] [--run-cache DIR] [-- STREAMLIT OPTIONS]
    python -m engine app [-- STREAMLIT OPTIONS]

`cb-lab` (and `python -m cblab`) is the same command.

SCENARIO is a path or the name of a built-in scenario (`part2-slot-refill`). Errors are
one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from engine.analysis.metrics import request_metrics, summary
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.lab.course import load_course
from engine.lab.limits import MAX_LENGTH, MAX_REQUESTS
from engine.lab.quizzes import questions
from engine.lab.scenario import Scenario, load_scenario, trace_scenarios
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError
from engine.lab.trace_sources import attribution
from engine.practice.checker.sandbox import DEFAULT_TIMEOUT, MAX_TIMEOUT
from engine.practice.checker.scale.section import DEFAULT_BUDGET

from .app_command import add_app_parser, app_command
from .lab_commands import compare_command, replicas_command, sweep_command
from .options import (
    batch_sizes,
    cost_of,
    cost_options,
    count,
    engine_options,
    formatted,
    label,
    progress,
    scale_budget,
    scenario_of,
    seed,
    timeout,
)
from .serve import add_serve_parser, serve_command
from .trace_commands import (
    add_cache_curve_parser,
    add_splitwise_parser,
    cache_curve_command,
    splitwise_command,
    trace_replicas_command,
)


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
        "--requests", type=count(MAX_REQUESTS), help="generated workload: number of requests (default 100)"
    )
    run.add_argument(
        "--max-tokens", type=count(MAX_LENGTH), default=64, help="generated workload: budgets drawn from 1..N"
    )
    run.add_argument("--seed", type=seed, default=0, help="generated workload: seeds the workload and the model")
    run.add_argument("--narrate", action="store_true", help="print the narration of every step")
    run.add_argument("--jsonl", metavar="OUT", help="write the event log as JSON Lines")
    run.add_argument("--csv", metavar="OUT", help="write per-request metrics as CSV")
    run.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    compare_cmd = commands.add_parser("compare", help="run one workload under all four configurations")
    compare_cmd.add_argument("scenario", help="scenario file or built-in name")
    compare_cmd.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    sweep_cmd = commands.add_parser("sweep", help="throughput and p50/p99 latency at each batch size (closed loop)")
    sweep_cmd.add_argument("scenario", help="scenario file or built-in name")
    sweep_cmd.add_argument(
        "--batch-sizes",
        type=batch_sizes,
        help="comma-separated, e.g. 1,2,4,8 (default: the scenario's [sweep] batch_sizes, else 1,2,4,...,256)",
    )
    sweep_cmd.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    cost_options(sweep_cmd)
    replicas_cmd = commands.add_parser(
        "replicas", help="replicas behind a router: no autoscaler, scaling on queue depth, on utilisation"
    )
    replicas_cmd.add_argument("scenario", help="scenario file or built-in name (its [replicas] table, if any)")
    replicas_cmd.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    check_cmd = commands.add_parser("check", help="check your own BatchInferenceEngine against the contract")
    check_cmd.add_argument(
        "solution", help="a Python file defining the engine class (or an adapter around it: docs/adapters.md)"
    )
    check_cmd.add_argument("--class", dest="class_name", help="the class to check (default: the engine class found)")
    check_cmd.add_argument("--seed", type=int, default=0, help="seeds the generated workloads")
    check_cmd.add_argument(
        "--timeout",
        type=timeout,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds allowed per case, more than 0 and at most {MAX_TIMEOUT:g} (default {DEFAULT_TIMEOUT:g})",
    )
    check_cmd.add_argument(
        "--scale-budget",
        type=scale_budget,
        default=DEFAULT_BUDGET,
        metavar="SECONDS",
        help=f"seconds for the scale section, how the cost per token grows (default {DEFAULT_BUDGET:g})",
    )
    check_cmd.add_argument("--no-scale", action="store_true", help="skip the scale section")
    check_cmd.add_argument("--jsonl", metavar="OUT", help="write the first failing run's event log")
    check_cmd.add_argument("--json", action="store_true", help="print the report as JSON")
    add_serve_parser(commands)
    add_cache_curve_parser(commands)
    add_splitwise_parser(commands)
    add_app_parser(commands)
    for sub in (run, compare_cmd):
        engine_options(sub, batching_mode=False)
        cost_options(sub)
    engine_options(run, batching_mode=True)  # (compare runs every batching mode itself)
    return parser


def run_command(args: argparse.Namespace) -> int:
    scenario = scenario_of(args)
    if scenario.trace is not None and scenario.replicas is not None:
        return trace_replicas_command(args, scenario)
    cost = cost_of(args, scenario)
    start = time.perf_counter()
    log = simulate(scenario, progress=progress(scenario.name))
    seconds = time.perf_counter() - start
    log.vocabulary = dict(scenario.vocabulary)  # in the header of --jsonl, so a replay keeps the words
    replay = Replay(log) if scenario.quizzes or args.narrate else None  # (a trace's replay is a minute's work)
    if replay is not None:
        questions(scenario, replay)  # a file's predictions must fit its run (else ScenarioError: exit 2)
    engine = scenario.engine
    figures = summary(log, cost)
    credit = attribution(scenario.trace)  # a published trace's source, licence and paper (its licence asks)
    if args.json:
        mode = {"batching": engine.batching, "padded": engine.padded, "batch_size": engine.batch_size}
        mode |= {"trace_attribution": credit} if credit else {}
        print(json.dumps({"scenario": scenario.name, **mode, **figures, "engine_wall_s": seconds}, indent=2))
    else:
        rows = [
            ("scenario", f"{scenario.name}: {scenario.title}"),
            ("mode", f"{engine.batching}, {'padded' if engine.padded else 'ragged'}, batch_size {engine.batch_size}"),
        ]
        rows += [("trace data", credit.removeprefix("Trace data: "))] if credit else []
        rows += [(label(name), formatted(name, value)) for name, value in figures.items()]
        rows += [("engine wall time", f"{seconds:.3f} s")]
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"{name:<{width}}  {value}")
    if args.narrate:
        _print_narration(scenario, replay)
    width, out = (0, sys.stderr) if args.json else (width, sys.stdout)  # (--json: standard output is the JSON)
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as file:
            file.write(log.to_jsonl())
        print(f"{'event log':<{width}}  {args.jsonl}", file=out)
    if args.csv:
        request_metrics(log, cost).to_csv(args.csv)
        print(f"{'request metrics':<{width}}  {args.csv}", file=out)
    return 0


def _print_narration(scenario: Scenario, replay: Replay) -> None:
    """The title and the lesson, its real-server callouts, then every step that has events (a
    stretch of idle steps is one line), then what happened (`reveal`)."""
    print(f"\n{scenario.title}\n\n{scenario.lesson.strip()}")
    for callout in scenario.real_servers:
        print(f"\nHow real servers differ: {' '.join(callout.text.split())}\n  source: {callout.source}")
    previous = -1
    for step in map(int, replay.busy_steps()):
        if step > previous + 1:
            idle = f"step {previous + 1}" if step == previous + 2 else f"steps {previous + 1:,}-{step - 1:,}"
            print(f"\n{idle}\n  {narrate(replay, previous + 1)[0]}")  # idle, or waiting to fill the batch
        previous = step
        print(f"\nstep {step}")
        caption = scenario.captions.get(step)
        for sentence in [caption] if caption else narrate(replay, step, replay.log.vocabulary):
            print(f"  {sentence}")
    if scenario.reveal:
        print(f"\nWhat happened: {' '.join(scenario.reveal.split())}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            for lesson in load_course().lessons:  # in course order
                print(f"{lesson.name:<30} {lesson.number:>5}  {lesson.title}")
            for path in trace_scenarios():  # whole-trace replays, not lessons
                print(f"{path.stem:<30} {'trace':>5}  {load_scenario(path).title}")
            return 0
        if args.command == "check":
            from engine.practice.checker.command import main as check_main

            return check_main(args)
        commands = {
            "run": run_command,
            "cache-curve": cache_curve_command,
            "splitwise": splitwise_command,
            "compare": compare_command,
            "sweep": sweep_command,
            "replicas": replicas_command,
            "serve": serve_command,
            "app": app_command,
        }
        return commands[args.command](args)
    except (ScenarioError, ValueError, TypeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
