"""Generated workloads: seeded, bounded, and shaped as their distributions say."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.analysis.metrics import request_metrics, step_metrics
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.lab.workload import arrival_steps, generated_workload, output_lengths
from tests.helpers import HashModel, Spec, make_engine, run_specs


def test_capped_exponential_resamples_above_the_cap():
    lengths = output_lengths(random.Random(1), 5000, "capped_exponential", {"mean": 128, "cap": 100})
    assert max(lengths) == 100 and min(lengths) == 1
    assert len(set(lengths)) > 90


def test_poisson_arrivals_are_sorted_with_the_requested_rate():
    steps = arrival_steps(random.Random(2), 4000, "poisson", {"rate": 2.0})
    assert steps == sorted(steps)
    assert 1900 < steps[-1] < 2100  # 4000 arrivals at 2 per step take ~2000 steps


def test_same_seed_same_workload():
    make = lambda seed: generated_workload(  # noqa: E731
        20, seed=seed, prompt_len=(1, 8), vocab_size=50, output=("uniform", {"min": 1, "max": 9})
    )
    assert make(3) == make(3) and make(3) != make(4)
    assert all(1 <= len(r.prompt) <= 8 and 1 <= r.max_tokens <= 9 for r in make(3))


token = st.integers(0, 5)
specs = st.lists(
    st.builds(
        Spec,
        prompt=st.lists(token, max_size=3),
        max_tokens=st.integers(0, 6),
        stop_sequences=st.none() | st.lists(st.lists(token, min_size=1, max_size=2), min_size=1, max_size=2),
        arrival_step=st.none() | st.integers(0, 8),
        cancel_at=st.none() | st.integers(0, 8),
    ),
    min_size=1,
    max_size=10,
)


@given(specs, st.integers(1, 4), st.booleans(), st.booleans())
@settings(max_examples=60, deadline=None)
def test_metrics_and_narration_hold_for_any_run(workload, batch_size, static, padded):
    engine = make_engine(HashModel(), batch_size, 0, batching="static" if static else "continuous", padded=padded)
    log = run_specs(engine, workload).engine.event_log
    steps = step_metrics(log)
    requests = request_metrics(log, steps=steps)
    assert steps.active_rows.sum() == requests.output_tokens.sum() == sum(e.kind == "emit" for e in log)
    assert (steps.queue_depth >= 0).all()
    assert len(steps) == 0 or steps.queue_depth.iloc[-1] == 0
    assert (requests.e2e_s.dropna() >= 0).all() and requests.e2e_s.notna().all()
    assert (requests.ttft_s.dropna() <= requests.e2e_s[requests.ttft_s.notna()] + 1e-12).all()
    replay = Replay(log)
    for step in range(len(replay)):
        assert all(isinstance(sentence, str) and sentence for sentence in narrate(replay, step))
