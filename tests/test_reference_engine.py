"""Differential test: the engine against a slow, obviously-correct engine written from the contract."""

from __future__ import annotations

import random

import pytest

from engine import EventLog
from tests.helpers import HashModel, Spec, admits, assert_replay_matches, make_engine, run_specs


def reference_run(model, batch_size, stop_token, specs: list[Spec], *, static=False):
    """Run `specs` (cancel_at: cancel right before that step) one plain loop at a time.

    Returns ({index: tokens delivered}, [(step, slot, index) for each admission]).
    """
    cancels: dict[int, list[int]] = {}
    for i, spec in enumerate(specs):
        if spec.cancel_at is not None:
            cancels.setdefault(spec.cancel_at, []).append(i)
    slots = [None] * batch_size  # index or None
    tokens = {}
    state = {i: "pending" for i in range(len(specs))}  # -> "waiting" | "running" | "done"
    waiting: list[int] = []
    results, admitted = {}, []
    requested: list[int] = []
    clock = 0

    def arrival(i):
        return specs[i].arrival_step or 0

    def finish(i):
        state[i] = "done"
        results[i] = list(tokens.get(i, specs[i].prompt))

    def busy():
        return any(s is not None for s in slots) or waiting or any(v == "pending" for v in state.values())

    while busy() or requested:
        for step in sorted(s for s in cancels if s <= clock):
            requested += [i for i in cancels.pop(step) if state[i] != "done"]
        if not (busy() or requested):
            break
        if not (any(s is not None for s in slots) or waiting or requested):
            clock = max(clock, min(arrival(i) for i, v in state.items() if v == "pending"))
        for i in requested:
            if state[i] == "done":
                continue
            if state[i] == "running":
                slots[slots.index(i)] = None
            elif state[i] == "waiting":
                waiting.remove(i)
            finish(i)
        requested = []
        due = sorted(
            (i for i, v in state.items() if v == "pending" and arrival(i) <= clock), key=lambda i: (arrival(i), i)
        )
        for i in due:
            if specs[i].max_tokens == 0:
                finish(i)
            else:
                state[i] = "waiting"
                waiting.append(i)
        if not static or all(s is None for s in slots):
            for slot in range(batch_size):
                if slots[slot] is None and waiting:
                    i = waiting.pop(0)
                    slots[slot] = i
                    state[i] = "running"
                    tokens[i] = list(specs[i].prompt)
                    admitted.append((clock, slot, i))
        rows = [i for i in slots if i is not None]
        if rows:
            out = model.generate_next_tokens([list(tokens[i]) for i in rows])
            done = []
            for i, t in zip(rows, out):
                tokens[i].append(t)
                gen = tokens[i][len(specs[i].prompt) :]
                if (
                    t == stop_token
                    or any(gen[-len(s) :] == list(s) for s in specs[i].stop_sequences or [])
                    or len(gen) >= specs[i].max_tokens
                ):
                    done.append(i)
            for i in done:
                slots[slots.index(i)] = None
                finish(i)
        clock += 1
    return results, admitted


def random_workload(rng: random.Random) -> list[Spec]:
    specs = []
    for _ in range(rng.randint(1, 9)):
        prompt = [rng.randrange(4) for _ in range(rng.randint(0, 3))]
        stops = [[rng.randrange(4) for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(0, 3))] or None
        arrival = rng.choice([None, None, rng.randint(0, 8)])
        specs.append(Spec(prompt, rng.randint(0, 6), stops, arrival))
    for spec in specs:
        if rng.random() < 0.25:
            spec.cancel_at = rng.randint(0, 8)
    return specs


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("batching", ["continuous", "static"])
def test_engine_agrees_with_the_reference(seed, batching, padded):
    rng = random.Random(seed)
    specs = random_workload(rng)
    batch = rng.randint(1, 3)
    stop_token = rng.choice([None, 0])
    expected, expected_admits = reference_run(HashModel(4), batch, stop_token, specs, static=batching == "static")

    engine = make_engine(HashModel(4), batch_size=batch, stop_token=stop_token, batching=batching, padded=padded)
    outcome = run_specs(engine, specs)
    ids = outcome.ids
    assert outcome.results == {ids[i]: tokens for i, tokens in expected.items()}
    assert admits(engine) == [(step, slot, ids[i]) for step, slot, i in expected_admits]
    assert set(outcome.calls.values()) == {1}
    assert_replay_matches(engine, outcome.snapshots)
    assert EventLog.from_jsonl(engine.event_log.to_jsonl()) == engine.event_log
