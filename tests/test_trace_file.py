"""Reading traces (engine/lab/trace_file.py): the four built-ins' exact sizes and first rows, the publishers'
own sample rows as arrays, the selection options, and hostile files refused with the line and the field."""

import gzip
import lzma

import numpy as np
import pytest

import engine.lab.trace_file as trace_file
from engine.lab.trace_file import BUILTIN_TRACES, read_builtin_trace, read_trace
from engine.lab.trace_table import select

# the two sample rows of Mooncake's README (FAST25-release/README.md), one line each
MOONCAKE_SAMPLE = (
    '{"timestamp": 27482, "input_length": 6955, "output_length": 52, '
    '"hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354]}\n'
    '{"timestamp": 30535, "input_length": 6472, "output_length": 26, '
    '"hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2366]}\n'
)
AZURE_SAMPLE = (  # the first three rows of Azure's code trace
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:17:03.9799600,4808,10\n"
    "2023-11-16 18:17:04.0319600,3180,8\n"
    "2023-11-16 18:17:04.0779960,110,27\n"
)
ROW = '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}\n'
HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens\n"


def arrays(table) -> dict:
    names = ("arrival_ms", "input_length", "output_length", "hash_offsets", "hash_values")
    return {name: getattr(table, name).tolist() for name in names}


@pytest.mark.parametrize(
    "name, requests, prompt_tokens, generated, last_ms, hash_ids",
    [
        ("mooncake-conversation", 12_031, 144_793_823, 4_122_048, 3_536_999, 288_500),
        ("mooncake-synthetic", 3_993, 61_194_628, 595_432, 1_022_025, 121_877),
        ("azure-code", 8_819, 18_059_974, 245_896, 3_435_948, 0),
        ("azure-conversation", 19_366, 22_361_870, 4_088_665, 3_501_721, 0),
    ],
)
def test_each_built_in_trace_reads_whole(name, requests, prompt_tokens, generated, last_ms, hash_ids):
    """Mooncake's README: 12,031 and 3,993 requests averaging 12,035 and 15,325 prompt tokens (144,793,823 /
    12,031 = 12,035.2; 61,194,628 / 3,993 = 15,325.5); the Azure hour: 57 and 58 minutes of arrivals."""
    table = read_builtin_trace(name)
    assert (len(table), table.prompt_tokens, int(table.output_length.sum())) == (requests, prompt_tokens, generated)
    assert (int(table.arrival_ms[0]), int(table.arrival_ms[-1]), len(table.hash_values)) == (0, last_ms, hash_ids)
    columns = (table.arrival_ms, table.input_length, table.output_length, table.hash_offsets, table.hash_values)
    assert {column.dtype for column in columns} == {np.dtype(np.int64)}


def test_the_first_rows_of_the_built_ins_are_the_files_first_rows():
    conversation = read_builtin_trace("mooncake-conversation", first=2)
    assert arrays(conversation) == {
        "arrival_ms": [0, 0],
        "input_length": [6758, 7322],
        "output_length": [500, 490],
        "hash_offsets": [0, 14, 29],
        "hash_values": [*range(14), 0, *range(14, 28)],
    }
    code = read_builtin_trace("azure-code", first=3)
    assert arrays(code) == arrays(read_trace(AZURE_SAMPLE.encode()))


def test_mooncakes_sample_rows_read_as_arrays_relative_to_the_first():
    table = read_trace(MOONCAKE_SAMPLE.encode(), "sample.jsonl")
    assert arrays(table) == {
        "arrival_ms": [0, 30535 - 27482],
        "input_length": [6955, 6472],
        "output_length": [52, 26],
        "hash_offsets": [0, 14, 27],
        "hash_values": [*range(46, 58), 2353, 2354, *range(46, 58), 2366],
    }
    assert table.hash_ids(1).tolist() == [*range(46, 58), 2366]


def test_azure_timestamps_become_whole_ms_after_the_first_row():
    """04.0319600 - 03.9799600 = 52.0 ms; 04.0779960 - 03.9799600 = 98.036 ms, floored to 98."""
    table = read_trace(AZURE_SAMPLE.encode(), "code.csv")
    assert arrays(table) == {
        "arrival_ms": [0, 52, 98],
        "input_length": [4808, 3180, 110],
        "output_length": [10, 8, 27],
        "hash_offsets": [0, 0, 0, 0],
        "hash_values": [],
    }


def test_compressed_uploads_read_like_plain_ones():
    plain = arrays(read_trace(MOONCAKE_SAMPLE.encode()))
    assert arrays(read_trace(lzma.compress(MOONCAKE_SAMPLE.encode()))) == plain
    assert arrays(read_trace(gzip.compress(MOONCAKE_SAMPLE.encode()))) == plain


def test_a_window_the_first_n_and_a_rate_factor_select_and_scale():
    """Arrivals 0, 52, 98 ms: [50, 100) keeps the last two, made relative (0, 46); a rate of 2 halves the gaps
    (floored: 98 / 2 = 49, 52 / 2 = 26); first=2 keeps the first two."""
    table = read_trace(AZURE_SAMPLE.encode())
    assert select(table, start_ms=50, end_ms=100).arrival_ms.tolist() == [0, 46]
    assert select(table, rate=2.0).arrival_ms.tolist() == [0, 26, 49]
    assert select(table, rate=0.5).arrival_ms.tolist() == [0, 104, 196]
    assert select(table, first=2).input_length.tolist() == [4808, 3180]
    assert select(table, start_ms=50, first=1).input_length.tolist() == [3180]
    window = select(read_trace(MOONCAKE_SAMPLE.encode()), start_ms=1)
    assert (window.hash_offsets.tolist(), window.hash_values.tolist()) == ([0, 13], [*range(46, 58), 2366])


@pytest.mark.parametrize(
    "options, message",
    [
        ({"start_ms": -1}, "start_ms: must be an integer of milliseconds from 0 to 604800000, got -1"),
        ({"start_ms": 10, "end_ms": 10}, "end_ms: must be after start_ms (10), got 10"),
        ({"first": 0}, "first: must be a positive integer (a number of requests), got 0"),
        ({"rate": 0}, "rate: must be a number from 0.01 to 100.0, got 0"),
        ({"rate": float("nan")}, "rate: must be a number from 0.01 to 100.0, got nan"),
        ({"start_ms": 99}, "upload: no request arrives at or after 99 ms"),
        ({"start_ms": 53, "end_ms": 98}, "upload: no request arrives in the window [53, 98) ms"),
    ],
)
def test_selection_options_out_of_range_are_refused(options, message):
    with pytest.raises(ValueError) as error:
        read_trace(AZURE_SAMPLE.encode(), **options)
    assert str(error.value) == message


NEXT = '{"timestamp": 10, "input_length": 6, "output_length": 3}\n'
HOSTILE = [
    (
        ROW + '{"timestamp": 10, "input_length": 6, "output_length": -3}\n',
        "line 2: output_length: must be an integer from 1 to 65536, got -3",
    ),
    (
        ROW + '{"timestamp": 10, "output_length": 3}\n',
        "line 2: input_length: must be an integer from 1 to 262144, got None",
    ),
    (
        ROW + '{"timestamp": 10, "input_length": true, "output_length": 3}\n',
        "line 2: input_length: must be an integer from 1 to 262144, got True",
    ),
    (
        ROW + '{"timestamp": 10.5, "input_length": 2, "output_length": 3}\n',
        "line 2: timestamp: must be an integer from 0 to 604800000, got 10.5",
    ),
    (
        ROW + '{"timestamp": 10, "input_length": 1025, "output_length": 3, "hash_ids": [1, 2]}\n',
        "line 2: hash_ids: must hold ceil(input_length / 512) = 3 ids, one per prompt block; it holds 2, got [1, 2]",
    ),
    (
        ROW + '{"timestamp": 10, "input_length": 1025, "output_length": 3, "hash_ids": [1, -2, 5]}\n',
        "line 2: hash_ids: must hold integers from 0 to 2147483647, got -2",
    ),
    (
        ROW + NEXT + '\n{"timestamp": 9, "input_length": 6, "output_length": 3}\n',
        "line 4: timestamp: must not go back in time (the line before: 10 ms), got 9",
    ),
    (ROW + '{"timestamp": 10,\n', "line 2: not a JSON object (JSONDecodeError)"),
    (ROW + '{"a": ' + "[" * 3000 + "\n", "line 2: not a JSON object (RecursionError)"),
    (ROW + "[1, 2]\n", "line 2: must be a JSON object with timestamp, input_length, output_length, got [1, 2]"),
    (
        HEADER + "2023-11-16 18:17:03.97,4808,10\n2023-02-30 18:17:03.97,4808,10\n",
        "line 3: TIMESTAMP: must read like \"2023-11-16 18:17:03.9799600\", got '2023-02-30 18:17:03.97'",
    ),
    (
        HEADER + "2023-11-16 18:17:03.97,4808,10\n2023-11-16 18:17:04.0,+48,10\n",
        "line 3: ContextTokens: must be an integer from 1 to 262144, got '+48'",
    ),
    (HEADER + "2023-11-16 18:17:03.97,4808,0\n", "line 2: GeneratedTokens: must be an integer from 1 to 65536, got 0"),
    (
        HEADER + "2023-11-16 18:17:03.97,4808\n",
        "line 2: must hold 3 comma-separated fields, as the header, got '2023-11-16 18:17:03.97,4808'",
    ),
    (
        HEADER + "2023-11-16 18:17:03.98,1,1\n2023-11-16 18:17:03.97,1,1\n",
        "line 3: TIMESTAMP: must not go back in time (the line before is later), got '2023-11-16 18:17:03.97,1,1'",
    ),
    (
        HEADER + "2023-11-16 18:17:03.98,1,1\n2023-11-24 18:17:03.98,1,1\n",
        "line 3: TIMESTAMP: must be at most 604800000 ms after the first row's, got '2023-11-24 18:17:03.98,1,1'",
    ),
    (
        "TIMESTAMP,Context,GeneratedTokens\n",
        "line 1: the CSV header must name TIMESTAMP, ContextTokens, GeneratedTokens; it lacks ContextTokens",
    ),
    ("hello\n", "line 1: not a trace: expected a JSON object (Mooncake's JSONL) or a CSV header naming TIMESTAMP"),
    ("\n\n", "line 1: the trace holds no requests"),
    ("\n" + HEADER, "line 2: the trace holds no requests"),
    (ROW + '{"timestamp": 1' + " " * 20_000 + "}\n", "line 2: the line is 20,016 bytes long, over the limit of 16,384"),
    (ROW.encode() + b"\xff\xfe\n", "line 2: the line is not UTF-8 text"),
    (lzma.compress(b" " * (6 * 2**20)), "the trace is larger decompressed, over the limit of 5 MB"),
    (gzip.compress(b" " * (6 * 2**20)), "the trace is larger decompressed, over the limit of 5 MB"),
    (lzma.compress(ROW.encode())[:-10], "the compressed trace is cut short"),
    (b" " * (5 * 2**20 + 1), "the trace is 5,242,881 bytes, over the limit of 5 MB"),
]


@pytest.mark.parametrize("data, message", HOSTILE)
def test_a_hostile_file_is_refused_naming_the_line_and_the_field(data, message):
    with pytest.raises(ValueError) as error:
        read_trace(data.encode() if isinstance(data, str) else data)
    assert str(error.value) == message


def test_the_line_row_and_prompt_token_limits_are_checked_before_the_rows_are_made(monkeypatch):
    """With room for 2 requests: 4 lines are refused before the file is split (blank lines count), 3 JSONL
    rows once the format is known (no header), while a header and 2 CSV rows read."""
    monkeypatch.setattr(trace_file, "MAX_TRACE_REQUESTS", 2)
    with pytest.raises(ValueError, match=r"^line 4: the file has over 3 lines \(2 requests and a header\)$"):
        read_trace((ROW + NEXT + "\n" + NEXT).encode())
    with pytest.raises(ValueError, match=r"^line 3: the trace has over 2 requests$"):
        read_trace((ROW + NEXT + NEXT).encode())
    assert len(read_trace((HEADER + "2023-11-16 18:17:03.98,1,1\n" * 2).encode())) == 2
    monkeypatch.setattr(trace_file, "MAX_TRACE_REQUESTS", 3)
    monkeypatch.setattr(trace_file, "MAX_TRACE_PROMPT_TOKENS", 1000)
    with pytest.raises(ValueError, match=r"^line 4: input_length: the prompts so far pass the limit of 1,000 tokens$"):
        read_trace(
            (HEADER + "2023-11-16 18:17:03.98,600,1\n2023-11-16 18:17:03.98,400,1\n2023-11-16 18:17:04,1,1").encode()
        )


def test_a_stated_format_is_used_and_an_unknown_one_refused():
    with pytest.raises(ValueError, match=r"^line 1: the CSV header must name"):
        read_trace(ROW.encode(), format="csv")
    with pytest.raises(ValueError, match=r"^format: must be one of jsonl, csv, got 'tsv'$"):
        read_trace(ROW.encode(), format="tsv")
    with pytest.raises(ValueError, match=r"^trace: must be one of mooncake-conversation, "):
        read_builtin_trace("kimi")
    assert sorted(BUILTIN_TRACES) == ["azure-code", "azure-conversation", "mooncake-conversation", "mooncake-synthetic"]
