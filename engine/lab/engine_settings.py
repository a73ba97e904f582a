"""The engine's settings in one table: each `EngineConfig` field with its type, the limits a file,
a link or a command line holds it to, its default, its TOML key, its CLI flag and one line of help.

Four front doors read this table, so a new setting is one entry here (and a field of
`EngineConfig`, whose default is the default here):

- the scenario reader (`engine/lab/scenario.py`): a scenario's `[engine]` table, one key each
  (an optional setting left out is None: a scenario without `stop_token` has none);
- the CLI (`cblab/cli/options.py`): `--batch-size`, the memory group, `--static`, `--padded`, ...
  (the stop token alone has no flag);
- the sidebar and the URL (`cblab/ui/controls/settings.py`, read by `controls.py` and `url.py` beside it): the
  URL parameter is the setting's name; an entry takes its key, bounds, options and group from here
  and adds its label and widget (the sidebar narrows the fill timeout to 1,000 steps);
- `Overrides` (`cblab/ui/runs/runs.py`): a field each, checked by `tests/test_engine_settings.py`.

The table sits in the lab, beside the other limits (`limits.py`), because the engine's core
imports nothing above it. So two layers of limits hold, as before: these, checked first and
naming the file, line or flag; then `EngineConfig`'s own, wider ones (`engine/core/config.py`),
which the Python API alone meets. An event log's header (`engine/core/log/jsonl.py`) checks
its fields itself, then `limits.check_loaded_log` the slots.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..core.config import BATCHING, KV_POLICIES, EngineConfig
from ..core.validation import INT64_MAX, INT64_MIN
from .limits import MAX_BATCH_SIZE, MAX_FILL_TIMEOUT, MAX_KV_BLOCKS, MAX_LENGTH, MAX_PROMPT_TOKENS

DEFAULTS = {field.name: field.default for field in dataclasses.fields(EngineConfig)}


@dataclass(frozen=True, slots=True)
class EngineSetting:
    name: str  # the EngineConfig field; also the URL parameter, the sidebar's key and the Overrides field
    kind: str  # "int", "bool", "choice" or "fraction" (a number from `low` up to, not including, `high`)
    help: str  # one line, for people (the CLI's help)
    low: int | None = None  # an int's limits in a scenario, a URL and the CLI
    high: int | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False  # None allowed (off); a scenario that leaves the key out means None
    at_least: str | None = None  # a scenario also holds it at or above this setting's value
    toml: str = ""  # its key under [engine] if not its name ("kv.blocks": `blocks` in [engine.kv])
    group: str = "engine"  # "memory": the KV cache and the token budget (a CLI group, a sidebar caption)
    flag: str | None = None  # its CLI option; None: only a scenario sets it
    switch: object = None  # the value a flag without an argument sets (--static: "static")
    batching_mode: bool = False  # only `run` sets it: `compare` runs every batching mode itself
    needs: tuple[tuple[str, object], ...] = ()  # other settings it takes effect with, and a value that allows it

    @property
    def default(self) -> object:
        """`EngineConfig`'s default (the Python API's, and a generated workload's)."""
        return DEFAULTS[self.name]

    @property
    def toml_path(self) -> str:
        return self.toml or self.name


ENGINE_SETTINGS = (
    EngineSetting(
        "batch_size", "int", "slots: the most rows in one model call", 1, MAX_BATCH_SIZE, flag="--batch-size"
    ),
    EngineSetting(
        "stop_token", "int", "the token that ends a row (left out: none)", INT64_MIN, INT64_MAX, optional=True
    ),
    EngineSetting(
        "batching",
        "choice",
        "static batching: admit only into an empty batch",
        choices=BATCHING,
        flag="--static",
        switch="static",
        batching_mode=True,
    ),
    EngineSetting(
        "padded",
        "bool",
        "padded batches: batch_size rows and an active mask",
        flag="--padded",
        switch=True,
        batching_mode=True,
    ),
    EngineSetting(
        "kv_blocks",
        "int",
        "the KV pool, in blocks",
        1,
        MAX_KV_BLOCKS,
        optional=True,
        toml="kv.blocks",
        group="memory",
        flag="--kv-blocks",
    ),
    EngineSetting(
        "block_size",
        "int",
        "tokens per KV block",
        1,
        MAX_LENGTH,
        toml="kv.block_size",
        group="memory",
        flag="--block-size",
    ),
    EngineSetting(
        "kv_policy",
        "choice",
        "paged (vLLM) or reserve (prompt + max_tokens)",
        choices=KV_POLICIES,
        toml="kv.policy",
        group="memory",
        flag="--kv-policy",
    ),
    EngineSetting(
        "token_budget",
        "int",
        "most tokens one step computes",
        1,
        MAX_PROMPT_TOKENS,
        optional=True,
        at_least="batch_size",  # every row fits
        group="memory",
        flag="--token-budget",
    ),
    EngineSetting(
        "fill_timeout",
        "int",
        "static batching: an empty batch waits up to N steps to fill all its slots",
        0,
        MAX_FILL_TIMEOUT,
        optional=True,
        flag="--fill-timeout",
        batching_mode=True,
    ),
    EngineSetting(
        "prefix_caching",
        "bool",
        "prefix caching: full blocks shared by identical prefixes (a paged pool only)",
        toml="kv.prefix_caching",
        group="memory",
        flag="--prefix-caching",
        switch=True,
        needs=(("kv_blocks", 64),),
    ),
    EngineSetting(
        "kv_watermark",
        "fraction",
        "share of the pool an admission leaves free while rows run (vLLM v0's watermark: 0.01)",
        0,
        1,
        toml="kv.watermark",
        group="memory",
        flag="--kv-watermark",
        needs=(("kv_blocks", 64),),
    ),
)
BY_NAME = {setting.name: setting for setting in ENGINE_SETTINGS}
