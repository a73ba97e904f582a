"""Splitwise's figures from the engine (engine/lab/splitwise.py, `python -m engine splitwise`), on the first
requests of each Azure trace: the lengths are the trace's, static batching makes first tokens wait longer
than continuous batching, and prefill's share of the busy time is a share."""

import pytest

from engine.lab.splitwise import splitwise_table
from engine.lab.trace_file import read_builtin_trace
from engine.lab.trace_stats import length_statistics


@pytest.fixture(scope="module")
def rows():
    return splitwise_table(first=200)


def test_one_row_per_trace_and_batching_with_the_traces_lengths(rows):
    assert [(row["trace"], row["batching"]) for row in rows] == [
        ("azure-code", "continuous"),
        ("azure-code", "static"),
        ("azure-conversation", "continuous"),
        ("azure-conversation", "static"),
    ]
    code = length_statistics(read_builtin_trace("azure-code", first=200))
    assert rows[0]["prompt"] == code["prompt"] and rows[0]["output"] == code["output"]
    assert (rows[0]["paper_median_prompt"], rows[2]["paper_median_output"]) == (1500, 129)


def test_static_batching_keeps_first_tokens_waiting_longer(rows):
    for continuous, static in (rows[0:2], rows[2:4]):
        assert static["ttft_p50_s"] > continuous["ttft_p50_s"]
        assert static["ttft_p99_s"] > continuous["ttft_p99_s"]


def test_figures_are_shares_and_orders(rows):
    for row in rows:
        assert 0 < row["prefill_share"] < 1
        assert row["ttft_p50_s"] <= row["ttft_p99_s"] and row["tbt_p50_s"] <= row["tbt_p99_s"]
    assert rows[0]["prefill_share"] > rows[2]["prefill_share"]  # long prompts, short answers: coding is prefill
