"""The KV pool's frames for a run with prefix caching (engine/analysis/prefix_frames.py; the op vocabulary is
in kv_frames.py's docstring): exact ops for a hand-made run, and, over generated shared-prefix workloads,
ops that rebuild the log's own pool replay (references, tables, cached blocks) at every step."""

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.frames import encode
from engine.analysis.kv_frames import kv_section
from engine.analysis.pool_state import pool_after
from engine.analysis.prefix_hits import cache_hits
from engine.analysis.replay import Replay
from engine.lab.scenario import parse_scenario, resolve_scenario
from engine.lab.simulate import simulate
from tests.test_prefix_caching import cache_options, run_cancelling, shared_workloads

SHARING = """
title = "A and B share one full block of 4 tokens; C hits it once it is free and evicts A's other block"
[engine]
batch_size = 2
stop_token = 0
[engine.kv]
blocks = 3
block_size = 4
policy = "paged"
prefix_caching = true
[model]
kind = "simulated"
stop_chance = 0.0
[[requests]]
id = "A"
prompt = [1, 2, 3, 4, 5]
max_tokens = 4
[[requests]]
id = "B"
prompt = [1, 2, 3, 4, 6]
max_tokens = 1
arrival_step = 1
[[requests]]
id = "C"
prompt = [1, 2, 3, 4, 7, 8, 9, 10, 11]
max_tokens = 2
arrival_step = 5
"""


def test_two_requests_sharing_a_full_block_are_sent_as_explicit_ops():
    """By hand, with the queue as the contract says (3 blocks of 4 tokens; A holds 5 + k tokens after step k):
    0: A takes blocks 0, 1 (queue head); its prefill of 5 tokens fills block 0: cached.
    1: B hits block 0 (its first 4 tokens are A's) and takes block 2; B ends at once (max_tokens 1), and its
       references go at the step it ends (the pool is drawn as each step leaves it): block 0 is A's alone,
       block 2 (1 token) is free.
    3: A's 8th token fills block 1: cached. A ends at step 3, and its references go: blocks 1, 0 join the
       queue after 2 (its last block first), both "cached, free".
    5: C hits block 0, takes the head, 2 (never full: no eviction), then 1, whose cached tokens (A's) are
       dropped first; C's prefill of 9 tokens fills its block 1 (block 2): cached.
    6: C ends, the run's last step: its references go, and the stage draws the cache's final state."""
    frames = encode(Replay(simulate(parse_scenario(SHARING))))
    assert frames["steps"] == 7
    assert frames["kv"] == {
        "blocks": 3,
        "block_size": 4,
        "policy": "paged",
        "used": 3,
        "prefix_caching": True,
        "ops": [
            [0, [0, 2, 0], ["c", 0]],
            [1, ["h", 1, 0], [1, 1, 2], ~1],
            [3, ["c", 1], ~0],
            [5, ["h", 2, 0], [2, 1, 2], ["e", 1], [2, 1, 1], ["c", 2]],
            [6, ~2],
        ],
        "most_refs": 2,  # block 0, A's and B's at step 1
        "admissions": [[0, 0, 5, 0], [1, 1, 5, 1], [2, 5, 9, 1]],  # [request, step, tokens looked up, blocks hit]
    }
    assert frames["prefills"] == [[0, 0, 5, 5], [1, 1, 1, 5], [2, 5, 5, 9]]  # computed includes the hit tokens


SHARED_PROMPT = """
title = "Four requests share a 16-token system prompt (4 blocks of 4 tokens), then ask 8 tokens of their own"
[engine]
batch_size = 2
stop_token = 0
token_budget = 8
[engine.kv]
blocks = 12
block_size = 4
policy = "paged"
prefix_caching = true
[model]
kind = "simulated"
stop_chance = 0.0
""" + "".join(
    f'[[requests]]\nid = "{name}"\nprompt = {list(range(11, 27)) + list(range(100 * i + 101, 100 * i + 109))}\n'
    f"max_tokens = 4\narrival_step = {arrival}\n"
    for i, (name, arrival) in enumerate(zip("ABCD", (0, 3, 5, 6)))
)


def test_a_row_s_blocks_come_back_from_the_queue_last_first_and_evictions_are_one_op_a_step():
    """SHARED_PROMPT (12 blocks of 4; a budget of 8 tokens a step), by hand: A takes blocks 0-6, B 7-9 and C
    10-11 (C hits 0-3, as B did). A ends: 6, 5, 4 join the queue (last first; 0-3 are still B's and C's),
    after the fresh ones. At step 7 B ends too (9, 8, 7 join, at the step it ends); at step 8 C takes 6 (A's
    part-filled block: not cached); D hits 0-3 and takes the head, 5 then 4, whose cached tokens (A's full
    blocks) are dropped first; its 23 tokens fill its block 4 (block 5)."""
    ops = encode(Replay(simulate(parse_scenario(SHARED_PROMPT))))["kv"]["ops"]
    assert [entry for entry in ops if entry[0] in (7, 8)] == [
        [7, ["c", 11], ~1],
        [8, [2, 1, 6], ["h", 3, 0, 1, 2, 3], ["e", 5, 4], [3, -2, 5], ["c", 5]],
    ]


class DecodedPool:
    """The pool as kv.js rebuilds it from prefix-caching ops: tables, references and cached blocks."""

    def __init__(self, blocks: int):
        self.tables: dict[int, list[int]] = {}
        self.refs = [0] * blocks
        self.cached: set[int] = set()

    def apply(self, op) -> None:
        if isinstance(op, int):
            for block in self.tables.pop(~op, []):
                self.refs[block] -= 1
        elif op[0] in ("c", "e"):
            (self.cached.update if op[0] == "c" else self.cached.difference_update)(op[1:])
        elif op[0] == "h":
            self._take(op[1], op[2:])
        else:
            request, count, first = op
            self._take(request, range(first, first + count) if count > 0 else range(first, first + count, -1))

    def _take(self, request: int, blocks) -> None:
        for block in blocks:
            self.tables.setdefault(request, []).append(block)
            self.refs[block] += 1


def decoded_steps(kv: dict, steps: int):
    """(step, the pool as the stage draws it at that step) for every step of the run, from the ops alone."""
    decoded, entries = DecodedPool(kv["blocks"]), iter(kv["ops"])
    entry = next(entries, None)
    for step in range(steps):
        while entry is not None and entry[0] <= step:
            for op in entry[1:]:
                decoded.apply(op)
            entry = next(entries, None)
        yield step, decoded


def test_multi_turn_chat_s_pool_at_step_4_holds_the_ended_rows_full_blocks_cached_and_free():
    """Lesson 7.7 (multi-turn-chat), step 4: A1 and B1 end, and the narration says their full blocks "stay in
    the prefix cache". The pool is drawn as the step leaves it: no block held, A1's blocks 0, 1 and B1's 2, 3
    cached and free (their part-filled third blocks, 4 and 5, free and never cached). The last step, 18, draws
    the cache's final state: every block free, and each of the 10 caching a full block (B2 ends at 18)."""
    frames = encode(Replay(simulate(resolve_scenario("multi-turn-chat"))))
    pools = {step: (list(pool.refs), set(pool.cached)) for step, pool in decoded_steps(frames["kv"], frames["steps"])}
    assert frames["steps"] == 19
    assert pools[3] == ([1, 1, 1, 1, 1, 1, 0, 0, 0, 0], {0, 1, 2, 3})  # 6 of 10 held before the rows end
    assert pools[4] == ([0] * 10, {0, 1, 2, 3})
    assert pools[18] == ([0] * 10, set(range(10)))
    # no block is ever held by two rows: the workload's hits find blocks their first row has let go (the
    # batch of 2 runs A1 and B1, then A2 and L), which the pool panel says instead of drawing a count
    assert max(max(refs) for refs, _ in pools.values()) == 1 == frames["kv"]["most_refs"]


def test_shared_system_prompt_s_last_step_draws_r5_s_blocks_given_back():
    """Lesson 7.6, its last step (34): the narration says r5 "lets go of its 35 blocks"; no block is held then."""
    frames = encode(Replay(simulate(resolve_scenario("shared-system-prompt"))))
    *_, (last, pool) = decoded_steps(frames["kv"], frames["steps"])
    assert "Request r5 lets go of its 35 blocks" in " ".join(frames["narration"][str(last)])
    assert (last, sum(pool.refs), len(pool.cached)) == (34, 0, 44)  # every full block of the run, free
    assert (frames["kv"]["used"], frames["kv"]["most_refs"]) == (50, 4)  # the stage draws blocks 0-49 (of 400)


@given(st.data(), shared_workloads(), st.integers(1, 3))
@settings(max_examples=150, deadline=None)
def test_the_pool_drawn_at_each_step_is_the_log_s_replay_after_the_step_s_evictions(data, workload, batch_size):
    """Small pools (they preempt), cancellations, budgets: at every step, the last included, the ops rebuild the
    log's own pool replay once every event of the step has happened (the blocks of rows ending then given back)."""
    options = data.draw(cache_options(workload, batch_size))
    engine = run_cancelling(workload, batch_size, options)
    log = engine.event_log
    frames = encode(Replay(log))
    kv = frames["kv"]
    assert frames["steps"] == engine.clock
    for step, decoded in decoded_steps(kv, frames["steps"]):
        replayed = pool_after(log, step)
        assert decoded.refs == replayed.refs, step
        assert {r: t for r, t in decoded.tables.items() if t} == {r: t for r, t in replayed.tables.items() if t}, step
        assert decoded.cached == replayed.cached, step
    hit_tokens = sum(hits for *_, hits in kv["admissions"]) * kv["block_size"]
    assert (hit_tokens, sum(looked_up for _, _, looked_up, _ in kv["admissions"])) == cache_hits(log)
    admitted = [(e.request_id, e.step) for e in log if e.kind == "admit"]
    assert [(log.requests[r].request_id, step) for r, step, *_ in kv["admissions"]] == admitted


def test_the_anyscale_run_with_prefix_caching_sends_its_pool_in_under_0_9_mb():
    """1,000 requests, no shared prefix: ~35,000 allocations, nearly each of a cached block (an eviction).
    Measured: 0.85 MB of JSON (0.05 MB without prefix caching, whose ids follow from the free list)."""
    log = simulate(resolve_scenario("anyscale-cap128").with_engine(prefix_caching=True))
    columns = [np.frombuffer(c, dt).astype(np.int64) for c, dt in ((log.step, np.int32), (log.kind, np.int8))]
    requests = np.frombuffer(log.request, np.int32).astype(np.int64)
    kv = kv_section(log, *columns, requests)
    assert kv["prefix_caching"] and len(json.dumps(kv)) < 900_000
