"""The engine's settings as one record: what a scenario's `[engine]` table holds, what
`BatchInferenceEngine.from_config` takes, and what an event log's header carries.

The memory settings (names as in vLLM where it has one) are off by default: with
`kv_blocks` and `token_budget` both None, memory is unlimited and a whole prompt is
prefilled in the step that admits it. `fill_timeout` (static batching only) is off by
default too: an empty batch runs at once with whatever waits. So are prefix caching and the
admission watermark (the contract's last section), which need a KV pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from .validation import (
    MAX_ENGINE_BATCH_SIZE,
    MAX_STEP,
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_token,
    wrong_value,
)

KV_POLICIES = ("paged", "reserve")
BATCHING = ("continuous", "static")


@dataclass(frozen=True, slots=True)
class EngineConfig:
    batch_size: int = 4  # slots: the most rows in one model call (vLLM's max_num_seqs)
    stop_token: int | None = 0  # None: no stop token (omit the key in TOML)
    batching: str = "continuous"  # or "static": admit only into an empty batch
    padded: bool = False  # every model call sends batch_size rows and an active mask
    kv_blocks: int | None = None  # the KV cache pool, in blocks; None: unlimited
    block_size: int = 16  # tokens per KV block (vLLM's default)
    kv_policy: str = "paged"  # "paged": blocks as tokens need them; "reserve": prompt + max_tokens at admission
    token_budget: int | None = None  # most tokens one step computes (vLLM's max_num_batched_tokens); None: no limit
    fill_timeout: int | None = None  # static: an empty batch waits up to this many steps to fill; None: runs at once
    prefix_caching: bool = False  # full blocks are shared by identical prefixes (vLLM's automatic prefix caching)
    kv_watermark: float = 0.0  # share of the pool held back from admissions (vLLM v0's watermark, 0.01 there)

    def __post_init__(self):
        """Check every field, in order, in the project's one wording (`validation.py`: the message
        names the field); a numpy integer is kept as a Python int. A scenario or an event log
        checks its own narrower limits first, naming its file and line."""
        checked = {
            "batch_size": check_int("batch_size", self.batch_size, minimum=1, maximum=MAX_ENGINE_BATCH_SIZE),
            "stop_token": None if self.stop_token is None else check_token("stop_token", self.stop_token),
            "batching": check_choice("batching", self.batching, BATCHING),
            "padded": check_bool("padded", self.padded),
            "kv_blocks": _optional_int("kv_blocks", self.kv_blocks, minimum=1),
            "block_size": check_int("block_size", self.block_size, minimum=1, maximum=MAX_STEP),
            "kv_policy": check_choice("kv_policy", self.kv_policy, KV_POLICIES),
            "token_budget": _optional_int("token_budget", self.token_budget, minimum=self.batch_size),  # every row fits
            "fill_timeout": _optional_int("fill_timeout", self.fill_timeout, minimum=0),
            "prefix_caching": check_bool("prefix_caching", self.prefix_caching),
            "kv_watermark": _fraction("kv_watermark", self.kv_watermark),
        }
        if checked["prefix_caching"] and (checked["kv_blocks"] is None or checked["kv_policy"] != "paged"):
            raise ValueError("prefix_caching: needs kv_blocks set and kv_policy 'paged'")
        if checked["kv_watermark"] and checked["kv_blocks"] is None:
            raise ValueError("kv_watermark: needs kv_blocks set")
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # (a frozen record: set once, here)

    @property
    def watermark_blocks(self) -> int:
        """Blocks held back from admissions: int(kv_watermark * kv_blocks)."""
        return int(self.kv_watermark * self.kv_blocks) if self.kv_blocks is not None else 0

    @property
    def memory(self) -> bool:
        """Whether the KV pool or the token budget is in play (else: today's engine, event for event)."""
        return self.kv_blocks is not None or self.token_budget is not None


def _optional_int(where: str, value: object, minimum: int) -> int | None:
    return None if value is None else check_int(where, value, minimum=minimum, maximum=MAX_STEP)


def _fraction(where: str, value: object) -> float:
    """A number from 0 up to, not including, 1."""
    number = check_number(where, value)
    if not 0 <= number < 1:
        raise wrong_value(where, "must be a number ≥ 0 and below 1", value)
    return number
