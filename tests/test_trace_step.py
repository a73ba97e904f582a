"""benchmarks/trace_step.py runs and reports something sensible; the counts themselves are not pinned
(they are a snapshot of the engine's design, which will change)."""

import json

from benchmarks.trace_step import main


def test_the_plain_step_runs_through_some_engine_files(capsys):
    (result,) = main(["--case", "plain", "--json"])
    assert json.loads(capsys.readouterr().out) == [result]
    assert result["calls"] > 0 and result["functions"] > 0 and result["files"]
    assert result["functions"] <= result["calls"]
    assert all(file.startswith("engine/") and file.endswith(".py") for file in result["files"])
    assert "engine/core/engine.py" in result["files"]


def test_verbose_lists_every_call_in_order(capsys):
    (result,) = main(["--case", "plain", "--verbose"])
    assert len(result["trace"]) == result["calls"]
    assert result["trace"][0].startswith("engine/core/engine.py:BatchInferenceEngine.step")
    assert all(line.strip().split(":")[0] in result["files"] for line in result["trace"])
    assert str(result["calls"]) in capsys.readouterr().out
