"""Metrics from the event log alone, and the cost model that turns steps into seconds.

Steps are the raw unit. `CostModel` prices a step as a fixed cost (reading the
weights), plus a cost per row sent (padded rows cost like real rows), plus a cost per
token of context those rows attend to (a padded batch attends to `rows × its longest
context`), plus a cost per prompt token prefilled in that step (in padded mode, the
prompts admitted together are padded to the longest of them; with a KV pool or a token
budget, the tokens the `prefill` events computed, recomputation included). Its defaults
describe a 7B-parameter fp16 model on one A100-80GB (2.0 TB/s HBM, 312 TFLOP/s dense
fp16) in round figures: a decode step of 64 rows costs 7 + 64 × 0.1 = 13.4 ms, of which
the matrix maths would need only ~3 ms, so the step is memory-bound, as real decode
steps are. `engine/analysis/hardware.py` has presets grounded in cited hardware, whose
KV read grows with the context. See docs/metrics.md, "Metrics and the cost model".

Definitions (times from the step's start or end under the cost model):
- queue wait: arrival → admission;  time to first token (TTFT): arrival → end of the
  step that emitted the first token;  end-to-end (E2E): arrival → delivery;
- time per output token (TPOT): (delivery − first token) / (output tokens − 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.log.event_log import EventLog
from ..core.log.events import EventKind
from ..core.request import FinishReason
from .array_sets import isin, unique
from .pool_state import pool_use
from .prefix_hits import cache_hits
from .wording import duration


@dataclass(frozen=True)
class CostModel:
    step_s: float = 0.007  # weights (13.5 GB fp16) read once a step at ~2 TB/s; also an idle tick
    row_s: float = 0.0001  # per row sent: ~200 MB of KV cache (≈400 tokens of a 7B model) at ~2 TB/s
    prefill_token_s: float = 0.00005  # per prompt token: 2 × 7e9 FLOPs at ~280 TFLOP/s
    kv_token_s: float = 0.0  # per token of context a row sent attends to (the hardware presets' KV read)
    name: str = "default"  # engine/analysis/hardware.py has the presets grounded in hardware

    def busy_seconds(self, rows_sent, context_tokens, prefill_tokens):
        """A step that sends rows or prefills (numbers or arrays); any other step costs `step_s`, an idle tick."""
        return (
            self.step_s
            + self.row_s * rows_sent
            + self.kv_token_s * context_tokens
            + self.prefill_token_s * prefill_tokens
        )


format_seconds = duration  # simulated seconds for people (engine/analysis/wording.py), the name the CLI imports


def prompt_lengths(log: EventLog) -> np.ndarray:
    """Each request's prompt length, by request index, and 0 for ABSENT (index -1)."""
    return np.array([len(info.prompt) for info in log.requests] + [0], dtype=np.int64)


def _columns(log: EventLog):
    """step, kind, request, value, detail as int64 arrays, with each emit's detail its prefix length after the token."""
    n = len(log)
    if not n:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty, empty
    as_int = lambda column, dtype: np.frombuffer(column, dtype=dtype).astype(np.int64)  # noqa: E731
    step, kind, request, value, detail = (
        as_int(log.step, np.int32),
        as_int(log.kind, np.int8),
        as_int(log.request, np.int32),
        as_int(log.value, np.int64),
        as_int(log.detail, np.int32),
    )
    emits = kind == EventKind.EMIT
    # stored: step − position (events.py); returned: the prefix length after the token
    detail[emits] = prompt_lengths(log)[request[emits]] + EventLog.emit_position(step[emits], detail[emits]) + 1
    return step, kind, request, value, detail


def step_metrics(log: EventLog, cost: CostModel = CostModel()) -> pd.DataFrame:
    """One row per busy step (a step with events): rows sent, active and padded rows, queue
    depth, prefill, time.

    Idle steps (the engine's clock jumped over them, waiting for an arrival) have no row,
    so the frame grows with the events, never with the step numbers; each row's
    `idle_before` counts the idle steps since the previous row, and they tick at `step_s`
    each in `end_s`.
    """
    step, kind, request, value, detail = _columns(log)
    busy = unique(step)
    row = np.searchsorted(busy, step)  # each event's row
    rows = len(busy)
    prompt_len = prompt_lengths(log)
    count = lambda mask, weights=None: np.bincount(row[mask], weights, minlength=rows)  # noqa: E731
    calls = kind == EventKind.MODEL_CALL
    rows_sent = count(calls, value[calls]).astype(np.int64)
    active = count(kind == EventKind.EMIT).astype(np.int64)
    admits = kind == EventKind.ADMIT
    if log.config.padded:  # new prompts are prefilled together, padded to the longest of them
        prefill = np.zeros(rows, np.int64)
        np.maximum.at(prefill, row[admits], prompt_len[request[admits]])
        prefill *= count(admits).astype(np.int64)
    else:
        prefill = count(admits, prompt_len[request[admits]]).astype(np.int64)
    prefills = kind == EventKind.PREFILL
    if prefills.any():  # memory on: what each step computed (chunks, and recomputation after a preemption)
        prefill = count(prefills, value[prefills]).astype(np.int64)
    emits = kind == EventKind.EMIT
    context = count(emits, detail[emits] - 1).astype(np.int64)  # each row attends to its prefix before the new token
    if log.config.padded:  # every row sent is as long as the longest
        longest = np.zeros(rows, np.int64)
        np.maximum.at(longest, row[emits], detail[emits] - 1)
        context = rows_sent * longest
    slotless_evicts = (kind == EventKind.EVICT) & (log_slot(log) < 0)
    running = _running_rows(kind, row, rows, log_slot(log), count)
    blocks_held, tokens_held = _kv_use(kind, row, rows, request, value, detail, count)
    if log.config.prefix_caching:  # a shared block is held once (its rows each count its tokens)
        in_use, shared = pool_use(log, busy.tolist())
        blocks_held = np.array(in_use, np.int64)
        tokens_held = tokens_held - np.array(shared, np.int64) * log.config.block_size
    joins = count(kind == EventKind.ARRIVE) + count(kind == EventKind.PREEMPT)  # a preempted row waits again
    queue = np.cumsum(joins - count(admits) - count(slotless_evicts)).astype(np.int64)
    duration = np.where(
        (rows_sent > 0) | (prefill > 0),  # a step that only prefills (a chunk) costs its prefill too
        cost.busy_seconds(rows_sent, context, prefill),
        cost.step_s,
    )
    idle_before = np.diff(busy, prepend=0) - np.r_[0, np.ones(max(rows - 1, 0), np.int64)]
    return pd.DataFrame(
        {
            "step": busy,
            "idle_before": idle_before.astype(np.int64),
            "rows_sent": rows_sent,
            "active_rows": active,
            "running_rows": running,
            "padded_rows": np.where(rows_sent > 0, rows_sent - active, 0),
            "queue_depth": queue,
            "admitted": count(admits).astype(np.int64),
            "finished": count(kind == EventKind.EVICT).astype(np.int64),
            "prefill_tokens": prefill,
            "context_tokens": context,
            "kv_blocks_held": blocks_held,
            "kv_tokens_held": tokens_held,
            "duration_s": duration,
            "end_s": np.cumsum(duration + idle_before * cost.step_s),
        }
    )


def before_the_call(kind: np.ndarray, row: np.ndarray, rows: int) -> np.ndarray:
    """Per event: whether it comes before its step's model call (every event of a step
    without one does). `row` is each event's busy-step row, of `rows`."""
    call_at = np.full(max(rows, 1), np.iinfo(np.int64).max)
    calls = np.flatnonzero(kind == EventKind.MODEL_CALL)
    call_at[row[calls]] = calls
    return np.arange(len(kind)) < call_at[row]


def _running_rows(kind: np.ndarray, row: np.ndarray, rows: int, slot: np.ndarray, count) -> np.ndarray:
    """Rows holding a slot at each busy step's model call (those still prefilling included):
    admitted so far, less the preempted, less those evicted before the call (a row that
    finishes at the call still held its slot for it)."""
    evicts = (kind == EventKind.EVICT) & (slot >= 0)
    before_call = evicts & before_the_call(kind, row, rows)
    after_call = count(evicts & ~before_call)
    held = count(kind == EventKind.ADMIT) - count(kind == EventKind.PREEMPT) - count(before_call)
    return (np.cumsum(held) - (np.cumsum(after_call) - after_call)).astype(np.int64)


def _kv_use(kind, row, rows, request, value, detail, count) -> tuple[np.ndarray, np.ndarray]:
    """At each busy step's model call: KV blocks held (allocated so far, less those freed by
    earlier steps and by this step's preemptions and cancellations), and the tokens they
    hold: each row sent, its prefix before the new token; each row only prefilling, what it
    has computed."""
    frees = kind == EventKind.KV_FREE
    freed = count(frees, value[frees]).astype(np.int64)
    early = frees & before_the_call(kind, row, rows)
    freed_early = count(early, value[early]).astype(np.int64)
    blocks = np.cumsum(count(kind == EventKind.KV_ALLOC).astype(np.int64) - freed_early) - (
        np.cumsum(freed - freed_early) - (freed - freed_early)
    )
    emits, prefills = kind == EventKind.EMIT, kind == EventKind.PREFILL
    key = row * (int(request.max(initial=0)) + 1) + request  # (step, request)
    only_prefilling = prefills.copy()  # (isin over the prefills only: the emits are most of the log)
    only_prefilling[prefills] = ~isin(key[prefills], key[emits])
    tokens = count(emits, detail[emits] - 1) + count(only_prefilling, detail[only_prefilling])
    return blocks.astype(np.int64), tokens.astype(np.int64)


def log_slot(log: EventLog) -> np.ndarray:
    return np.frombuffer(log.slot, dtype=np.int32).astype(np.int64) if len(log) else np.zeros(0, np.int64)


def request_metrics(log: EventLog, cost: CostModel = CostModel(), steps: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per request (indexed by request id): steps and simulated seconds."""
    steps = step_metrics(log, cost) if steps is None else steps
    step, kind, request, value, detail = _columns(log)
    n = len(log.requests)
    end = steps["end_s"].to_numpy()
    start = end - steps["duration_s"].to_numpy()
    busy = steps["step"].to_numpy()

    def per_request(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        out = np.full(n, np.nan)
        out[request[mask]] = values[mask]
        return out

    arrive = per_request(kind == EventKind.ARRIVE, step)
    admit = per_request(kind == EventKind.ADMIT, step)
    prompt_len = prompt_lengths(log)
    first = per_request((kind == EventKind.EMIT) & (detail == prompt_len[request] + 1), step)
    evicts = kind == EventKind.EVICT
    finish = per_request(evicts, step)
    reason = per_request(evicts, value)
    # A delivery before the step's model call (cancelled, zero budget) happens at the step's start.
    row = np.searchsorted(busy, step)
    after_call = per_request(evicts, (~before_the_call(kind, row, len(busy))).astype(float))
    outputs = np.bincount(request[kind == EventKind.EMIT], minlength=n)[:n] if n else np.zeros(0, np.int64)

    def at(times: np.ndarray, steps_: np.ndarray) -> np.ndarray:
        """`times` (per busy step) at each request's step (always a busy one: it has an event)."""
        valid = ~np.isnan(steps_)
        out = np.full(n, np.nan)
        out[valid] = times[np.searchsorted(busy, steps_[valid].astype(np.int64))]
        return out

    delivered = np.where(after_call == 1, at(end, finish), at(start, finish))
    first_s = at(end, first)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(outputs > 1, (delivered - first_s) / (outputs - 1), np.nan)
        tpot_steps = np.where(outputs > 1, (finish - first) / (outputs - 1), np.nan)
    labels = np.array([r.label for r in FinishReason] + [None], dtype=object)
    cached = {}
    if log.config.prefix_caching:  # vLLM's num_cached_tokens: found in the cache at its admissions
        hits = request[kind == EventKind.PREFIX_HIT]
        cached = {"cached_tokens": np.bincount(hits, minlength=n)[:n] * log.config.block_size}
    return pd.DataFrame(
        {
            "arrival_step": arrive,
            "admit_step": admit,
            "first_token_step": first,
            "finish_step": finish,
            "prompt_tokens": [len(info.prompt) for info in log.requests],
            "output_tokens": outputs,
            "finish_reason": labels[np.nan_to_num(reason, nan=len(labels) - 1).astype(np.int64)],
            "queue_wait_steps": admit - arrive,
            "ttft_steps": first - arrive + 1,
            "tpot_steps": tpot_steps,
            "e2e_steps": finish - arrive + after_call,
            "queue_wait_s": at(start, admit) - at(start, arrive),
            "ttft_s": first_s - at(start, arrive),
            "tpot_s": tpot,
            "e2e_s": delivered - at(start, arrive),
            **cached,
        },
        index=pd.Index([info.request_id for info in log.requests], name="request_id"),
    )


def summary(log: EventLog, cost: CostModel = CostModel()) -> dict[str, float]:
    """Headline figures: throughput, utilisation, padding waste and latency percentiles."""
    steps = step_metrics(log, cost)
    requests = request_metrics(log, cost, steps)
    called = steps[steps.rows_sent > 0]
    tokens = int(steps.active_rows.sum())
    total_s = float(steps.end_s.iloc[-1]) if len(steps) else 0.0
    slot_steps = len(called) * log.config.batch_size
    pct = lambda column, q: percentile(requests[column], q)  # noqa: E731
    gaps = token_gaps(log, steps)
    _, kind, _, value, _ = _columns(log)
    preempts = kind == EventKind.PREEMPT
    cached, looked_up = cache_hits(log)
    return {
        "requests": len(requests),
        "steps": log.num_steps,
        "model_calls": len(called),
        "generated_tokens": tokens,
        "total_time_s": total_s,
        "throughput_tokens_per_s": tokens / total_s if total_s else 0.0,
        "slot_utilization": tokens / slot_steps if slot_steps else 0.0,
        "padding_waste": float(called.padded_rows.sum() / called.rows_sent.sum()) if len(called) else 0.0,
        "queue_wait_p50_s": pct("queue_wait_s", 50),
        "ttft_p50_s": pct("ttft_s", 50),
        "ttft_p99_s": pct("ttft_s", 99),
        "tpot_p50_s": pct("tpot_s", 50),
        "e2e_p50_s": pct("e2e_s", 50),
        "e2e_p99_s": pct("e2e_s", 99),
        "tbt_p99_s": float(np.percentile(gaps, 99)) if len(gaps) else None,
        "max_tbt_s": float(gaps.max()) if len(gaps) else None,
        "peak_running": int(steps.running_rows.max()) if len(steps) else 0,
        "preemptions": int(preempts.sum()),
        "recomputed_tokens": int(value[preempts].sum()),  # what the preempted rows held: prefilled again
        "kv_utilization": kv_utilization(steps, log.config.block_size),
        "kv_pool_utilization": kv_utilization(steps, log.config.block_size, log.config.kv_blocks),
        "cached_tokens": cached,  # found in the prefix cache at admissions: not computed again
        "prefix_hit_rate": cached / looked_up if looked_up else 0.0,  # of the tokens looked up there
    }


def percentile(values: pd.Series, q: float) -> float | None:
    """The q-th percentile of `values`, NaNs left out (a request not yet served); None if every one is NaN."""
    return float(np.nanpercentile(values, q)) if values.notna().any() else None


def prefill_seconds(steps: pd.DataFrame, cost: CostModel) -> tuple[float, float]:
    """(seconds spent on prompt tokens, busy seconds): the busy time is every step that sends rows or
    prefills, and its prompt tokens cost `prefill_token_s` each (Splitwise's prompt phase against its
    token phase, which share the GPU here)."""
    busy = (steps.rows_sent.to_numpy() > 0) | (steps.prefill_tokens.to_numpy() > 0)
    return cost.prefill_token_s * float(steps.prefill_tokens.sum()), float(steps.duration_s.to_numpy()[busy].sum())


def prefill_share(steps: pd.DataFrame, cost: CostModel) -> float:
    """The share of the busy time spent on prompt tokens (0 for a run that did no work)."""
    prefill, busy = prefill_seconds(steps, cost)
    return prefill / busy if busy else 0.0


def kv_utilization(steps: pd.DataFrame, block_size: int, pool: int | None = None) -> float | None:
    """The share of the allocated KV capacity that holds tokens, averaged over the steps that
    hold any; None without a KV pool. With `pool` (its blocks), the share of the whole pool
    instead, free blocks counted as waste, as the vLLM paper's Fig. 2 counts "token states"
    (engine/lab/paper_systems.py)."""
    held = steps[steps.kv_blocks_held > 0]
    if not len(held):
        return None
    blocks = held.kv_blocks_held if pool is None else pool
    return float((held.kv_tokens_held / (blocks * block_size)).mean())


def token_gaps(log: EventLog, steps: pd.DataFrame) -> np.ndarray:
    """Time between tokens (TBT): the simulated seconds between each request's consecutive
    tokens (the end of one emitting step to the end of the next), so a stall shows."""
    step, kind, request, _, _ = _columns(log)
    emits = kind == EventKind.EMIT
    order = np.lexsort((step[emits], request[emits]))  # by request, then step
    owner, at = request[emits][order], step[emits][order]
    ends = steps["end_s"].to_numpy()[np.searchsorted(steps["step"].to_numpy(), at)]
    same = owner[1:] == owner[:-1]
    return (ends[1:] - ends[:-1])[same]
