"""What a scenario is: its engine settings, model, requests or generated workload, and texts.

`scenario.py` reads these from TOML files and checks every field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

from ..core.config import EngineConfig
from .conversation import Chat, SystemPrompt
from .quizzes import Quiz
from .real_servers import Callout
from .request_spec import RequestSpec
from .trace_workload import TraceWorkload, trace_requests
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
    system_prompt: SystemPrompt | None = None  # one prompt prefix shared by a share of the conversations
    chat: Chat | None = None  # multi-turn conversations (needs max_tokens): count × turns requests

    @property
    def request_count(self) -> int:
        return self.count * (self.chat.turns if self.chat else 1)


@dataclass(frozen=True)
class ReplicaConfig:
    """`[replicas]`: several copies of the engine behind a router, and a queue-depth autoscaler
    (engine/lab/replicas.py)."""

    initial: int = 1  # replicas serving from step 0 (also the fewest the autoscaler keeps)
    max: int = 4  # the most the autoscaler starts
    signal: str = "queue_depth"  # what it scales on: "queue_depth" or "utilization"
    threshold: float = 4.0  # queue_depth: waiting requests per replica; utilization: share of busy slots, 0..1
    window: int = 5  # consecutive steps above the threshold before a replica is added
    startup_steps: int = 0  # steps a new replica takes before it serves (a cold start)
    idle_steps: int = 0  # an idle replica is stopped after this many steps with no request waiting; 0: never


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
    quizzes: tuple[Quiz, ...] = ()  # predictions asked before their steps (engine/lab/quizzes.py)
    real_servers: tuple[Callout, ...] = ()  # where a real server differs, with sources (real_servers.py)
    sweep: tuple[int, ...] | None = None  # [sweep] batch_sizes: the batch sizes engine/lab/sweep.py compares
    replicas: ReplicaConfig | None = None  # [replicas]: engine/lab/replicas.py's router and autoscaler
    reveal: str = ""  # what happened in the run, shown once its predictions are checked (its outcomes, its numbers)
    trace: TraceWorkload | None = None  # [workload.trace]: a published trace's requests (engine/lab/trace_workload.py)

    @cached_property
    def requests(self) -> list[RequestSpec]:
        if self.explicit_requests is not None:
            return list(self.explicit_requests)
        if self.trace is not None:
            return trace_requests(self.trace, self.model.vocab_size)
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
            system=w.system_prompt,
            chat=w.chat,
            model=(self.model.seed, self.model.eos_token),
        )

    def with_engine(self, **changes) -> Scenario:
        """The same scenario with other engine settings (batch size, batching, padding, stop token). Taking
        the KV pool away (`kv_blocks=None`) turns off what only a pool has: prefix caching, the watermark;
        a reserving pool (`kv_policy="reserve"`) has no prefix cache either."""
        if "kv_blocks" in changes and changes["kv_blocks"] is None:
            changes = {"prefix_caching": False, "kv_watermark": 0.0, **changes}
        if changes.get("kv_policy") == "reserve":
            changes = {"prefix_caching": False, **changes}
        changed = dataclasses.replace(self, engine=dataclasses.replace(self.engine, **changes))
        if "requests" in self.__dict__:  # the workload is unchanged: keep the one already generated
            changed.__dict__["requests"] = self.__dict__["requests"]
        return changed
