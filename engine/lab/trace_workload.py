"""A scenario's `[workload.trace]` table: a published request trace, or a user's file, as the scenario's requests.

    [workload.trace]
    name = "mooncake-conversation"   # a built-in trace (engine/lab/traces/README.md), or
    # file = "my_trace.jsonl"        # Mooncake's JSONL or Azure's CSV, a path beside the scenario's file
    start_s = 600                    # optional: a time window of the trace, in seconds [start_s, end_s)
    end_s = 1200
    first = 500                      # optional: the first N requests (of the window)
    rate = 2.0                       # optional: arrival times divided by it (2: the trace twice as fast)

Each trace row becomes one request: its prompt a `BlockPrompt` of the row's hash-id blocks
(engine/lab/trace_tokens.py: equal hash ids, equal tokens, so the prefix cache finds the reuse the trace
records), its `max_tokens` the row's output length, and its arrival time in milliseconds; the model never
emits the stop token (`trace_model`), so every answer is exactly as long as the trace says, as the Azure
publishers forced theirs to be. When a request joins the engine is worked out from those times while the
run goes (engine/lab/trace_replay.py).

A `file` is read only for a scenario loaded from disk (`folder`): a scenario pasted or uploaded into the
app names no server path; the app takes the trace file itself as an upload.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.models import SimulatedLLM
from .limits import MAX_TRACE_RATE, MAX_TRACE_REQUESTS, MAX_TRACE_TIME_MS, MIN_TRACE_RATE
from .request_spec import RequestSpec
from .shared_cache import shared_cache
from .toml_reader import Table
from .trace_file import BUILTIN_TRACES, read_builtin_trace, read_trace
from .trace_table import TraceTable
from .trace_tokens import trace_prompts


@dataclass(frozen=True)
class TraceWorkload:
    """Which trace, and which part of it (trace_table.select's options)."""

    name: str | None = None  # a built-in trace
    file: str | None = None  # a user's trace file (an absolute path, resolved beside its scenario; an upload's name)
    start_ms: int | None = None
    end_ms: int | None = None
    first: int | None = None
    rate: float = 1.0
    data: bytes | None = field(default=None, repr=False)  # an uploaded trace's bytes (then `file` is only its name)

    @property
    def label(self) -> str:
        return self.name or Path(self.file).name

    @property
    def builtin(self) -> bool:
        return self.name is not None

    @property
    def uploaded(self) -> bool:
        """Uploaded into the app: it runs within the app's limits, not a trace replay's (docs/limits.md)."""
        return self.data is not None


def parse_trace(t: Table, folder: Path | None) -> TraceWorkload:
    """`[workload.trace]`, each field checked; the trace itself is read here too, so a bad file is refused with
    the scenario (its line and field named)."""
    name = t.str("name", None, choices=tuple(BUILTIN_TRACES))
    file = t.str("file", None)
    if (name is None) == (file is None):
        raise t.fail("name", "give either name (a built-in trace) or file (a trace file), not both or neither")
    if file is not None:
        if folder is None:
            raise t.fail("file", "names a file on the server, which only a scenario on disk may do; upload the trace")
        file = str((folder / file).resolve())
    start = t.number("start_s", None, minimum=0.0, maximum=MAX_TRACE_TIME_MS / 1000)
    end = t.number("end_s", None, minimum=0.0, maximum=MAX_TRACE_TIME_MS / 1000)
    config = TraceWorkload(
        name,
        file,
        None if start is None else int(start * 1000),
        None if end is None else int(end * 1000),
        t.int("first", None, minimum=1, maximum=MAX_TRACE_REQUESTS),
        t.number("rate", 1.0, minimum=MIN_TRACE_RATE, maximum=MAX_TRACE_RATE),
    )
    t.check_no_unknown_keys()
    try:
        trace_of(config)
    except ValueError as exc:
        raise t.fail(config.label, str(exc)) from None
    return config


def trace_of(config: TraceWorkload) -> TraceTable:
    """The part of the trace the workload names (a built-in one is read once per process)."""
    options = {"start_ms": config.start_ms, "end_ms": config.end_ms, "first": config.first, "rate": config.rate}
    if config.builtin:
        return _builtin(config.name, config.start_ms, config.end_ms, config.first, config.rate)
    if config.uploaded:
        return read_trace(config.data, Path(config.file).name, **options)
    try:
        data = Path(config.file).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the file ({exc.strerror or exc})") from None
    return read_trace(data, Path(config.file).name, **options)


@shared_cache(maxsize=16)
def _builtin(name: str, start_ms: int | None, end_ms: int | None, first: int | None, rate: float) -> TraceTable:
    return read_builtin_trace(name, start_ms=start_ms, end_ms=end_ms, first=first, rate=rate)


def trace_requests(config: TraceWorkload, vocab_size: int) -> list[RequestSpec]:
    """One request a trace row, in arrival order: `r<row>` (the row's index in the part replayed)."""
    table = trace_of(config)
    prompts = trace_prompts(table, vocab_size)
    return [
        RequestSpec(f"r{i}", prompt, max_tokens, arrival_ms=arrival)
        for i, (prompt, max_tokens, arrival) in enumerate(
            zip(prompts, table.output_length.tolist(), table.arrival_ms.tolist())
        )
    ]


def trace_model(seed: int, vocab_size: int, eos_token: int) -> SimulatedLLM:
    """The model of a trace replay: never the stop token, so each answer is its request's max_tokens long."""
    return SimulatedLLM(seed, vocab_size, eos_token, stop_chance=0.0)
