"""A scenario's `[workload]` table, read and checked field by field (scenarios/README.md documents it).

Each error is one line naming the file and the field, like the rest of the scenario's
(`toml_reader.py`). What only the whole scenario can check (the answer ids against the
model's vocabulary, the stop token a chat needs, the run's limits) is `scenario_work.py`'s.
"""

from __future__ import annotations

from ..core.validation import INT64_MAX, INT64_MIN
from .conversation import Chat, SystemPrompt
from .limits import MAX_ARRIVAL_STEP, MAX_LENGTH, MAX_REQUESTS
from .scenario_types import WorkloadConfig
from .toml_reader import Table
from .workload import ARRIVALS, DISTRIBUTIONS


def parse_workload(t: Table) -> WorkloadConfig:
    length = _length_range(t, "prompt_len", 16)
    output, arrival = t.table("output", required=True), t.table("arrival") or Table(t.source, {}, t.where("arrival"))
    max_tokens = output.int("max_tokens", None, minimum=1, maximum=MAX_LENGTH)
    if max_tokens is not None and length[0] < 2:
        raise t.fail(
            "prompt_len",
            "must be at least 2 with output.max_tokens (the answer model reads a 2-token id)",
            list(length),
        )
    system = _system_prompt(t.table("system_prompt"), max_tokens) if t.has("system_prompt") else None
    chat = _chat(t.table("chat")) if t.has("chat") else None
    config = WorkloadConfig(
        count=t.int("count", minimum=1, maximum=MAX_REQUESTS),
        prompt_len=length,
        seed=t.int("seed", 0, minimum=INT64_MIN, maximum=INT64_MAX),
        output=_choice_with_params(output, "distribution", DISTRIBUTIONS),
        arrival=_choice_with_params(arrival, "process", ARRIVALS, default="burst"),
        stop_sequences=t.stop_sequences("stop_sequences"),
        max_tokens=max_tokens,
        system_prompt=system,
        chat=chat,
    )
    t.check_no_unknown_keys()
    params = config.output[1]
    if config.output[0] == "uniform" and params["min"] > params["max"]:
        raise output.fail("min", f"must be ≤ max ({params['max']})", params["min"])
    if chat is not None and max_tokens is None:
        raise t.fail(
            "chat",
            "needs workload.output.max_tokens: a turn's prompt holds the answer before it, so the "
            "model must stop each answer at a length drawn in advance",
        )
    if chat is not None and config.stop_sequences:
        raise t.fail(
            "stop_sequences",
            "cannot go with [workload.chat]: a stop sequence could end an answer "
            "before the next turn's prompt says it ends",
        )
    return config


def _length_range(t: Table, key: str, default: int) -> tuple[int, int]:
    """An integer 0..MAX_LENGTH, or a range [min, max]."""
    length = t.raw(key, default)
    if type(length) is int:
        length = [length, length]
    if not (
        isinstance(length, list)
        and len(length) == 2
        and all(type(n) is int for n in length)
        and 0 <= length[0] <= length[1] <= MAX_LENGTH
    ):
        raise t.fail(key, f"must be an integer 0..{MAX_LENGTH} or a range [min, max]", length)
    return length[0], length[1]


def _system_prompt(t: Table, max_tokens: int | None) -> SystemPrompt:
    """`[workload.system_prompt]` (or an inline table): `len` tokens, on a `share` of the conversations."""
    config = SystemPrompt(
        length=t.int("len", minimum=0, maximum=MAX_LENGTH), share=t.number("share", 1.0, minimum=0.0, maximum=1.0)
    )
    if max_tokens is not None and config.length == 1:
        raise t.fail("len", "must be 0 or at least 2 with output.max_tokens (it starts with a 2-token id)", 1)
    t.check_no_unknown_keys()
    return config


def _chat(t: Table) -> Chat:
    """`[workload.chat]`: `turns` requests a conversation, `gap` steps apart, each later one asking a question."""
    config = Chat(
        turns=t.int("turns", minimum=1, maximum=MAX_REQUESTS),
        gap=t.int("gap", minimum=0, maximum=MAX_ARRIVAL_STEP),
        question_len=_length_range(t, "question_len", 16),
    )
    t.check_no_unknown_keys()
    return config


def _choice_with_params(t: Table, key: str, choices: dict, default: object = ...) -> tuple[str, dict]:
    """A `{key = name, param = number...}` table, such as an output-length distribution."""
    name = t.str(key, default, choices=tuple(choices))
    params = {}
    for param in choices[name]:
        if param == "rate":
            params[param] = t.number(param, minimum=1e-9)
        else:
            params[param] = t.int(param, minimum=1, maximum=MAX_LENGTH)
    t.check_no_unknown_keys()
    return name, params
