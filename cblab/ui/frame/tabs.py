"""The Event log tab: the events, filtered, and the downloads of the whole log."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from cblab.ui.runs.runs import Run
from engine.core.log.dataframe import KIND_LABELS, events_frame

MAX_LOG_ROWS = 5_000  # events turned into the Event log table at once
ALWAYS_SHOWN = ("step", "kind", "slot", "request_id")  # Event log columns shown even when empty


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
