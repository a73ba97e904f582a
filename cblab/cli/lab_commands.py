"""`compare`, `sweep` and `replicas`: the commands that run one scenario several ways and print
the figures side by side (or as one JSON object with `--json`)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from engine.analysis.metrics import format_seconds
from engine.lab.compare import (
    COMPARED,
    compare,
    headline_ratios,
    on_the_pool,
    own_configuration,
    pool_figures,
)
from engine.lab.paper_systems import SYSTEMS, TOKEN_STATES, unlike_the_paper
from engine.lab.replicas import contrast, run_summary
from engine.lab.sweep import knee, sweep

from .options import cost_of, formatted, progress, scenario_of


def compare_command(args: argparse.Namespace) -> int:
    scenario = scenario_of(args)
    cost = cost_of(args, scenario)
    results = compare(scenario, cost, progress=progress)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{scenario.name}: {scenario.title} (batch_size {scenario.engine.batch_size})")
    own = own_configuration(scenario)  # the app's Compare leads with it too (cblab/ui/charts/compare_view.py)
    if own is None:
        print("this scenario's settings match none of the configurations (each changes one thing at once)")
    else:
        print(f"this scenario runs as {own}: the ratios that involve it come first")
    _table(results, list(results), COMPARED)
    if pool := on_the_pool(results):  # the memory figures as a second table, for the configurations on the pool
        _table(results, pool, pool_figures(results))
    if SYSTEMS["Orca-Oracle"] in results:
        why_not = unlike_the_paper(scenario)
        if why_not is None:
            _paper_table(results)
        else:
            print(f"the vLLM paper's Fig. 2 figures are left out: {why_not}")
    for label, ratio in headline_ratios(results, own):
        print(f"{label[0].lower()}{label[1:]}: {_ratio(ratio)}")
    return 0


def _table(results: dict[str, dict], names: list[str], shown: dict[str, str]) -> None:
    width = max(map(len, names)) + 2
    print(f"{'configuration':<{width}}" + "".join(f"{head:>16}" for head in shown.values()))
    for name in names:
        print(f"{name:<{width}}" + "".join(f"{formatted(c, results[name][c]):>16}" for c in shown))


def _paper_table(results: dict[str, dict]) -> None:
    """The vLLM paper's four systems: the share of the KV room the rows hold that holds tokens, beside
    Fig. 2's, then the share of the whole pool (lower while it is not full), peak rows and throughput."""
    print("the vLLM paper's four systems (Kwon et al., SOSP 2023, Fig. 2): share of the held KV room holding tokens")
    headings = f"{'KV util':>9}{'paper':>8}{'pool util':>11}{'peak rows':>11}{'throughput':>20}"
    print(f"{'system':<13}{'runs as':<20}{headings}")
    for paper, name in SYSTEMS.items():
        row = results[name]
        print(
            f"{paper:<13}{name:<20}{formatted('kv_utilization', row['kv_utilization']):>9}"
            f"{TOKEN_STATES[paper]:>8.1%}{formatted('kv_pool_utilization', row['kv_pool_utilization']):>11}"
            f"{row['peak_running']:>11,}{formatted('throughput_tokens_per_s', row['throughput_tokens_per_s']):>20}"
        )


def sweep_command(args: argparse.Namespace) -> int:
    scenario = scenario_of(args)
    points = sweep(scenario, args.batch_sizes, cost_of(args, scenario))
    if args.json:
        print(json.dumps({"points": [dataclasses.asdict(p) for p in points], "knee": knee(points)}, indent=2))
        return 0
    print(f"{scenario.name}: {scenario.title} (closed loop: as many clients as slots)")
    print(f"{'batch size':>10}{'throughput':>16}{'E2E p50':>12}{'E2E p99':>12}{'TPOT p50':>12}{'model calls':>13}")
    for p in points:
        print(
            f"{p.batch_size:>10}{formatted('throughput_tokens_per_s', p.throughput_tokens_per_s):>16}"
            f"{format_seconds(p.e2e_p50_s):>12}{format_seconds(p.e2e_p99_s):>12}"
            f"{format_seconds(p.tpot_p50_s):>12}{p.model_calls:>13,}"
        )
    bend = knee(points)
    print(f"knee: {bend} slots" if bend else "knee: none (throughput keeps up with latency at every step)")
    return 0


REPLICA_COLUMNS = {  # run_summary's figures, with their headings
    "peak_replicas": "replicas",
    "replica_steps": "replica-steps",
    "max_queue": "max queue",
    "mean_utilization": "utilisation",
    "tokens_per_step": "tokens/step",
    "latency_p50_steps": "p50 steps",
    "latency_p99_steps": "p99 steps",
}


def replicas_command(args: argparse.Namespace) -> int:
    scenario = scenario_of(args)
    runs = contrast(scenario)
    figures = {name: run_summary(run) | {"scaling": run.scaling} for name, run in runs.items()}
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{scenario.name}: {scenario.title} (steps on one clock; latency from arrival to delivery)")
    print(f"{'autoscaler':<14}" + "".join(f"{head:>15}" for head in REPLICA_COLUMNS.values()))
    for name, row in figures.items():
        cells = [
            f"{row[c]:.0%}"
            if c == "mean_utilization"
            else f"{row[c]:,.1f}"
            if isinstance(row[c], float)
            else f"{row[c]:,}"
            for c in REPLICA_COLUMNS
        ]
        print(f"{name:<14}" + "".join(f"{cell:>15}" for cell in cells))
        if row["scaling"]:
            print("  " + ", ".join(f"step {step}: {'+1' if change > 0 else '-1'}" for step, change in row["scaling"]))
    return 0


def _ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "- (no tokens were generated)"
