"""A trace file uploaded into the app, as a scenario: the deployment of the built-in replays, the app's limits.

A trace with hash ids (Mooncake's JSONL, or one like it) runs on `trace-mooncake-conversation`'s deployment
(eight H100s, a prefix cache of 512-token blocks: its reuse is found); one without (Azure's CSV) on
`trace-azure-code`'s (one H100, blocks of 16). The file is read and checked line by line before anything
runs (each error names its line and field), and the run is estimated against the app's own limits, those
of any scenario (docs/limits.md: 2,000,000 generated tokens, 3,000,000 events ...), not the whole-trace
replays' higher ones: a class's server runs it. Its prompts stay compact block ids, so their tokens are
held to the trace reader's limit (150,000,000) instead of a scenario's 2,000,000. A trace too big is
refused naming the limit; cut it with a scenario's `[workload.trace]` window on your own machine
(`python -m engine run`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .scenario import TRACE_DIR, load_scenario
from .scenario_types import Scenario
from .scenario_work import check_work
from .toml_reader import ScenarioError
from .trace_file import read_trace
from .trace_workload import TraceWorkload

TRACE_SUFFIXES = (".csv", ".xz", ".gz", ".jsonl")  # what the uploader offers for a trace (.jsonl: not an event log)


def uploaded_trace(data: bytes, filename: str) -> Scenario:
    """The scenario replaying an uploaded trace; ScenarioError naming the file, its line and field, or the limit."""
    try:
        table = read_trace(data, filename)
    except ValueError as exc:
        raise ScenarioError(f"{filename}: {exc}") from None
    hashed = len(table.hash_values) > 0
    base = load_scenario(TRACE_DIR / ("trace-mooncake-conversation.toml" if hashed else "trace-azure-code.toml"))
    scenario = dataclasses.replace(
        base,
        name=Path(filename).stem,
        source=filename,
        title=f"Your trace: {filename}",
        lesson=f"{len(table):,} requests from {filename}, replayed as {base.name} is.\n\nThe deployment"
        + base.lesson.split("The deployment", 1)[-1],
        trace=TraceWorkload(file=filename, data=data),
    )
    check_work(scenario)
    return scenario
