"""Trace reading under generated input (hypothesis): any table written out in either format reads back as the
same arrays, and garbage lines among valid ones give a ValueError naming a line, never another exception."""

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lab.trace_file import read_trace
from engine.lab.trace_formats import to_csv, to_jsonl
from engine.lab.trace_table import BLOCK_TOKENS, trace_table

LINE_NUMBER = re.compile(r"^line \d+: ")


@st.composite
def tables(draw, with_hash_ids: bool = True):
    n = draw(st.integers(1, 12))
    gaps = draw(st.lists(st.integers(0, 10**6), min_size=n - 1, max_size=n - 1))
    inputs = draw(st.lists(st.integers(1, 3000), min_size=n, max_size=n))
    outputs = draw(st.lists(st.integers(1, 65_536), min_size=n, max_size=n))
    offsets, ids = [0], []
    for length in inputs:
        if with_hash_ids and draw(st.booleans()):
            count = -(-length // BLOCK_TOKENS)
            ids += draw(st.lists(st.integers(0, 2**31 - 1), min_size=count, max_size=count))
        offsets.append(len(ids))
    return trace_table("generated", np.cumsum([0, *gaps]), inputs, outputs, offsets, ids)


def columns(table) -> list[list[int]]:
    names = ("arrival_ms", "input_length", "output_length", "hash_offsets", "hash_values")
    return [getattr(table, name).tolist() for name in names]


@settings(max_examples=80, deadline=None)
@given(tables())
def test_a_table_written_as_jsonl_reads_back_the_same(table):
    assert columns(read_trace(to_jsonl(table).encode())) == columns(table)


@settings(max_examples=80, deadline=None)
@given(tables(with_hash_ids=False))
def test_a_table_written_as_csv_reads_back_the_same(table):
    assert columns(read_trace(to_csv(table).encode(), format="csv")) == columns(table)


garbage = st.one_of(
    st.text(max_size=80),
    st.binary(max_size=80),
    st.builds(
        lambda key, value: f'{{"{key}": {value}, "input_length": 3, "output_length": 2}}',
        st.sampled_from(["timestamp", "hash_ids", "input_length"]),
        st.sampled_from(["-1", "1e400", "NaN", "null", "[1]", '"7"', "true", "1" * 5000, "[" * 2000]),
    ),
    st.builds(lambda a, b, c: f"{a},{b},{c}", st.text(max_size=30), st.text(max_size=10), st.text(max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(st.booleans(), st.lists(garbage, min_size=1, max_size=4), st.data())
def test_garbage_lines_give_a_value_error_naming_a_line(as_csv, lines, data):
    table = data.draw(tables(with_hash_ids=not as_csv))
    good = (to_csv(table) if as_csv else to_jsonl(table)).encode().split(b"\n")
    for line in lines:  # binary garbage goes after the first line: a file starting as xz or gzip is read as one
        first = 1 if as_csv or isinstance(line, bytes) else 0
        good.insert(data.draw(st.integers(first, len(good))), line if isinstance(line, bytes) else line.encode())
    try:
        read_trace(b"\n".join(good))
    except ValueError as error:
        assert LINE_NUMBER.match(str(error)), str(error)
