"""Read a request trace, a built-in one or a user's file, into a `TraceTable` (engine/lab/trace_table.py).

    read_builtin_trace("mooncake-conversation")            # 12,031 requests, with hash ids
    read_trace(uploaded_bytes, "mine.csv", first=500, rate=2.0)

A file is JSONL (Mooncake's fields) or CSV (Azure's columns), detected from its first non-blank line (a
JSON object, or a header naming TIMESTAMP) unless `format` says which; it may be xz- or gzip-compressed.
Hostile input is normal input: each limit of engine/lab/limits.py is checked before the work it guards
(the size before decompressing and splitting, the row count and line lengths before parsing, each value
as its row is read, the prompts' total before the table is made), and every refusal is a ValueError.
The shipped traces, their licences and the attribution CC-BY asks for are in engine/lab/traces/.
"""

from __future__ import annotations

import lzma
import zlib
from pathlib import Path

import numpy as np

from .limits import MAX_TRACE_BYTES, MAX_TRACE_LINE_BYTES, MAX_TRACE_PROMPT_TOKENS, MAX_TRACE_REQUESTS
from .trace_formats import Lines, parse_csv, parse_jsonl
from .trace_table import TraceTable, select, trace_table

TRACES = Path(__file__).parent / "traces"
BUILTIN_TRACES = {  # name -> shipped file (engine/lab/traces/README.md says what each is)
    "mooncake-conversation": "mooncake_conversation_trace.jsonl.xz",
    "mooncake-synthetic": "mooncake_synthetic_trace.jsonl.xz",
    "azure-code": "AzureLLMInferenceTrace_code.csv.xz",
    "azure-conversation": "AzureLLMInferenceTrace_conv.csv.xz",
}
FORMATS = {"jsonl": parse_jsonl, "csv": parse_csv}
XZ_MAGIC, GZIP_MAGIC = b"\xfd7zXZ\x00", b"\x1f\x8b"


def _too_big(size: str) -> ValueError:
    return ValueError(f"the trace is {size}, over the limit of {MAX_TRACE_BYTES / 2**20:g} MB")


def decompressed(data: bytes) -> bytes:
    """`data`, decompressed if it is xz or gzip, never past MAX_TRACE_BYTES (a small bomb stays small)."""
    if len(data) > MAX_TRACE_BYTES:
        raise _too_big(f"{len(data):,} bytes")
    if data.startswith(XZ_MAGIC):
        unpack = lzma.LZMADecompressor()
    elif data.startswith(GZIP_MAGIC):
        unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
    else:
        return data
    try:
        out = unpack.decompress(data, MAX_TRACE_BYTES + 1)
    except (lzma.LZMAError, zlib.error) as error:
        raise ValueError(f"the trace is not a valid compressed file ({error})") from None
    if len(out) > MAX_TRACE_BYTES:
        raise _too_big("larger decompressed")
    if not unpack.eof:
        raise ValueError("the compressed trace is cut short")
    return out


def numbered_lines(data: bytes) -> Lines:
    """The non-blank lines, numbered from 1, decoded as UTF-8 (a leading byte-order mark dropped). A file of
    more than MAX_TRACE_REQUESTS + 1 lines (blank ones too) is refused before it is split: 5 MB of short lines
    would otherwise be a million Python objects."""
    if data.count(b"\n", 0, len(data) - 1) >= MAX_TRACE_REQUESTS + 1:
        limit = MAX_TRACE_REQUESTS + 1
        raise ValueError(
            f"line {limit + 1}: the file has over {limit:,} lines ({MAX_TRACE_REQUESTS:,} requests and a header)"
        )
    raw = data.split(b"\n")
    longest = max(range(len(raw)), key=lambda i: len(raw[i]))
    if len(raw[longest]) > MAX_TRACE_LINE_BYTES:
        size = len(raw[longest])
        raise ValueError(
            f"line {longest + 1}: the line is {size:,} bytes long, over the limit of {MAX_TRACE_LINE_BYTES:,}"
        )
    kept = [(number, line) for number, line in enumerate(raw, 1) if line.strip()]
    lines = []
    for number, line in kept:
        try:
            lines.append((number, line.decode("utf-8").strip().removeprefix("\ufeff")))
        except UnicodeDecodeError:
            raise ValueError(f"line {number}: the line is not UTF-8 text") from None
    return lines


def detect_format(lines: Lines) -> str:
    number, text = lines[0]
    if text.startswith("{"):
        return "jsonl"
    if "TIMESTAMP" in (cell.strip() for cell in text.split(",")):
        return "csv"
    raise ValueError(
        f"line {number}: not a trace: expected a JSON object (Mooncake's JSONL) or a CSV header naming TIMESTAMP"
    )


def read_trace(data: bytes, name: str = "upload", format: str | None = None, **options) -> TraceTable:
    """A trace file's bytes as a table; `options` are `select`'s (start_ms, end_ms, first, rate)."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"format: must be one of {', '.join(FORMATS)}, got {format!r}")
    lines = numbered_lines(decompressed(data))
    if not lines:
        raise ValueError("line 1: the trace holds no requests")
    format = format or detect_format(lines)
    header = format == "csv"
    if len(lines) - header > MAX_TRACE_REQUESTS:
        raise ValueError(
            f"line {lines[MAX_TRACE_REQUESTS + header][0]}: the trace has over {MAX_TRACE_REQUESTS:,} requests"
        )
    arrival, inputs, outputs, offsets, ids = FORMATS[format](lines)
    if not arrival:
        raise ValueError(f"line {lines[0][0]}: the trace holds no requests")
    total = np.cumsum(inputs, dtype=np.int64)
    if total[-1] > MAX_TRACE_PROMPT_TOKENS:
        row = int(np.searchsorted(total, MAX_TRACE_PROMPT_TOKENS, side="right"))
        number = lines[row + header][0]
        raise ValueError(
            f"line {number}: input_length: the prompts so far pass the limit of {MAX_TRACE_PROMPT_TOKENS:,} tokens"
        )
    return select(trace_table(name, arrival, inputs, outputs, offsets, ids), **options)


def read_builtin_trace(name: str, **options) -> TraceTable:
    """One of BUILTIN_TRACES, whole or as `options` select."""
    if name not in BUILTIN_TRACES:
        raise ValueError(f"trace: must be one of {', '.join(BUILTIN_TRACES)}, got {name!r}")
    return read_trace((TRACES / BUILTIN_TRACES[name]).read_bytes(), name, **options)
