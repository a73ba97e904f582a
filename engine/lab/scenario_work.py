"""How much work a scenario asks for: its worst case, checked against `engine/lab/limits.py`
before it runs, so a file or a URL can never start a run without bound.

    x.toml: requests[0].max_tokens: 1,000,000,000,000 lets the run generate up to
    1,000,000,000,000 tokens; the limit is 2,000,000 generated tokens per run

A generated workload is estimated from its budgets and arrivals, which are cheap to draw,
before any prompt is generated.
"""

from __future__ import annotations

from dataclasses import replace

from .answer_model import answer_ids
from .conversation import longest_prompts
from .limits import LIMITS, MAX_REQUESTS, TRACE_LIMITS, UPLOADED_TRACE_LIMITS, Work, first_excess, worst_case
from .scenario_types import Scenario
from .toml_reader import ScenarioError
from .trace_workload import trace_of
from .workload import WorkloadTooLarge, workload_shape


def check_work(scenario: Scenario) -> Work:
    """The scenario's worst case; raises ScenarioError (one line) if it is over a limit."""
    if scenario.explicit_requests is not None:
        work, blame = _explicit(scenario)
    elif scenario.trace is not None:
        work, blame = _trace(scenario)
    else:
        work, blame = _generated(scenario)
    excess = first_excess(work, _limits(scenario))
    if excess is not None:
        name, value, limit, unit = excess
        field, given, effect = blame(name, value)
        raise ScenarioError(f"{scenario.source}: {field}: {given} {effect}; the limit is {limit:,} {unit} per run")
    return work


def _limits(scenario: Scenario) -> dict:
    """A whole-trace replay has limits of its own; an uploaded trace runs within the app's (but its prompts)."""
    if scenario.trace is None:
        return LIMITS
    return UPLOADED_TRACE_LIMITS if scenario.trace.uploaded else TRACE_LIMITS


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
    turns = w.chat.turns if w.chat else 1
    if w.request_count > MAX_REQUESTS:  # before drawing anything
        return Work(w.request_count, 0, 0, 0, 0, 0), lambda name, value: _too_many_requests(w)
    _check_answer_model(scenario)
    try:
        lengths, arrivals = workload_shape(w.count, seed=w.seed, output=w.output, arrival=w.arrival, chat=w.chat)
    except WorkloadTooLarge as exc:
        raise ScenarioError(f"{scenario.source}: workload.{exc.field}: {exc}") from None
    system = w.system_prompt.length if w.system_prompt else 0
    without_system = (w.count - (w.system_prompt.members(w.count) if w.system_prompt else 0)) * turns * system
    lens = longest_prompts(w.prompt_len[1], system, w.chat, lengths, w.max_tokens)
    prompts = sum(lens) - without_system
    budget = max(lengths) if w.max_tokens is None else w.max_tokens  # what the engine checks at submit
    own = "workload" if w.max_tokens is None else "workload.output.max_tokens"  # (every request asks for it)
    for field, prompt in ((own, w.prompt_len[1]), ("workload.system_prompt.len", system + w.prompt_len[1])):
        _check_fits(scenario, field, prompt + budget)
    _check_fits(scenario, "workload.chat.turns", max(lens) + budget)  # a chat's last turns: the longest prompts
    work = _engine_work(scenario, lengths, arrivals, prompts, lens)
    distribution, params = w.output
    param = {"fixed": "value", "uniform": "max", "capped_exponential": "cap"}[distribution]

    def blame(name: str, value: int) -> tuple[str, str, str]:
        if name == "prompt_tokens" and turns > 1:
            given = f"{turns:,} (× {w.count:,} conversations, prompts up to {max(lens):,} tokens)"
            return "workload.chat.turns", given, _effect(name, value)
        if name == "prompt_tokens" and system > w.prompt_len[1]:
            given = f"{system:,} (on {w.system_prompt.members(w.count):,} requests)"
            return "workload.system_prompt.len", given, _effect(name, value)
        if name == "prompt_tokens":
            given = f"{w.count:,} requests × up to {w.prompt_len[1]:,} tokens"
            return "workload.prompt_len", given, _effect(name, value)
        if name == "model_rows" and scenario.engine.padded:
            return "engine.padded", f"true with batch_size {scenario.engine.batch_size}", _effect(name, value)
        given = f"{len(lengths):,} requests × up to {params[param]:,} tokens"
        return f"workload.output.{param}", given, _effect(name, value)

    return work, blame


def _trace(scenario: Scenario):
    """A trace replay's work, from the trace's own lengths (no request is built); it needs a KV pool (its clock
    reads the `prefill` events: engine/analysis/step_clock.py) and a ragged batch."""
    engine, config = scenario.engine, scenario.trace
    if engine.kv_blocks is None or engine.padded:
        problem = "needs a KV pool, [engine.kv] blocks" if engine.kv_blocks is None else "cannot be padded"
        raise ScenarioError(f"{scenario.source}: workload.trace: a trace replay {problem}")
    table = trace_of(config)
    prompts, budgets = table.input_length.tolist(), table.output_length.tolist()
    longest = max(range(len(prompts)), key=lambda i: prompts[i] + budgets[i])
    _check_fits(scenario, f"workload.trace: {config.label} row {longest}", prompts[longest] + budgets[longest])
    work = _engine_work(scenario, budgets, [0] * len(budgets), table.prompt_tokens, prompts)

    def blame(name: str, value: int) -> tuple[str, str, str]:
        given = f"{len(prompts):,} requests, {table.prompt_tokens:,} prompt and {sum(budgets):,} answer tokens"
        return "workload.trace", given, _effect(name, value)

    return work, blame


def _too_many_requests(w) -> tuple[str, str, str]:
    if w.chat and w.chat.turns > 1:
        given = f"{w.chat.turns:,} (× {w.count:,} conversations)"
        return "workload.chat.turns", given, f"makes {w.request_count:,} requests"
    return "workload.count", f"{w.count:,}", "is too many"


def _check_answer_model(scenario: Scenario) -> None:
    """The answer model (engine/lab/answer_model.py) can tell every request's answer id apart, and a chat's
    answers end where its next prompts say: at the model's stop token, which the engine must stop at."""
    w, model = scenario.workload, scenario.model
    if w.max_tokens is None:
        return
    ids = w.count + bool(w.system_prompt and w.system_prompt.length)
    if ids > answer_ids(model.vocab_size):
        raise ScenarioError(
            f"{scenario.source}: workload.count: {w.count:,} {'conversations' if w.chat else 'requests'} need "
            f"{ids:,} answer ids{' (one for the system prompt)' if ids > w.count else ''}, but model.vocab_size "
            f"{model.vocab_size:,} has {answer_ids(model.vocab_size):,} ((vocab_size − 1)²)"
        )
    if w.chat and scenario.engine.stop_token != model.eos_token:
        raise ScenarioError(
            f"{scenario.source}: workload.chat: needs engine.stop_token = {model.eos_token} (model.eos_token), so that "
            f"each answer ends where the next turn's prompt says; {_stop_token(scenario.engine.stop_token)}"
        )


def _stop_token(token: int | None) -> str:
    return "engine.stop_token is left out" if token is None else f"engine.stop_token is {token}"
