"""The event log as a pandas DataFrame, built column by column (no per-event objects).

`log` below is an `EventLog`, which imports this module when a DataFrame is asked for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..block_prompt import BlockPrompt
from ..request import FinishReason
from .events import ABSENT, EventKind, mask_tuple

COLUMNS = [
    "step",
    "kind",
    "slot",
    "request_id",
    "token",
    "position",
    "rows",
    "padded_rows",
    "active_mask",
    "sequence_index",
    "sequence",
    "reason",
    "message",
    "prompt",
    "max_tokens",
    "stop_sequences",
    "prefill_tokens",
    "tokens",
    "computed",
    "block",
    "blocks",
    "recompute",
]
KIND_LABELS = [kind.label for kind in EventKind]
REASON_LABELS = [reason.label for reason in FinishReason]


def _int_column(values: np.ndarray, keep: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(values.astype(np.int64), ~keep)


def _object_column(n: int, rows: np.ndarray, values: list) -> np.ndarray:
    column = np.full(n, None, dtype=object)
    if len(rows):
        column[rows] = values
    return column


def _column(values, dtype, rows: np.ndarray | None) -> np.ndarray:
    column = np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype)
    return column if rows is None else column[rows]


def events_frame(log, rows: np.ndarray | None = None) -> pd.DataFrame:
    """One row per event (or per event index in `rows`, in that order)."""
    step = _column(log.step, np.int32, rows).astype(np.int64)
    kind = _column(log.kind, np.int8, rows)
    slot = _column(log.slot, np.int32, rows)
    request = _column(log.request, np.int32, rows)
    value = _column(log.value, np.int64, rows)
    detail = _column(log.detail, np.int32, rows)
    n = len(kind)
    events = np.arange(len(log)) if rows is None else rows
    is_ = {k: kind == k for k in EventKind}
    ids = np.array([info.request_id for info in log.requests] + [None], dtype=object)
    calls = np.flatnonzero(is_[EventKind.MODEL_CALL])
    calls_made = [log.call_mask(detail[i]) for i in calls]
    masks = [mask_tuple(bits, log.config.batch_size) for bits, _ in calls_made]
    matches = np.flatnonzero(is_[EventKind.STOP_MATCH])
    errors = np.flatnonzero(is_[EventKind.ERROR])
    arrivals = np.flatnonzero(is_[EventKind.ARRIVE])
    infos = [log.requests[request[i]] for i in arrivals]
    reasons = np.array(REASON_LABELS, dtype=object)
    padded_rows = np.zeros(n, np.int64)
    padded_rows[calls] = [value[i] - sum(m) for i, m in zip(calls, masks)]
    max_tokens = np.zeros(n, np.int64)
    max_tokens[arrivals] = [info.max_tokens for info in infos]
    prefill_tokens = np.zeros(n, np.int64)
    prefilled = [prefill is not None for _, prefill in calls_made]
    prefill_tokens[calls] = [prefill or 0 for _, prefill in calls_made]
    has_prefill_tokens = np.zeros(n, bool)
    has_prefill_tokens[calls] = prefilled
    frame = pd.DataFrame(
        {
            "step": step,
            "kind": pd.Categorical.from_codes(kind, categories=KIND_LABELS),
            "slot": _int_column(slot, slot != ABSENT),
            "request_id": ids[np.where(request == ABSENT, len(log.requests), request)],
            "token": _int_column(value, is_[EventKind.EMIT]),
            "position": _int_column(log.emit_position(step, detail), is_[EventKind.EMIT]),
            "rows": _int_column(value, is_[EventKind.MODEL_CALL]),
            "padded_rows": _int_column(padded_rows, is_[EventKind.MODEL_CALL]),
            "active_mask": _object_column(n, calls, masks),
            "sequence_index": _int_column(value, is_[EventKind.STOP_MATCH]),
            "sequence": _object_column(n, matches, [log[events[i]].sequence for i in matches]),
            "reason": np.where(is_[EventKind.EVICT], reasons[np.clip(value, 0, len(reasons) - 1)], None),
            "message": _object_column(n, errors, [log.attachments[detail[i]] for i in errors]),
            "prompt": _object_column(n, arrivals, [_prompt(info.prompt) for info in infos]),
            "max_tokens": _int_column(max_tokens, is_[EventKind.ARRIVE]),
            "stop_sequences": _object_column(n, arrivals, [[list(s) for s in info.stop_sequences] for info in infos]),
            "prefill_tokens": _int_column(prefill_tokens, has_prefill_tokens),
            "tokens": _int_column(value, is_[EventKind.PREFILL]),
            "computed": _int_column(detail, is_[EventKind.PREFILL]),
            "block": _int_column(value, is_[EventKind.KV_ALLOC] | is_[EventKind.PREFIX_HIT] | is_[EventKind.KV_EVICT]),
            "blocks": _int_column(value, is_[EventKind.KV_FREE]),
            "recompute": _int_column(value, is_[EventKind.PREEMPT]),
        },
        columns=COLUMNS,
        index=None if rows is None else pd.Index(rows, name="event"),
    )
    return frame


def _prompt(prompt) -> list[int] | BlockPrompt:
    """An arrival's prompt as a list; a `BlockPrompt` (a trace's, up to 100,000s of tokens) stays as it is."""
    return prompt if type(prompt) is BlockPrompt else list(prompt)
