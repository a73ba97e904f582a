"""Mock language models, and the protocol any user model must follow.

The engine only ever calls one method per step (see `model_caller`):

- `generate_next_tokens(batch_prefixes) -> list[int]`   (first seed, ragged batch)
- `generate_next_tokens_padded(batch_prefixes, active_mask) -> list[int]`
                                                         (first seed, fixed shape)
- `next_tokens(batch) -> list[int]`                      (second seed)
- or the object itself, called as `model(batch)`.

`SimulatedLLM` is deterministic from its seed and costs O(1) per row: the next token
depends on the prefix length, its first and last token, never the whole prefix. Rows
finish at different steps because each token is `eos_token` with probability
`stop_chance`, so output lengths are geometric with mean `1 / stop_chance` (capped by
each request's `max_tokens`); `stop_chance=0` leaves lengths to `max_tokens` alone, as
in the Anyscale benchmark's workload.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

_MASK64 = (1 << 64) - 1


@runtime_checkable
class BatchModel(Protocol):
    """What the engine needs from a model (any one of these methods is enough).

    A model may keep, reorder or empty the outer list it is given: each call gets a list
    of its own. It must not change the prefixes inside it: they are the engine's own
    per-request token lists, passed without a copy so a step costs the same however long
    the rows are. It returns one token per row, in the order the rows were given.
    """

    def generate_next_tokens(self, batch_prefixes: list[list[int]]) -> list[int]:
        """Return one next token per row, in row order."""
        ...


@runtime_checkable
class PaddedBatchModel(Protocol):
    """A fixed-shape model: one output per row, inactive rows included (ignored)."""

    def generate_next_tokens_padded(self, batch_prefixes: list[list[int]], active_mask: list[bool]) -> list[int]: ...


def _mix(x: int) -> int:
    """splitmix64 finaliser: a fast, well-spread 64-bit hash of an int."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


@dataclass
class SimulatedLLM:
    """A stateless, seeded mock LLM; same prefix, same next token, whatever the batch."""

    seed: int = 0
    vocab_size: int = 1000  # token ids are drawn from [0, vocab_size)
    eos_token: int = 0  # the token emitted with probability `stop_chance`
    stop_chance: float = 0.1  # per-token chance of `eos_token`

    def __post_init__(self) -> None:
        if self.vocab_size < 2:
            raise ValueError(f"vocab_size: must be >= 2, got {self.vocab_size}")
        if not 0.0 <= self.stop_chance <= 1.0:
            raise ValueError(f"stop_chance: must be in [0, 1], got {self.stop_chance}")
        self._threshold = int(self.stop_chance * (1 << 32))

    def next_token(self, prefix: list[int]) -> int:
        """The next token after `prefix`, in O(1): reads its length and both ends only."""
        n = len(prefix)
        first, last = (prefix[0], prefix[-1]) if n else (-1, -1)
        h = _mix(self.seed * 0x100000001B3 ^ _mix(first) ^ _mix(last + (n << 32)))
        if (h & 0xFFFFFFFF) < self._threshold:
            return self.eos_token
        token = (h >> 32) % (self.vocab_size - 1)
        return token + 1 if token >= self.eos_token else token

    def generate_next_tokens(self, batch_prefixes: list[list[int]]) -> list[int]:
        return [self.next_token(p) for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes: list[list[int]], active_mask: list[bool]) -> list[int]:
        if len(batch_prefixes) != len(active_mask):
            raise ValueError("active_mask: must have one entry per row")
        return [self.next_token(p) if m else self.eos_token for p, m in zip(batch_prefixes, active_mask)]


class MockModel(SimulatedLLM):
    """The second seed's name for the same model: `next_tokens(batch)`."""

    def next_tokens(self, batch: list[list[int]]) -> list[int]:
        return self.generate_next_tokens(batch)


RaggedCall = Callable[[list[list[int]]], list[int]]
PaddedCall = Callable[[list[list[int]], list[bool]], list[int]]


def model_caller(model: object, padded: bool) -> RaggedCall | PaddedCall:
    """The bound method the engine calls each step, found by duck typing."""
    if padded:
        method = getattr(model, "generate_next_tokens_padded", None)
        if not callable(method):
            raise TypeError(
                "model: padded=True needs a generate_next_tokens_padded(batch_prefixes, "
                f"active_mask) method; {type(model).__name__} has none"
            )
        return method
    for name in ("generate_next_tokens", "next_tokens"):
        method = getattr(model, name, None)
        if callable(method):
            return method
    if callable(model):
        return model
    raise TypeError(
        "model: needs a generate_next_tokens(batch) or next_tokens(batch) method, "
        f"or must be callable; {type(model).__name__} is neither"
    )


class ScriptedLLM:
    """A model that replays fixed continuations, so a scenario's story is exact.

    `scripts` pairs each prompt with the tokens generated after it. A prefix is looked
    up exactly (prompt + the first k scripted tokens), so this costs O(prefix) per row:
    it is for small teaching scenarios, not benchmarks. Past the end of its script, or
    for an unknown prefix, a row gets `filler`. Two scripts that continue the same
    prefix differently are refused (`ValueError` naming `scripts[i]`).
    """

    def __init__(self, scripts: list[tuple[list[int], list[int]]], filler: int = 1):
        self.filler = filler
        self._next: dict[tuple[int, ...], int] = {}
        owner: dict[tuple[int, ...], int] = {}
        for i, (prompt, script) in enumerate(scripts):
            prefix = tuple(prompt)
            for token in script:
                if self._next.setdefault(prefix, token) != token:
                    raise ValueError(
                        f"scripts[{i}]: continues {list(prefix)} with {token}, but scripts[{owner[prefix]}] "
                        f"continues it with {self._next[prefix]}; give the prompts different tokens"
                    )
                owner.setdefault(prefix, i)
                prefix = (*prefix, token)

    def next_token(self, prefix: list[int]) -> int:
        return self._next.get(tuple(prefix), self.filler)

    def generate_next_tokens(self, batch_prefixes: list[list[int]]) -> list[int]:
        return [self.next_token(p) for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes: list[list[int]], active_mask: list[bool]) -> list[int]:
        return [self.next_token(p) if m else self.filler for p, m in zip(batch_prefixes, active_mask)]
