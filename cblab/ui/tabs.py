"""The Compare and Event log tabs: the four-way comparison, the event log and its downloads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from cblab.ui import palette
from cblab.ui.runs import Run, comparison
from cblab.ui.time_charts import cost_caption
from engine.core.log.dataframe import KIND_LABELS, events_frame
from engine.lab.compare import COMPARED, MEMORY_COMPARED, continuous_speedup, memory_speedups

MAX_LOG_ROWS = 5_000  # events turned into the Event log table at once
ALWAYS_SHOWN = ("step", "kind", "slot", "request_id")  # Event log columns shown even when empty


GAP_TO_23X = (
    "The four configurations above the memory three have unlimited memory; the memory three share the "
    "scenario's KV pool. Anyscale's 23× for vLLM also counts implementation speed: its baseline is Hugging "
    "Face pipelines, and it measured FasterTransformer's faster kernels alone at about 4× over them (Daniel "
    "et al., Anyscale, 2023). Here one mock model runs at one speed, so only scheduling and memory show."
)


def render_comparison(run: Run, name: str, toml_text: str | None, overrides, projector: bool = False) -> None:
    """The scenario under all four configurations. For a projector the table is plain HTML
    (st.table), whose text the presentation stylesheet makes 24 px; st.dataframe draws on a
    canvas that CSS cannot enlarge."""
    if run.scenario is None:
        st.info("A loaded event log replays without the engine, so it cannot be re-run in other configurations.")
        return
    results = comparison(name, toml_text, overrides)
    speedup = continuous_speedup(results)
    st.metric(
        "Continuous / static throughput (ragged)",
        f"{speedup:.2f}×" if speedup is not None else "– (no tokens generated)",
    )
    for name, ratio in memory_speedups(results).items():
        st.metric(f"Paged / {name} throughput", f"{ratio:.2f}×" if ratio is not None else "–")
    table = comparison_table(results)
    if projector:
        st.table(table)
    else:
        st.dataframe(table, key="comparison_table", width="stretch")
    st.caption(cost_caption(run.cost))
    if "continuous-paged" in results:
        st.caption(GAP_TO_23X)
    left, right = st.columns(2)
    names, text = list(results), 24 if projector else 12
    throughput = [results[n]["throughput_tokens_per_s"] for n in names]
    left.plotly_chart(_bars(names, throughput, "tokens / s", text), key="compare_throughput")
    latency = [results[n]["e2e_p50_s"] for n in names]
    right.plotly_chart(_bars(names, latency, "end-to-end p50 (s)", text), key="compare_latency")


def comparison_table(results: dict[str, dict]) -> pd.DataFrame:
    """One row per figure and one column per configuration, as text ("–" where a figure does not
    apply: KV utilisation with unlimited memory). Configurations across, not down, so the table
    fits the page's width."""
    figures = {**COMPARED, **(MEMORY_COMPARED if "continuous-paged" in results else {})}
    percent, count = "{:.0%}", "{:,.0f}"
    formats = {"steps": count, "throughput_tokens_per_s": "{:,.0f} tok/s", "slot_utilization": percent}
    formats |= {"padding_waste": percent, "kv_utilization": percent, "peak_running": count, "preemptions": count}
    formats["recomputed_tokens"] = count
    rows = {}
    for figure, label in figures.items():
        shown = formats.get(figure, "{:.3f} s")
        rows[label] = [_figure(results[name].get(figure), shown) for name in results]
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(results))


def _figure(value: object, shown: str) -> str:
    return "–" if value is None or value != value else shown.format(value)  # (value != value: NaN)


def _bars(names: list[str], values: list[float], title: str, text: int) -> go.Figure:
    """One bar per configuration, in grey: the request colours mean requests."""
    figure = go.Figure(go.Bar(x=names, y=values, marker_color=palette.PADDED))
    figure.update_layout(title=title, height=320 + 10 * (text - 12), margin={"t": 40 + text, "b": 40}, font_size=text)
    return figure


def render_log(run: Run, stem: str) -> None:
    """The events, filtered; only the first MAX_LOG_ROWS matching ones are turned into a table.
    The downloads are named after `stem` (the lesson, or the uploaded file) and the run's settings."""
    log = run.log
    left, middle, right = st.columns([2, 1, 1])
    kinds = left.multiselect("Kinds", KIND_LABELS, key="log_kinds")
    request = middle.text_input("Request id", key="log_request")
    slot = right.number_input("Slot", min_value=0, value=None, step=1, key="log_slot")
    keep = np.ones(len(log), dtype=bool)
    if kinds:
        keep &= np.isin(np.frombuffer(log.kind, np.int8), [KIND_LABELS.index(k) for k in kinds])
    if request:
        index = log.request_index.get(request.strip(), -2)
        keep &= np.frombuffer(log.request, np.int32) == index
    if slot is not None:
        keep &= np.frombuffer(log.slot, np.int32) == slot
    matching = np.flatnonzero(keep)
    shown = matching[:MAX_LOG_ROWS]
    more = f"; the first {len(shown):,} are shown" if len(shown) < len(matching) else ""
    st.caption(f"{len(matching):,} of {len(log):,} events{more}")
    table = events_frame(log, shown)
    st.dataframe(table[visible_columns(table)], key="log_table", height=420)
    render_downloads(run, download_name(stem, run))


def download_name(stem: str, run: Run) -> str:
    """`part2-slot-refill_batch2_continuous_ragged`: the lesson and the settings its log was made with."""
    c = run.log.config
    parts = [stem, f"batch{c.batch_size}", c.batching, "padded" if c.padded else "ragged"]
    if c.kv_blocks is not None:
        parts.append(f"kv{c.kv_blocks}x{c.block_size}-{c.kv_policy}")
    if c.token_budget is not None:
        parts.append(f"budget{c.token_budget}")
    return "_".join(parts)


def render_downloads(run: Run, name: str) -> None:
    """JSONL and CSV of the whole log, each made when its button is clicked.

    NOTE: on_click="ignore". A click that reruns the app gives every download made on the
    click a new id and revokes the old one, so the other button, clicked during that rerun,
    asked for a revoked file and never got it.
    """
    log, (left, right) = run.log, st.columns(2)
    left.download_button(
        "Download JSONL", log.to_jsonl, f"{name}.jsonl", "application/jsonl", key="get_jsonl", on_click="ignore"
    )
    right.download_button(
        "Download CSV",
        lambda: log.to_dataframe().to_csv(index=False),
        f"{name}.csv",
        "text/csv",
        key="get_csv",
        on_click="ignore",
    )


def visible_columns(table: pd.DataFrame) -> list[str]:
    """The columns worth showing for these events: the four every event has, and any other
    that at least one of them sets (so the table shows the fields of the kinds in view)."""
    return [c for c in table.columns if c in ALWAYS_SHOWN or table[c].notna().any()]
