"""Durations are written one way across the app (engine/analysis/wording.py): 3 significant figures in
the largest unit that keeps the figure at least 1 below a minute, then minutes and seconds, then hours and
minutes; Metrics, Compare, the charts and the per-request table all use it."""

import math

import pandas as pd
import pytest

from cblab.ui.charts.compare_view import _figure
from cblab.ui.charts.time_charts import request_table
from cblab.ui.runs.runs import Overrides, load
from engine.analysis.metrics import format_seconds
from engine.analysis.wording import duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5e-7, "500 ns"),
        (8.5e-4, "850 µs"),
        (0.00099996, "1.00 ms"),  # rounds up into the next unit
        (0.0077, "7.70 ms"),  # trailing zeros kept: 3 figures
        (0.0531, "53.1 ms"),
        (0.1159, "116 ms"),
        (0.99996, "1.00 s"),
        (2.5078, "2.51 s"),
        (59.94, "59.9 s"),
        (59.96, "1 min 0 s"),
        (109.08, "1 min 49 s"),  # 8.4's end-to-end p50 had read "109.080 s"
        (3599.6, "1 h 0 min"),
        (7500, "2 h 5 min"),
        (0, "0 s"),
        (-0.0531, "−53.1 ms"),
        (math.inf, "∞"),
        (None, "–"),
        (math.nan, "–"),
    ],
)
def test_a_duration_is_written_in_three_figures_or_minutes(seconds, text):
    assert duration(seconds) == text


def test_the_cli_s_name_for_it_is_the_same_helper():
    assert format_seconds is duration


def test_compare_writes_its_seconds_as_durations_and_its_other_figures_its_own_way():
    assert _figure(109.08, "e2e_p50_s") == "1 min 49 s"
    assert _figure(0.0531, "ttft_p50_s") == "53.1 ms"
    assert _figure(float("nan"), "tpot_p50_s") == "–"
    assert _figure(0.5, "slot_utilization") == "50%"


def test_the_request_table_writes_seconds_as_durations_and_steps_as_whole_numbers():
    rows = request_table(load("cancellation", None, Overrides()).requests).to_string(delimiter="|").splitlines()
    assert rows[0].split("|")[-4:] == ["queue_wait_s", "ttft_s", "tpot_s", "e2e_s"]
    # B is cancelled while it waits: no admission, no token; C runs to its max_tokens
    assert rows[4] == "B|0|–|–|1|1|0|cancelled|–|–|–|1|–|–|–|7.30 ms"
    assert rows[3] == "C|0|0|0|3|1|4|max_tokens|0|1|1.00|4|0 s|7.30 ms|7.22 ms|28.9 ms"


def test_a_request_table_too_big_to_style_stays_numbers():
    requests = load("anyscale-cap1536", None, Overrides()).requests  # 1,000 requests of 16 columns: styled
    assert not isinstance(request_table(requests), type(requests))
    bigger = pd.concat([requests] * 2)
    assert request_table(bigger) is bigger
