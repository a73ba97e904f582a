"""The sidebar's settings in one table: each is a widget, a URL parameter and a field of `Overrides`.

An entry names its key (the session-state key, the URL parameter and the `Overrides` field
at once), its label, its widget and bounds, where a scenario keeps its own value, and when
the sidebar shows it. The sidebar (`cblab/ui/controls/controls.py`), the URL (`cblab/ui/controls/url.py`) and the
defaults a lesson starts from all read this table, so a new setting is one entry here and
one field of `Overrides` (`cblab/ui/runs/runs.py`). An engine setting's entry (`_engine`) takes its key,
bounds, options, group and default from the engine's table (`engine/lab/engine_settings.py`)
and adds only its words and widget (the fill timeout's bound is the sidebar's, narrower).

Two settings are text that the sidebar parses (`stop_token`, `stop_sequences`); the
optional numbers (`kv_blocks`, `token_budget`) write "none" in the URL for an empty field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import streamlit as st

from engine.lab.engine_settings import BY_NAME
from engine.lab.scenario import EngineConfig, Scenario

MAX_WORKLOAD = 20_000  # requests a generated workload may have in the app (a long run plays a window: long_run.py)
MAX_FILL_TIMEOUT = 1_000  # steps, in the sidebar and the URL (narrower than a scenario's)
MAX_SEED = 10**6
MAX_WATERMARK = 0.5  # the sidebar's highest watermark: half the pool held back


def _always(scenario: Scenario | None, values: dict) -> bool:
    return True


def _static(scenario: Scenario | None, values: dict) -> bool:
    return values.get("batching") == "static"  # (continuous batching never has an empty batch to hold)


def _memory(scenario: Scenario | None, values: dict) -> bool:
    return scenario is not None and scenario.engine.memory


def _paged_or_reserved(scenario: Scenario | None, values: dict) -> bool:
    return _memory(scenario, values) and values.get("kv_blocks") is not None


def _paged(scenario: Scenario | None, values: dict) -> bool:
    """Prefix caching needs a paged pool (the stage draws its shared and cached blocks)."""
    return _paged_or_reserved(scenario, values) and values.get("kv_policy") == "paged"


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


def _engine(name: str, label: str, widget: str, **ui) -> Setting:
    """The sidebar's entry for one engine setting: its key, bounds, options and group from the
    engine's table (engine/lab/engine_settings.py); `ui` adds the label's words and narrows a bound."""
    setting = BY_NAME[name]
    table = {"low": setting.low or 0, "high": setting.high or 0, "options": setting.choices, "group": setting.group}
    return Setting(name, label, widget, _own_engine_value(name, widget), **(table | ui))


def _own_engine_value(name: str, widget: str) -> Callable[[Scenario], object]:
    def own(scenario: Scenario) -> object:
        value = getattr(scenario.engine, name)
        if widget == "text":
            return "" if value is None else str(value)  # (the stop token: empty for none)
        return 0 if value is None and widget == "number" else value  # (the fill timeout: 0 for none)

    return own


SETTINGS = (
    _engine("batch_size", "Batch size (slots)", "number"),
    _engine("stop_token", "Stop token (empty: none)", "text", placeholder="none"),
    Setting("stop_sequences", "Extra stop sequences for every request", "text", lambda s: "", placeholder="7 8; 3 3 4"),
    _engine("batching", "Batching", "radio", projector=True),
    _engine("padded", "Padded batches (fixed shape + mask)", "toggle", projector=True),
    _engine(
        "fill_timeout",
        "Fill timeout (steps; 0: run at once)",
        "number",
        high=MAX_FILL_TIMEOUT,
        help="An empty static batch waits until the queue can fill it, or until its oldest request has waited "
        "this long.",
        shown=_static,
    ),
    _engine(
        "kv_blocks",
        "KV blocks (empty: unlimited memory)",
        "optional_number",
        help="The KV cache pool, in blocks of block-size tokens each.",
        placeholder="unlimited",
        shown=_memory,
    ),
    _engine("block_size", "Block size (tokens)", "number", shown=_paged_or_reserved),
    _engine(
        "kv_policy",
        "KV policy",
        "radio",
        help="paged: a row takes a block when its tokens need one (vLLM); reserve: prompt + max_tokens at "
        "admission (Orca, FasterTransformer).",
        shown=_paged_or_reserved,
    ),
    _engine(
        "token_budget",
        "Token budget per step (empty: none)",
        "optional_number",
        help="The most tokens one step computes (vLLM's max_num_batched_tokens): long prompts are prefilled in "
        "chunks. At least the batch size.",
        placeholder="none",
        shown=_memory,
    ),
    _engine(
        "kv_watermark",
        "Watermark (share of the pool kept free)",
        "slider",
        high=MAX_WATERMARK,
        help="While rows run, an admission must leave this share of the KV blocks free, for the running rows to "
        "grow into (vLLM v0's watermark, 0.01 there): fewer preemptions, fewer rows at once.",
        shown=_paged_or_reserved,
    ),
    _engine(
        "prefix_caching",
        "Prefix caching",
        "toggle",
        help="Full KV blocks are kept under their tokens and shared: a request whose prompt starts like an earlier "
        "one's finds those blocks cached and computes only the rest (vLLM's automatic prefix caching).",
        shown=_paged,
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
ENGINE_DEFAULTS = SimpleNamespace(engine=EngineConfig())  # stands for a scenario at the engine's defaults


def own_values(scenario: Scenario | None) -> dict:
    """The values a scenario starts from, for every setting it has (an upload not yet parsed: the engine's)."""
    if scenario is None:
        return {setting.key: setting.own(ENGINE_DEFAULTS) for setting in SETTINGS if setting.group == "engine"}
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
