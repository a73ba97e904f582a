"""The scale section's workloads: four axes, each a family of runs that grows one thing.

- **requests**: 1,000 to 100,000 requests of 16 tokens at 64 slots (seed 004's shape);
- **answer length**: answers of 16 to 4,096 tokens, at 64 slots, each request with 2 stop
  sequences of length 4, about 32,768 tokens a run (never fewer than 64 requests);
- **stop sequences**: 1 to 64 stop sequences of length 8 on each of 512 requests of 64 tokens;
- **batch size**: 8 to 4,096 slots, with twice as many requests as slots (at least 2,048), of 16 tokens.

The model (`ScaleModel`) costs O(1) a row and never emits the stop token (0) or completes a stop
sequence (stop sequences use tokens from 100 up, the model answers 1 to 7), so every request
runs to its `max_tokens` and a run generates exactly `Workload.tokens` tokens. Only the thing on
the axis changes along it, so a cost per token that grows with the size is the engine's own.
A workload is made from its axis name and size alone, in the checker and in the solution's
process, so nothing large crosses the pipe.
"""

from __future__ import annotations

from dataclasses import dataclass

STOP_TOKEN = 0
PROMPT = (1, 2, 3, 4)


class ScaleModel:
    """Next token `len(prefix) % 7 + 1`: O(1) a row, never 0, never a stop sequence's token."""

    def generate_next_tokens(self, batch_prefixes):
        return [len(prefix) % 7 + 1 for prefix in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes, active_mask):
        return [len(p) % 7 + 1 if active else 0 for p, active in zip(batch_prefixes, active_mask)]

    next_tokens = generate_next_tokens
    __call__ = generate_next_tokens


@dataclass(frozen=True)
class Workload:
    batch_size: int
    requests: int
    max_tokens: int
    stops: tuple[tuple[int, ...], ...]  # every request's stop sequences

    @property
    def tokens(self) -> int:
        return self.requests * self.max_tokens


def _stops(count: int, length: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(range(100 + i * length, 100 + (i + 1) * length)) for i in range(count))


@dataclass(frozen=True)
class Axis:
    name: str
    unit: str  # what a size counts, for the report: "requests", "tokens an answer", ...
    sizes: tuple[int, ...]
    needs_stops: bool  # only for a solution whose submit_request takes stop sequences

    @property
    def target(self) -> int:
        return self.sizes[-1]

    def workload(self, size: int) -> Workload:
        if self.name == "requests":
            return Workload(64, size, 16, ())
        if self.name == "answer length":
            return Workload(64, max(64, 32768 // size), size, _stops(2, 4))
        if self.name == "stop sequences":
            return Workload(64, 512, 64, _stops(size, 8))
        if self.name == "batch size":
            return Workload(size, max(2048, 2 * size), 16, ())
        raise ValueError(f"no scale axis named {self.name!r}")


AXES = (
    Axis("requests", "requests", (1000, 4000, 16000, 64000, 100000), False),
    Axis("answer length", "tokens an answer", (16, 64, 256, 1024, 4096), True),
    Axis("stop sequences", "stop sequences a request", (1, 4, 16, 64), True),
    Axis("batch size", "slots", (8, 64, 512, 4096), False),
)
AXIS_BY_NAME = {axis.name: axis for axis in AXES}
