"""The sidebar's settings in one table: each is a widget, a URL parameter and a field of `Overrides`.

An entry names its key (the session-state key, the URL parameter and the `Overrides` field
at once), its label, its widget and bounds, where a scenario keeps its own value, and when
the sidebar shows it. The sidebar (`ui/controls.py`), the URL (`ui/url.py`) and the
defaults a lesson starts from all read this table, so a new setting is one entry here and
one field of `Overrides` (`ui/runs.py`).

Two settings are text that the sidebar parses (`stop_token`, `stop_sequences`); the
optional numbers (`kv_blocks`, `token_budget`) write "none" in the URL for an empty field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from engine.core.config import KV_POLICIES
from engine.lab.limits import MAX_BATCH_SIZE, MAX_KV_BLOCKS, MAX_LENGTH, MAX_PROMPT_TOKENS
from engine.lab.scenario import Scenario

MAX_WORKLOAD = 5_000  # requests a generated workload may have in the app
MAX_FILL_TIMEOUT = 1_000  # steps, in the sidebar and the URL
MAX_SEED = 10**6


def _always(scenario: Scenario | None, values: dict) -> bool:
    return True


def _static(scenario: Scenario | None, values: dict) -> bool:
    return values.get("batching") == "static"  # (continuous batching never has an empty batch to hold)


def _memory(scenario: Scenario | None, values: dict) -> bool:
    return scenario is not None and scenario.engine.memory


def _paged_or_reserved(scenario: Scenario | None, values: dict) -> bool:
    return _memory(scenario, values) and values.get("kv_blocks") is not None


def _simulated(scenario: Scenario | None, values: dict) -> bool:
    return scenario is not None and scenario.model.kind == "simulated"


def answers_drawn(scenario: Scenario | None) -> bool:
    """Whether the workload draws each answer's length (then the model stops there, not by chance)."""
    return scenario is not None and scenario.workload is not None and scenario.workload.max_tokens is not None


def _stop_chance(scenario: Scenario | None, values: dict) -> bool:
    return _simulated(scenario, values) and not answers_drawn(scenario)


def _generated(scenario: Scenario | None, values: dict) -> bool:
    return scenario is not None and scenario.workload is not None


@dataclass(frozen=True)
class Setting:
    key: str  # session state, URL parameter and Overrides field
    label: str
    widget: str  # number, optional_number (empty: None), text, radio, toggle, slider
    own: Callable[[Scenario], object]  # the scenario's own value, as the widget holds it
    low: float = 0
    high: float = 0
    options: tuple[str, ...] = ()
    help: str = ""
    placeholder: str = ""
    group: str = "engine"  # engine, switches (on screen in presentation mode), memory, model, workload
    shown: Callable[[Scenario | None, dict], bool] = _always
    projector: bool = False  # stays on screen in presentation mode, beside the stage


def _stop_token_text(scenario: Scenario) -> str:
    token = scenario.engine.stop_token
    return "" if token is None else str(token)


SETTINGS = (
    Setting("batch_size", "Batch size (slots)", "number", lambda s: s.engine.batch_size, 1, MAX_BATCH_SIZE),
    Setting("stop_token", "Stop token (empty: none)", "text", _stop_token_text, placeholder="none"),
    Setting("stop_sequences", "Extra stop sequences for every request", "text", lambda s: "", placeholder="7 8; 3 3 4"),
    Setting(
        "batching", "Batching", "radio", lambda s: s.engine.batching, options=("continuous", "static"), projector=True
    ),
    Setting("padded", "Padded batches (fixed shape + mask)", "toggle", lambda s: s.engine.padded, projector=True),
    Setting(
        "fill_timeout",
        "Fill timeout (steps; 0: run at once)",
        "number",
        lambda s: s.engine.fill_timeout or 0,
        0,
        MAX_FILL_TIMEOUT,
        help="An empty static batch waits until the queue can fill it, or until its oldest request has waited "
        "this long.",
        shown=_static,
    ),
    Setting(
        "kv_blocks",
        "KV blocks (empty: unlimited memory)",
        "optional_number",
        lambda s: s.engine.kv_blocks,
        1,
        MAX_KV_BLOCKS,
        help="The KV cache pool, in blocks of block-size tokens each.",
        placeholder="unlimited",
        group="memory",
        shown=_memory,
    ),
    Setting(
        "block_size",
        "Block size (tokens)",
        "number",
        lambda s: s.engine.block_size,
        1,
        MAX_LENGTH,
        group="memory",
        shown=_paged_or_reserved,
    ),
    Setting(
        "kv_policy",
        "KV policy",
        "radio",
        lambda s: s.engine.kv_policy,
        options=KV_POLICIES,
        help="paged: a row takes a block when its tokens need one (vLLM); reserve: prompt + max_tokens at "
        "admission (Orca, FasterTransformer).",
        group="memory",
        shown=_paged_or_reserved,
    ),
    Setting(
        "token_budget",
        "Token budget per step (empty: none)",
        "optional_number",
        lambda s: s.engine.token_budget,
        1,
        MAX_PROMPT_TOKENS,
        help="The most tokens one step computes (vLLM's max_num_batched_tokens): long prompts are prefilled in "
        "chunks. At least the batch size.",
        placeholder="none",
        group="memory",
        shown=_memory,
    ),
    Setting("model_seed", "Model seed", "number", lambda s: s.model.seed, 0, MAX_SEED, group="model", shown=_simulated),
    Setting(
        "stop_chance",
        "Chance of the stop token per token",
        "slider",
        lambda s: s.model.stop_chance,
        0.0,
        1.0,
        group="model",
        shown=_stop_chance,
    ),
    Setting(
        "workload_count",
        "Requests",
        "number",
        lambda s: min(s.workload.count, MAX_WORKLOAD),
        1,
        MAX_WORKLOAD,
        group="workload",
        shown=_generated,
    ),
    Setting(
        "workload_seed",
        "Workload seed",
        "number",
        lambda s: s.workload.seed,
        0,
        MAX_SEED,
        group="workload",
        shown=_generated,
    ),
)
BY_KEY = {setting.key: setting for setting in SETTINGS}
NO_SCENARIO = {"batch_size": 4, "stop_token": "0", "stop_sequences": "", "batching": "continuous", "padded": False}


def own_values(scenario: Scenario | None) -> dict:
    """The values a scenario starts from, for every setting it has (an upload not yet parsed: the engine's)."""
    if scenario is None:
        return dict(NO_SCENARIO, fill_timeout=0)
    values = {}
    for setting in SETTINGS:
        try:
            values[setting.key] = setting.own(scenario)
        except AttributeError:  # (a scenario without a workload has no workload settings)
            continue
    return values


def parse(setting: Setting, text: str) -> object:
    """A URL parameter's text as the widget's value; ValueError if it is not one the widget offers."""
    if setting.widget == "toggle":
        if text not in ("true", "false"):
            raise ValueError(text)
        return text == "true"
    if setting.widget == "radio":
        if text not in setting.options:
            raise ValueError(text)
        return text
    if setting.widget == "text":
        return _stop_token(text) if setting.key == "stop_token" else text
    if setting.widget == "optional_number" and text == "none":
        return None
    kind = float if setting.widget == "slider" else int
    value = kind(text)
    if not setting.low <= value <= setting.high:
        raise ValueError(text)
    return value


def _stop_token(text: str) -> str:
    """The stop-token field's text: "none" is the empty field."""
    return "" if text == "none" else str(int(text))


def url_text(setting: Setting, value: object) -> str:
    """How a widget's value is written in the URL ("" leaves the parameter out)."""
    if setting.key == "stop_token":
        return (value or "").strip() or "none"  # an empty field is written as "none"
    if setting.key == "fill_timeout" and not value:
        return ""  # (0: left out of the link)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def changed_settings(scenario: Scenario) -> list[tuple[str, str, str]]:
    """(label, the scenario's own value, the sidebar's) for each setting the sidebar has changed."""
    changed = []
    for key, own in own_values(scenario).items():
        yours = st.session_state.get(key, own)
        if yours != own and BY_KEY[key].shown(scenario, st.session_state):
            changed.append((BY_KEY[key].label.split(" (")[0], _said(own), _said(yours)))
    return changed


def _said(value: object) -> str:
    if value is None or value == "":
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:,}" if isinstance(value, int) else str(value)
