"""A long run's overview (engine/analysis/overview.py): exact buckets of a hand-made run's step metrics (each
bucket's smallest and largest value, an idle stretch counting 0, the hit rate of its admissions), the window
it opens with, and a window's simulated seconds; on a real run, as many buckets as steps is the metrics."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd

from engine.analysis.metrics import step_metrics
from engine.analysis.overview import SERIES, default_window, overview, peak_rows, step_times
from engine.analysis.prefix_hits import prefix_lookups
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate

# Busy steps 0-2 and 5-8 (3 and 4 idle, one simulated second each, as every step here).
STEPS = pd.DataFrame(
    {
        "step": [0, 1, 2, 5, 6, 7, 8],
        "idle_before": [0, 0, 0, 2, 0, 0, 0],
        "running_rows": [2, 3, 1, 4, 4, 2, 0],
        "queue_depth": [5, 0, 7, 1, 1, 0, 0],
        "kv_blocks_held": [10, 12, 8, 20, 22, 15, 0],
        "duration_s": [1.0] * 7,
        "end_s": [1.0, 2.0, 3.0, 6.0, 7.0, 8.0, 9.0],
    }
)
LOOKUPS = pd.DataFrame({"step": [0, 2, 5, 8], "looked_up": [32, 16, 0, 48], "cached": [16, 16, 0, 0]})


def test_three_buckets_of_seven_steps_keep_each_one_s_smallest_and_largest_value():
    frame = overview(STEPS, LOOKUPS, buckets=3)  # 3 busy steps a bucket: rows 0-2, 3-5, 6
    assert frame.first_step.tolist() == [0, 5, 8] and frame.last_step.tolist() == [2, 7, 8]
    assert frame.start_s.tolist() == [0.0, 3.0, 8.0] and frame.end_s.tolist() == [3.0, 8.0, 9.0]
    assert frame.running_rows_min.tolist() == [1, 0, 0]  # the second holds the idle stretch 3-4: 0 runs then
    assert frame.running_rows_max.tolist() == [3, 4, 0]
    assert frame.queue_depth_min.tolist() == [0, 0, 0] and frame.queue_depth_max.tolist() == [7, 1, 0]
    assert frame.kv_blocks_held_min.tolist() == [8, 0, 0] and frame.kv_blocks_held_max.tolist() == [12, 22, 0]
    assert frame.looked_up.tolist() == [48, 0, 48] and frame.cached.tolist() == [32, 0, 0]
    rate = frame.hit_rate.tolist()
    assert rate[0] == 32 / 48 and math.isnan(rate[1]) and rate[2] == 0.0  # nothing looked up: no rate


def test_an_idle_stretch_longer_than_a_bucket_s_share_of_the_time_starts_a_bucket_that_says_how_long():
    frame = overview(STEPS, LOOKUPS, buckets=5)  # 2 rows a bucket (0-1, 2-5, 6-7, 8); 3-4 idle 2 s, over 9 s / 5
    assert frame.first_step.tolist() == [0, 2, 5, 6, 8] and frame.last_step.tolist() == [1, 2, 5, 7, 8]
    assert frame.idle_s.tolist() == [0.0, 0.0, 2.0, 0.0, 0.0] and frame.idle_steps.tolist() == [0, 0, 2, 0, 0]
    assert frame.start_s.tolist() == [0.0, 2.0, 3.0, 6.0, 8.0] and frame.end_s.tolist() == [2.0, 3.0, 6.0, 8.0, 9.0]
    assert frame.queue_depth_max.tolist() == [5, 7, 1, 1, 0] and frame.looked_up.tolist() == [32, 16, 0, 0, 48]
    assert overview(STEPS, None, buckets=3).idle_s.tolist() == [0.0, 0.0, 0.0]  # 2 s is under 9 s / 3: no bucket


def test_a_one_step_burst_stays_as_high_however_many_steps_share_its_bucket():
    steps = pd.DataFrame(
        {
            "step": np.arange(10_000),
            "idle_before": 0,
            **{name: 0 for name in SERIES},
            "duration_s": 0.01,
            "end_s": np.arange(1, 10_001) * 0.01,
        }
    )
    steps.loc[7_777, "queue_depth"] = 250
    frame = overview(steps, None, buckets=1_000)  # 10 steps a bucket
    assert len(frame) == 1_000 and frame.queue_depth_max.max() == 250
    burst = frame[frame.queue_depth_max == 250]
    assert (burst.first_step.tolist(), burst.last_step.tolist(), burst.queue_depth_min.tolist()) == (
        [7770],
        [7779],
        [0],
    )
    assert frame.hit_rate.isna().all()  # (no prefix cache: no rate)


def test_as_many_buckets_as_busy_steps_is_the_step_metrics_themselves():
    log = simulate(resolve_scenario("shared-system-prompt"))  # idle steps, a pool, prefix caching
    steps = step_metrics(log)
    frame = overview(steps, prefix_lookups(log), buckets=len(steps))
    assert frame.first_step.tolist() == steps.step.tolist() == frame.last_step.tolist()
    idle = steps.idle_before.to_numpy() > 0
    for name in SERIES:
        assert frame[f"{name}_max"].tolist() == steps[name].tolist()
        assert frame[f"{name}_min"].tolist() == np.where(idle, 0, steps[name]).tolist()
    assert int(frame.cached.sum()) == int(prefix_lookups(log).cached.sum())


def test_no_steps_is_no_bucket():
    assert len(overview(STEPS.iloc[:0], None, buckets=10)) == 0


def test_the_default_window_centres_the_deepest_queue_a_link_s_step_or_starts_the_run():
    assert default_window(STEPS, total=9, length=4) == (0, 3)  # the deepest queue, 7, at step 2
    assert default_window(STEPS, total=9, length=4, around=8) == (5, 8)  # held inside the run
    assert default_window(STEPS, total=9, length=4, around=6) == (4, 7)
    assert default_window(STEPS.assign(queue_depth=0), total=9, length=4) == (0, 3)  # no queue: the first steps
    assert default_window(STEPS, total=9, length=50) == (0, 8)


def test_a_window_s_simulated_seconds_run_from_its_first_step_s_start_to_its_last_step_s_end():
    assert step_times(STEPS, 5, 7) == (5.0, 8.0)
    assert step_times(STEPS, 3, 4) == (3.0, 5.0)  # the idle stretch: from step 2's end to step 5's start
    assert step_times(STEPS, 0, 8) == (0.0, 9.0)


def test_a_long_chart_keeps_each_bucket_s_first_row_and_where_each_line_is_lowest_and_highest():
    assert peak_rows(STEPS, ("queue_depth",), buckets=3).tolist() == [0, 1, 2, 3, 5, 6]  # 3 and 4 tie at 1: the first
    assert peak_rows(STEPS, ("queue_depth", "running_rows"), buckets=3).tolist() == [0, 1, 2, 3, 5, 6]
    assert peak_rows(STEPS, ("kv_blocks_held",), buckets=3).tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert peak_rows(STEPS, ("queue_depth",), buckets=7).tolist() == list(range(7))  # one row a bucket: all


def test_the_chart_drops_to_0_over_a_long_idle_stretch_rather_than_crossing_it():
    from cblab.ui.stage.overview_chart import overview_data  # (the app's side: the points the component draws)

    run = SimpleNamespace(log=SimpleNamespace(config=SimpleNamespace(batch_size=4, kv_blocks=40, prefix_caching=True)))
    data = overview_data(run, overview(STEPS, LOOKUPS, buckets=5), (3.0, 6.0), projector=False)
    assert data["x"] == [2.0, 3.0, 3.0, 5.0, 6.0, 8.0, 9.0]  # steps 3-4, idle from 3 s to 5 s: two points at 0
    assert data["first_step"] == [0, 2, 3, 3, 5, 6, 8] and data["last_step"] == [1, 2, 4, 4, 5, 7, 8]
    queue, kv, hits = (
        next(p for p in data["panels"] if p["name"] == n) for n in ("queue_depth", "kv_blocks_held", "hit_rate")
    )
    assert queue["high"] == [5, 7, 0, 0, 1, 1, 0] and queue["low"] == [0, 7, 0, 0, 0, 0, 0]
    assert kv["high"] == [30.0, 20.0, 0, 0, 50.0, 55.0, 0.0]  # % of the 40 blocks
    assert hits["low"] is None and hits["high"] == [50.0, 100.0, None, None, None, None, 0.0]
