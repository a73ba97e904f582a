"""Prefix caching and the admission watermark (the contract's last section): hand-derived event
sequences, and invariants over generated workloads (hypothesis): the cache and the watermark change
when things happen, never what anyone gets; reference counts, the cached blocks and the eviction
queue stay consistent at every step, and the log alone rebuilds them."""

from math import ceil

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine, EventLog
from engine.analysis.pool_state import pool_after
from tests.helpers import HashModel, Spec, make_engine, run_specs
from tests.test_properties import MODES, stop_tokens

VALUE = {
    "emit": "token",
    "preempt": "recompute",
    "kv_free": "blocks",
    "kv_alloc": "block",
    "prefix_hit": "block",
    "kv_evict": "block",
}


def trail(log) -> list[tuple]:
    """(step, kind, slot, request, value) of every event but arrivals and model calls; a prefill's value
    is (tokens, computed)."""
    out = []
    for e in log:
        if e.kind in ("arrive", "model_call"):
            continue
        value = (e.tokens, e.computed) if e.kind == "prefill" else getattr(e, VALUE.get(e.kind, "reason"))
        out.append((e.step, e.kind, e.slot, e.request_id, value))
    return out


def echo(batch: list[list[int]]) -> list[int]:
    """Each row's next token: its length modulo 5, plus 1 (never the stop token 0)."""
    return [len(prefix) % 5 + 1 for prefix in batch]


def cached_engine(batch_size: int = 1, **options) -> BatchInferenceEngine:
    return BatchInferenceEngine(echo, batch_size, None, kv_blocks=8, block_size=2, prefix_caching=True, **options)


SYSTEM = [9, 9, 8, 8]  # a shared system prompt: two full blocks of 2 tokens


def test_a_shared_system_prompt_is_computed_once():
    """a fills blocks 0, 1 with the system prompt and 2 with its question; b, arriving after a ends,
    hits blocks 0 and 1 (its first 4 tokens) and computes only its own question's token."""
    engine = cached_engine()
    engine.submit_request([*SYSTEM, 1], 2, request_id="a")
    engine.submit_request([*SYSTEM, 2], 2, request_id="b", arrival_step=2)
    engine.run()
    assert trail(engine.event_log) == [
        (0, "admit", 0, "a", None),
        (0, "kv_alloc", 0, "a", 0),
        (0, "kv_alloc", 0, "a", 1),
        (0, "kv_alloc", 0, "a", 2),
        (0, "prefill", 0, "a", (5, 5)),
        (0, "emit", 0, "a", 1),  # len 5 -> 1
        (1, "emit", 0, "a", 2),  # writes token 1: block 2 holds [1, 1], full
        (1, "evict", 0, "a", "max_tokens"),
        (1, "kv_free", 0, "a", 3),  # the queue: 3 .. 7, then 2, 1, 0 (its last block first)
        (2, "admit", 0, "b", None),
        (2, "prefix_hit", 0, "b", 0),
        (2, "prefix_hit", 0, "b", 1),
        (2, "kv_alloc", 0, "b", 3),  # the head: 3 holds no cached tokens
        (2, "prefill", 0, "b", (1, 5)),  # 1 token computed, 5 in the cache
        (2, "emit", 0, "b", 1),
        (3, "emit", 0, "b", 2),
        (3, "evict", 0, "b", "max_tokens"),
        (3, "kv_free", 0, "b", 3),
    ]
    pool = engine._blocks
    assert list(pool.queue) == [4, 5, 6, 7, 2, 3, 1, 0]
    assert pool.refs == [0] * 8
    pool.resolve([])  # (identities are worked out when a match needs them)
    assert sorted(b for b in range(8) if pool.identity[b] is not None) == [0, 1, 2, 3]


def test_a_prompt_wholly_cached_still_computes_its_last_token():
    """b's prompt is a's whole prompt, two full blocks: only the first is a hit (cap (4 - 1) // 2 = 1),
    so b computes tokens 2 and 3 again, into a new block."""
    engine = cached_engine()
    engine.submit_request(SYSTEM, 1, request_id="a")
    engine.submit_request(SYSTEM, 1, request_id="b", arrival_step=1)
    engine.run()
    assert trail(engine.event_log)[-7:] == [
        (1, "admit", 0, "b", None),
        (1, "prefix_hit", 0, "b", 0),
        (1, "kv_alloc", 0, "b", 2),
        (1, "prefill", 0, "b", (2, 4)),
        (1, "emit", 0, "b", 5),
        (1, "evict", 0, "b", "max_tokens"),
        (1, "kv_free", 0, "b", 2),
    ]
    assert engine.event_log.outputs() == {"a": [*SYSTEM, 5], "b": [*SYSTEM, 5]}


def test_a_preempted_row_hits_its_own_blocks():
    """A pool of 4 blocks of 2, two slots. r0 [5, 5, 5] and r1 [6, 6, 6] take 2 blocks each; at step 1 both
    fill their second block. At step 2 r0 needs a third and none is free, so r1 (the newest) is preempted:
    its blocks go back last first (3, 2), and r0 takes the head, 3, evicting r1's cached [6, 4]. Readmitted
    at step 3, r1 hits block 2 ([6, 6], cached though free), not the evicted one, and computes 3 tokens."""
    engine = BatchInferenceEngine(echo, 2, None, kv_blocks=4, block_size=2, prefix_caching=True)
    engine.submit_request([5, 5, 5], 3, request_id="r0")
    engine.submit_request([6, 6, 6], 3, request_id="r1")
    engine.run()
    assert trail(engine.event_log) == [
        (0, "admit", 0, "r0", None),
        (0, "kv_alloc", 0, "r0", 0),
        (0, "kv_alloc", 0, "r0", 1),
        (0, "admit", 1, "r1", None),
        (0, "kv_alloc", 1, "r1", 2),
        (0, "kv_alloc", 1, "r1", 3),
        (0, "prefill", 0, "r0", (3, 3)),  # block 0 ([5, 5]) is full: cached
        (0, "prefill", 1, "r1", (3, 3)),  # block 2 ([6, 6]) too
        (0, "emit", 0, "r0", 4),
        (0, "emit", 1, "r1", 4),
        (1, "emit", 0, "r0", 5),  # writes its 4: block 1 ([5, 4]) is full
        (1, "emit", 1, "r1", 5),  # block 3 ([6, 4]) too
        (2, "preempt", 1, "r1", 5),
        (2, "kv_free", 1, "r1", 2),  # the queue: 3, 2
        (2, "kv_evict", 0, "r0", 3),
        (2, "kv_alloc", 0, "r0", 3),
        (2, "emit", 0, "r0", 1),
        (2, "evict", 0, "r0", "max_tokens"),
        (2, "kv_free", 0, "r0", 3),  # the queue: 2, then 3, 1, 0
        (3, "admit", 0, "r1", None),
        (3, "prefix_hit", 0, "r1", 2),
        (3, "kv_alloc", 0, "r1", 3),  # the head (r0's partial block: nothing cached)
        (3, "kv_evict", 0, "r1", 1),  # r0's [5, 4]
        (3, "kv_alloc", 0, "r1", 1),
        (3, "prefill", 0, "r1", (3, 5)),
        (3, "emit", 0, "r1", 1),
        (3, "evict", 0, "r1", "max_tokens"),
        (3, "kv_free", 0, "r1", 3),
    ]
    assert engine.event_log.outputs() == {"r0": [5, 5, 5, 4, 5, 1], "r1": [6, 6, 6, 4, 5, 1]}
    assert list(engine._blocks.queue) == [0, 1, 3, 2]


def test_a_cached_block_taken_for_a_new_use_is_evicted_first():
    """A pool of 4 blocks of 2, one slot. a caches blocks 0 and 1 and frees 2 (partial); b takes the
    queue's head: 3, then 2 (not cached), then 1, whose cached [8, 8] is dropped: kv_evict, then kv_alloc.
    c then hits only block 0: its second block was evicted."""
    engine = BatchInferenceEngine(echo, 1, None, kv_blocks=4, block_size=2, prefix_caching=True)
    for rid, prompt in (("a", [9, 9, 8, 8, 1]), ("b", [7, 7, 6, 6, 5]), ("c", [9, 9, 8, 8, 3])):
        engine.submit_request(prompt, 1, request_id=rid)
    engine.run()
    steps = trail(engine.event_log)
    assert steps[8:13] == [
        (1, "admit", 0, "b", None),
        (1, "kv_alloc", 0, "b", 3),
        (1, "kv_alloc", 0, "b", 2),
        (1, "kv_evict", 0, "b", 1),
        (1, "kv_alloc", 0, "b", 1),
    ]
    assert steps[17:22] == [
        (2, "admit", 0, "c", None),
        (2, "prefix_hit", 0, "c", 0),
        (2, "kv_alloc", 0, "c", 1),
        (2, "kv_evict", 0, "c", 2),  # b's [6, 6]
        (2, "kv_alloc", 0, "c", 2),
    ]


def test_blocks_a_decoding_row_filled_are_evicted_without_their_identity_worked_out():
    """a ([1], 4 tokens, blocks of 2) fills block 0 at step 1 and block 1 at step 3 as it decodes, then ends:
    the queue is 2, 3, 1, 0. b ([7], 7 tokens) computes 7 tokens into 4 blocks: 2 and 3, then a's cached 1
    and 0, each evicted first. No prompt is longer than a block, so no match ever looked an identity up,
    and none was worked out (prefix_cache.py's NOTE)."""
    engine = BatchInferenceEngine(echo, 1, None, kv_blocks=4, block_size=2, prefix_caching=True)
    engine.submit_request([1], 4, request_id="a")
    engine.submit_request([7], 7, request_id="b")
    engine.run()
    blocks = [(kind, block) for _, kind, _, rid, block in trail(engine.event_log) if rid == "b" and kind[:3] == "kv_"]
    assert blocks == [
        ("kv_alloc", 2),
        ("kv_alloc", 3),
        ("kv_evict", 1),
        ("kv_alloc", 1),
        ("kv_evict", 0),
        ("kv_alloc", 0),
        ("kv_free", 4),
    ]
    assert engine._blocks._identities == {}


def test_an_ended_row_s_record_goes_when_the_last_of_its_free_full_blocks_is_taken():
    """(The run above.) a ends at step 3 leaving one record of its table, [0, 1], whose full blocks joined the
    queue's tail; b takes block 1 at step 6 and block 0, the last of them, at step 10, when the record goes
    (with a's tokens), and b's own takes its place."""
    engine = BatchInferenceEngine(echo, 1, None, kv_blocks=4, block_size=2, prefix_caching=True)
    engine.submit_request([1], 4, request_id="a")
    engine.submit_request([7], 7, request_id="b")
    tables = []
    while engine.has_work():
        engine.step()
        tables.append([record[1] for record in engine._blocks.ended])
    assert tables == [[], [], [], *[[[0, 1]]] * 7, [[2, 3, 1, 0]]]


def admissions(**options) -> list[tuple[int, str]]:
    """Four 3-token prompts (2 blocks of 2 each) into 4 slots and 8 blocks."""
    engine = BatchInferenceEngine(echo, 4, None, kv_blocks=8, block_size=2, **options)
    for rid in ("r0", "r1", "r2", "r3"):
        engine.submit_request([1, 2, 3], 1, request_id=rid)
    engine.run()
    assert engine.event_log.outputs() == {rid: [1, 2, 3, 4] for rid in ("r0", "r1", "r2", "r3")}
    return [(e.step, e.request_id) for e in engine.event_log if e.kind == "admit"]


def test_the_watermark_holds_blocks_back_from_admissions_while_rows_run():
    """Without it all four fit at step 0 (8 blocks). With 0.25 (2 blocks held back) r3 would leave 0 free
    while three rows run: it waits for step 1, when they have ended (an empty batch admits what fits)."""
    assert admissions() == [(0, "r0"), (0, "r1"), (0, "r2"), (0, "r3")]
    assert admissions(kv_watermark=0.25) == [(0, "r0"), (0, "r1"), (0, "r2"), (1, "r3")]
    assert admissions(kv_watermark=0.12) == [(0, "r0"), (0, "r1"), (0, "r2"), (0, "r3")]  # int(0.96): no block


def test_a_prompt_the_watermark_leaves_no_room_for_is_refused_naming_it():
    engine = BatchInferenceEngine(echo, 1, None, kv_blocks=10, block_size=2, kv_watermark=0.5)
    engine.submit_request([1] * 10, 0)  # 5 blocks: exactly what admissions may take
    with pytest.raises(ValueError, match="kv_watermark: the prompt's 11 tokens need 6 blocks of 2, but admissions"):
        engine.submit_request([1] * 11, 1)
    assert engine.num_unfinished == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"prefix_caching": True}, "prefix_caching: needs kv_blocks set and kv_policy 'paged'"),
        ({"prefix_caching": True, "kv_blocks": 4, "kv_policy": "reserve"}, "prefix_caching: needs kv_blocks"),
        ({"prefix_caching": 1, "kv_blocks": 4}, "prefix_caching: must be true or false, got int 1"),
        ({"kv_watermark": 0.1}, "kv_watermark: needs kv_blocks set"),
        ({"kv_watermark": 1.0, "kv_blocks": 4}, "kv_watermark: must be a number ≥ 0 and below 1, got 1.0"),
        ({"kv_watermark": -0.5, "kv_blocks": 4}, "kv_watermark: must be a number ≥ 0 and below 1, got -0.5"),
        ({"kv_watermark": "0.1", "kv_blocks": 4}, "kv_watermark: must be a finite number, got str '0.1'"),
    ],
)
def test_bad_options_are_refused_at_construction_naming_them(options, message):
    with pytest.raises((TypeError, ValueError), match=message.replace("(", r"\(").replace(")", r"\)")):
        BatchInferenceEngine(echo, 2, None, **options)


def test_without_the_new_options_the_log_has_neither_key():
    engine = BatchInferenceEngine(echo, 1, None, kv_blocks=4, block_size=2)
    engine.submit_request([1], 1)
    engine.run()
    header = engine.event_log.to_jsonl().splitlines()[0]
    assert "prefix_caching" not in header and "kv_watermark" not in header


# -- invariants over generated workloads ----------------------------------------------------
token = st.integers(0, 3)
stems = st.lists(st.lists(token, min_size=0, max_size=6), min_size=1, max_size=3)


@st.composite
def shared_workloads(draw, cancels: bool = True):
    """Requests whose prompts start with one of a few shared stems (system prompts, earlier turns).
    (Cancellations take effect at a step, so only runs without them can match output for output.)"""
    heads = draw(stems)
    return [
        Spec(
            prompt=draw(st.sampled_from(heads)) + draw(st.lists(token, max_size=3)),
            max_tokens=draw(st.integers(0, 6)),
            stop_sequences=draw(st.none() | st.lists(st.lists(token, min_size=1, max_size=2), min_size=1, max_size=2)),
            arrival_step=draw(st.none() | st.integers(0, 8)),
            cancel_at=draw(st.none() | st.integers(0, 10)) if cancels else None,
        )
        for _ in range(draw(st.integers(1, 10)))
    ]


@st.composite
def cache_options(draw, workload, batch_size: int):
    block_size = draw(st.integers(1, 3))
    biggest = max((ceil((len(s.prompt) + s.max_tokens) / block_size) for s in workload if s.max_tokens), default=1)
    kv_blocks = draw(st.integers(biggest, biggest + 6))
    watermark = draw(st.sampled_from([0.0, 0.0, 0.1, 0.3]))
    held_back = int(watermark * kv_blocks)
    assume(all(ceil(len(s.prompt) / block_size) <= kv_blocks - held_back for s in workload if s.max_tokens))
    budget = draw(st.none() | st.integers(batch_size, batch_size + 4))
    return {"kv_blocks": kv_blocks, "block_size": block_size, "token_budget": budget, "kv_watermark": watermark}


@given(st.data(), shared_workloads(cancels=False), st.integers(1, 4), stop_tokens, st.sampled_from(MODES))
@settings(max_examples=400, deadline=None)
def test_outputs_never_depend_on_the_cache_or_the_watermark(data, workload, batch_size, stop_token, mode):
    options = data.draw(cache_options(workload, batch_size))
    batching, padded = mode
    plain = run_specs(make_engine(HashModel(), batch_size, stop_token, batching=batching, padded=padded), workload)
    for caching in (False, True):
        engine = make_engine(
            HashModel(), batch_size, stop_token, batching=batching, padded=padded, prefix_caching=caching, **options
        )
        outcome = run_specs(engine, workload, stream=True)
        assert outcome.results == plain.results
        assert outcome.calls == {rid: 1 for rid in outcome.ids}
        for rid, spec in zip(outcome.ids, workload):  # streamed once each, even across preemptions
            assert outcome.streamed.get(rid, []) == outcome.results[rid][len(spec.prompt) :]
        assert engine._blocks.num_free == options["kv_blocks"]
        assert EventLog.from_jsonl(engine.event_log.to_jsonl()) == engine.event_log  # the strict reader agrees


def assert_pool_consistent(engine: BatchInferenceEngine) -> None:
    """Reference counts are the tables' entries, never negative; no block is both free and held; every
    cached block's identity is the tokens its rows wrote into it, chained to the block before (worked out
    first: a match would, and working them out early changes nothing)."""
    pool, size = engine._blocks, engine.config.block_size
    pool.resolve(engine._scheduler.slots)
    running = [seq for seq in engine._scheduler.slots if seq is not None]
    counts = [0] * pool.num_blocks
    for seq in running:
        for block in seq.blocks:
            counts[block] += 1
    assert pool.refs == counts and min(counts, default=0) >= 0
    assert set(pool.queue) == {block for block in range(pool.num_blocks) if not counts[block]}
    meaning = {identity: key for key, identity in pool._identities.items()}
    for seq in running:
        for index, identity in enumerate(seq.block_identities):
            parent, tokens = meaning[identity]
            assert tokens == tuple(seq.tokens[index * size : (index + 1) * size])
            assert parent == (seq.block_identities[index - 1] if index else None)
            assert pool.identity[seq.blocks[index]] == identity  # (its own, or the hit's: the same tokens)
    for identity, blocks in pool.cached.items():
        assert blocks and all(pool.identity[block] == identity for block in blocks)
    assert {b for b in range(pool.num_blocks) if pool.identity[b] is not None} == {
        b for blocks in pool.cached.values() for b in blocks
    }


@given(st.data(), shared_workloads(), st.integers(1, 3))
@settings(max_examples=300, deadline=None)
def test_the_pool_stays_whole_and_the_log_rebuilds_it_at_every_step(data, workload, batch_size):
    options = data.draw(cache_options(workload, batch_size))
    engine = run_cancelling(workload, batch_size, options, after_each_step=check_against_the_log)
    assert engine._blocks.refs == [0] * options["kv_blocks"]


def run_cancelling(workload, batch_size: int, options: dict, after_each_step=None):
    """A prefix-caching engine run through `workload`, cancelling each request at its `cancel_at`;
    `after_each_step(engine)` is called after every step."""
    engine = make_engine(HashModel(), batch_size, None, prefix_caching=True, **options)
    ids = [
        engine.submit_request(spec.prompt, spec.max_tokens, None, spec.stop_sequences, arrival_step=spec.arrival_step)
        for spec in workload
    ]
    while engine.has_work():
        for rid, spec in zip(ids, workload):
            if spec.cancel_at is not None and spec.cancel_at <= engine.clock:
                engine.cancel(rid)
        engine.step()
        if after_each_step is not None:
            after_each_step(engine)
    return engine


def check_against_the_log(engine) -> None:
    """The engine's pool is whole, and the log's replay rebuilds it at the step just run."""
    assert_pool_consistent(engine)
    step = engine.clock - 1
    pool, replayed = engine._blocks, pool_after(engine.event_log, step)
    assert replayed.refs == pool.refs, step
    assert replayed.shared == sum(refs - 1 for refs in pool.refs if refs > 1), step
    assert list(replayed.queue) == list(pool.queue), step
    assert replayed.cached == {b for b in range(pool.num_blocks) if pool.identity[b] is not None}, step


@given(st.data(), shared_workloads(), st.integers(1, 4), stop_tokens, st.sampled_from(MODES))
@settings(max_examples=300, deadline=None)
def test_working_identities_out_only_when_a_match_needs_them_changes_no_event(
    data, workload, batch_size, stop_token, mode
):
    """The cache as the contract words it works each block's identity out in the step that fills it; this
    one only when a match needs them (prefix_cache.py's NOTE). Few stems and few token values: many blocks
    share an identity, and blocks are taken before their identity was needed."""
    options = data.draw(cache_options(workload, batch_size))
    batching, padded = mode
    logs = []
    for eager in (False, True):
        engine = make_engine(
            HashModel(), batch_size, stop_token, batching=batching, padded=padded, prefix_caching=True, **options
        )
        if eager:
            engine._step = worked_out_after(engine._step, engine)
        run_specs(engine, workload)
        logs.append(engine.event_log.to_jsonl())
    assert logs[0] == logs[1]


def worked_out_after(step, engine):
    """`step`, then every full block's identity worked out."""

    def step_then_work_out():
        step()
        engine._blocks.resolve(engine._scheduler.slots)

    return step_then_work_out


# -- the strict reader ----------------------------------------------------------------------
def shared_prompt_log() -> list[str]:
    engine = cached_engine()
    engine.submit_request([*SYSTEM, 1], 2, request_id="a")
    engine.submit_request([*SYSTEM, 2], 2, request_id="b", arrival_step=2)
    engine.run()
    return engine.event_log.to_jsonl().splitlines()


def edited(lines: list[str], kind: str, change) -> str:
    """The log with the first event of `kind` changed by `change(event) -> list of events`."""
    import json

    out, done = [], False
    for line in lines:
        event = json.loads(line)
        if not done and event.get("kind") == kind:
            out.extend(json.dumps(e) for e in change(event))
            done = True
        else:
            out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("prefix_hit", lambda e: [], "line 16: block: block 1 does not cache this request's tokens at block 0"),
        ("prefix_hit", lambda e: [{**e, "block": 2}, e], "line 16: block: block 2 does not cache this request's"),
        ("kv_alloc", lambda e: [{**e, "block": 5}], "line 4: block: a new block comes from the eviction queue's head"),
        ("prefix_hit", lambda e: [{**e, "kind": "kv_evict"}], "line 16: block: block 0 is not the eviction queue's"),
        ("kv_free", lambda e: [{**e, "kind": "kv_evict", "block": 0}], "line 13: request_id: a was already"),
        (
            "prefix_hit",
            lambda e: [{**e, "kind": "prefill", "tokens": 0, "computed": 0}, e],
            "line 17: kind: a prefix_hit comes right after b's admit",
        ),
    ],
)
def test_the_reader_refuses_a_pool_that_could_not_have_happened(kind, change, message):
    with pytest.raises(ValueError, match=message):
        EventLog.from_jsonl(edited(shared_prompt_log(), kind, change))


def test_the_cache_s_events_need_prefix_caching_in_the_header():
    lines = shared_prompt_log()
    lines[0] = lines[0].replace(', "prefix_caching": true', "")
    with pytest.raises(ValueError, match="line 16: kind: needs a log with prefix_caching in its header"):
        EventLog.from_jsonl("\n".join(lines))


# -- what the analysis reads from such a log ------------------------------------------------
def sharing_run() -> EventLog:
    """Two slots: a, then b a step later with the same system prompt, while a still runs."""
    engine = cached_engine(batch_size=2)
    engine.submit_request([*SYSTEM, 1], 2, request_id="a")
    engine.submit_request([*SYSTEM, 2], 2, request_id="b", arrival_step=1)
    engine.run()
    return engine.event_log


def test_a_shared_block_is_held_once_in_the_metrics():
    """At step 1 a holds blocks 0-2 and b shares 0 and 1 and takes 3: 4 blocks, not 6. Their tokens:
    a's 6 (5 + the one written now) and b's 5, less the 4 they share: 7."""
    from engine.analysis.metrics import step_metrics

    steps = step_metrics(sharing_run())
    assert steps.kv_blocks_held.tolist() == [3, 4, 3]
    assert steps.kv_tokens_held.tolist() == [5, 7, 6]


def test_the_narration_says_what_was_found_in_the_cache():
    from engine.analysis.narration import narrate
    from engine.analysis.replay import Replay

    replay = Replay(sharing_run())
    step_1 = narrate(replay, 1)
    assert "Request b finds blocks 0 and 1 in the prefix cache: tokens it does not compute again." in step_1
    assert "Request b takes block 3 (3 blocks now)." in step_1
    assert "4 blocks of the KV cache are free." in step_1  # 8 less the 4 in use
    assert replay[1].free_blocks == (4, 5, 6, 7)
    assert narrate(replay, 2)[-1] == (
        "Request b lets go of its 3 blocks: those no other row holds are free again, and the full ones stay in "
        "the prefix cache until they are reused."
    )


def test_a_chunked_prefill_after_hits_says_what_it_computed_apart_from_what_it_found():
    """b hits a's 2 blocks (4 tokens) and prefills its other 6 under a budget of 3: at its second step it has
    computed 6 of its 10 tokens, as its cell on the stage says ("prefill 6/10 (4 cached)"), not 10/10."""
    from engine.analysis.narration import narrate
    from engine.analysis.replay import Replay

    engine = BatchInferenceEngine(echo, 2, None, kv_blocks=16, block_size=2, prefix_caching=True, token_budget=3)
    engine.submit_request([*SYSTEM, 1], 2, request_id="a")
    engine.submit_request([*SYSTEM, 2, 3, 4, 5, 6, 7], 2, request_id="b", arrival_step=3)
    engine.run()
    replay = Replay(engine.event_log)
    said = [[line for line in narrate(replay, step) if line.startswith("Request b prefills")] for step in (3, 4)]
    assert said == [
        ["Request b prefills 3 tokens (3/10, and 4 found in the prefix cache); the rest waits for the next steps' "
         "budget, so it gets no token yet."],
        ["Request b prefills 3 tokens (6/10, and 4 found in the prefix cache) and gets its first token at this step."],
    ]  # fmt: skip


def test_the_app_loads_a_prefix_cached_scenario_and_its_log():
    """Uploaded as TOML or as the JSONL of such a run: it runs, its metrics show the cache, and the stage is
    sent the same pool to draw from either (a block shared by a and b: engine/analysis/prefix_frames.py)."""
    from cblab.ui.runs.runs import Overrides, load
    from tests.helpers import Upload

    toml = (
        'title = "shared"\n[engine]\nbatch_size = 2\n[engine.kv]\nblocks = 8\nblock_size = 2\nprefix_caching = true\n'
        "[[requests]]\nprompt = [9, 9, 8, 8, 1]\nmax_tokens = 2\n"
        "[[requests]]\nprompt = [9, 9, 8, 8, 2]\nmax_tokens = 2\narrival_step = 1\n"
    )
    run = load("shared.toml", Upload("shared.toml", toml.encode()), Overrides())
    assert run.log.config.prefix_caching
    assert [e.block for e in run.log if e.kind == "prefix_hit"] == [0, 1]
    assert run.steps.kv_blocks_held.tolist() == [3, 4, 3]
    again = load("shared.jsonl", Upload("shared.jsonl", run.log.to_jsonl().encode()), Overrides())
    assert again.log == run.log
    # step 1: b hits a's blocks 0 and 1 and takes 3; a's 6th token fills its block 2; a ends, and drops its
    # references (~0) at that step: the pool is drawn as the step leaves it (kv_frames.py)
    assert run.frames["kv"]["ops"][1] == [1, ["h", 1, 0, 1], [1, 1, 3], ["c", 2], ~0]
    assert again.frames["kv"] == run.frames["kv"]


def test_the_summary_and_each_request_count_the_cached_tokens():
    """b found 4 of its 5 tokens in the cache, a none of its 5: 4 of 10 looked up. Without the cache,
    no token is found and requests have no such column."""
    from engine.analysis.metrics import request_metrics, summary

    log = sharing_run()
    assert (summary(log)["cached_tokens"], summary(log)["prefix_hit_rate"]) == (4, 0.4)
    assert request_metrics(log).cached_tokens.to_dict() == {"a": 0, "b": 4}
    engine = BatchInferenceEngine(echo, 1, None, kv_blocks=8, block_size=2)
    engine.submit_request([*SYSTEM, 1], 1)
    engine.run()
    assert (summary(engine.event_log)["cached_tokens"], summary(engine.event_log)["prefix_hit_rate"]) == (0, 0.0)
    assert "cached_tokens" not in request_metrics(engine.event_log)


def test_taking_the_pool_away_turns_off_what_only_a_pool_has():
    """compare runs its four unlimited-memory configurations without the pool: a scenario with the cache
    and a watermark must still compare (it failed with 'kv_watermark: needs kv_blocks set')."""
    from engine.lab.compare import compare
    from engine.lab.scenario import resolve_scenario

    scenario = resolve_scenario("kv-paged-vs-reserve").with_engine(prefix_caching=True, kv_watermark=0.1)
    unlimited = scenario.with_engine(kv_blocks=None).engine
    assert (unlimited.kv_blocks, unlimited.prefix_caching, unlimited.kv_watermark) == (None, False, 0.0)
    results = compare(scenario)
    assert results["continuous-paged"]["generated_tokens"] == results["continuous-ragged"]["generated_tokens"]


@pytest.mark.parametrize(
    ("kv", "message"),
    [
        ('policy = "reserve"\nprefix_caching = true\nblocks = 8', "engine.kv.prefix_caching: needs kv_blocks set and"),
        ("watermark = 0.1", "engine.kv.watermark: needs kv_blocks set"),
        ("blocks = 8\nwatermark = 1.0", "engine.kv.watermark: must be a number ≥ 0 and below 1, got 1.0"),
    ],
)
def test_a_scenario_names_the_file_and_key_of_options_that_do_not_go_together(kv, message):
    from engine.lab.scenario import ScenarioError, parse_scenario

    text = f'title = "t"\n[engine.kv]\n{kv}\n[[requests]]\nprompt = [1]\nmax_tokens = 1\n'
    with pytest.raises(ScenarioError, match=f"^mine.toml: {message}"):
        parse_scenario(text, "mine.toml")


def test_a_file_claiming_a_huge_pool_is_read_in_memory_of_its_events():
    """The reader replays a prefix-cached pool from the blocks the events use, never the pool's size: the
    shared-prompt log with a header claiming a billion blocks loads in well under a megabyte."""
    import tracemalloc

    lines = shared_prompt_log()
    lines[0] = lines[0].replace('"kv_blocks": 8', '"kv_blocks": 1000000000')
    tracemalloc.start()
    log = EventLog.from_jsonl("\n".join(lines))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert log.config.kv_blocks == 1_000_000_000 and peak < 2**20
