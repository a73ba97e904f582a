"""Priority admission (`submit_request(..., priority=N)`): lower first, ties in arrival order, as
in vLLM's priority scheduling; with every priority equal, exactly the FIFO engine."""

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import EventLog
from engine.lab.scenario import load_scenario, parse_scenario
from engine.lab.simulate import simulate
from tests.helpers import HashModel, ScriptModel, assert_replay_matches, filler_model, make_engine, record_steps
from tests.test_properties import MODES, batch_sizes, cancellable, stop_tokens, workloads


def lifecycle(engine) -> list[tuple[int, str, int | None, str | None]]:
    return [(e.step, e.kind, e.slot, e.request_id) for e in engine.event_log if e.kind != "emit"]


def one_slot_engine(c_priority: int):
    """One slot; A (2 tokens) and B (1) arrive at step 0, C (1) at step 1 with `c_priority`."""
    engine = make_engine(filler_model(1, 2, 3), batch_size=1, stop_token=None)
    engine.submit_request([1], 2, request_id="A")
    engine.submit_request([2], 1, request_id="B")
    engine.submit_request([3], 1, request_id="C", arrival_step=1, priority=c_priority)
    return engine


def test_a_better_priority_arriving_late_jumps_the_queue():
    engine = one_slot_engine(c_priority=-1)
    snaps = record_steps(engine)
    # A holds the slot for steps 0-1; C arrives at step 1 with -1 < 0, so it is next, before B.
    assert lifecycle(engine) == [
        (0, "arrive", None, "A"),
        (0, "arrive", None, "B"),
        (0, "admit", 0, "A"),
        (0, "model_call", None, None),
        (1, "arrive", None, "C"),
        (1, "model_call", None, None),
        (1, "evict", 0, "A"),
        (2, "admit", 0, "C"),
        (2, "model_call", None, None),
        (2, "evict", 0, "C"),
        (3, "admit", 0, "B"),
        (3, "model_call", None, None),
        (3, "evict", 0, "B"),
    ]
    assert snaps[1] == ({}, ("C", "B"))  # after step 1: A has left, C is ahead of B
    assert_replay_matches(engine, snaps)


@pytest.mark.parametrize("c_priority", [0, 1])
def test_an_equal_or_worse_priority_waits_its_turn(c_priority):
    engine = one_slot_engine(c_priority)
    record_steps(engine)
    assert [(e.step, e.request_id) for e in engine.event_log if e.kind == "admit"] == [(0, "A"), (2, "B"), (3, "C")]


def test_a_cancelled_head_is_skipped_in_the_priority_queue():
    engine = one_slot_engine(c_priority=-1)
    engine.step()
    engine.step()  # step 1: C arrives and waits at the head
    engine.cancel("C")
    record_steps(engine)
    assert lifecycle(engine)[6:] == [
        (1, "evict", 0, "A"),
        (2, "evict", None, "C"),  # cancelled while it waited: it never takes a slot
        (2, "admit", 0, "B"),
        (2, "model_call", None, None),
        (2, "evict", 0, "B"),
    ]


def test_a_preempted_row_goes_first_among_its_own_priority_but_behind_a_better_one():
    """The preemption scenario's pool (7 blocks of 2; 2-token prompts, 6 tokens each) with D
    (priority 0, step 1) and E (priority -1, step 2) waiting. At step 3 C, the newest, is
    preempted: it goes to the front of priority 0, so ahead of D but behind E. At step 5 A needs
    a block: the victim is the newest row of the lowest priority (vLLM's priority policy), so B,
    not E (newer, but priority -1); B goes to the front of priority 0, ahead of C."""
    prompts = {"A": (1, 2), "B": (3, 4), "C": (5, 6), "D": (7, 8), "E": (9, 10)}
    engine = make_engine(ScriptModel({p: [] for p in prompts.values()}, filler=7), 3, None, kv_blocks=7, block_size=2)
    for rid, arrival, priority in [("A", 0, 0), ("B", 0, 0), ("C", 0, 0), ("D", 1, 0), ("E", 2, -1)]:
        engine.submit_request(list(prompts[rid]), 6, request_id=rid, arrival_step=arrival, priority=priority)
    snaps = record_steps(engine)
    assert snaps[2][1] == ("E", "D")
    assert snaps[3] == ({0: "A", 1: "B"}, ("E", "C", "D"))
    assert snaps[5] == ({2: "E"}, ("B", "C", "D"))
    assert [(e.step, e.request_id) for e in engine.event_log if e.kind == "preempt"][:2] == [(3, "C"), (5, "B")]
    assert [e.request_id for e in engine.event_log if e.kind == "admit"][3:] == ["E", "B", "C", "D", "C", "D"]
    assert_replay_matches(engine, snaps)


@pytest.mark.parametrize(
    ("priority", "error"),
    [(1.5, TypeError), (True, TypeError), ("1", TypeError), (None, TypeError), (2**63, ValueError)],
)
def test_a_bad_priority_is_refused_naming_the_field_and_queues_nothing(priority, error):
    engine = make_engine()
    with pytest.raises(error, match="^priority: "):
        engine.submit_request([1], 1, priority=priority)
    assert not engine.has_work()


def test_priority_is_logged_only_when_not_zero_and_round_trips():
    engine = one_slot_engine(c_priority=-1)
    engine.run()
    text = engine.event_log.to_jsonl()
    arrives = [line for line in text.splitlines() if '"arrive"' in line]
    assert ['"priority"' in line for line in arrives] == [False, False, True]
    assert arrives[2].endswith('"stop_sequences": [], "priority": -1}')
    loaded = EventLog.from_jsonl(text)
    assert [info.priority for info in loaded.requests] == [0, 0, -1]
    assert loaded == engine.event_log and loaded.to_jsonl() == text


def test_a_log_with_a_bad_priority_is_refused_naming_the_line_and_field():
    engine = one_slot_engine(c_priority=-1)
    engine.run()
    bad = engine.event_log.to_jsonl().replace('"priority": -1', '"priority": "high"')
    with pytest.raises(ValueError, match=re.escape("line 7: priority: must be an integer")):
        EventLog.from_jsonl(bad)


def test_a_scenario_request_takes_a_priority_and_checks_it():
    base = 'title = "t"\nlesson = "l"\n[model]\nstop_chance = 0.0\n'
    requests = '[[requests]]\nid = "A"\nprompt = [1]\nmax_tokens = 2\n[[requests]]\nid = "B"\nprompt = [2]\n'
    text = base + "[engine]\nbatch_size = 1\n" + requests + "max_tokens = 1\n"
    late = text + '[[requests]]\nid = "C"\nprompt = [3]\nmax_tokens = 1\narrival_step = 1\npriority = -1\n'
    log = simulate(parse_scenario(late, "p.toml"))
    assert [e.request_id for e in log if e.kind == "admit"] == ["A", "C", "B"]
    with pytest.raises(ValueError, match=re.escape("p.toml: requests[2].priority: must be an integer")):
        parse_scenario(late.replace("priority = -1", "priority = 1.5"), "p.toml")
    with pytest.raises(ValueError, match=re.escape("p.toml: requests[2].priority: must be an integer ≥ -1000000")):
        parse_scenario(late.replace("priority = -1", "priority = -10000000"), "p.toml")


def run_with_priorities(workload, batch_size, stop_token, mode, priorities=None):
    """Submit and run `workload` with these priorities (None: no priority argument at all)."""
    batching, padded = mode
    engine = make_engine(HashModel(), batch_size, stop_token, batching=batching, padded=padded)
    for i, spec in enumerate(workload):
        options = {} if priorities is None else {"priority": priorities[i]}
        engine.submit_request(
            spec.prompt, spec.max_tokens, None, spec.stop_sequences, arrival_step=spec.arrival_step, **options
        )
    cancels = {}
    for i, spec in enumerate(workload):
        if spec.cancel_at is not None:
            cancels.setdefault(spec.cancel_at, []).append(f"r{i}")

    def cancel_due():
        for step in sorted(s for s in cancels if s <= engine.clock):
            for rid in cancels.pop(step):
                engine.cancel(rid)

    return engine, record_steps(engine, cancel_due)


def events_without_priority(log):
    requests = [(info.request_id, info.prompt, info.max_tokens, info.stop_sequences) for info in log.requests]
    return requests, list(log)


@given(st.lists(cancellable, min_size=1, max_size=12), batch_sizes, stop_tokens, st.sampled_from(MODES), st.integers())
@settings(max_examples=120, deadline=None)
def test_equal_priorities_are_exactly_fifo(workload, batch_size, stop_token, mode, priority):
    priority = max(min(priority, 2**63 - 1), -(2**63))
    fifo, _ = run_with_priorities(workload, batch_size, stop_token, mode)
    equal, _ = run_with_priorities(workload, batch_size, stop_token, mode, [priority] * len(workload))
    assert equal.event_log.outputs() == fifo.event_log.outputs()
    assert events_without_priority(equal.event_log) == events_without_priority(fifo.event_log)
    zeros, _ = run_with_priorities(workload, batch_size, stop_token, mode, [0] * len(workload))
    assert zeros.event_log.to_jsonl() == fifo.event_log.to_jsonl()  # priority 0 is not even written


@given(workloads, batch_sizes, stop_tokens, st.sampled_from(MODES), st.data())
@settings(max_examples=120, deadline=None)
def test_nobody_waits_behind_a_worse_priority_and_the_replay_shows_the_queue(
    workload, batch_size, stop_token, mode, data
):
    priorities = data.draw(st.lists(st.integers(-2, 2), min_size=len(workload), max_size=len(workload)))
    engine, snaps = run_with_priorities(workload, batch_size, stop_token, mode, priorities)
    log = engine.event_log
    priority = {info.request_id: info.priority for info in log.requests}
    for step, (_, waiting) in snaps.items():
        admitted = [e.request_id for e in log if e.kind == "admit" and e.step == step]
        if admitted and waiting:
            assert max(priority[r] for r in admitted) <= min(priority[r] for r in waiting)
        assert [priority[r] for r in waiting] == sorted(priority[r] for r in waiting)
    assert_replay_matches(engine, snaps)
    assert EventLog.from_jsonl(log.to_jsonl()) == log


def test_the_priority_lesson_states_its_numbers():
    scenario = load_scenario("scenarios/priority-vs-fifo.toml")
    fifo = dataclasses.replace(
        scenario, explicit_requests=tuple(dataclasses.replace(r, priority=0) for r in scenario.explicit_requests)
    )
    runs = {"priority": simulate(scenario), "fifo": simulate(fifo)}
    assert [r.priority for r in scenario.requests] == [1, 1, 1, 1, 0]
    admitted = {name: [(e.step, e.slot, e.request_id) for e in log if e.kind == "admit"] for name, log in runs.items()}
    assert admitted["priority"][2:] == [(6, 0, "E"), (6, 1, "C"), (8, 0, "D")]
    assert admitted["fifo"][2:] == [(6, 0, "C"), (6, 1, "D"), (12, 0, "E")]
    for name, (e_wait, d_last) in {"priority": (5, 13), "fifo": (11, 11)}.items():
        log = runs[name]
        emits = [e for e in log if e.kind == "emit"]
        assert next(e.step for e in emits if e.request_id == "E") - 1 == e_wait  # E arrives at step 1
        assert max(e.step for e in emits if e.request_id == "D") == d_last
        assert log.num_steps - 1 == 13
        assert not [e for e in log if e.kind == "preempt"]
    assert runs["priority"].outputs() == runs["fifo"].outputs()
