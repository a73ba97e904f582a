"""Trace replays (engine/lab/trace_replay.py, trace_workload.py): each request joins the first step that starts
at or after its arrival time, on the clock the metrics price; every answer has the trace's output length; the
scenario's `[workload.trace]` is checked field by field."""

import numpy as np
import pytest

from engine.analysis.hardware import cost_model
from engine.analysis.metrics import request_metrics, step_metrics
from engine.analysis.step_clock import StepClock
from engine.core.log.events import EventKind
from engine.lab.limits import TRACE_LIMITS
from engine.lab.scenario import parse_scenario
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError
from engine.lab.trace_workload import trace_of

SCENARIO = """
title = "the first requests of Kimi's hour"
cost = "{cost}"
[engine]
batch_size = 8
token_budget = 4096
[engine.kv]
blocks = {blocks}
block_size = 512
prefix_caching = true
[workload.trace]
name = "mooncake-conversation"
first = {first}
"""


def scenario(first=120, blocks=400, cost="llama-2-7b-8xh100-80gb", **changes):
    text = SCENARIO.format(first=first, blocks=blocks, cost=cost)
    for key, value in changes.items():
        text = text.replace(key, value)
    return parse_scenario(text, "t.toml")


@pytest.fixture(scope="module")
def replayed():
    chosen = scenario()
    return chosen, simulate(chosen)


def test_the_clock_while_the_run_goes_is_the_metrics_clock(replayed):
    chosen, log = replayed
    cost = cost_model(chosen.cost)
    clock, ends = StepClock(log, cost), []
    for step in np.unique(np.frombuffer(log.step, np.int32)).tolist():  # the log as it stood after each step
        clock.log = _Prefix(log, log.step_range(step).stop)
        clock.advance()
        ends.append(clock.end_s)
    assert ends == step_metrics(log, cost).end_s.tolist()


class _Prefix:
    """The first `n` events of a log, as the engine had written them by then."""

    def __init__(self, log, n):
        self._log, self._n = log, n

    def __len__(self):
        return self._n

    def __getattr__(self, name):
        return getattr(self._log, name)


def arrival_starts(log, cost, delivered=False) -> dict[str, tuple[float, float]]:
    """Each request's (start of the step it arrived at, start of the step before: -1 for step 0), on the log's
    clock; with `delivered`, (that start, the start of the step that delivered it)."""
    steps = step_metrics(log, cost)
    busy, end = steps.step.to_numpy(), steps.end_s.to_numpy()
    start_of_busy = end - steps.duration_s.to_numpy()

    def start(step):  # a busy step's own start; an idle one ticks step_s after the busy step before it
        i = np.searchsorted(busy, step)
        if i < len(busy) and busy[i] == step:
            return start_of_busy[i]
        return (end[i - 1] if i else 0.0) + (step - (busy[i - 1] if i else -1) - 1) * cost.step_s

    kinds, requests, steps_of = (
        np.frombuffer(c, t) for c, t in ((log.kind, np.int8), (log.request, np.int32), (log.step, np.int32))
    )
    out = {}
    for kind, request, step in zip(kinds.tolist(), requests.tolist(), steps_of.tolist()):
        rid = log.requests[request].request_id if request >= 0 else None
        if kind == EventKind.ARRIVE:
            out[rid] = (start(step), start(step - 1) if step else -1.0)
        elif kind == EventKind.EVICT and delivered:
            out[rid] = (out[rid][0], start(step))
    return out


def test_each_request_joins_the_first_step_that_starts_at_or_after_its_arrival(replayed):
    chosen, log = replayed
    arrival = {spec.request_id: spec.arrival_ms / 1000 for spec in chosen.requests}
    for request_id, (start, before) in arrival_starts(log, cost_model(chosen.cost)).items():
        assert start >= arrival[request_id] > before


def test_every_answer_has_the_traces_output_length(replayed):
    chosen, log = replayed
    table = trace_of(chosen.trace)
    generated = request_metrics(log, cost_model(chosen.cost)).output_tokens.to_numpy()
    assert generated.tolist() == table.output_length.tolist()
    assert [len(info.prompt) for info in log.requests] == table.input_length.tolist()


def test_a_replay_finds_the_reuse_its_trace_records():
    """Request 1 of the conversation trace repeats request 0's first blocks: admitted after it, it hits them."""
    log = simulate(scenario(first=2))
    hits = log.to_dataframe().query("kind == 'prefix_hit'")
    table = trace_of(scenario(first=2).trace)
    shared = 0
    for a, b in zip(table.hash_ids(0).tolist(), table.hash_ids(1).tolist()):
        if a != b:
            break
        shared += 1
    assert shared and set(hits.request_id) == {"r1"} and len(hits) == min(shared, table.input_length[0] // 512)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({'name = "mooncake-conversation"': 'name = "kimi"'}, "workload.trace.name: must be one of"),
        ({"first = 120": 'first = 120\nfile = "x.jsonl"'}, "give either name"),
        ({'name = "mooncake-conversation"': 'file = "x.jsonl"'}, "workload.trace.file: names a file on the server"),
        ({"[workload.trace]": "[workload]\ncount = 3\n[workload.trace]"}, "workload.count: cannot go with"),
        ({"first = 120": "first = 120\nrate = 1000"}, "workload.trace.rate: must be"),
        ({"first = 120": "start_s = 99999"}, "mooncake-conversation: no request arrives at or after"),
        ({"blocks = 400\n": "", "[engine.kv]": "", "block_size = 512\nprefix_caching = true\n": ""}, "needs a KV pool"),
        ({"blocks = 400": "blocks = 100"}, "row .*: prompt \\+ max_tokens = .* need .* blocks of 512"),
    ],
)
def test_a_bad_trace_table_is_refused_naming_the_field(change, message):
    with pytest.raises(ScenarioError, match=message):
        scenario(**change)


def test_a_trace_over_the_replay_limits_is_refused_before_it_runs(monkeypatch):
    monkeypatch.setitem(TRACE_LIMITS, "generated_tokens", (1_000, "generated tokens"))
    with pytest.raises(ScenarioError, match=r"t.toml: workload.trace: 100 requests, .* lets the run generate up to"):
        scenario(first=100)
