"""The limits on the work that a file, a URL or a command line may start, and the estimate
checked against them before anything runs.

One shared server runs a whole class, so a run is estimated from its requests before it
starts (its worst case: every request generates its whole `max_tokens`) and refused
above these limits, with one line naming the field, its value and the limit. The same
limits hold in the app, the CLI and `engine.scenario`'s loader; docs/limits.md's "Limits"
table lists them. The engine's own Python API is not limited: it runs what its caller asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from ..core.validation import (
    MAX_ARRIVAL_STEP,  # noqa: F401  (the engine's own bound, listed with the rest)
    wrong_value,
)

MAX_FILE_BYTES = 5 * 1024 * 1024  # a scenario TOML or an event-log JSONL, read with this cap
MAX_BATCH_SIZE = 256  # slots in a scenario or a loaded log (vLLM's default max_num_seqs)
MAX_KV_BLOCKS = 100_000  # blocks in a scenario's KV pool (1.6M tokens at 16 a block)
MAX_REQUESTS = 100_000  # requests in a scenario or a generated workload
MAX_LENGTH = 65_536  # longest generated prompt or output length in a workload
MAX_PROMPT_TOKENS = 2_000_000  # all prompts of one run together
MAX_GENERATED_TOKENS = 2_000_000  # the most one run could generate
MAX_STEPS = 2_000_000  # steps that do work (a model call, or requests finishing without one)
MAX_MODEL_ROWS = 10_000_000  # rows sent to the model over a run, padded rows included
MAX_EVENTS = 3_000_000  # events in one run's log (a JSONL download of that is ~250 MB)
MAX_SCRIPTED_READS = 20_000_000  # prefix tokens a scripted model reads (it looks whole prefixes up)
MAX_SAMPLING_DRAWS = 10_000_000  # random draws to generate a workload's output lengths
MAX_FILL_TIMEOUT = 1_000_000  # steps an empty static batch may wait to fill (idle steps cost nothing: skipped)
MAX_PRIORITY = 1_000_000  # a request's priority, from -MAX_PRIORITY to MAX_PRIORITY
MAX_SWEEP_POINTS = 9  # batch sizes in one sweep (1, 2, 4, ..., 256)
MAX_SWEEP_RUNS = 4  # a sweep's points together may do this many runs' worth of the limits above
MAX_REPLICAS = 16  # engines behind one router (engine/lab/replicas.py)
MAX_REPLICA_STEPS = 500_000  # replicas × steps a replica simulation may step through
REPLICA_SIGNALS = ("queue_depth", "utilization")  # what the autoscaler may scale on
# A request trace (engine/lab/trace_file.py), checked in this order before the work each guards. The reader's limits
# (the trace's own scale); a replay of it is estimated and bounded by the run limits above, like every run.
MAX_TRACE_BYTES = MAX_FILE_BYTES  # a trace file, decompressed (the largest shipped, Mooncake's conversation: 3.0 MB)
MAX_TRACE_REQUESTS = MAX_REQUESTS  # rows of a trace (the most shipped, Azure's conversation: 19,366)
MAX_TRACE_LINE_BYTES = 16_384  # one line (the longest shipped: 2,699 bytes, 374 hash ids)
MAX_TRACE_TIME_MS = 7 * 24 * 3600 * 1000  # a timestamp after the first row's, in ms: a week (the traces span an hour)
MAX_TRACE_INPUT_LENGTH = 262_144  # one request's prompt, in tokens (the longest shipped: 191,378)
MAX_TRACE_OUTPUT_LENGTH = MAX_LENGTH  # one request's answer, in tokens (the longest shipped: 2,000)
MAX_TRACE_HASH_IDS = MAX_TRACE_INPUT_LENGTH // 512  # hash ids on one row, one per 512-token block (shipped: 374)
MAX_TRACE_HASH_ID = 2**31 - 1  # a hash id's value (the largest shipped: 182,789)
MAX_TRACE_PROMPT_TOKENS = 150_000_000  # a trace's prompts together (Mooncake's conversation: 144,793,823)
MIN_TRACE_RATE, MAX_TRACE_RATE = 0.01, 100.0  # a trace's rate factor (arrival times are divided by it)
# A trace replay (engine/lab/trace_replay.py) has limits of its own, sized for the shipped traces' hours (the
# largest, Mooncake's conversation: 4.1M generated tokens, about 5M events); its prompts stay compact (block ids)
MAX_TRACE_GENERATED_TOKENS = 5_000_000  # the answers of one replay together
MAX_TRACE_STEPS = 6_000_000  # steps that do work in one replay
MAX_TRACE_EVENTS = 12_000_000  # events in one replay's log (about 300 MB of columns)
# A long run (engine/analysis/window_frames.py): too long for the stage to play whole, so the app shows an overview over
# simulated time and the stage plays a window of it (docs/course.md, "Long runs"). The longest lesson played whole,
# anyscale-cap1536, has 4,330 busy steps and 183,847 events (0.35 MB sent to the stage).
LONG_RUN_STEPS = 5_000  # busy steps (the grid's columns) above which a run is long
LONG_RUN_EVENTS = 500_000  # events above which a run is long, whatever its steps
MAX_WINDOW_STEPS = 2_000  # steps the stage plays of a long run at once (an idle stretch inside is one column)
DEFAULT_WINDOW_STEPS = 400  # the window a long run opens with: around its deepest queue (overview.default_window)
OVERVIEW_BUCKETS = 1_000  # points per series of a long run's overview at most, each a bucket's min and max


@dataclass(frozen=True, slots=True)
class Work:
    """The worst case of one run, as counts."""

    requests: int
    prompt_tokens: int
    generated_tokens: int  # every request runs to its max_tokens
    steps: int
    model_rows: int
    events: int
    scripted_reads: int = 0


def worst_case(
    budgets: list[int],
    arrivals: list[int],
    prompt_tokens: int,
    batch_size: int,
    *,
    static: bool,
    padded: bool,
    faults: int = 0,
    memory: tuple[int, int] | None = None,
) -> Work:
    """Upper bounds for requests with these `max_tokens` and arrival steps.

    Every step that does work emits a token or finishes a request, so steps <= tokens +
    requests. After the last arrival, continuous batching keeps every slot busy while
    anyone waits, then drains in at most the longest budget; static batching runs at most
    one more batch than the queue holds, each as long as the longest budget.

    With a KV pool or a token budget, `memory` is (steps that may only prefill, KV blocks
    the requests take): memory may keep slots empty, so only the first bound holds, plus
    those steps. Preemptions, which make rows compute tokens again, are not foreseen: the
    run itself stops at the limits (`simulate`).
    """
    n, total = len(budgets), sum(budgets)
    longest, last_arrival = max(budgets, default=0), max(arrivals, default=0)
    before = min(last_arrival, total + n)
    drain = (ceil(n / batch_size) + 1) * longest if static else ceil(total / batch_size) + longest
    steps = min(total + n, before + drain + 1) + faults
    events = 4 * n + total + faults
    if memory is not None:
        prefill_steps, blocks = memory
        steps = total + n + prefill_steps + faults
        events += 2 * n + prefill_steps + blocks  # prefill, kv_alloc and kv_free events
    rows = batch_size * steps if padded else total + faults * batch_size
    return Work(n, prompt_tokens, total, steps, rows, events + steps)


LIMITS = {  # Work field -> (limit, what it counts)
    "requests": (MAX_REQUESTS, "requests"),
    "prompt_tokens": (MAX_PROMPT_TOKENS, "prompt tokens"),
    "generated_tokens": (MAX_GENERATED_TOKENS, "generated tokens"),
    "steps": (MAX_STEPS, "steps"),
    "model_rows": (MAX_MODEL_ROWS, "rows sent to the model"),
    "events": (MAX_EVENTS, "events"),
    "scripted_reads": (MAX_SCRIPTED_READS, "prefix tokens read by the scripted model"),
}


TRACE_LIMITS = {  # a trace replay's: its prompts are compact, its runs an hour of a real service
    **LIMITS,
    "requests": (MAX_TRACE_REQUESTS, "requests"),
    "prompt_tokens": (MAX_TRACE_PROMPT_TOKENS, "prompt tokens"),
    "generated_tokens": (MAX_TRACE_GENERATED_TOKENS, "generated tokens"),
    "steps": (MAX_TRACE_STEPS, "steps"),
    "model_rows": (MAX_TRACE_GENERATED_TOKENS, "rows sent to the model"),
    "events": (MAX_TRACE_EVENTS, "events"),
}


UPLOADED_TRACE_LIMITS = {**LIMITS, "prompt_tokens": (MAX_TRACE_PROMPT_TOKENS, "prompt tokens")}  # an app upload's:
# its prompts are compact (block ids), the rest of its run is any scenario's


def first_excess(work: Work, limits: dict = LIMITS) -> tuple[str, int, int, str] | None:
    """(Work field, value, limit, what it counts) of the first limit `work` exceeds, or None."""
    for name, (limit, unit) in limits.items():
        value = getattr(work, name)
        if value > limit:
            return name, value, limit, unit
    return None


def is_long(busy_steps: int, events: int) -> bool:
    """Whether a run with these busy steps and events is too long for the stage to play whole."""
    return busy_steps > LONG_RUN_STEPS or events > LONG_RUN_EVENTS


def read_capped(path, limit: int = MAX_FILE_BYTES) -> bytes:
    """A file's bytes, refusing one over `limit` without reading past it (`/dev/zero` included)."""
    with open(path, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: the file is larger than the limit of {limit / 2**20:g} MB")
    return data


def check_batch_sizes(where: str, sizes: object) -> tuple[int, ...]:
    """A sweep's batch sizes (engine/lab/sweep.py): 1 to MAX_SWEEP_POINTS integers, each 1..MAX_BATCH_SIZE;
    returned sorted, without repeats. Raises InvalidValue naming `where`."""
    if (
        not isinstance(sizes, (list, tuple))
        or not 1 <= len(sizes) <= MAX_SWEEP_POINTS
        or any(type(b) is not int or not 1 <= b <= MAX_BATCH_SIZE for b in sizes)
    ):
        rule = f"must list 1 to {MAX_SWEEP_POINTS} batch sizes, each an integer from 1 to {MAX_BATCH_SIZE}"
        raise wrong_value(where, rule, sizes)
    return tuple(sorted(set(sizes)))


def check_loaded_log(log) -> None:
    """A loaded event log the lab can draw: at most MAX_BATCH_SIZE slots (ValueError naming line 1)."""
    size = log.config.batch_size
    if size > MAX_BATCH_SIZE:
        raise ValueError(f"line 1: batch_size: the lab draws at most {MAX_BATCH_SIZE} slots, got {size}")
