"""A bad scenario file is reported in one line naming the file, the field and the problem."""

import pytest

from engine.lab.scenario import ScenarioError, load_scenario, parse_scenario, resolve_scenario
from engine.lab.simulate import build_model

GOOD = """
title = "t"
[engine]
batch_size = 2
[[requests]]
prompt = [1]
max_tokens = 2
"""


def requests_toml(*max_tokens) -> str:
    body = "".join(f"[[requests]]\nprompt = [1]\nmax_tokens = {m}\n" for m in max_tokens)
    return f'title = "t"\n{body}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (requests_toml(1, 2, 3, -2), "foo.toml: requests[3].max_tokens: must be an integer ≥ 0, got -2"),
        (requests_toml(1, "'x'"), "foo.toml: requests[1].max_tokens: must be an integer ≥ 0, got str 'x'"),
        ("title = ", "foo.toml: not valid TOML (Invalid value (at end of document))"),
        ("lesson = 'x'", "foo.toml: title: is required"),
        (
            GOOD.replace("batch_size = 2", "batch_size = 0"),
            "foo.toml: engine.batch_size: must be an integer ≥ 1 and ≤ 256, got 0",
        ),
        (
            GOOD.replace("batch_size = 2", "batch_sise = 2"),
            "foo.toml: engine.batch_sise: unknown key (known here: batch_size, batching, fill_timeout, kv, padded, stop_token, token_budget)",
        ),
        (
            GOOD.replace("batch_size = 2", "batching = 'dynamic'"),
            "foo.toml: engine.batching: must be one of 'continuous', 'static', got 'dynamic'",
        ),
        (
            GOOD.replace("max_tokens = 2", "max_tokens = 2\nstop_sequences = [[]]"),
            "foo.toml: requests[0].stop_sequences[0]: must not be empty, got []",
        ),
        (
            GOOD.replace("max_tokens = 2", "max_tokens = 2\nstop_sequences = [7, 8]"),
            "foo.toml: requests[0].stop_sequences: must be a list of token lists such as [[7, 8], [3, 3, 4]], got list [7, 8]",
        ),
        (
            GOOD.replace("prompt = [1]", "prompt = [1, 'a']"),
            "foo.toml: requests[0].prompt[1]: must be a 64-bit integer token id, got str 'a'",
        ),
        (
            GOOD.replace("max_tokens = 2", "max_tokens = 2\nscript = [1]"),
            "foo.toml: requests[0].script: is only used with [model] kind = 'scripted'",
        ),
        ('title = "t"', "foo.toml: requests: give either [[requests]] or a [workload] table, not both or neither"),
        (
            GOOD + "[workload]\ncount = 1\n[workload.output]\ndistribution = 'fixed'\nvalue = 1\n",
            "foo.toml: requests: give either [[requests]] or a [workload] table, not both or neither",
        ),
        ('title = "t"\n[workload]\ncount = 5\n', "foo.toml: workload.output: is required"),
        (
            'title = "t"\n[workload]\ncount = 5\n[workload.output]\ndistribution = "normal"\n',
            "foo.toml: workload.output.distribution: must be one of 'fixed', 'uniform', 'capped_exponential', got 'normal'",
        ),
        (
            'title = "t"\n[workload]\ncount = 5\n[workload.output]\ndistribution = "uniform"\nmin = 9\nmax = 3\n',
            "foo.toml: workload.output.min: must be ≤ max (3), got 9",
        ),
        (
            'title = "t"\n[workload]\ncount = 5\nprompt_len = [4, 2]\n[workload.output]\ndistribution = "fixed"\nvalue = 3\n',
            "foo.toml: workload.prompt_len: must be an integer 0..65536 or a range [min, max], got [4, 2]",
        ),
        (
            'title = "t"\n[model]\nkind = "scripted"\n[workload]\ncount = 5\n[workload.output]\ndistribution = "fixed"\nvalue = 3\n',
            "foo.toml: model.kind: 'scripted' needs an explicit [[requests]] list with scripts",
        ),
        (
            GOOD + "[vocabulary]\nthe = 'x'\n",
            'foo.toml: vocabulary.the: keys must be integers (write them in quotes, e.g. "7" = "the")',
        ),
        (
            GOOD.replace("prompt = [1]", "id = 'A'\nprompt = [1]")
            + "[[requests]]\nid = 'A'\nprompt = [2]\nmax_tokens = 1\n",
            "foo.toml: requests[1].id: repeats requests[0].id, got 'A'",
        ),
        (
            GOOD.replace("[engine]", "[model]\nstop_chance = 1.5\n[engine]"),
            "foo.toml: model.stop_chance: must be a finite number ≥ 0.0 and ≤ 1.0, got 1.5",
        ),
    ],
)
def test_bad_scenario_names_file_field_and_problem(text, message):
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, "foo.toml")
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_conflicting_scripts_are_reported_against_the_request():
    text = 'title = "t"\n[model]\nkind = "scripted"\n' + "".join(
        f"[[requests]]\nprompt = [1]\nmax_tokens = 2\nscript = {script}\n" for script in ("[2, 3]", "[5]")
    )
    with pytest.raises(ScenarioError) as caught:
        build_model(parse_scenario(text, "foo.toml"))
    assert str(caught.value) == (
        "foo.toml: requests[1].script: continues [1] with 5, but requests[0] continues it with 2; "
        "give the prompts different tokens"
    )


def test_missing_or_unreadable_files_are_one_line_errors(tmp_path):
    with pytest.raises(ScenarioError, match=r"^nope: no such scenario file \(built-in scenarios: anyscale-cap128, "):
        resolve_scenario("nope")
    with pytest.raises(ScenarioError, match=r"cannot read the file"):
        load_scenario(tmp_path)
    binary = tmp_path / "x.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(ScenarioError, match=r"x.toml: cannot read the file"):
        load_scenario(binary)


def test_builtin_names_resolve_with_or_without_suffix():
    assert resolve_scenario("part2-slot-refill").title == resolve_scenario("part2-slot-refill.toml").title


def test_model_tokens_out_of_64_bits_are_refused_when_loading():
    with pytest.raises(ScenarioError, match=r"^x.toml: model.eos_token: must be an integer"):
        parse_scenario(
            'title = "t"\n[model]\neos_token = 18446744073709551616\n[[requests]]\nprompt = [1]\nmax_tokens = 1\n',
            "x.toml",
        )
    with pytest.raises(ScenarioError, match=r"prompt_len: must be an integer 0..65536"):
        parse_scenario(
            'title = "t"\n[workload]\ncount = 1\nprompt_len = 100000000\n[workload.output]\n'
            'distribution = "fixed"\nvalue = 1\n',
            "x.toml",
        )
