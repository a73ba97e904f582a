"""The lessons say what their runs do: each figure in a lesson's text, computed from the run
and looked up in the text as written, so a lesson cannot drift from its scenario."""

import dataclasses
import re

import pytest

from cblab.ui.stage.batch_view import batch_view
from engine import BatchInferenceEngine
from engine.analysis.hardware import cost_model
from engine.analysis.metrics import CostModel, request_metrics, step_metrics, summary
from engine.analysis.replay import Replay
from engine.lab.scenario import list_scenarios, resolve_scenario
from engine.lab.simulate import simulate
from tests.helpers import ScriptModel, evict_reasons, recording_engine


def text(scenario) -> str:
    """The lesson and its reveal, with their line breaks as spaces, as the app shows them."""
    return flat(scenario.lesson + " " + scenario.reveal)


def flat(paragraph: str) -> str:
    return " ".join(paragraph.split())


def says(scenario, *phrases: str) -> None:
    missing = [phrase for phrase in phrases if phrase not in text(scenario)]
    assert not missing, f"{scenario.name}: the lesson does not say {missing}"


def queue_at(steps, step: int) -> int:
    return int(steps[steps.step <= step].queue_depth.iloc[-1])


def without(scenario, request_id: str):
    kept = tuple(r for r in scenario.requests if r.request_id != request_id)
    return dataclasses.replace(scenario, explicit_requests=kept)


def test_poisson_arrivals_is_overloaded_and_its_queue_grows_while_utilisation_saturates():
    scenario = resolve_scenario("poisson-arrivals")
    output, arrival = scenario.workload.output[1], scenario.workload.arrival[1]
    mean_tokens = (output["min"] + output["max"]) / 2
    slots = scenario.engine.batch_size
    load = lambda batch_size: arrival["rate"] * mean_tokens / batch_size  # noqa: E731
    says(
        scenario,
        f"{scenario.workload.count} requests",
        f"{arrival['rate']} per step",
        f"{output['min']} to {output['max']} tokens ({mean_tokens:.0f} on average)",
        f"{arrival['rate']} × {mean_tokens:.0f} = {arrival['rate'] * mean_tokens:.1f} slot-steps",
        f"against {slots} slots",
        f"{arrival['rate'] * mean_tokens:.1f} / {slots} = {load(slots):.1f}, above 1",
        f"{slots} / {mean_tokens:.0f} = {slots / mean_tokens:.2f} finish",
    )
    log = simulate(scenario)
    steps, requests = step_metrics(log), request_metrics(log)
    says(
        scenario,
        f"{queue_at(steps, 50)} wait at step 50",
        f"{queue_at(steps, 250)} at step 250",
        f"{steps.queue_depth.max()} at the peak",
        f"median request waits {requests.queue_wait_steps.median():.0f} steps",
        f"it reads {summary(log)['slot_utilization']:.0%} here",
    )
    assert load(slots) > 1 > load(32)
    wider = simulate(scenario.with_engine(batch_size=24))
    says(
        scenario,
        f"{summary(wider)['slot_utilization']:.0%} with 24 slots",
        f"(load {load(24):.2f}, peak queue {step_metrics(wider).queue_depth.max()})",
    )
    doubled = simulate(scenario.with_engine(batch_size=32))
    doubled_waits = request_metrics(doubled).queue_wait_steps.max()
    says(
        scenario,
        f"load {load(32):.2f}, below 1",
        f"the queue never passes {step_metrics(doubled).queue_depth.max()}",
        f"nobody waits more than {doubled_waits:.0f} steps",
        "--batch-size 32",
    )
    static = simulate(scenario.with_engine(batching="static"))
    says(scenario, f"the queue peaks at {step_metrics(static).queue_depth.max()}")


def test_the_short_requests_wait_for_l_and_more_slots_bring_them_back():
    scenario = resolve_scenario("long-request-among-short")
    shorts = lambda s: request_metrics(simulate(s)).drop("L", errors="ignore").e2e_steps.mean()  # noqa: E731
    with_l = request_metrics(simulate(scenario))
    short_budgets = [r.max_tokens for r in scenario.requests if r.request_id != "L"]
    assert len(short_budgets) == 8 and set(short_budgets) == {2, 3}  # "eight short requests want 2 or 3"
    says(
        scenario,
        f"Request L wants {scenario.requests[0].max_tokens} tokens",
        f"holds one of the {scenario.engine.batch_size} slots for {with_l.e2e_steps['L']:.0f} steps",
        f"{shorts(scenario.with_engine(batching='static')):.1f} steps on average",
        f"{with_l.drop('L').e2e_steps.mean():.1f} steps with L",
        f"against {shorts(without(scenario, 'L')):.1f} steps when L is left out",
        "With 3 slots L keeps one and the short requests share two: "
        f"{shorts(scenario.with_engine(batch_size=3)):.1f} steps",
    )
    assert shorts(scenario.with_engine(batch_size=3)) == shorts(without(scenario, "L")) == 6.125


def test_model_fault_retries_the_failed_step_and_changes_nothing():
    scenario = resolve_scenario("model-fault")
    log = simulate(scenario)
    fault_free = simulate(dataclasses.replace(scenario, model=dataclasses.replace(scenario.model, fail_calls=())))
    calls = [(e.step, e.kind) for e in log if e.kind in ("error", "model_call")]
    assert scenario.model.fail_calls == (2,)  # attempts count from 0: the third call
    assert calls[2:4] == [(2, "error"), (2, "model_call")]  # the error, then the retried call
    assert log.outputs() == fault_free.outputs()
    assert log.num_steps == fault_free.num_steps == summary(log)["model_calls"] == 5
    says(scenario, "the model's third call, at step 2, raises", "5 steps and 5 successful model calls")


def test_arrivals_mid_run_idles_from_e_to_f_and_prices_the_idle_steps():
    scenario = resolve_scenario("arrivals-mid-run")
    log = simulate(scenario)
    requests, figures, busy = request_metrics(log), summary(log), set(Replay(log).busy_steps())
    idle = [step for step in range(log.num_steps) if step not in busy]
    cost = CostModel()
    says(
        scenario,
        f"E finishes at step {requests.finish_step['E']:.0f}",
        f"F arrives at step {requests.arrival_step['F']:.0f}",
        f"steps {idle[0]}-{idle[-1]} are idle",
        f"the run's {log.num_steps} steps",
        f"({figures['model_calls']} calls in all)",
        f"an idle tick of {cost.step_s * 1e3:.0f} ms ({len(idle) * cost.step_s * 1e3:.0f} ms of the run's "
        f"{figures['total_time_s'] * 1e3:.1f} ms)",
        f"slot utilisation ({figures['slot_utilization']:.1%})",
    )
    assert idle == [7, 8, 9, 10, 11]


def test_padded_vs_ragged_tells_its_two_paddings_apart_and_prices_them():
    scenario = resolve_scenario("padded-vs-ragged")
    padded, ragged = simulate(scenario), simulate(scenario.with_engine(padded=False))
    steps, figures, plain = step_metrics(padded), summary(padded), summary(ragged)
    view = batch_view(Replay(padded), 0)
    cost = CostModel()
    lost = 1 - figures["throughput_tokens_per_s"] / plain["throughput_tokens_per_s"]
    extra_prefill = step_metrics(padded).prefill_tokens.sum() - step_metrics(ragged).prefill_tokens.sum()
    says(
        scenario,
        f"{steps.padded_rows.sum()} of the {steps.rows_sent.sum()} rows sent ({figures['padding_waste']:.1%})",
        f"{view.padding_cells} of the matrix's {len(view.rows)} × {view.width} = {len(view.rows) * view.width} "
        "positions",
        f"{figures['padding_waste']:.1%} padded rows cost only {lost:.1%} of the throughput",
        f"({figures['throughput_tokens_per_s']:.0f} against {plain['throughput_tokens_per_s']:.0f} tokens/s)",
        f"all the model's weights once ({cost.step_s * 1e3:.0f} ms)",
        f"KV-cache read ({cost.row_s * 1e3:.1f} ms)",
        f"the {steps.padded_rows.sum()} padded rows add {steps.padded_rows.sum() * cost.row_s * 1e3:.1f} ms",
        f"the padded prompts {extra_prefill * cost.prefill_token_s * 1e3:.2f} ms",
        f"the ragged run's {plain['total_time_s'] * 1e3:.1f} ms",
    )
    assert steps.padded_rows[steps.step == 0].item() == 0  # step 0: no padded row, yet padded positions
    assert figures["total_time_s"] - plain["total_time_s"] == pytest.approx(
        steps.padded_rows.sum() * cost.row_s + extra_prefill * cost.prefill_token_s
    )


def test_static_batches_are_ragged_so_their_steps_get_cheaper():
    scenario = resolve_scenario("static-vs-continuous")
    static, continuous = simulate(scenario), simulate(scenario.with_engine(batching="continuous"))
    time = summary(static)["total_time_s"] / summary(continuous)["total_time_s"]
    says(
        scenario,
        f"Static takes {static.num_steps} steps to continuous batching's {continuous.num_steps} "
        f"({static.num_steps / continuous.num_steps:.2f}×) but only {time:.2f}× the time",
        f"A padded batch sends all {scenario.engine.batch_size} rows every step",
    )
    padded = step_metrics(simulate(scenario.with_engine(padded=True)))
    assert set(padded.rows_sent) == {scenario.engine.batch_size}
    assert set(step_metrics(static).rows_sent) > {1, scenario.engine.batch_size}


def anyscale_figures(cap: int) -> dict:
    scenario = resolve_scenario(f"anyscale-cap{cap}")
    cost = cost_model(scenario.cost)
    out = {"scenario": scenario}
    for batching in ("continuous", "static"):
        log = simulate(scenario.with_engine(kv_blocks=None, batching=batching))
        steps = step_metrics(log, cost)
        decode = steps[(steps.rows_sent > 0) & (steps.prefill_tokens == 0)]
        out[batching] = {
            "steps": log.num_steps,
            "time": steps.end_s.iloc[-1],
            "prefill": (steps.prefill_tokens * cost.prefill_token_s).sum(),
            "prompt_tokens": steps.prefill_tokens.sum(),
            "rows": decode.rows_sent.mean(),
            "ms": decode.duration_s.mean() * 1e3,
        }
    return out


@pytest.mark.parametrize("cap", [32, 128, 512, 1536])
def test_anyscale_lessons_explain_why_static_loses_less_time_than_steps(cap):
    figures = anyscale_figures(cap)
    scenario, c, s = figures["scenario"], figures["continuous"], figures["static"]
    assert c["prompt_tokens"] == s["prompt_tokens"] == 512_000 and c["prefill"] == pytest.approx(s["prefill"])
    says(scenario, f"the same {s['prefill']:.0f} s to prefill the {s['prompt_tokens']:,} prompt tokens")
    if cap == 32:
        says(
            scenario,
            f"out of {c['time']:.0f} s (continuous) and {s['time']:.0f} s (static) in all",
            f"static takes {s['steps'] / c['steps']:.1f}× the steps but only {s['time'] / c['time']:.2f}× the time",
        )
        return
    says(
        scenario,
        f"static batching takes {s['steps']:,} steps to continuous batching's {c['steps']:,} "
        f"({s['steps'] / c['steps']:.1f}×) but only {s['time'] / c['time']:.2f}× the time",
        f"average {s['rows']:.1f} rows and {s['ms']:.1f} ms, continuous batching's {c['rows']:.1f} rows and "
        f"{c['ms']:.1f} ms",
    )
    assert s["rows"] < c["rows"] and s["ms"] < c["ms"]


def test_the_stop_token_wins_a_tie_with_the_budget_here_unlike_vllm():
    """stop-conditions-tie's reveal: the last budgeted token is the stop token."""
    engine, recorder = recording_engine(ScriptModel({(9,): [5, 0]}), stop_token=0)
    recorder.submit("a", [9], 2)
    engine.run()
    assert (recorder.results["a"], evict_reasons(engine)["a"]) == ([9, 5, 0], "stop_token")
    said = flat(resolve_scenario("stop-conditions-tie").reveal)
    assert "finishes with `length` where here it ends with reason `stop_token`" in said


def test_the_stop_conditions_tie_lesson_ends_each_row_once_with_the_first_check_that_holds():
    log = simulate(resolve_scenario("stop-conditions-tie"))
    evicts = [(e.step, e.request_id, e.reason) for e in log if e.kind == "evict"]
    assert evicts == [(1, "C", "stop_token"), (2, "A", "stop_token"), (2, "B", "stop_sequence")]
    matches = [(e.step, e.request_id, e.sequence_index, e.sequence) for e in log if e.kind == "stop_match"]
    assert matches == [(1, "C", -1, (0,)), (2, "A", -1, (0,)), (2, "B", 0, (6, 7))]
    assert log.outputs() == {"A": [10, 5, 5, 0], "B": [11, 5, 6, 7], "C": [12, 5, 0]}


def test_the_cancellation_callout_a_request_id_is_used_once_and_cancel_is_idempotent():
    delivered = []
    engine = BatchInferenceEngine(ScriptModel({(1,): [5, 5]}), 1, 0)
    engine.submit_request([1], 2, delivered.append, request_id="A")
    engine.submit_request([2], 2, delivered.append, request_id="B")  # waits behind A
    assert (engine.cancel("B"), engine.cancel("B")) == (True, True)
    engine.run()
    assert delivered == [[2], [1, 5, 5]]  # B once, with its prompt only
    assert engine.cancel("A") is False
    with pytest.raises(ValueError, match="^request_id: 'A' is already in use$"):
        engine.submit_request([1], 2, delivered.append, request_id="A")
    callout = flat(resolve_scenario("cancellation").real_servers[0].text)
    assert "raises `request_id: 'A' is already in use`" in callout
    assert "cancelling B a second time would return True and B would still be delivered once" in callout
    assert "cancelling a finished request returns False" in callout


def test_the_stop_sequences_callout_describes_request_a():
    log = simulate(resolve_scenario("stop-sequences"))
    assert log.outputs()["A"][-2:] == [7, 8]
    assert "A is delivered ending in 7, 8" in flat(resolve_scenario("stop-sequences").real_servers[0].text)


def test_the_zero_budget_reveal_describes_request_a():
    scenario = resolve_scenario("zero-budget-and-empty-prompt")
    assert simulate(scenario).outputs()["A"] == [1, 2, 3]
    assert "its callback receives its prompt [1, 2, 3] unchanged" in flat(scenario.reveal)


def stated_lists(scenario) -> list[list[int]]:
    """Every token list a lesson writes out ("[10, 20, 401, 792, 819]"), in its text, reveal, captions,
    callouts and questions; "[...prompt, 5, 5, 0]" and the like are spellings of a convention, not lists."""
    texts = [scenario.lesson, scenario.reveal, *scenario.captions.values(), *(c.text for c in scenario.real_servers)]
    texts += [text for quiz in scenario.quizzes for text in (quiz.ask, quiz.why)]
    found = (re.findall(r"\[(\d+(?:, \d+)*)?\]", text) for text in texts)
    return [[int(t) for t in inside.split(", ")] if inside else [] for lists in found for inside in lists]


@pytest.mark.parametrize("name", [path.stem for path in list_scenarios()])
def test_every_token_list_a_lesson_states_is_one_of_its_run(name):
    scenario = resolve_scenario(name)
    log = simulate(scenario)
    replay = Replay(log)
    known = [[]] + [list(info.prompt) for info in log.requests]
    known += [seq for info in log.requests for seq in map(list, info.stop_sequences or ())]
    for rid, tokens in log.outputs().items():
        known += [tokens, tokens[replay.prompt_len[rid] :]]
    evicted = [(e.step, e.slot) for e in log if e.kind == "evict" and e.slot is not None]
    known += [list(replay[step].slots[slot].blocks) for step, slot in evicted if log.config.kv_blocks]
    assert [tokens for tokens in stated_lists(scenario) if tokens not in known] == []
