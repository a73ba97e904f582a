"""The slot-mapping invariant (engine/analysis/invariant.py): every answer goes to the request
holding the slot it came from; it fails for the zoo's crossed results and never for the engine."""

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import EventLog
from engine.analysis.invariant import check_slot_mapping, first_violation
from engine.lab.scenario import load_scenario
from engine.lab.simulate import simulate
from engine.practice.zoo import CrossedResults
from tests.helpers import HashModel, make_engine, run_specs
from tests.test_properties import MODES, batch_sizes, cancellable, stop_tokens

LESSON = "scenarios/running-equals-active-slots.toml"


def lesson_logs() -> tuple[EventLog, EventLog]:
    scenario = load_scenario(LESSON)
    return simulate(scenario), simulate(scenario, engine_class=CrossedResults)


def test_crossed_results_break_the_pairs_from_step_2_and_never_the_slot_ids():
    correct, crossed = lesson_logs()
    assert first_violation(correct) is None
    failure = first_violation(crossed)
    assert (failure.step, failure.running, failure.credited) == (2, ((0, "C"), (1, "B")), ((0, "B"), (1, "C")))
    assert failure.mismatches() == [(0, "C", "B"), (1, "B", "C")]
    assert failure.logged_slots == (1, 0)  # the engine logs B's emit first, in B's own slot
    assert [check.step for check in check_slot_mapping(crossed) if not check.holds] == [2, 3, 4]
    assert all(check.slots_agree for log in (correct, crossed) for check in check_slot_mapping(log))
    assert [check.step for check in check_slot_mapping(correct)] == list(range(7))


def test_the_lesson_states_the_damage():
    correct, crossed = lesson_logs()
    right, wrong = correct.outputs(), crossed.outputs()
    prompt = 1
    differ = {rid: [i for i, (a, b) in enumerate(zip(right[rid], wrong[rid])) if a != b] for rid in right}
    assert differ == {"A": [], "B": [prompt + 2, prompt + 3, prompt + 4], "C": [1, 2, 3], "D": []}
    assert len(right["B"]) - prompt == 5 and len(right["C"]) - prompt == 3
    assert not [e for e in crossed if e.kind == "error"]


def test_the_check_reads_the_order_of_a_steps_answers_in_a_loaded_log():
    """Swapping two emit lines of one step in a correct log gives a log that loads (each emit is
    still in its own request's slot) but whose answers are crossed: the check names that step."""
    correct, _ = lesson_logs()
    lines = correct.to_jsonl().splitlines()
    emits = [i for i, line in enumerate(lines) if '"step": 3, "kind": "emit"' in line]
    assert len(emits) == 2
    lines[emits[0]], lines[emits[1]] = lines[emits[1]], lines[emits[0]]
    swapped = EventLog.from_jsonl("\n".join(lines) + "\n")
    assert swapped.outputs() == correct.outputs()
    assert first_violation(swapped).step == 3
    assert [check.step for check in check_slot_mapping(swapped) if not check.holds] == [3]


@given(st.lists(cancellable, min_size=1, max_size=12), batch_sizes, stop_tokens, st.sampled_from(MODES))
@settings(max_examples=120, deadline=None)
def test_the_engine_never_breaks_the_invariant(workload, batch_size, stop_token, mode):
    batching, padded = mode
    outcome = run_specs(make_engine(HashModel(), batch_size, stop_token, batching=batching, padded=padded), workload)
    assert first_violation(outcome.engine.event_log) is None


def test_the_engine_with_a_kv_pool_and_preemptions_keeps_the_invariant():
    log = simulate(load_scenario("scenarios/preemption.toml"))
    assert any(e.kind == "preempt" for e in log)
    assert first_violation(log) is None


def invariant_page():
    from cblab.ui.course.invariant_view import render_invariant
    from engine.lab.scenario import resolve_scenario

    render_invariant(resolve_scenario("running-equals-active-slots"))


def test_the_invariant_view_runs_standalone_and_names_the_first_failure():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(invariant_page, default_timeout=60).run()
    assert not app.exception
    text = app.markdown[0].value
    assert "The engine: holds at every model call." in text
    assert "Crossed results: fails first at step 2: slot 0 holds C, but its answer went to B." in text
    table = app.dataframe[0].value
    assert list(table.step) == list(range(7))
    assert list(table["invariant holds: crossed results"]) == [True, True, False, False, False, True, True]
    assert table["slot ids agree (both)"].all()
