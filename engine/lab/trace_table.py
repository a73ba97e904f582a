"""A request trace as one compact table of numpy arrays, and the part of it a replay asks for.

Mooncake's JSONL and Azure's CSV (engine/lab/trace_formats.py) both read into a `TraceTable`: one
row per request, in arrival order, and no Python object per request. Hash ids, Mooncake's one id
per 512-token prompt block (equal ids = an equal prompt block), are stored as CSR: request i's ids
are `hash_values[hash_offsets[i]:hash_offsets[i + 1]]`, none for Azure's rows.

Times are in milliseconds after the table's first request, which arrives at 0: a replay starts
with its first request, whatever the file's origin (Mooncake's traces start at 0, Azure's at a
wall-clock time). `select` keeps a time window or the first N requests and applies a rate factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.block_prompt import SPAN
from ..core.validation import wrong_value
from .limits import MAX_TRACE_RATE, MAX_TRACE_TIME_MS, MIN_TRACE_RATE

BLOCK_TOKENS = SPAN  # prompt tokens per hash id (Mooncake's block size: 512, the engine's longest named block)


@dataclass(frozen=True, eq=False)
class TraceTable:
    """Requests in arrival order; every array int64."""

    name: str  # a built-in trace's name, or the user's file name
    arrival_ms: np.ndarray  # (n,) non-decreasing, arrival_ms[0] == 0
    input_length: np.ndarray  # (n,) prompt tokens, >= 1
    output_length: np.ndarray  # (n,) tokens to generate, >= 1
    hash_offsets: np.ndarray  # (n + 1,) from 0 to len(hash_values)
    hash_values: np.ndarray  # (ids,) each request's ceil(input_length / 512) ids, or none

    def __len__(self) -> int:
        return len(self.arrival_ms)

    def hash_ids(self, i: int) -> np.ndarray:
        """Request i's hash ids (a view; empty if the trace records none for it)."""
        return self.hash_values[self.hash_offsets[i] : self.hash_offsets[i + 1]]

    @property
    def prompt_tokens(self) -> int:
        return int(self.input_length.sum())


def trace_table(name: str, arrival_ms, input_length, output_length, hash_offsets=None, hash_values=None) -> TraceTable:
    """A table from columns already checked, its times made relative to its first request."""
    arrival = np.asarray(arrival_ms, dtype=np.int64)
    n = len(arrival)
    offsets = np.zeros(n + 1, np.int64) if hash_offsets is None else np.asarray(hash_offsets, dtype=np.int64)
    values = np.zeros(0, np.int64) if hash_values is None else np.asarray(hash_values, dtype=np.int64)
    return TraceTable(
        name,
        arrival - arrival[0] if n else arrival,
        np.asarray(input_length, dtype=np.int64),
        np.asarray(output_length, dtype=np.int64),
        offsets,
        values,
    )


def _rows(table: TraceTable, start: int, stop: int) -> TraceTable:
    """Rows start..stop-1 (a contiguous range: the CSR slices without copying ids one by one)."""
    offsets = table.hash_offsets[start : stop + 1]
    return trace_table(
        table.name,
        table.arrival_ms[start:stop],
        table.input_length[start:stop],
        table.output_length[start:stop],
        offsets - offsets[0],
        table.hash_values[offsets[0] : offsets[-1]],
    )


def _time(option: str, value: object) -> int:
    if type(value) is not int or not 0 <= value <= MAX_TRACE_TIME_MS:
        raise wrong_value(option, f"must be an integer of milliseconds from 0 to {MAX_TRACE_TIME_MS}", value)
    return value


def select(
    table: TraceTable,
    *,
    start_ms: int | None = None,
    end_ms: int | None = None,
    first: int | None = None,
    rate: float = 1.0,
) -> TraceTable:
    """The requests arriving in [start_ms, end_ms) of the table's time, then the first `first` of them, with
    arrival times divided by `rate` (2 replays the trace twice as fast; floored to whole ms) and made relative
    to the first request kept. Raises ValueError naming the option."""
    start = 0 if start_ms is None else _time("start_ms", start_ms)
    end = MAX_TRACE_TIME_MS + 1 if end_ms is None else _time("end_ms", end_ms)
    if end <= start:
        raise wrong_value("end_ms", f"must be after start_ms ({start})", end)
    if first is not None and (type(first) is not int or first < 1):
        raise wrong_value("first", "must be a positive integer (a number of requests)", first)
    if type(rate) not in (int, float) or not MIN_TRACE_RATE <= rate <= MAX_TRACE_RATE:
        raise wrong_value("rate", f"must be a number from {MIN_TRACE_RATE} to {MAX_TRACE_RATE}", rate)
    low, high = np.searchsorted(table.arrival_ms, [start, end], side="left")
    if first is not None:
        high = min(high, low + first)
    if high <= low:
        window = f"at or after {start} ms" if end_ms is None else f"in the window [{start}, {end}) ms"
        raise ValueError(f"{table.name}: no request arrives {window}")
    chosen = _rows(table, int(low), int(high))
    if rate != 1:
        scaled = np.floor(chosen.arrival_ms / rate).astype(np.int64)
        chosen = trace_table(
            chosen.name, scaled, chosen.input_length, chosen.output_length, chosen.hash_offsets, chosen.hash_values
        )
    return chosen
