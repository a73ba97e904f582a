"""The Metrics tab's prefix-cache charts, for a run with prefix caching only: the hit rate over
time, the tokens each request found in the cache (vLLM's `num_cached_tokens`), and the time to
first token with and without the cache.

The figures come from `engine/analysis/prefix_hits.py` and the request metrics; this module
only plots. The run without the cache is the same scenario with `prefix_caching` off, made by
the caller through the shared run cache (`cblab/ui/runs/runs.py`: once for the whole class, and the
very run the sidebar's switch shows when turned off); a loaded event log has no scenario to run
again, so it shows the first two charts only.
"""

from __future__ import annotations

from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from cblab.ui import palette
from cblab.ui.charts.chart_parts import MAX_REQUESTS_DRAWN, add_cursor, cdf, count_axis
from cblab.ui.runs.runs import Run, UserError
from engine.analysis.prefix_hits import hit_rate_over_time, window_width
from engine.analysis.wording import duration

CACHED, PROMPT, SO_FAR = "#0f766e", "#e5e7eb", "#134e4a"  # hit tokens; the prompt behind them; the running rate
WITH, WITHOUT = "#0f766e", "#9ca3af"  # TTFT with and without the cache
LAYOUT = {"margin": {"t": 60, "b": 40}, "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"}}


def render_prefix_charts(run: Run, step: int, without_cache: Callable[[], Run] | None) -> None:
    """`without_cache` makes (or finds) the run without the cache; None for a loaded event log."""
    windows = hit_rate_over_time(run.log)
    st.plotly_chart(hit_rate_figure(run, windows, step), key="hit_rate")
    st.caption(hit_rate_caption(window_width(run.log.num_steps)))
    st.plotly_chart(cached_tokens_figure(run), key="cached_tokens")
    st.caption(
        "A request's cached tokens (vLLM's num_cached_tokens) are those its admissions found in the prefix cache, "
        "whole blocks only and never its last token; a request admitted again after a preemption counts its "
        "second look too. It computes the rest of its prompt."
    )
    if without_cache is None:
        st.caption("A loaded event log replays without the engine, so it cannot be run again without the cache.")
        return
    try:
        plain = without_cache()
    except UserError as exc:
        st.error(str(exc))
        return
    st.plotly_chart(ttft_figure(run, plain), key="ttft_with_without_cache")
    st.caption(ttft_caption(run, plain))


def hit_rate_caption(width: int) -> str:
    window = "step" if width == 1 else f"window of {width:,} steps"
    return (
        "Each admission looks the row's tokens so far up in the prefix cache (its prompt; after a preemption, its "
        "generated tokens too). The dots are the share of the tokens looked up in each "
        f"{window} with an admission that were found there; the line is the share from step 0 to that point, "
        "the run's hit rate at its end."
    )


def hit_rate_figure(run: Run, windows, step: int) -> go.Figure:
    hover = [
        f"{_steps(first, last)}: {cached:,} of {looked_up:,} tokens cached"
        for first, last, cached, looked_up in zip(
            windows.first_step, windows.last_step, windows.cached, windows.looked_up
        )
    ]
    figure = go.Figure()
    figure.add_scatter(
        x=windows.last_step,
        y=windows.rate,
        name="in the window",
        mode="markers",
        marker_color=CACHED,
        hovertext=hover,
        hoverinfo="text",
    )
    figure.add_scatter(
        x=windows.last_step, y=windows.so_far, name="so far", mode="lines", line={"shape": "hv", "color": SO_FAR}
    )
    figures = run.summary
    title = f"Prefix cache hit rate: {figures['prefix_hit_rate']:.0%} ({figures['cached_tokens']:,} tokens cached)"
    figure.update_layout(title=title, height=320, xaxis_title="step", **LAYOUT)
    figure.update_xaxes(**count_axis(len(run.replay) - 1))
    figure.update_yaxes(title_text="tokens found / looked up", tickformat=".0%", range=[0, 1.05])
    add_cursor(figure, step)
    return figure


def _steps(first: int, last: int) -> str:
    return f"step {first:,}" if first == last else f"steps {first:,}–{last:,}"


def cached_tokens_figure(run: Run) -> go.Figure:
    """One bar per request (its prompt in grey behind, the cached tokens in its stage colour), or,
    with more requests than the Timeline shows, how many requests found how many tokens."""
    requests = run.requests
    found = int((requests.cached_tokens > 0).sum())
    title = f"Cached tokens per request: {found:,} of {len(requests):,} requests found some"
    figure = go.Figure()
    if len(requests) > MAX_REQUESTS_DRAWN:
        figure.add_histogram(x=requests.cached_tokens, xbins={"size": run.log.config.block_size}, marker_color=CACHED)
        figure.update_layout(title=title, height=320, xaxis_title="cached tokens", yaxis_title="requests", **LAYOUT)
        figure.update_xaxes(**count_axis(requests.cached_tokens.max()))
        figure.update_yaxes(**count_axis(len(requests)))  # its tallest bar holds at most every request
        return figure
    ids = requests.index.tolist()
    colours = palette.of_requests(run.frames["colours"], list(range(len(ids))))
    figure.add_bar(x=ids, y=requests.prompt_tokens, name="prompt tokens", marker_color=PROMPT)
    figure.add_bar(x=ids, y=requests.cached_tokens, name="cached tokens", marker_color=colours, width=0.5)
    figure.update_layout(title=title, height=320, barmode="overlay", yaxis_title="tokens", **LAYOUT)
    figure.update_xaxes(title_text="request", type="category")
    figure.update_yaxes(**count_axis(requests.prompt_tokens.max()))
    return figure


def ttft_figure(run: Run, plain: Run) -> go.Figure:
    """The share of requests whose first token came within x ms: with the cache, and without."""
    figure = go.Figure()
    for name, shown, colour in (("with the prefix cache", run, WITH), ("without", plain, WITHOUT)):
        x, y = cdf(shown.requests.ttft_s.to_numpy() * 1e3)
        figure.add_scatter(x=x, y=y, name=name, mode="lines", line={"shape": "hv", "color": colour})
    figure.update_layout(title="Time to first token, with and without the prefix cache", height=340, **LAYOUT)
    figure.update_xaxes(title_text="TTFT (simulated ms)", rangemode="tozero")
    figure.update_yaxes(title_text="share of requests", tickformat=".0%", range=[0, 1.05])
    return figure


def ttft_caption(run: Run, plain: Run) -> str:
    cached, uncached = run.summary["ttft_p50_s"], plain.summary["ttft_p50_s"]
    return (
        f"TTFT p50: {duration(cached)} with the prefix cache, {duration(uncached)} without (the same "
        "scenario with prefix_caching off). Each line rises by one request at its time to first token. A hit "
        "is a token the first step does not compute, and the cost model charges each prompt token computed; "
        "the cache also needs fewer free blocks to admit a row."
    )
