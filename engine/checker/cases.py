"""The checker's cases: the seeds' examples, the contract's conventions, and generated workloads.

Every request's prompt starts with its own id token (100 + index), so each row the
model receives can be traced to one request. Scripted cases fix each continuation;
the others use a model that hashes the whole prefix, so crossed rows answer differently.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

ID_BASE = 100  # prompt[0] of request i is ID_BASE + i


@dataclass(frozen=True)
class CaseRequest:
    prompt: tuple[int, ...]
    max_tokens: int
    stops: tuple[tuple[int, ...], ...] = ()
    script: tuple[int, ...] | None = None  # scripted continuation; None: the hash model answers


@dataclass(frozen=True)
class Case:
    name: str
    title: str  # what the case checks, in plain words
    batch_size: int
    stop_token: int | None
    requests: tuple[CaseRequest, ...]
    generated: bool = False
    vocab_size: int = 6  # hash model: answers in [0, vocab_size)
    tags: tuple[str, ...] = field(default=())

    @property
    def needs_stops(self) -> bool:
        return any(r.stops for r in self.requests)

    def to_json(self) -> dict:
        return {
            "batch_size": self.batch_size,
            "stop_token": self.stop_token,
            "vocab_size": self.vocab_size,
            "requests": [
                {
                    "prompt": list(r.prompt),
                    "max_tokens": r.max_tokens,
                    "stops": [list(s) for s in r.stops],
                    "script": None if r.script is None else list(r.script),
                }
                for r in self.requests
            ],
        }

    @classmethod
    def from_json(cls, data: dict, name: str = "uploaded") -> Case:
        requests = tuple(
            CaseRequest(
                tuple(r["prompt"]),
                r["max_tokens"],
                tuple(map(tuple, r["stops"])),
                None if r["script"] is None else tuple(r["script"]),
            )
            for r in data["requests"]
        )
        return cls(
            name, "a checker case", data["batch_size"], data["stop_token"], requests, vocab_size=data["vocab_size"]
        )

    def describe(self) -> str:
        head = f"batch_size={self.batch_size}, stop_token={self.stop_token}"
        rows = [
            f"r{i}: prompt={list(r.prompt)}, max_tokens={r.max_tokens}"
            + (f", stop_sequences={[list(s) for s in r.stops]}" if r.stops else "")
            + (f", model continues with {list(r.script)}" if r.script is not None else "")
            for i, r in enumerate(self.requests)
        ]
        return "\n".join([head, *rows])


def _ints(value: object) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > 64 or any(type(t) is not int for t in value):
        raise TypeError(f"expected a short list of integers, got {value!r:.60}")
    return tuple(value)


def _small(value: object) -> int:
    if type(value) is not int or not 0 <= value <= 64:
        raise ValueError(f"expected an integer 0..64, got {value!r:.60}")
    return value


def _scripted(*requests: tuple) -> tuple[CaseRequest, ...]:
    """(tail of prompt, max_tokens, script[, stops]) -> requests with id-prefixed prompts."""
    out = []
    for i, (tail, max_tokens, script, *stops) in enumerate(requests):
        out.append(
            CaseRequest((ID_BASE + i, *tail), max_tokens, tuple(map(tuple, stops[0])) if stops else (), tuple(script))
        )
    return tuple(out)


def fixed_cases() -> list[Case]:
    return [
        Case(
            "part1",
            "the seeds' Part 1: two requests processed together",
            2,
            0,
            _scripted(((2,), 3, (3, 4, 5)), ((20,), 3, (30, 40, 50))),
        ),
        Case(
            "part2",
            "the seeds' Part 2: a freed slot is refilled at once",
            2,
            0,
            _scripted(((), 1, (11,)), ((), 3, (21, 22, 23)), ((), 2, (31, 32)), ((), 1, (41,))),
        ),
        Case(
            "first-example",
            "the seeds' first example: three requests, four slots",
            4,
            0,
            tuple(
                CaseRequest((ID_BASE + i, *tail), m) for i, (tail, m) in enumerate([((2, 3), 5), ((20,), 3), ((), 10)])
            ),
        ),
        Case(
            "stop-token-included",
            "the stop token is delivered inside the output (5, 5, 0)",
            1,
            0,
            _scripted(((9,), 10, (5, 5, 0, 6))),
        ),
        Case(
            "stop-token-in-prompt",
            "a stop token inside the prompt never stops a row",
            1,
            0,
            _scripted(((0, 0), 10, (4, 0))),
        ),
        Case(
            "max-tokens-generated-only",
            "max_tokens counts generated tokens only",
            1,
            None,
            _scripted(((1, 2, 3, 4, 5), 2, (6, 7, 8))),
        ),
        Case(
            "max-tokens-zero",
            "max_tokens = 0 completes at once with the prompt",
            2,
            0,
            _scripted(((1, 2), 0, ()), ((3,), 2, (4, 5))),
        ),
        Case(
            "empty-prompt",
            "an empty prompt is allowed (the model gets an empty prefix)",
            1,
            0,
            (CaseRequest((), 2, (), (7, 8)),),
        ),
        Case(
            "stop-sequence-across-steps",
            "a stop sequence completed across steps is included",
            1,
            None,
            _scripted(((), 10, (7, 4, 7, 8, 5), [[7, 8]])),
        ),
        Case(
            "stop-sequence-overlap",
            "overlapping stop sequences: [1, 1, 2] in 1, 1, 1, 2",
            1,
            None,
            _scripted(((), 10, (1, 1, 1, 2, 9), [[1, 1, 2]])),
        ),
        Case(
            "stop-sequence-prefix",
            "a stop that is a prefix of another completes first",
            1,
            None,
            _scripted(((), 10, (1, 2, 3), [[1, 2, 3], [1, 2]])),
        ),
        Case(
            "stop-sequence-generated-only",
            "stop sequences match generated tokens only, not the prompt",
            1,
            None,
            _scripted(((7,), 10, (8, 3, 7, 8), [[7, 8]])),
        ),
        Case(
            "stop-state-reset",
            "a new request in a slot starts with fresh stop-matching state",
            1,
            None,
            _scripted(((), 1, (7,), [[7, 8]]), ((), 3, (8, 8, 5), [[7, 8]])),
        ),
        Case(
            "refill-order",
            "rows keep their own tokens after refills in lower slots",
            3,
            None,
            _scripted(
                ((), 1, (11,)),
                ((), 5, (21, 22, 23, 24, 25)),
                ((), 4, (31, 32, 33, 34)),
                ((), 3, (41, 42, 43)),
                ((), 2, (51, 52)),
            ),
        ),
    ]


def generated_case(rng: random.Random, index: int, with_stops: bool) -> Case:
    count = rng.randint(1, 8)
    requests = []
    for i in range(count):
        tail = tuple(rng.randrange(6) for _ in range(rng.randint(0, 3)))
        stops = (
            tuple(tuple(rng.randrange(6) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(0, 2)))
            if with_stops
            else ()
        )
        requests.append(CaseRequest((ID_BASE + i, *tail), rng.randint(0, 7), stops))
    return Case(
        f"generated-{index}",
        "a generated workload",
        rng.randint(1, 4),
        rng.choice([0, None]),
        tuple(requests),
        generated=True,
    )


def generated_cases(seed: int, count: int, with_stops: bool) -> list[Case]:
    rng = random.Random(seed)
    return [generated_case(rng, i, with_stops) for i in range(count)]


def renumbered(case: Case, requests: list[CaseRequest]) -> Case:
    """The case with these requests, their id tokens renumbered from ID_BASE."""
    fixed = tuple(replace(r, prompt=(ID_BASE + i, *r.prompt[1:])) if r.prompt else r for i, r in enumerate(requests))
    return replace(case, requests=fixed)
