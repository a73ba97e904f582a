"""The engine's settings as one record: what a scenario's `[engine]` table holds, what
`BatchInferenceEngine.from_config` takes, and what an event log's header carries.

The memory settings (names as in vLLM where it has one) are off by default: with
`kv_blocks` and `token_budget` both None, memory is unlimited and a whole prompt is
prefilled in the step that admits it. `fill_timeout` (static batching only) is off by
default too: an empty batch runs at once with whatever waits.
"""

from __future__ import annotations

from dataclasses import dataclass

KV_POLICIES = ("paged", "reserve")


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

    @property
    def memory(self) -> bool:
        """Whether the KV pool or the token budget is in play (else: today's engine, event for event)."""
        return self.kv_blocks is not None or self.token_budget is not None
