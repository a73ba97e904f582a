"""Every run a file, a URL or a command line starts is estimated first and refused above the
limits (engine/limits.py), with one line naming the field, its value and the limit."""

import dataclasses
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine
from engine.lab.limits import MAX_FILE_BYTES, worst_case
from engine.lab.scenario import ScenarioError, load_scenario, parse_scenario, resolve_scenario
from engine.lab.simulate import simulate
from tests.helpers import HashModel

REQUEST = "[[requests]]\nprompt = [1]\nmax_tokens = 1\n"


def refusal(text: str) -> str:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "x.toml")
    return str(caught.value)


def workload(output: str, arrival: str = 'process = "burst"', count: int = 1000, prompt_len: str = "4") -> str:
    return (
        f'title = "t"\n[workload]\ncount = {count}\nprompt_len = {prompt_len}\n'
        f"[workload.output]\n{output}\n[workload.arrival]\n{arrival}\n"
    )


def test_a_92_byte_scenario_that_would_run_forever_is_refused_naming_max_tokens():
    text = 'title = "t"\n[model]\nstop_chance = 0.0\n[[requests]]\nprompt = [1]\nmax_tokens = 1000000000000\n'
    assert len(text.encode()) < 100
    assert refusal(text) == (
        "x.toml: requests[0].max_tokens: 1,000,000,000,000 lets the run generate up to 1,000,000,000,000 tokens; "
        "the limit is 2,000,000 generated tokens per run"
    )


def test_many_long_prompts_are_refused_before_any_is_generated():
    message = refusal(workload('distribution = "fixed"\nvalue = 1', count=100_000, prompt_len="[0, 65536]"))
    assert message == (
        "x.toml: workload.prompt_len: 100,000 requests × up to 65,536 tokens makes 6,553,600,000 prompt tokens; "
        "the limit is 2,000,000 prompt tokens per run"
    )


def test_a_capped_exponential_that_would_resample_forever_is_refused():
    message = refusal(workload('distribution = "capped_exponential"\nmean = 65536\ncap = 1', count=100_000))
    assert message.startswith("x.toml: workload.output.cap: cap 1 keeps 1 draw in 43,691 of an exponential")
    assert message.endswith("the limit is 10,000,000 draws")


def test_a_slow_poisson_process_is_fine_but_nan_and_far_arrivals_are_refused():
    slow = parse_scenario(workload('distribution = "fixed"\nvalue = 2', 'process = "poisson"\nrate = 0.0002', 5000))
    assert max(r.arrival_step for r in slow.requests) > 20_000_000  # idle steps cost nothing
    assert refusal(workload('distribution = "fixed"\nvalue = 1', 'process = "poisson"\nrate = nan')) == (
        "x.toml: workload.arrival.rate: must be a finite number ≥ 1e-09, got nan"
    )
    far = refusal(workload('distribution = "fixed"\nvalue = 1', 'process = "poisson"\nrate = 1e-6', 5000))
    assert far.startswith("x.toml: workload.arrival.rate: rate 1e-06 puts request ")
    assert far.endswith("past step 1,073,741,824, the latest arrival step allowed")


def test_an_arrival_at_the_last_32_bit_step_is_refused():
    text = 'title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = 1\narrival_step = 2147483647\n'
    assert refusal(text) == (
        "x.toml: requests[0].arrival_step: must be an integer ≥ 0 and ≤ 1073741824, got 2147483647"
    )


def test_padded_rows_are_counted_against_the_limit():
    text = (
        'title = "t"\n[engine]\nbatch_size = 256\npadded = true\n[model]\nstop_chance = 0.0\n'
        "[[requests]]\nprompt = [1]\nmax_tokens = 1000000\n"
    )
    assert refusal(text) == (
        "x.toml: engine.padded: true with batch_size 256 sends up to 256,000,256 rows to the model; "
        "the limit is 10,000,000 rows sent to the model per run"
    )


def test_overrides_are_checked_when_the_run_starts():
    scenario = resolve_scenario("anyscale-cap1536").with_engine(batch_size=1, padded=True)
    heavy = dataclasses.replace(scenario, workload=dataclasses.replace(scenario.workload, count=5000))
    with pytest.raises(ScenarioError, match=r"^scenarios/anyscale-cap1536.toml: workload.prompt_len: 5,000 requests"):
        simulate(heavy)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'title = "t"\n[vocabulary]\n"²" = "x"\n' + REQUEST,
            'x.toml: vocabulary.²: keys must be integers (write them in quotes, e.g. "7" = "the")',
        ),
        (
            'title = "t"\n[vocabulary]\n"' + "1" * 5000 + '" = "x"\n' + REQUEST,
            "x.toml: vocabulary." + "1" * 59 + '…: keys must be integers (write them in quotes, e.g. "7" = "the")',
        ),
        (
            'title = "t"\nx = ' + "[" * 3000 + "]" * 3000 + "\n",
            "x.toml: not valid TOML (nested too deeply)",
        ),
        (
            'title = "t"\n[model]\nseed = ' + "9" * 5000 + "\n" + REQUEST,
            "x.toml: not valid TOML (Exceeds the limit (4300 digits) for integer string conversion: value has 5000 "
            "digits; use sys.set_int_max_str_digits() to increase the limit)",
        ),
    ],
)
def test_hostile_toml_is_a_one_line_error(text, message):
    assert refusal(text) == message


def test_files_are_read_with_a_size_cap(tmp_path):
    with pytest.raises(ScenarioError, match=r"^/dev/zero: cannot read the file \(the file is larger than the limit"):
        load_scenario("/dev/zero")
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ScenarioError, match="larger than the limit of 5 MB"):
        load_scenario(big)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run", "--requests", "1000000000"],
            "error: argument --requests: must be an integer from 1 to 100,000, got '1000000000'\n",
        ),
        (["run", "/dev/zero"], "error: /dev/zero: cannot read the file (the file is larger than the limit of 5 MB)\n"),
        (
            ["run", "--step-ms", "nan"],
            "error: argument --step-ms: must be a number of milliseconds from 0 to 1,000,000, got 'nan'\n",
        ),
        (
            ["run", "--max-tokens", "100000"],
            "error: argument --max-tokens: must be an integer from 1 to 65,536, got '100000'\n",
        ),
    ],
)
def test_the_cli_refuses_what_is_over_a_limit_in_one_line(args, message):
    result = subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (2, message)


specs = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 30)), min_size=1, max_size=12)  # (max_tokens, arrival)


@given(specs, st.integers(1, 5), st.booleans(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_the_worst_case_bounds_every_real_run(requests, batch_size, static, padded):
    engine = BatchInferenceEngine(
        HashModel(), batch_size, None, batching="static" if static else "continuous", padded=padded
    )
    for max_tokens, arrival in requests:
        engine.submit_request([1], max_tokens, arrival_step=arrival)
    steps = 0
    while engine.step():
        steps += 1
    log = engine.event_log
    rows = sum(e.rows for e in log if e.kind == "model_call")
    tokens = sum(1 for e in log if e.kind == "emit")
    bound = worst_case(
        [m for m, _ in requests], [a for _, a in requests], len(requests), batch_size, static=static, padded=padded
    )
    assert steps <= bound.steps and rows <= bound.model_rows and tokens <= bound.generated_tokens
    assert len(log) <= bound.events
