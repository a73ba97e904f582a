"""The Compare tab: the scenario under every configuration of `engine/lab/compare.py`, as
ratios, one table (configurations across), the vLLM paper's four systems when they ran, and
two bar charts. The runs are one cached `comparison(...)` shared by the whole class
(`cblab/ui/runs/comparisons.py`); while they run, a progress bar names each configuration.

It leads with the run's own configuration (7.6's is `continuous-paged-cached`) and the ratios
that involve it. The paper's Fig. 2 figures stand beside the four systems only where the
workload compares with the paper's busy server (`engine/lab/paper_systems.py`,
`unlike_the_paper`: memory, not the slots, limits the batch); elsewhere the caption says why
they are left out."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from cblab.ui import palette
from cblab.ui.charts.time_charts import cost_caption
from cblab.ui.runs.comparisons import comparison
from cblab.ui.runs.runs import Run
from engine.analysis.wording import duration
from engine.lab.compare import COMPARED, headline_ratios, on_the_pool, own_configuration, pool_figures
from engine.lab.configurations import CACHED
from engine.lab.paper_systems import SYSTEMS, TOKEN_STATES, unlike_the_paper

GAP_TO_23X = (
    "The first four configurations have unlimited memory; the others share the scenario's KV pool. "
    "Anyscale's 23× for vLLM also counts implementation speed: its baseline is Hugging Face pipelines, and it "
    "measured FasterTransformer's faster kernels alone at about 4× over them (Daniel et al., Anyscale, 2023). "
    "Here one mock model runs at one speed, so only scheduling and memory show."
)
PAPER_CAPTION = (
    "The vLLM paper's four systems (Kwon et al., SOSP 2023, Fig. 2): Orca-Max reserves each request's "
    "max_tokens, Orca-Pow2 the next power of two of its true output length, Orca-Oracle the true length, and "
    "vLLM pages. KV util is the share of the KV room the rows hold (reserved or allocated) that holds tokens, "
    "what Fig. 2 splits into token states and waste on a busy server; pool util counts the whole pool, free "
    "blocks too, so it is lower while the pool is not full (a burst's last steps). The outputs are the same in "
    "all four."
)
PAPER_SHOWN = (
    "The paper's figures stand beside this workload's because it is a busy server as the paper's was: a full "
    "batch of its first requests, reserving as Orca-Max does, needs more than the pool, so memory limits the batch."
)
PAPER_HIDDEN = "The paper's figures are left out here: "
PERCENT, COUNT = "{:.0%}", "{:,.0f}"
ROW_PX = 35  # the height of a row of st.dataframe
RATIOS_A_ROW = 3  # headline ratios side by side
FORMATS = {  # how each figure is written in the table; a duration (engine/analysis/wording.py) otherwise
    "steps": COUNT,
    "throughput_tokens_per_s": "{:,.0f} tok/s",
    "slot_utilization": PERCENT,
    "padding_waste": PERCENT,
    "kv_utilization": PERCENT,
    "kv_pool_utilization": PERCENT,
    "peak_running": COUNT,
    "preemptions": COUNT,
    "recomputed_tokens": COUNT,
    "cached_tokens": COUNT,
    "prefix_hit_rate": PERCENT,
}


def render_comparison(run: Run, name: str, toml_text: str | None, overrides, projector: bool = False) -> None:
    """The scenario under every configuration. For a projector the tables are plain HTML
    (st.table), whose text the presentation stylesheet makes 24 px; st.dataframe draws on a
    canvas that CSS cannot enlarge."""
    if run.scenario is None:
        st.info("A loaded event log replays without the engine, so it cannot be re-run in other configurations.")
        return
    results = _with_progress(name, toml_text, overrides)
    own = own_configuration(run.scenario)
    if own is not None:
        st.markdown(
            f"**This run is `{own}`** ({_figure(results[own]['throughput_tokens_per_s'], 'throughput_tokens_per_s')}): "
            "the ratios that involve it come first."
        )
    else:
        st.markdown("**This run's settings match none of the configurations below** (each changes one thing at once).")
    ratios, across = headline_ratios(results, own), 1 if projector else RATIOS_A_ROW  # (24 px labels: one a row)
    for row in range(0, len(ratios), across):  # (one a row, five took 450 px)
        for place, (label, ratio) in zip(st.columns(across), ratios[row : row + across]):
            place.metric(label, f"{ratio:.2f}×" if ratio is not None else "– (no tokens generated)")
    if CACHED in results:
        cached, plain = results[CACHED], results["continuous-paged"]
        st.caption(
            f"Time to first token, p50: {duration(plain['ttft_p50_s'])} without the cache, "
            f"{duration(cached['ttft_p50_s'])} with it."
        )
    pool = on_the_pool(results)
    if pool:  # two tables, so neither is wider than the page: unlimited memory, then the pool's
        st.markdown("**Unlimited memory**")
        _show(comparison_table(results, [n for n in results if n not in pool]), "comparison_table", projector)
        st.markdown("**On the scenario's KV pool**")
        _show(comparison_table(results, pool), "pool_table", projector)
    else:
        _show(comparison_table(results), "comparison_table", projector)
    st.caption(cost_caption(run.cost))
    if "continuous-paged" in results:
        st.caption(GAP_TO_23X)
    if SYSTEMS["Orca-Oracle"] in results:
        unlike = unlike_the_paper(run.scenario)
        _show(paper_table(results, beside_the_paper=unlike is None), "paper_table", projector)
        st.caption(PAPER_CAPTION + (f" {PAPER_HIDDEN}{unlike}" if unlike else f" {PAPER_SHOWN}"))
    left, right = st.columns(2)
    names, text = list(results), 24 if projector else 12
    throughput = [results[n]["throughput_tokens_per_s"] for n in names]
    left.plotly_chart(_bars(names, throughput, "tokens / s", text), key="compare_throughput")
    latency = [results[n]["e2e_p50_s"] for n in names]
    right.plotly_chart(_bars(names, latency, "end-to-end p50 (s)", text), key="compare_latency")


def _with_progress(name: str, toml_text: str | None, overrides) -> dict[str, dict]:
    """The comparison (`cblab/ui/runs/comparisons.py`); while it runs, a bar names each configuration."""
    bar = st.empty()

    def started(configuration: str, i: int, of: int):
        said = f"Running every configuration: {configuration}, {i} of {of}"
        bar.progress((i - 1) / of, text=f"{said}…")

        def steps(step: int, done: int) -> None:
            bar.progress((i - 1) / of, text=f"{said} (step {step:,}, {done:,} requests done)…")

        return steps

    try:
        return comparison(name, toml_text, overrides, started)
    finally:
        bar.empty()


def comparison_table(results: dict[str, dict], names: list[str] | None = None) -> pd.DataFrame:
    """One row per figure and one column per configuration (`names`, by default all), as text ("–" where
    a figure does not apply: KV utilisation with unlimited memory). Configurations across, not down, so
    the table fits the page's width."""
    names = list(results) if names is None else names
    figures = COMPARED | (pool_figures(results) if any(n in on_the_pool(results) for n in names) else {})
    rows = {label: [_figure(results[n].get(figure), figure) for n in names] for figure, label in figures.items()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=names)


def paper_table(results: dict[str, dict], beside_the_paper: bool = True) -> pd.DataFrame:
    """The four systems down, each with the configuration it runs as, the share of the KV room it holds
    that holds tokens (beside the paper's where the workload compares: `unlike_the_paper`), its share
    of the whole pool, its peak rows and its throughput."""
    rows = {
        paper: {
            "runs as": name,
            "KV util": _figure(results[name]["kv_utilization"], "kv_utilization"),
            **({"paper (Fig. 2)": f"{TOKEN_STATES[paper]:.1%}"} if beside_the_paper else {}),
            "pool util": _figure(results[name]["kv_pool_utilization"], "kv_pool_utilization"),
            "peak rows": _figure(results[name]["peak_running"], "peak_running"),
            "throughput": _figure(results[name]["throughput_tokens_per_s"], "throughput_tokens_per_s"),
        }
        for paper, name in SYSTEMS.items()
    }
    return pd.DataFrame.from_dict(rows, orient="index")


def _show(table: pd.DataFrame, key: str, projector: bool) -> None:
    if projector:
        st.table(table)
    else:
        st.dataframe(table, key=key, width="stretch", height=ROW_PX * (len(table) + 1) + 3)  # every row, no scroll


def _figure(value: object, figure: str) -> str:
    """`value` written as `figure` is, or "–" for none (value != value: NaN)."""
    if value is None or value != value:
        return "–"
    return FORMATS[figure].format(value) if figure in FORMATS else duration(value)


def _bars(names: list[str], values: list[float], title: str, text: int) -> go.Figure:
    """One bar per configuration, in grey: the request colours mean requests."""
    figure = go.Figure(go.Bar(x=names, y=values, marker_color=palette.PADDED))
    figure.update_layout(title=title, height=320 + 10 * (text - 12), margin={"t": 40 + text, "b": 40}, font_size=text)
    return figure
