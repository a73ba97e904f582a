"""The checker's cases: the seeds' examples, the contract's conventions, and generated workloads.

Every request's prompt starts with its own id token (100 + index), so each row the
model receives can be traced to one request. Scripted cases fix each continuation;
the others use a model that hashes the whole prefix, so crossed rows answer differently.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

ID_BASE = 100  # prompt[0] of request i is ID_BASE + i

# Bounds on a case read from a file (`Case.from_json`: the case a checker log carries).
# Every case the checker makes (fixed, generated or shrunk) fits inside them; they keep
# re-running, rebuilding and drawing one instant.
MAX_BATCH_SIZE = 8
MAX_REQUESTS = 16
MAX_PROMPT = 16  # tokens in a prompt
MAX_BUDGET = 16  # max_tokens of a request
MAX_STOPS = 4  # stop sequences of a request
MAX_STOP_LENGTH = 8  # tokens in a stop sequence (at least 1)
MAX_SCRIPT = 32  # tokens in a scripted continuation
MAX_VOCAB_SIZE = 64  # the hash model answers tokens 0..vocab_size - 1
MAX_TOKEN = 2**31 - 1  # token ids (and the stop token) are 0..MAX_TOKEN


@dataclass(frozen=True)
class CaseRequest:
    """A request of a checker case: plain, hashable data that crosses to the worker process
    and shrinks, with the scripted answers a case may fix (none of the engine's types)."""

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
    def from_json(cls, data: object, name: str = "uploaded") -> Case:
        """A case read from a file (a checker log's header); ValueError naming the field unless within the bounds."""
        fields = _fields(data, "", ("batch_size", "stop_token", "vocab_size", "requests"))
        batch_size = _int(fields["batch_size"], "batch_size", 1, MAX_BATCH_SIZE)
        stop_token = None if fields["stop_token"] is None else _int(fields["stop_token"], "stop_token", 0, MAX_TOKEN)
        vocab_size = _int(fields["vocab_size"], "vocab_size", 1, MAX_VOCAB_SIZE)
        listed = fields["requests"]
        if not isinstance(listed, list) or not 1 <= len(listed) <= MAX_REQUESTS:
            got = f"{len(listed)} requests" if isinstance(listed, list) else _show(listed)
            raise ValueError(f"requests: must be a list of 1..{MAX_REQUESTS} requests, got {got}")
        return cls(
            name,
            "a checker case",
            batch_size,
            stop_token,
            tuple(_request(r, f"requests[{n}].") for n, r in enumerate(listed)),
            vocab_size=vocab_size,
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


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fields(data: object, where: str, names: tuple[str, ...]) -> dict:
    if not isinstance(data, dict):
        head = f"{where.rstrip('.')}: " if where else ""
        raise ValueError(f"{head}must be a JSON object, got {_show(data)}")
    for key in data:
        if key not in names:
            raise ValueError(f"{where}{key}: not a field of a checker case")
    for key in names:
        if key not in data:
            raise ValueError(f"{where}{key}: missing")
    return data


def _int(value: object, where: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{where}: must be an integer {low}..{high}, got {_show(value)}")
    return value


def _tokens(value: object, where: str, low: int, high: int) -> tuple[int, ...]:
    """A list of `low`..`high` token ids."""
    if (
        not isinstance(value, list)
        or not low <= len(value) <= high
        or any(type(t) is not int or not 0 <= t <= MAX_TOKEN for t in value)
    ):
        raise ValueError(f"{where}: must be a list of {low}..{high} token ids 0..{MAX_TOKEN}, got {_show(value)}")
    return tuple(value)


def _request(data: object, where: str) -> CaseRequest:
    fields = _fields(data, where, ("prompt", "max_tokens", "stops", "script"))
    stops = fields["stops"]
    if not isinstance(stops, list) or len(stops) > MAX_STOPS:
        raise ValueError(f"{where}stops: must be a list of at most {MAX_STOPS} stop sequences, got {_show(stops)}")
    script = fields["script"]
    return CaseRequest(
        _tokens(fields["prompt"], f"{where}prompt", 0, MAX_PROMPT),
        _int(fields["max_tokens"], f"{where}max_tokens", 0, MAX_BUDGET),
        tuple(_tokens(s, f"{where}stops[{n}]", 1, MAX_STOP_LENGTH) for n, s in enumerate(stops)),
        None if script is None else _tokens(script, f"{where}script", 0, MAX_SCRIPT),
    )


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
            "the interview problem's Part 1: two requests processed together",
            2,
            0,
            _scripted(((2,), 3, (3, 4, 5)), ((20,), 3, (30, 40, 50))),
        ),
        Case(
            "part2",
            "the interview problem's Part 2: a freed slot is refilled at once",
            2,
            0,
            _scripted(((), 1, (11,)), ((), 3, (21, 22, 23)), ((), 2, (31, 32)), ((), 1, (41,))),
        ),
        Case(
            "first-example",
            "the interview problem's first example: three requests, four slots",
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
        Case(
            "stop-sequence-lengths",
            "stop sequences of different lengths: the longer one completes first",
            1,
            None,
            _scripted(((), 10, (7, 8, 5, 6), [[7, 8], [5]])),
        ),
        Case(
            "stop-tail-reset-after-stop",
            "a slot refilled after a stop-sequence finish starts with a fresh stop tail",
            1,
            None,
            _scripted(((), 10, (4, 7), [[4, 7]]), ((), 4, (8, 6, 5, 3), [[7, 8]])),
        ),
    ]


def without_stop_token(case: Case) -> Case | None:
    """The fixed case run with no stop token, for a solution whose adapter declines the stop token; None
    where the stop token is what the case checks (a script emits it) or the case has none."""
    if case.stop_token is None or any(r.script and case.stop_token in r.script for r in case.requests):
        return None
    return replace(case, stop_token=None, title=f"{case.title} (run without its stop token, which is declined)")


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


def generated_stream(seed: int, with_stops: bool) -> Iterator[Case]:
    """Generated workloads without end, the same for the same seed (the first `count` are `generated_cases`)."""
    rng = random.Random(seed)
    for i in itertools.count():
        yield generated_case(rng, i, with_stops)


def generated_cases(seed: int, count: int, with_stops: bool) -> list[Case]:
    return list(itertools.islice(generated_stream(seed, with_stops), count))


def simpler_variants(case: Case) -> Iterator[Case]:
    """The case asking for less, for a solution that declines it (`adapting.Unsupported`): one stop
    sequence a request, then also no stop token, then no stop sequences at all; each also without
    its `max_tokens = 0` requests."""
    kept = [r for r in case.requests if r.max_tokens]
    seen = {case}
    for base in (case, renumbered(case, kept)) if kept else (case,):
        one = replace(base, requests=tuple(replace(r, stops=r.stops[:1]) for r in base.requests))
        none = replace(base, requests=tuple(replace(r, stops=()) for r in base.requests))
        for variant in (base, one, replace(one, stop_token=None), none):
            if variant not in seen:
                seen.add(variant)
                yield variant


def renumbered(case: Case, requests: list[CaseRequest]) -> Case:
    """The case with these requests, their id tokens renumbered from ID_BASE."""
    fixed = tuple(replace(r, prompt=(ID_BASE + i, *r.prompt[1:])) if r.prompt else r for i, r in enumerate(requests))
    return replace(case, requests=fixed)
