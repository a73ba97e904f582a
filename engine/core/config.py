"""The engine's settings as one record: what a scenario's `[engine]` table holds, what
`BatchInferenceEngine.from_config` takes, and what an event log's header carries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EngineConfig:
    batch_size: int = 4  # slots: the most rows in one model call
    stop_token: int | None = 0  # None: no stop token (omit the key in TOML)
    batching: str = "continuous"  # or "static": admit only into an empty batch
    padded: bool = False  # every model call sends batch_size rows and an active mask
