"""The fill timeout: an empty static batch waits until the queue can fill every slot or the oldest
waiting request has waited `fill_timeout` steps; continuous batching always runs at once."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine, EventLog, SimulatedLLM
from engine.lab.scenario import load_scenario, parse_scenario
from engine.lab.simulate import simulate
from tests.helpers import HashModel, filler_model, make_engine, record_steps, run_specs
from tests.test_properties import MODES, batch_sizes, stop_tokens, workloads


def lifecycle(engine) -> list[tuple[int, str, int | None, str | None]]:
    return [(e.step, e.kind, e.slot, e.request_id) for e in engine.event_log if e.kind != "emit"]


def static_engine(fill_timeout, *requests):
    """Two slots, static batching; `requests` are (id, prompt token, max_tokens, arrival step)."""
    engine = make_engine(filler_model(1, 2, 3, 4), 2, None, batching="static", fill_timeout=fill_timeout)
    for rid, token, max_tokens, arrival in requests:
        engine.submit_request([token], max_tokens, request_id=rid, arrival_step=arrival)
    return engine


def test_an_empty_batch_waits_until_the_queue_fills_it():
    engine = static_engine(3, ("A", 1, 2, 0), ("B", 2, 1, 1))
    engine.step()
    assert engine.next_step == 1  # B's arrival comes before A's timeout at step 3
    record_steps(engine)
    assert lifecycle(engine) == [
        (0, "arrive", None, "A"),  # one request for two slots: A waits
        (1, "arrive", None, "B"),
        (1, "admit", 0, "A"),  # the queue fills the batch
        (1, "admit", 1, "B"),
        (1, "model_call", None, None),
        (1, "evict", 1, "B"),
        (2, "model_call", None, None),
        (2, "evict", 0, "A"),
    ]


def test_without_a_timeout_the_same_requests_run_at_once():
    engine = static_engine(None, ("A", 1, 2, 0), ("B", 2, 1, 1))
    record_steps(engine)
    assert lifecycle(engine) == [
        (0, "arrive", None, "A"),
        (0, "admit", 0, "A"),
        (0, "model_call", None, None),
        (1, "arrive", None, "B"),  # static: B waits for the batch to empty
        (1, "model_call", None, None),
        (1, "evict", 0, "A"),
        (2, "admit", 0, "B"),
        (2, "model_call", None, None),
        (2, "evict", 0, "B"),
    ]


def test_the_oldest_request_runs_once_it_has_waited_fill_timeout_steps():
    engine = static_engine(3, ("C", 3, 1, 0), ("D", 4, 1, 10))
    engine.step()
    assert engine.next_step == 3  # the clock jumps over the steps spent waiting
    record_steps(engine)
    assert lifecycle(engine) == [
        (0, "arrive", None, "C"),
        (3, "admit", 0, "C"),
        (3, "model_call", None, None),
        (3, "evict", 0, "C"),
        (10, "arrive", None, "D"),
        (13, "admit", 0, "D"),
        (13, "model_call", None, None),
        (13, "evict", 0, "D"),
    ]


def test_a_request_cancelled_while_the_batch_waits_leaves_the_queue():
    engine = static_engine(5, ("C", 3, 1, 0), ("D", 4, 1, 2))
    engine.step()
    engine.cancel("C")
    record_steps(engine)
    assert lifecycle(engine) == [
        (0, "arrive", None, "C"),
        (1, "evict", None, "C"),
        (2, "arrive", None, "D"),
        (7, "admit", 0, "D"),  # D's own wait: 2 + 5
        (7, "model_call", None, None),
        (7, "evict", 0, "D"),
    ]


@given(workloads, batch_sizes, stop_tokens, st.sampled_from(MODES), st.integers(0, 6))
@settings(max_examples=120, deadline=None)
def test_a_batch_waits_only_to_fill_and_never_changes_an_output(workload, batch_size, stop_token, mode, timeout):
    batching, padded = mode
    options = {"batching": batching, "padded": padded}
    plain = run_specs(make_engine(HashModel(), batch_size, stop_token, **options), workload)
    waiting = run_specs(make_engine(HashModel(), batch_size, stop_token, fill_timeout=timeout, **options), workload)
    assert waiting.results == plain.results
    log = waiting.engine.event_log
    if batching == "continuous" or timeout == 0:  # runs at once: event for event the engine without it
        assert list(log) == list(plain.engine.event_log)
        return
    arrived = {e.request_id: e.step for e in log if e.kind == "arrive"}
    admitted: dict[int, list[str]] = {}
    for e in log:
        if e.kind == "admit":
            admitted.setdefault(e.step, []).append(e.request_id)
    for step, ids in admitted.items():  # each static batch: full, or its oldest member waited long enough
        assert len(ids) == batch_size or step - min(arrived[r] for r in ids) >= timeout


@pytest.mark.parametrize(("value", "error"), [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("3", TypeError)])
def test_a_bad_fill_timeout_is_refused_naming_the_field(value, error):
    with pytest.raises(error, match="^fill_timeout: "):
        BatchInferenceEngine(SimulatedLLM(), 2, 0, batching="static", fill_timeout=value)


def test_the_fill_timeout_is_in_the_log_header_only_when_set():
    engine = static_engine(3, ("A", 1, 2, 0), ("B", 2, 1, 1))
    engine.run()
    text = engine.event_log.to_jsonl()
    assert text.splitlines()[0].endswith('"padded": false, "fill_timeout": 3}')
    loaded = EventLog.from_jsonl(text)
    assert loaded.config.fill_timeout == 3 and loaded.to_jsonl() == text
    plain = static_engine(None, ("A", 1, 2, 0))
    plain.run()
    assert "fill_timeout" not in plain.event_log.to_jsonl()
    with pytest.raises(ValueError, match=re.escape("line 1: fill_timeout: must be an integer ≥ 0")):
        EventLog.from_jsonl(text.replace('"fill_timeout": 3', '"fill_timeout": -3', 1))


def test_a_scenario_sets_the_fill_timeout_and_checks_it():
    text = 'title = "t"\nlesson = "l"\n[engine]\nbatching = "static"\nfill_timeout = 2\n'
    text += "[[requests]]\nprompt = [1]\nmax_tokens = 1\n"
    assert parse_scenario(text, "f.toml").engine.fill_timeout == 2
    with pytest.raises(ValueError, match=re.escape("f.toml: engine.fill_timeout: must be an integer ≥ 0")):
        parse_scenario(text.replace("= 2", "= -2"), "f.toml")
    with pytest.raises(
        ValueError, match=re.escape("f.toml: engine.fill_timeout: must be an integer ≥ 0 and ≤ 1000000")
    ):
        parse_scenario(text.replace("= 2", "= 10000000"), "f.toml")


def first_tokens(log) -> dict[str, int]:
    first: dict[str, int] = {}
    for e in log:
        if e.kind == "emit":
            first.setdefault(e.request_id, e.step)
    return first


def test_the_fill_timeout_lesson_states_its_numbers():
    scenario = load_scenario("scenarios/fill-timeout.toml")
    runs = {timeout: simulate(scenario.with_engine(fill_timeout=timeout)) for timeout in (6, 0)}
    assert scenario.engine.fill_timeout == 6
    calls = {t: [e.rows for e in log if e.kind == "model_call"] for t, log in runs.items()}
    assert (len(calls[6]), sum(calls[6]) / len(calls[6])) == (8, 3.5)
    assert (len(calls[0]), sum(calls[0]) / len(calls[0])) == (16, 1.75)
    admits = [(e.step, e.request_id) for e in runs[6] if e.kind == "admit"]
    assert admits == [(6, "A"), (6, "B"), (6, "C"), (6, "D"), (14, "E"), (14, "F"), (14, "G")]  # one slot empty
    for timeout, (a_first, mean_ttft, last) in {6: (6, 3.4, 17), 0: (0, 0.9, 15)}.items():
        log = runs[timeout]
        first = first_tokens(log)
        arrived = {e.request_id: e.step for e in log if e.kind == "arrive"}
        ttft = [first[r] - arrived[r] for r in first]
        assert first["A"] == a_first
        assert round(sum(ttft) / len(ttft), 1) == mean_ttft
        assert log.num_steps - 1 == last
    assert runs[6].outputs() == runs[0].outputs()


def test_the_sidebar_sets_the_fill_timeout_for_static_batching_only():
    from streamlit.testing.v1 import AppTest

    from cblab.ui.runs.runs import Overrides, load

    calls = {
        t: len(load("fill-timeout", None, Overrides(fill_timeout=t)).log.to_dataframe().query("kind == 'model_call'"))
        for t in (0, 6)
    }
    assert calls == {0: 16, 6: 8}  # the lesson's figures: run at once, or wait up to 6 steps to fill
    app = AppTest.from_file("../app.py", default_timeout=120)
    app.query_params["lesson"] = "fill-timeout"
    app.run()
    assert app.number_input(key="fill_timeout").value == 6  # the lesson's own
    app.number_input(key="fill_timeout").set_value(3).run()
    assert not app.exception and app.query_params["fill_timeout"] == "3"
    app.number_input(key="fill_timeout").set_value(0).run()  # run at once: left out of the link
    assert not app.exception and "fill_timeout" not in app.query_params
    app.radio(key="batching").set_value("continuous").run()
    assert not app.exception and "Fill timeout (steps; 0: run at once)" not in [n.label for n in app.number_input]
