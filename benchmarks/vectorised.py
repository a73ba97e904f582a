"""The vectorised step (engine/practice/vectorised.py) against the loop engine, per token, side by side in one run.

    python benchmarks/vectorised.py [--quick] [--json] [--write] [--rounds N]

Each engine runs with a model of its own kind, the same function (`LastTokenModel`): the loop
engine (`engine.BatchInferenceEngine`) with its per-row Python form, the vectorised engine with its
NumPy form. The workload at a batch size of B rows: 2B requests (at least 256), prompts of two
tokens, answers of 64 to 192 tokens (seeded; rows end at different steps, so slots refill every
step), stop token 0 in a vocabulary of 1,000; then the same with 100 four-token stop sequences on
every request. The sizes: 8, 64, 512, 4,096, 32,768 and 65,536 rows (the loop engine's batch
limit), and the vectorised engine alone at 100,000.

The time of a run is the process's CPU time from the first submit to the end of `run()`, callbacks
included, over the tokens generated: the machine's two cores are shared with other work, and wall
time would count their turns too. Each round runs both engines at a size, in alternating order; the
ns/token are each engine's median over the rounds, and a speedup is the median of the rounds'
paired ratios (loop over vectorised), so both sides of a ratio see the same minutes of the machine.
The crossover is the smallest batch size measured at which the vectorised step is faster. The plain
loop engine (engine/practice/plain_loop.py, O(1) a token on every axis) is measured beside them.
Last, the memory layout alone at 100,000 rows: a step's writes and last-token reads in a time-major
window against a row-major buffer.

`--write` stores the table in engine/lab/measurements/vectorised.json (read by the lessons).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import pathlib
import platform
import random
import statistics
import sys
import time

import numpy as np

from engine import BatchInferenceEngine
from engine.practice.last_token_model import LastTokenModel
from engine.practice.plain_loop import PlainLoopEngine
from engine.practice.vectorised import WINDOW, VectorisedEngine

ROWS = (8, 64, 512, 4096, 32768, 65536)
BEYOND = 100_000  # the vectorised engine alone (the loop engine's batch limit is 65,536)
QUICK_ROWS, QUICK_BEYOND = (8, 64, 512), 4096
LENGTHS = (64, 192)  # generated tokens per request, uniform
STOPS = [[1 + 4 * i, 2 + 4 * i, 3 + 4 * i, 4 + 4 * i] for i in range(100)]
ENGINES = {"loop": BatchInferenceEngine, "plain loop": PlainLoopEngine, "vectorised": VectorisedEngine}
MEASUREMENTS = pathlib.Path(__file__).resolve().parent.parent / "engine" / "lab" / "measurements" / "vectorised.json"


def workload(rows: int, lengths: tuple[int, int]) -> list[tuple[list[int], int]]:
    rng = random.Random(rows)
    return [([i % 997 + 1, 5], rng.randint(*lengths)) for i in range(max(2 * rows, 256))]


def ns_per_token(engine_class, rows: int, requests, stops) -> float:
    """CPU ns per generated token of one whole run: submit everything, then run()."""
    delivered = []
    engine = engine_class(LastTokenModel(vocab_size=1000), rows, 0)
    gc.collect()
    gc.disable()  # as timeit does: a collection's pause would land on whichever run it falls in
    try:
        start = time.process_time_ns()
        for prompt, max_tokens in requests:
            engine.submit_request(prompt, max_tokens, delivered.append, stops)
        engine.run()
        elapsed = time.process_time_ns() - start
    finally:
        gc.enable()
    generated = sum(map(len, delivered)) - sum(len(prompt) for prompt, _ in requests)
    return elapsed / generated


def measure(rows: int, stops, rounds: int, lengths, alone: bool) -> dict[str, float | None]:
    """Each engine's median ns/token at one batch size, and the medians of the paired ratios to the vectorised
    engine's; `rounds` rounds, the engines' order reversed every other round. `alone`: the vectorised engine only."""
    requests = workload(rows, lengths)
    engines = {"vectorised": VectorisedEngine} if alone else ENGINES
    figures = {name: [] for name in engines}
    for round_number in range(rounds):
        for name in list(engines)[:: 1 if round_number % 2 else -1]:
            figures[name].append(ns_per_token(engines[name], rows, requests, stops))
            what = f"{rows:>7,} rows, {'with' if stops else 'no'} stop sequences, {name}"
            print(f"  {what}: {figures[name][-1]:8.1f} ns/token", file=sys.stderr, flush=True)
    result = {name: figures.get(name) and statistics.median(figures[name]) for name in ENGINES}
    for name in ENGINES:
        if name != "vectorised":
            ratios = [a / b for a, b in zip(figures.get(name, ()), figures["vectorised"])]
            result[f"{name} speedup"] = statistics.median(ratios) if ratios else None
    return result


def measure_table(rows=ROWS, beyond=BEYOND, rounds: int = 3, lengths: tuple[int, int] | None = None) -> dict:
    """The whole table, in the shape of engine/lab/measurements/vectorised.json, and the figures of the plain
    loop engine beside it (`plain_loop`, printed and in --json, not stored)."""
    load, lengths = os.getloadavg()[0], lengths or LENGTHS
    sizes = [*rows, beyond]
    plain = [measure(size, None, rounds, lengths, size == beyond) for size in sizes]
    stopped = [measure(size, STOPS, rounds, lengths, size == beyond) for size in sizes]
    faster = [size for size, row in zip(rows, plain) if row["loop speedup"] > 1]
    at_max = plain[len(rows) - 1]
    return {
        "measured_on": datetime.datetime.now(datetime.UTC).date().isoformat(),
        "load": round(load, 2),
        "cpu": cpu_name(),
        "rows": sizes,
        "loop_ns_per_token": [rounded(row["loop"]) for row in plain],
        "vectorised_ns_per_token": [rounded(row["vectorised"]) for row in plain],
        "stops": {
            "count": len(STOPS),
            "loop_ns_per_token": [rounded(row["loop"]) for row in stopped],
            "vectorised_ns_per_token": [rounded(row["vectorised"]) for row in stopped],
        },
        "crossover_rows": faster[0] if faster else None,
        "speedup_at_max_rows": round(at_max["loop speedup"], 2),
        "max_rows": rows[-1],
        "plain_loop": {
            "ns_per_token": [rounded(row["plain loop"]) for row in plain],
            "stops_ns_per_token": [rounded(row["plain loop"]) for row in stopped],
            "speedup_at_max_rows": round(at_max["plain loop speedup"], 2),
        },
    }


def layout_ns_per_token(rows: int, steps: int = 256) -> dict[str, float]:
    """One step's writes of a token per row and reads of each row's last token, `steps` times, in the vectorised
    engine's time-major window (steps, rows) and in a row-major buffer (rows, tokens) at each row's own length."""
    tokens, slots = np.arange(rows, dtype=np.int64), np.arange(rows)
    window = np.ones((WINDOW, rows), dtype=np.int64)  # (ones, not zeros: every page is touched before the clock)
    buffer = np.ones((rows, steps + 64), dtype=np.int64)
    lengths = np.random.default_rng(0).integers(0, 64, rows)  # rows part-way through answers of their own

    def time_major() -> None:
        for step in range(steps):
            window[step % WINDOW] = tokens
            tokens[:] = window[step % WINDOW]

    def row_major() -> None:
        for step in range(steps):
            buffer[slots, lengths + step] = tokens
            tokens[:] = buffer[slots, lengths + step]

    figures = {}
    for name, writes in (("time_major", time_major), ("row_major", row_major)):
        start = time.process_time_ns()
        writes()
        figures[name] = round((time.process_time_ns() - start) / (rows * steps), 2)
    return figures


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def cpu_name() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def print_table(table: dict) -> None:
    print(f"CPU: {table['cpu']}; load (1 min) at the start: {table['load']}; CPU ns per generated token")
    head = f"{'loop':>8} {'plain':>8} {'vectorised':>10} {'speedup':>8}"
    print(f"{'':>8}   {'':^37}   {f'{len(STOPS)} stop sequences on every request':^37}")
    print(f"{'rows':>8}   {head}   {head}")
    series = [
        (table["loop_ns_per_token"], table["plain_loop"]["ns_per_token"], table["vectorised_ns_per_token"]),
        (table["stops"]["loop_ns_per_token"], table["plain_loop"]["stops_ns_per_token"],
         table["stops"]["vectorised_ns_per_token"]),
    ]  # fmt: skip
    for i, rows in enumerate(table["rows"]):
        cells = []
        for loop, plain, vectorised in series:
            loop, plain, vectorised = loop[i], plain[i], vectorised[i]
            speedup = f"{loop / vectorised:7.1f}x" if loop is not None else ""
            cells.append(f"{cell(loop):>8} {cell(plain):>8} {vectorised:10.1f} {speedup:>8}")
        print(f"{rows:>8,}   {cells[0]}   {cells[1]}")
    print(
        f"crossover: {table['crossover_rows']} rows; at {table['max_rows']:,} rows the vectorised step is "
        f"{table['speedup_at_max_rows']:.1f}x faster per token than the loop engine (target >= 20x) and "
        f"{table['plain_loop']['speedup_at_max_rows']:.1f}x faster than the plain loop engine (paired medians)"
    )


def print_layout(rows: int, layout: dict[str, float]) -> None:
    print(
        f"layout at {rows:,} rows, a step's token writes and last-token reads: time-major window "
        f"{layout['time_major']:.2f} ns/token, row-major buffer {layout['row_major']:.2f} ns/token"
    )


def cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"batch sizes up to {QUICK_ROWS[-1]}, one round")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--write", action="store_true", help=f"store the table in {MEASUREMENTS.name}")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per batch size (3; 1 with --quick)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    rows, beyond = (QUICK_ROWS, QUICK_BEYOND) if args.quick else (ROWS, BEYOND)
    table = measure_table(rows, beyond, rounds)
    table["layout"] = layout_ns_per_token(beyond)
    if args.write:
        stored = {key: value for key, value in table.items() if key not in ("plain_loop", "layout")}
        MEASUREMENTS.parent.mkdir(exist_ok=True)
        MEASUREMENTS.write_text(json.dumps(stored, indent=2) + "\n")
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        print_table(table)
        print_layout(table["rows"][-1], table["layout"])


if __name__ == "__main__":
    main()
