"""The Metrics tab's prefix-cache charts (cblab/ui/charts/prefix_charts.py): shown for a run with prefix
caching only, drawn from the analysis' figures, and the run without the cache made once, through
the runs every session shares."""

import pathlib

import numpy as np
import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from cblab.ui.charts.chart_parts import cdf
from cblab.ui.charts.prefix_charts import cached_tokens_figure, hit_rate_figure, ttft_caption, ttft_figure
from cblab.ui.frame.layout import without_cache
from cblab.ui.runs.runs import RUNS, Overrides, load
from engine.analysis.prefix_hits import hit_rate_over_time
from tests.helpers import Upload
from tests.test_app_tabs import chart, cursor, numbers
from tests.test_prefix_hits import SHARED

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")
PREFIX_CHARTS = ["hit_rate", "cached_tokens", "ttft_with_without_cache"]


def shared() -> Upload:
    return Upload("shared.toml", SHARED.encode())


def keys(app: AppTest) -> list[str]:
    return [c.proto.id.rsplit("-", 1)[-1] for c in app.get("plotly_chart")]


def metrics_with_upload(monkeypatch, upload: Upload) -> AppTest:
    real = streamlit.file_uploader

    def file_uploader(label, *args, key=None, **kwargs):
        return upload if key == "upload" else real(label, *args, key=key, **kwargs)

    monkeypatch.setattr(streamlit, "file_uploader", file_uploader)
    app = AppTest.from_file(APP, default_timeout=120)
    for key, value in {"scenario": "upload", "tab": "Metrics", "step": "2"}.items():
        app.query_params[key] = value
    return app.run()


def test_an_uploaded_prefix_cached_scenario_shows_the_three_charts(monkeypatch):
    """tests/test_prefix_hits.py's shared system prompt: 12 of 29 tokens found (12 of 19 at step 2); A, B,
    C find 0, 8 and 4. TTFT (default cost: 7 ms a step + 0.1 ms a row + 0.05 ms a prompt token computed):
    A 7 + 0.1 + 10 x 0.05 = 7.6 ms in both runs; B and C end at step 2, which sends 3 rows and computes
    3 + 4 tokens with the cache (7.65 ms), all 11 + 8 without (8.25 ms)."""
    app = metrics_with_upload(monkeypatch, shared())
    assert not app.exception and not app.error
    assert keys(app)[-3:] == PREFIX_CHARTS
    hit_rate = chart(app, "hit_rate")
    window, so_far = hit_rate["data"]
    assert numbers(window["x"]) == [0, 2] and numbers(window["y"]) == [0.0, 12 / 19]
    assert numbers(so_far["y"]) == [0.0, 12 / 29]
    assert hit_rate["layout"]["title"]["text"] == "Prefix cache hit rate: 41% (12 tokens cached)"
    assert cursor(hit_rate["layout"]) == ([2], ["step 2"])
    prompt, cached = chart(app, "cached_tokens")["data"]
    assert (prompt["x"], numbers(prompt["y"]), numbers(cached["y"])) == (["A", "B", "C"], [10, 11, 8], [0, 8, 4])
    with_cache, plain = chart(app, "ttft_with_without_cache")["data"]
    assert numbers(with_cache["x"]) == pytest.approx([7.6, 7.65, 7.65])
    assert numbers(plain["x"]) == pytest.approx([7.6, 8.25, 8.25])
    assert numbers(with_cache["y"]) == pytest.approx([1 / 3, 2 / 3, 1])
    captions = [c.value for c in app.caption]
    assert any(c.startswith("TTFT p50: 7.65 ms with the prefix cache, 8.25 ms without") for c in captions)
    assert any("each step with an admission" in c for c in captions)


def test_the_run_without_the_cache_is_made_once_and_shared():
    """The second run is the one `load` keeps for every session (the sidebar's switch turned off)."""
    RUNS.clear()
    first = without_cache("shared.toml", shared(), Overrides())
    assert not first.log.config.prefix_caching and len(RUNS) == 1
    assert without_cache("shared.toml", shared(), Overrides()) is first
    assert load("shared.toml", shared(), Overrides(prefix_caching=False)) is first


@pytest.mark.parametrize("scenario", ["preemption", "part2-slot-refill"])
def test_runs_without_prefix_caching_show_none_of_them(scenario):
    from tests.helpers import start_app

    app = start_app(scenario=scenario, tab="Metrics", predict="false")
    assert not app.exception and keys(app) and not set(keys(app)) & set(PREFIX_CHARTS)


def test_a_loaded_log_of_a_prefix_cached_run_cannot_be_run_again_without_the_cache(monkeypatch):
    run = load("shared.toml", shared(), Overrides())
    app = metrics_with_upload(monkeypatch, Upload("shared.jsonl", run.log.to_jsonl().encode()))
    assert not app.exception and not app.error
    assert keys(app)[-2:] == PREFIX_CHARTS[:2]
    assert any("cannot be run again without the cache" in c.value for c in app.caption)


def test_the_figures_of_the_shared_run():
    run = load("shared.toml", shared(), Overrides())
    figure = hit_rate_figure(run, hit_rate_over_time(run.log), 0)
    assert figure.data[0].hovertext == ("step 0: 0 of 10 tokens cached", "step 2: 12 of 19 tokens cached")
    assert list(cached_tokens_figure(run).data[1].marker.color) == ["#8dd3c7", "#fdb462", "#bebada"]  # as the stage
    plain = without_cache("shared.toml", shared(), Overrides())
    assert [t.name for t in ttft_figure(run, plain).data] == ["with the prefix cache", "without"]
    assert ttft_caption(run, plain).startswith("TTFT p50: 7.65 ms with the prefix cache, 8.25 ms without")


def test_many_requests_are_a_histogram_of_cached_tokens(monkeypatch):
    """Above the Timeline's 300 requests, one bar per request would not read: requests per cached count."""
    monkeypatch.setattr("cblab.ui.charts.prefix_charts.MAX_REQUESTS_DRAWN", 2)
    figure = cached_tokens_figure(load("shared.toml", shared(), Overrides()))
    assert [t.type for t in figure.data] == ["histogram"] and list(figure.data[0].x) == [0, 8, 4]
    assert figure.data[0].xbins.size == 4  # a block


def test_a_cdf_keeps_every_value_up_to_its_points_and_evenly_spaced_shares_beyond():
    """3 values: each at its share. 10 values in 4 points: the ceil(10k / 4)-th smallest, k = 1..4:
    the 3rd, 5th, 8th and 10th. NaN (a request with no first token) is dropped."""
    x, y = cdf(np.array([3.0, np.nan, 1.0, 2.0]))
    assert (x.tolist(), y.tolist()) == ([1.0, 2.0, 3.0], [1 / 3, 2 / 3, 1.0])
    x, y = cdf(np.arange(10.0, 0, -1), max_points=4)
    assert (x.tolist(), y.tolist()) == ([3.0, 5.0, 8.0, 10.0], [0.25, 0.5, 0.75, 1.0])
    assert [a.tolist() for a in cdf(np.array([np.nan]))] == [[], []]
