"""What a scenario is: its engine settings, model, requests or generated workload, and texts.

`scenario.py` reads these from TOML files and checks every field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

from ..core.config import EngineConfig
from .request_spec import RequestSpec
from .workload import generated_workload


@dataclass(frozen=True)
class ModelConfig:
    kind: str = "simulated"  # or "scripted"
    seed: int = 0
    vocab_size: int = 1000
    eos_token: int = 0
    stop_chance: float = 0.1
    filler: int = 1  # scripted: the token after a script ends
    fail_calls: tuple[int, ...] = ()  # model calls (0-based attempts) that raise once


@dataclass(frozen=True)
class WorkloadConfig:
    count: int
    prompt_len: tuple[int, int]
    seed: int
    output: tuple[str, dict]
    arrival: tuple[str, dict]
    stop_sequences: list[list[int]] | None = None
    max_tokens: int | None = None  # every request asks for this; the drawn lengths are where the model stops


@dataclass(frozen=True)
class Scenario:
    name: str  # file stem
    source: str  # path as given, for messages
    title: str
    lesson: str
    engine: EngineConfig
    model: ModelConfig
    explicit_requests: tuple[RequestSpec, ...] | None = None
    workload: WorkloadConfig | None = None
    vocabulary: dict[int, str] = field(default_factory=dict)
    captions: dict[int, str] = field(default_factory=dict)
    cost: str = "default"  # the cost model that prices its steps (engine/analysis/hardware.py)

    @cached_property
    def requests(self) -> list[RequestSpec]:
        if self.explicit_requests is not None:
            return list(self.explicit_requests)
        w = self.workload
        return generated_workload(
            w.count,
            seed=w.seed,
            prompt_len=w.prompt_len,
            vocab_size=self.model.vocab_size,
            output=w.output,
            arrival=w.arrival,
            stop_sequences=w.stop_sequences,
            max_tokens=w.max_tokens,
        )

    def with_engine(self, **changes) -> Scenario:
        """The same scenario with other engine settings (batch size, batching, padding, stop token)."""
        changed = dataclasses.replace(self, engine=dataclasses.replace(self.engine, **changes))
        if "requests" in self.__dict__:  # the workload is unchanged: keep the one already generated
            changed.__dict__["requests"] = self.__dict__["requests"]
        return changed
