"""The built-in mock models: deterministic, O(1) per row, controllable lengths."""

from engine import BatchInferenceEngine, MockModel, SimulatedLLM
from engine.lab.workload import generated_workload


class CountingPrefix(list):
    """A list that counts element reads, to show the model never scans the prefix."""

    reads = 0

    def __getitem__(self, index):
        CountingPrefix.reads += 1
        return super().__getitem__(index)

    def __iter__(self):
        raise AssertionError("the model must not iterate over the prefix")


def test_next_token_reads_at_most_two_positions_of_the_prefix():
    prefix = CountingPrefix(range(1, 10_001))
    CountingPrefix.reads = 0
    SimulatedLLM().next_token(prefix)
    assert CountingPrefix.reads == 2


def test_same_seed_same_tokens_different_seed_different_tokens():
    prefixes = [[1, 2, 3], [], [42]]
    assert SimulatedLLM(seed=1).generate_next_tokens(prefixes) == SimulatedLLM(seed=1).generate_next_tokens(prefixes)
    assert SimulatedLLM(seed=1).generate_next_tokens(prefixes) != SimulatedLLM(seed=2).generate_next_tokens(prefixes)
    assert MockModel(seed=1).next_tokens(prefixes) == SimulatedLLM(seed=1).generate_next_tokens(prefixes)


def test_simulated_llm_answers_are_pinned():
    assert SimulatedLLM().generate_next_tokens([[1, 2, 3], [], [42]]) == [719, 622, 324]


def prompts_of_400() -> list[list[int]]:
    workload = generated_workload(
        400, seed=5, prompt_len=(1, 16), vocab_size=1000, output=("uniform", {"min": 1, "max": 64})
    )
    return [r.prompt for r in workload]


def output_lengths(stop_chance: float) -> list[int]:
    model = SimulatedLLM(seed=5, stop_chance=stop_chance)
    engine = BatchInferenceEngine(model, 16, model.eos_token)
    lengths = []
    for prompt in prompts_of_400():
        engine.submit_request(prompt, 1000, lambda tokens: lengths.append(len(tokens)))
    engine.run()
    return lengths


def test_stop_chance_controls_mean_output_length():
    lengths = output_lengths(0.1)
    assert len(set(lengths)) > 20  # rows finish at many different steps
    prompts = sum(map(len, prompts_of_400()))
    mean_generated = (sum(lengths) - prompts) / 400
    assert 7 < mean_generated < 13  # geometric with mean 1 / 0.1 = 10


def test_zero_stop_chance_never_emits_eos_and_one_always_does():
    prefixes = [[i, i + 1] for i in range(200)]
    assert 0 not in SimulatedLLM(stop_chance=0.0, eos_token=0).generate_next_tokens(prefixes)
    assert set(SimulatedLLM(stop_chance=1.0, eos_token=7).generate_next_tokens(prefixes)) == {7}
    assert all(0 <= t < 50 for t in SimulatedLLM(vocab_size=50, stop_chance=0.0).generate_next_tokens(prefixes))
