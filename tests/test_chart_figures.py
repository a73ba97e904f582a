"""The Metrics and Timeline charts as plotly figures: the cursor's "step N" label clear of the legend,
whole-number ticks on every count axis, and time-between-tokens histograms that show a distribution
on the thrash lesson's (7.4) and the biggest Anyscale lesson's (8.4) real runs."""

import numpy as np
import pytest

from cblab.ui.charts.chart_parts import count_axis, log_bins
from cblab.ui.charts.kv_charts import kv_usage_figure, preemptions_figure, token_gap_figure
from cblab.ui.charts.prefix_charts import cached_tokens_figure, hit_rate_figure
from cblab.ui.charts.time_charts import over_time_figure, timeline_figure
from cblab.ui.runs.runs import Overrides, load
from engine.analysis.prefix_hits import hit_rate_over_time


def cursor_figures(run, step):
    yield over_time_figure(run, step)
    yield timeline_figure(run, step)
    if run.log.config.kv_blocks is not None:
        yield kv_usage_figure(run, step)
        yield preemptions_figure(run, step)
    if run.log.config.prefix_caching:
        yield hit_rate_figure(run, hit_rate_over_time(run.log), step)


@pytest.mark.parametrize("name", ["part2-slot-refill", "preemption", "shared-system-prompt"])
def test_the_cursor_label_sits_inside_the_plot_below_the_legend(name):
    run = load(name, None, Overrides())
    for figure in cursor_figures(run, 1):
        (label,) = [a for a in figure.layout.annotations if a.text == "step 1"]
        legend = figure.layout.legend
        assert (label.yref, label.y, label.yanchor) == ("paper", 1, "top"), figure.layout.title.text
        assert legend.y >= 1 and legend.yanchor == "bottom"  # the legend's bottom edge is above the plot


def whole_ticks(axis) -> bool:
    """Whether the axis can only tick whole numbers: automatic ticks (whole above FEW) or linear whole steps,
    each written as an integer, and never synced to another axis."""
    spaced = axis.tickmode == "auto" or (axis.tickmode == "linear" and axis.tick0 == 0 and axis.dtick in (1, 2))
    return axis.tickformat == ",d" and spaced


def test_every_count_axis_of_the_preemption_lesson_ticks_whole_numbers():
    run = load("preemption", None, Overrides())
    figures = list(cursor_figures(run, 0))
    axes = [f.layout.xaxis for f in figures] + [f.layout.yaxis for f in figures if f is not figures[1]]
    axes.append(figures[3].layout.yaxis2)  # the preemptions so far
    assert all(whole_ticks(axis) for axis in axes), [(a.tickmode, a.tickformat, a.dtick) for a in axes]


def test_the_thrash_lesson_s_preemptions_so_far_are_not_ticked_at_fractions():
    run = load("watermark-and-thrash", None, Overrides())  # 144 preemptions: ticks had been 48.8, 97.5, 146.2
    layout = preemptions_figure(run, 0).layout
    assert (layout.yaxis2.tickmode, layout.yaxis2.tickformat, layout.yaxis2.showgrid) == ("auto", ",d", False)
    assert (layout.yaxis.tickmode, layout.yaxis.dtick) == ("linear", 1)  # at most 5 at one step


def test_the_prefix_cache_s_count_axes_tick_whole_numbers():
    run = load("shared-system-prompt", None, Overrides())
    figure = cached_tokens_figure(run)
    assert whole_ticks(figure.layout.yaxis)


@pytest.mark.parametrize(
    ("top", "spacing"),
    [(0, ("linear", 1)), (3, ("linear", 1)), (5, ("linear", 1)), (6, ("linear", 2)), (9, ("linear", 2))],
)
def test_a_small_count_axis_ticks_every_one_or_two(top, spacing):
    axis = count_axis(top)
    assert (axis["tickmode"], axis["dtick"], axis["tick0"], axis["tickformat"]) == (*spacing, 0, ",d")


def test_a_large_count_axis_ticks_automatically_on_whole_numbers():
    assert count_axis(10) == {"tickformat": ",d", "rangemode": "tozero", "tickmode": "auto"}


def test_log_bins_of_whole_numbers_have_whole_edges_and_count_every_value():
    edges, counts = log_bins(np.array([1, 1, 1, 2, 3, 5, 93]), bins=4, whole=True)
    assert edges.tolist() == [1, 3, 10, 30, 94]  # geomspace(1, 94, 5) rounded
    assert counts.tolist() == [4, 2, 0, 1]


def test_log_bins_of_seconds_span_the_smallest_to_the_largest():
    edges, counts = log_bins(np.array([0.01, 0.01, 0.1, 1.0, 0.0]), bins=2)  # the 0 cannot go on a log axis
    assert edges == pytest.approx([0.01, 0.1, 1.0]) and counts.tolist() == [2, 2]
    edges, counts = log_bins(np.array([0.5, 0.5]))
    assert counts.tolist() == [2] and edges[0] == 0.5 < edges[1]
    assert [len(a) for a in log_bins(np.array([]))] == [0, 0]


@pytest.mark.parametrize("name", ["watermark-and-thrash", "anyscale-cap1536"])
def test_the_time_between_tokens_histograms_show_a_distribution_on_the_lesson_s_run(name):
    run = load(name, None, Overrides())
    in_steps, in_ms = token_gap_figure(run).data
    for bars in (in_steps, in_ms):
        counts = np.asarray(bars.y)
        assert (counts > 0).sum() >= 10  # not one tall bar: the long stalls show too
        assert counts.max() < counts.sum()
    layout = token_gap_figure(run).layout
    assert {layout.xaxis.type, layout.xaxis2.type, layout.yaxis.type, layout.yaxis2.type} == {"log"}
    assert in_steps.hovertext[0] == f"1 step: {int(in_steps.y[0]):,} gaps"
