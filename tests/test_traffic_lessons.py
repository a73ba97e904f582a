"""The chapter "Real traffic" says what its runs do: each figure of a lesson's text and reveal is computed here
from the trace window or the run (with the scenario's cost model) and looked up in the text as written; the
whole-hour figures it quotes are those docs/traces.md measured with their commands; and each run stays small
enough for a shared server (events, requests) while holding what the lesson is about."""

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from engine.analysis.hardware import cost_model
from engine.analysis.metrics import percentile, prefill_seconds, request_metrics, step_metrics, token_gaps
from engine.analysis.prefix_hits import cache_hits
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from engine.lab.trace_stats import length_statistics
from engine.lab.trace_workload import trace_of
from tests.test_lesson_claims import says

LESSONS = ("traffic-coding", "traffic-conversation", "traffic-burst", "traffic-kimi-cache")
TRACES_DOC = Path(__file__).resolve().parent.parent / "docs" / "traces.md"
MAX_EVENTS, MAX_REQUESTS = 300_000, 2_000  # a lesson's run on a class's shared server


@cache
def run(name: str):
    scenario = resolve_scenario(name)
    log, cost = simulate(scenario), cost_model(scenario.cost)
    steps = step_metrics(log, cost)
    return scenario, log, cost, steps, request_metrics(log, cost, steps)


WORDS = {4: "four", 5: "five", 6: "six"}


def percent(share: float) -> str:
    return f"{share * 100:.0f} %"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms"


def window_says(name: str) -> None:
    """The window's requests, lengths and totals, as the lesson gives them."""
    scenario = resolve_scenario(name)
    table = trace_of(scenario.trace)
    lengths = length_statistics(table)
    longest = [] if name == "traffic-burst" else [f"the longest {int(table.input_length.max()):,}"]
    says(
        scenario,
        f"{len(table):,} requests" if name != "traffic-burst" else f"{len(table):,} of them",
        f"{lengths['prompt']['median']:,} tokens",
        *longest,
    )


@pytest.mark.parametrize("name", LESSONS)
def test_each_lesson_s_run_is_small_enough_for_a_shared_server(name):
    _, log, _, _, _ = run(name)
    assert len(log) < MAX_EVENTS and len(log.requests) < MAX_REQUESTS
    window_says(name)


def test_the_coding_minute_is_mostly_prompt_work_and_says_so_after_the_predictions():
    scenario, log, cost, steps, requests = run("traffic-coding")
    table = trace_of(scenario.trace)
    prefill, busy = prefill_seconds(steps, cost)
    gaps = token_gaps(log, steps)
    ratio = table.prompt_tokens / table.output_length.sum()
    says(
        scenario,
        f"median answer {length_statistics(table)['output']['median']} tokens",
        f"{table.prompt_tokens:,} prompt tokens for {int(table.output_length.sum()):,} generated ones, about "
        f"{ratio:.0f} to 1",
        f"4.0 ms, each token of context a row attends to {cost.kv_token_s * 1e6:.2f} µs more, and each prompt "
        f"token computed {cost.prefill_token_s * 1e6:.1f} µs",
        f"Prompt tokens took {percent(prefill / busy)} of the busy time: {prefill:.2f} s of the {busy:.2f} s",
        f"The other {busy - prefill:.2f} s are {len(steps)} steps",
        f"at most {steps.running_rows.max()} at once",
        f"The median first token came {ms(percentile(requests.ttft_s, 50))} after",
        f"the p99 after {ms(percentile(requests.ttft_s, 99))}",
        f"{np.percentile(gaps, 50) * 1e3:.1f} ms at the median but {np.percentile(gaps, 99) * 1e3:.0f} ms at p99",
    )
    assert round(8192 * cost.prefill_token_s * 1e3) == 242 and "about 246 ms" in scenario.lesson  # (with a step's 4)
    full = steps[steps.prefill_tokens > 8000].step.tolist()
    assert full[:2] == [446, 447] and "(steps 446 and 447)" in " ".join(scenario.reveal.split())


def test_the_chat_minute_is_mostly_token_work_and_nobody_waits():
    scenario, log, cost, steps, requests = run("traffic-conversation")
    table = trace_of(scenario.trace)
    prefill, busy = prefill_seconds(steps, cost)
    decoding = steps[steps.prefill_tokens == 0]
    gaps = token_gaps(log, steps)
    says(
        scenario,
        f"median {length_statistics(table)['output']['median']} tokens, the longest {int(table.output_length.max())})",
        f"{table.prompt_tokens:,} prompt tokens for {int(table.output_length.sum()):,} generated",
        f"Prompt tokens took {percent(prefill / busy)} of the busy time: {prefill:.1f} s of the {busy:.1f} s",
        f"({len(steps):,} steps, none idle)",
        f"Only {int((steps.prefill_tokens > 0).sum())} steps computed any prompt",
        f"{decoding.rows_sent.mean():.1f} rows at a time on average and at most {steps.running_rows.max()}",
        f"about {decoding.duration_s.median() * 1e3:.1f} ms a step",
        f"at most {steps.kv_blocks_held.max():,} of the pool's 8,633 blocks",
        f"The median first token came after {ms(percentile(requests.ttft_s, 50))}",
        f"the p99 after {ms(percentile(requests.ttft_s, 99))}",
        f"{np.percentile(gaps, 50) * 1e3:.1f} ms at the median and {np.percentile(gaps, 99) * 1e3:.0f} ms at p99",
        f"no chunk here was longer than {steps.prefill_tokens.max():,} tokens",
    )
    assert int(steps.idle_before.sum()) == 0 and steps.queue_depth.max() == 0
    widest = steps[steps.step == 5933].iloc[0]  # (its caption's figures)
    assert widest.rows_sent == steps.running_rows.max() == 28 and widest.context_tokens == 33_764
    assert (round(widest.context_tokens * cost.kv_token_s * 1e3, 1), round(widest.duration_s * 1e3, 1)) == (5.3, 9.3)


def test_the_burst_fills_the_queue_then_the_pool_and_sets_the_tail():
    scenario, log, cost, steps, requests = run("traffic-burst")
    table = trace_of(scenario.trace)
    arrival = table.arrival_ms / 1000
    for start, end in ((0, 7), (7, 27), (27, 1e9)):
        inside = (arrival >= start) & (arrival < end)
        says(scenario, f"{int(inside.sum())} requests", f"{int(table.input_length[inside].sum()):,} prompt tokens")
    peak = int(steps.queue_depth.to_numpy().argmax())
    start_s = steps.end_s - steps.duration_s
    says(
        scenario,
        f"The queue peaked at {steps.queue_depth.max()} after the admissions of step {steps.step.iloc[peak]}, "
        f"{start_s.iloc[peak]:.1f} s into the run",
        f"The p99 time to first token was {percentile(requests.ttft_s, 99):.1f} s and the median "
        f"{percentile(requests.ttft_s, 50):.2f} s",
        f"Prefill took {percent(prefill_seconds(steps, cost)[0] / prefill_seconds(steps, cost)[1])} of the busy time",
    )
    queued = steps[(steps.step >= 636) & (steps.step < 809)]  # (the burst's queue: from 7.2 s to 43.5 s)
    assert round(queued.admitted.mean()) == 3 and round(3 * (queued.prefill_tokens > 8000).mean()) == 2
    says(scenario, "admitted about three requests a step, and two steps in three computed a full chunk")
    full = steps[steps.step == 679].iloc[0]
    assert (8633 - full.kv_blocks_held, full.admitted, full.running_rows) == (74, 0, 61)
    says(scenario, "From step 679 the pool was full too (74 blocks free, 61 rows running)")
    formed = steps[(steps.queue_depth > 0) & (steps.step > 600)].iloc[0]  # (after the first seconds' handful)
    cleared = steps[(steps.queue_depth == 0) & (steps.step > steps.step.iloc[peak])].iloc[0]
    took = start_s[cleared.name] - start_s[formed.name]
    says(
        scenario,
        f"The queue was empty again only at step {cleared.step:.0f}, {start_s[cleared.name]:.1f} s into the run, "
        f"{took:.0f} s after it began to form",
    )
    assert scenario.captions[int(cleared.step)].startswith("The burst's queue is empty again")
    assert f"at {start_s[formed.name]:.1f} s, so 20 s of arrivals took {took:.0f} s" in scenario.captions[809]


def test_kimi_s_minute_finds_its_first_block_everywhere_and_little_else():
    scenario, log, cost, steps, requests = run("traffic-kimi-cache")
    table = trace_of(scenario.trace)
    cached, looked_up = cache_hits(log)
    assert all(table.hash_ids(i)[0] == 0 for i in range(len(table)))  # "Every request ... starts with ... id 0"
    times, sizes = np.unique(table.arrival_ms, return_counts=True)
    assert set(np.round(np.diff(times) / 1000)) == {3}
    says(
        scenario, f"{len(table)} requests in {len(times)} groups of {sizes.min()} to {sizes.max()}, one group every 3 s"
    )
    found = requests.cached_tokens
    more = found[found > 512]
    assert (found == 0).sum() == 1 and (found == 512).sum() == len(table) - 1 - len(more)
    says(
        scenario,
        f"median 8,849 tokens, mean {table.input_length.mean():,.0f}",
        f"{table.prompt_tokens:,} in all",
        f"The prefix cache held {cached / looked_up * 100:.1f} % of the prompt tokens: {cached:,} of {looked_up:,}",
        f"only {WORDS[len(more)]} found more",
        f"r67 found {found['r67']:,} of its {requests.prompt_tokens['r67']:,} tokens",
        f"r17, r113 and r155 each found {found['r17']:,} tokens",
        f"r159 found {found['r159']:,}",
    )
    assert found["r17"] == found["r113"] == found["r155"]
    without = simulate(scenario.with_engine(prefix_caching=False))
    plain = request_metrics(without, cost)
    says(
        scenario,
        f"from {ms(percentile(plain.ttft_s, 50))} without the cache to {ms(percentile(requests.ttft_s, 50))} with it",
    )


@pytest.mark.parametrize(
    ("name", "figures"),
    [
        ("traffic-coding", ["0.24 s", "265 ms", "60 %", "4.2 s", "1,469", "about 1,500"]),
        ("traffic-conversation", ["19 %", "1,020", "129", "21 minutes", "93 minutes"]),
        ("traffic-burst", ["0.24 s", "17.1 s", "41.7 s"]),
        ("traffic-kimi-cache", ["5.4 %", "13.4 %", "36 %", "28.8 %", "77 %", "37.0 %", "99 %", "37.3 %"]),
    ],
)
def test_the_whole_hour_figures_a_reveal_quotes_are_those_measured_in_docs_traces(name, figures):
    reveal, doc = " ".join(resolve_scenario(name).reveal.split()), " ".join(TRACES_DOC.read_text().split())
    assert [f for f in figures if f not in doc] == [] and [f for f in figures if f not in reveal] == []
