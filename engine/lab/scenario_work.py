"""How much work a scenario asks for: its worst case, checked against `engine/lab/limits.py`
before it runs, so a file or a URL can never start a run without bound.

    x.toml: requests[0].max_tokens: 1,000,000,000,000 lets the run generate up to
    1,000,000,000,000 tokens; the limit is 2,000,000 generated tokens per run

A generated workload is estimated from its budgets and arrivals, which are cheap to draw,
before any prompt is generated.
"""

from __future__ import annotations

from dataclasses import replace

from .limits import MAX_REQUESTS, Work, first_excess, worst_case
from .scenario_types import Scenario
from .toml_reader import ScenarioError
from .workload import WorkloadTooLarge, workload_shape


def check_work(scenario: Scenario) -> Work:
    """The scenario's worst case; raises ScenarioError (one line) if it is over a limit."""
    if scenario.explicit_requests is not None:
        work, blame = _explicit(scenario)
    else:
        work, blame = _generated(scenario)
    excess = first_excess(work)
    if excess is not None:
        name, value, limit, unit = excess
        field, given, effect = blame(name, value)
        raise ScenarioError(f"{scenario.source}: {field}: {given} {effect}; the limit is {limit:,} {unit} per run")
    return work


def _engine_work(scenario: Scenario, budgets, arrivals, prompt_tokens: int, prompt_lens: list[int]) -> Work:
    engine = scenario.engine
    memory = None
    if engine.memory:
        chunk = engine.token_budget or 1 << 62
        prefill_steps = sum(-(-p // chunk) for p in prompt_lens)
        blocks = -(-(prompt_tokens + sum(budgets)) // engine.block_size) + len(budgets)
        memory = (prefill_steps, blocks)
    return worst_case(
        budgets,
        arrivals,
        prompt_tokens,
        engine.batch_size,
        static=engine.batching == "static",
        padded=engine.padded,
        faults=len(scenario.model.fail_calls),
        memory=memory,
    )


def _check_fits(scenario: Scenario, field: str, tokens: int) -> None:
    """A request whose prompt + max_tokens needs more blocks than the whole pool can never run."""
    engine = scenario.engine
    if engine.kv_blocks is None:
        return
    need = -(-tokens // engine.block_size)
    if need > engine.kv_blocks:
        raise ScenarioError(
            f"{scenario.source}: {field}: prompt + max_tokens = {tokens:,} tokens need {need:,} blocks of "
            f"{engine.block_size}, but engine.kv.blocks is {engine.kv_blocks:,}"
        )


def _effect(name: str, value: int) -> str:
    """What a Work field's value means, as the end of a sentence."""
    return {
        "requests": f"makes {value:,} requests",
        "prompt_tokens": f"makes {value:,} prompt tokens",
        "generated_tokens": f"lets the run generate up to {value:,} tokens",
        "steps": f"lets the run take up to {value:,} steps",
        "model_rows": f"sends up to {value:,} rows to the model",
        "events": f"lets the run log up to {value:,} events",
        "scripted_reads": f"makes the scripted model read up to {value:,} prefix tokens",
    }[name]


def _explicit(scenario: Scenario):
    requests = scenario.explicit_requests
    budgets = [r.max_tokens for r in requests]
    prompts = sum(len(r.prompt) for r in requests)
    for i, r in enumerate(requests):
        if r.max_tokens:
            _check_fits(scenario, f"requests[{i}]", len(r.prompt) + r.max_tokens)
    lens = [len(r.prompt) for r in requests]
    work = _engine_work(scenario, budgets, [r.arrival_step or 0 for r in requests], prompts, lens)
    if scenario.model.kind == "scripted":  # each row's whole prefix is looked up
        reads = sum(_scripted_reads(len(r.prompt), m, len(r.script)) for r, m in zip(requests, budgets))
        work = replace(work, scripted_reads=reads)
    longest = max(range(len(budgets)), key=budgets.__getitem__)
    padded = scenario.engine.padded and (scenario.engine.batch_size * work.steps > work.generated_tokens)

    def blame(name: str, value: int) -> tuple[str, str, str]:
        if name == "requests":
            return "requests", f"{len(requests):,} [[requests]]", "are too many"
        if name == "prompt_tokens":
            return "requests[].prompt", f"{prompts:,} tokens in all", "are too many"
        if name == "scripted_reads":
            return "requests[].script", "prompts, scripts and max_tokens this long", _effect(name, value)
        if name == "model_rows" and padded:
            return "engine.padded", f"true with batch_size {scenario.engine.batch_size}", _effect(name, value)
        if 2 * budgets[longest] >= sum(budgets):
            return f"requests[{longest}].max_tokens", f"{budgets[longest]:,}", _effect(name, value)
        return "requests[].max_tokens", f"adding up to {sum(budgets):,}", _effect(name, value)

    return work, blame


def _scripted_reads(prompt: int, budget: int, script: int) -> int:
    """Prefix tokens a scripted model reads for one request: building its script's prefixes,
    then one whole-prefix lookup per generated token."""
    return (budget + script) * prompt + (budget * budget + script * script) // 2


def _generated(scenario: Scenario):
    w = scenario.workload
    if w.count > MAX_REQUESTS:  # before drawing anything
        return Work(w.count, 0, 0, 0, 0, 0), lambda name, value: ("workload.count", f"{w.count:,}", "is too many")
    try:
        budgets, arrivals = workload_shape(w.count, seed=w.seed, output=w.output, arrival=w.arrival)
    except WorkloadTooLarge as exc:
        raise ScenarioError(f"{scenario.source}: workload.{exc.field}: {exc}") from None
    prompts = w.count * w.prompt_len[1]
    if w.max_tokens is None:
        _check_fits(scenario, "workload", w.prompt_len[1] + max(budgets, default=0))
    else:  # every request asks for max_tokens (the drawn lengths are where its answer stops)
        _check_fits(scenario, "workload.output.max_tokens", w.prompt_len[1] + w.max_tokens)
    work = _engine_work(scenario, budgets, arrivals, prompts, [w.prompt_len[1]] * w.count)
    distribution, params = w.output
    param = {"fixed": "value", "uniform": "max", "capped_exponential": "cap"}[distribution]

    def blame(name: str, value: int) -> tuple[str, str, str]:
        if name == "requests":
            return "workload.count", f"{w.count:,}", "is too many"
        if name == "prompt_tokens":
            given = f"{w.count:,} requests × up to {w.prompt_len[1]:,} tokens"
            return "workload.prompt_len", given, _effect(name, value)
        if name == "model_rows" and scenario.engine.padded:
            return "engine.padded", f"true with batch_size {scenario.engine.batch_size}", _effect(name, value)
        given = f"{w.count:,} requests × up to {params[param]:,} tokens"
        return f"workload.output.{param}", given, _effect(name, value)

    return work, blame
