"""Prompt and output length statistics (engine/lab/trace_stats.py): nearest-rank percentiles, exact on a
hand-made trace, and the Azure traces against Splitwise's medians."""

import pytest

from engine.lab.trace_file import read_builtin_trace
from engine.lab.trace_stats import length_statistics
from engine.lab.trace_table import trace_table


def test_nearest_rank_percentiles_of_a_hand_made_trace():
    """Prompts 1..100: the median is 50 (50 of 100 at most 50), p90 90, p99 99; outputs 7, 7, 7, 1000 in
    cycles: 75 of 100 are 7, so the median is 7 and p90 1000."""
    table = trace_table("hand", [0] * 100, range(1, 101), [7, 7, 7, 1000] * 25)
    assert length_statistics(table) == {
        "prompt": {"median": 50, "p90": 90, "p99": 99},
        "output": {"median": 7, "p90": 1000, "p99": 1000},
    }


@pytest.mark.parametrize(
    "name, prompt, output",
    [
        ("azure-code", (1469, 5194, 7436), (13, 55, 252)),  # Splitwise: about 1,500 and 13 at the median
        ("azure-conversation", (1020, 2735, 4142), (129, 424, 601)),  # Splitwise: about 1,020 and 129
        ("mooncake-conversation", (6909, 27367, 85401), (350, 597, 1120)),
        ("mooncake-synthetic", (11587, 38615, 66458), (69, 389, 769)),
    ],
)
def test_the_built_in_traces_lengths(name, prompt, output):
    statistics = length_statistics(read_builtin_trace(name))
    assert tuple(statistics["prompt"].values()) == prompt
    assert tuple(statistics["output"].values()) == output
