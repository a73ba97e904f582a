"""The two trace formats, read row by row into columns and written back: Mooncake's JSONL and Azure's CSV.

- Mooncake (kvcache-ai/Mooncake, FAST25-release/README.md): one JSON object a line, `timestamp` (ms),
  `input_length`, `output_length` and optional `hash_ids`, one id per 512-token prompt block. When given,
  a row's `hash_ids` must hold exactly ceil(input_length / 512) ids, as in every row of the published
  traces; a row without them records no reuse. Other keys are ignored.
- Azure (Azure/AzurePublicDataset, AzureLLMInferenceDataset2023.md): a header naming `TIMESTAMP`,
  `ContextTokens` and `GeneratedTokens` (in any order; other columns ignored), then comma-separated rows,
  unquoted; `TIMESTAMP` reads "2023-11-16 18:17:03.9799600" (up to 9 decimals), taken relative to the
  first row and floored to whole ms. The CSV has no hash ids.

Every value is checked as it is read (engine/lab/limits.py's MAX_TRACE_*), and each error is a ValueError
naming the line and the field: "line 17: output_length: must be an integer from 1 to 65536, got -3".
Timestamps must not go back: a trace is replayed in its order, and sorting it would reorder the turns of a
conversation, whose prefix reuse runs forwards.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import numpy as np

from ..core.validation import wrong_value
from .limits import (
    MAX_TRACE_HASH_ID,
    MAX_TRACE_HASH_IDS,
    MAX_TRACE_INPUT_LENGTH,
    MAX_TRACE_OUTPUT_LENGTH,
    MAX_TRACE_TIME_MS,
)
from .trace_table import BLOCK_TOKENS, TraceTable

Lines = list[tuple[int, str]]  # (line number from 1, text) of the non-blank lines
Columns = tuple[list[int], list[int], list[int], list[int], list[int]]  # arrival, input, output, CSR offsets, ids
CSV_FIELDS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
DIGITS = re.compile(r"[0-9]{1,12}")
TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?")
CSV_ORIGIN = datetime(2023, 11, 16)  # the wall-clock time `to_csv` writes for arrival 0 (any would do)


def _int(where: str, value: object, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise wrong_value(where, f"must be an integer from {low} to {high}", value)
    return value


def _check_row(number: int, ms: int, last_ms: int, input_length: object, output_length: object) -> None:
    if ms < last_ms:
        raise wrong_value(f"line {number}: timestamp", f"must not go back in time (the line before: {last_ms} ms)", ms)
    _int(f"line {number}: input_length", input_length, 1, MAX_TRACE_INPUT_LENGTH)
    _int(f"line {number}: output_length", output_length, 1, MAX_TRACE_OUTPUT_LENGTH)


def _hash_ids(number: int, ids: object, input_length: int) -> list[int]:
    where = f"line {number}: hash_ids"
    if not isinstance(ids, list) or len(ids) > MAX_TRACE_HASH_IDS:
        raise wrong_value(where, f"must be a list of at most {MAX_TRACE_HASH_IDS} ids", ids)
    blocks = -(-input_length // BLOCK_TOKENS)
    if len(ids) != blocks:
        rule = f"must hold ceil(input_length / {BLOCK_TOKENS}) = {blocks} ids, one per prompt block"
        raise wrong_value(where, rule + f"; it holds {len(ids)}", ids)
    if not all(type(i) is int and 0 <= i <= MAX_TRACE_HASH_ID for i in ids):
        bad = next(i for i in ids if type(i) is not int or not 0 <= i <= MAX_TRACE_HASH_ID)
        raise wrong_value(where, f"must hold integers from 0 to {MAX_TRACE_HASH_ID}", bad)
    return ids


def parse_jsonl(lines: Lines) -> Columns:
    arrival, inputs, outputs, offsets, ids = [], [], [], [0], []
    last = 0
    for number, text in lines:
        try:
            row = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise ValueError(f"line {number}: not a JSON object ({type(error).__name__})") from None
        if not isinstance(row, dict):
            raise wrong_value(
                f"line {number}", "must be a JSON object with timestamp, input_length, output_length", row
            )
        ms = _int(f"line {number}: timestamp", row.get("timestamp"), 0, MAX_TRACE_TIME_MS)
        _check_row(number, ms, last, row.get("input_length"), row.get("output_length"))
        if "hash_ids" in row:
            ids += _hash_ids(number, row["hash_ids"], row["input_length"])
        arrival.append(ms)
        inputs.append(row["input_length"])
        outputs.append(row["output_length"])
        offsets.append(len(ids))
        last = ms
    return arrival, inputs, outputs, offsets, ids


def timestamp_ns(number: int, text: str) -> int:
    """A CSV timestamp in ns since year 1 (naive: no time zone)."""
    match = TIMESTAMP.fullmatch(text.strip())
    try:
        moment = datetime(*map(int, match.groups()[:6])) if match else None
    except ValueError:
        moment = None
    if moment is None:
        raise wrong_value(f"line {number}: TIMESTAMP", 'must read like "2023-11-16 18:17:03.9799600"', text)
    seconds = moment.toordinal() * 86_400 + moment.hour * 3600 + moment.minute * 60 + moment.second
    return seconds * 10**9 + int((match.group(7) or "0").ljust(9, "0"))


def _csv_int(number: int, field: str, text: str, high: int) -> int:
    value = int(text) if DIGITS.fullmatch(text.strip()) else text
    return _int(f"line {number}: {field}", value, 1, high)


def parse_csv(lines: Lines) -> Columns:
    (header_number, header), rows = lines[0], lines[1:]
    names = [name.strip() for name in header.split(",")]
    missing = [field for field in CSV_FIELDS if field not in names]
    if missing:
        raise ValueError(
            f"line {header_number}: the CSV header must name {', '.join(CSV_FIELDS)}; it lacks {missing[0]}"
        )
    at = [names.index(field) for field in CSV_FIELDS]
    arrival, inputs, outputs = [], [], []
    first = last = None
    for number, text in rows:
        cells = text.split(",")
        if len(cells) != len(names):
            raise wrong_value(f"line {number}", f"must hold {len(names)} comma-separated fields, as the header", text)
        ns = timestamp_ns(number, cells[at[0]])
        first = ns if first is None else first
        if last is not None and ns < last:
            raise wrong_value(f"line {number}: TIMESTAMP", "must not go back in time (the line before is later)", text)
        ms = (ns - first) // 10**6
        if ms > MAX_TRACE_TIME_MS:
            raise wrong_value(
                f"line {number}: TIMESTAMP", f"must be at most {MAX_TRACE_TIME_MS} ms after the first row's", text
            )
        arrival.append(ms)
        inputs.append(_csv_int(number, "ContextTokens", cells[at[1]], MAX_TRACE_INPUT_LENGTH))
        outputs.append(_csv_int(number, "GeneratedTokens", cells[at[2]], MAX_TRACE_OUTPUT_LENGTH))
        last = ns
    return arrival, inputs, outputs, [0] * (len(arrival) + 1), []


def to_jsonl(table: TraceTable) -> str:
    """Mooncake's format, with `hash_ids` on the rows that have some."""
    rows = []
    for i, (ms, inputs, outputs) in enumerate(zip(table.arrival_ms, table.input_length, table.output_length)):
        row = {"timestamp": int(ms), "input_length": int(inputs), "output_length": int(outputs)}
        ids = table.hash_ids(i)
        if len(ids):
            row["hash_ids"] = ids.tolist()
        rows.append(json.dumps(row) + "\n")
    return "".join(rows)


def to_csv(table: TraceTable) -> str:
    """Azure's format (no hash ids), arrival 0 at CSV_ORIGIN, with Azure's 7 decimals."""
    origin = np.datetime64(CSV_ORIGIN, "ms")
    stamps = (origin + table.arrival_ms.astype("timedelta64[ms]")).astype(str)
    rows = [
        f"{stamp.replace('T', ' ')}0000,{inputs},{outputs}\n"
        for stamp, inputs, outputs in zip(stamps, table.input_length.tolist(), table.output_length.tolist())
    ]
    return ",".join(CSV_FIELDS) + "\n" + "".join(rows)
