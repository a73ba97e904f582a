"""Mooncake's Figure 9 as a prediction (engine/lab/measured_cache.py): graded from the stored cache curve
(tests/fixtures/measurements/cache_curve.json, a copy of the shipped one), too close to call near a band's
edge, a capacity off the curve or a broken file refused in one line, and the quiz left out while the file is
missing; the shipped file answers lesson 9.4's question as the paper's finding says."""

import json
import math
from pathlib import Path

import pytest

from engine.analysis.quiz import QuizError, grade
from engine.analysis.run_quiz import SHARE_BANDS
from engine.lab.measured_files import CACHE_CURVE, MeasurementError, read_cache_curve
from engine.lab.measured_quizzes import asked_from, measured_question, measurement_problem
from engine.lab.scenario import parse_scenario, resolve_scenario
from engine.lab.toml_reader import ScenarioError

FIXTURES = Path(__file__).parent / "fixtures" / "measurements"


def written(tmp_path: Path, change) -> Path:
    data = json.loads((FIXTURES / CACHE_CURVE).read_text())
    change(data)
    (tmp_path / CACHE_CURVE).write_text(json.dumps(data))
    return tmp_path


def test_the_share_of_the_maximum_a_cache_reaches_is_graded_from_the_stored_curve():
    # 3M tokens: 0.134098 / 0.373376 = 35.9 % of the maximum, a quarter to a half; 50M: 99.2 %, over 75 %.
    q = measured_question("cache_share", 3_000_000, FIXTURES)
    assert (q.step, q.options, q.answer) == (0, SHARE_BANDS, "25 % to 50 %")
    assert q.explanation == (
        "Over the whole trace mooncake-conversation, the engine's hit rate with a cache of 3,000,000 tokens is "
        "13.4 %, and 37.3 % with an unbounded one: 36 % of the maximum (`python -m engine cache-curve "
        "mooncake-conversation`, stored on 2026-12-05).",
    )
    assert grade(q, "25 % to 50 %") and not grade(q, "under 25 %")
    assert measured_question("cache_share", 50_000_000, FIXTURES).answer == "over 75 %"
    assert asked_from("cache_share") == "from the whole trace's replay"


def test_a_share_near_a_band_s_edge_is_too_close_to_call(tmp_path):
    folder = written(tmp_path, lambda d: d["engine_hit_rate"].__setitem__(1, 0.373376 * 0.52))  # 52 % of it
    with pytest.raises(QuizError, match=r"52.0% of the maximum is too close to a band's edge to call") as error:
        measured_question("cache_share", 3_000_000, folder)
    assert error.value.field == "capacity"


def test_a_capacity_off_the_curve_is_named_with_the_capacities_there_are():
    with pytest.raises(QuizError, match=r"2,000,000 tokens is not on the stored curve \(its capacities: 1,000,000, "):
        measured_question("cache_share", 2_000_000, FIXTURES)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["engine_hit_rate"].pop(), "engine_hit_rate: must be 4 figures above 0"),
        (lambda d: d.__setitem__("capacities", [3, 1, 2, 4]), "capacities: must be 1 to 64 increasing whole numbers"),
        (lambda d: d.__setitem__("unbounded_engine_hit_rate", "all"), "unbounded_engine_hit_rate: must be a number"),
        (lambda d: d.pop("trace"), "trace: must be a short text"),
    ],
)
def test_a_broken_curve_is_refused_in_one_line(tmp_path, change, message):
    folder = written(tmp_path, change)
    with pytest.raises(MeasurementError, match=message):
        read_cache_curve(folder)


def test_without_the_curve_the_quiz_is_left_out_and_the_command_named(tmp_path, monkeypatch):
    assert measurement_problem("cache_share", tmp_path) == (
        f"{tmp_path / CACHE_CURVE} is missing: `python benchmarks/cache_curve.py --write` replays the whole trace "
        "and writes it"
    )
    toml = 'title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = 1\n[[quiz]]\nask = "?"\nkind = "cache_share"\n'
    monkeypatch.setenv("CBL_MEASUREMENTS", str(tmp_path))
    assert parse_scenario(toml + "capacity = 3000000\n", "x.toml").quizzes == ()
    with pytest.raises(ScenarioError, match=r"x.toml: quiz\[0\].capacity: is required"):
        parse_scenario(toml, "x.toml")


def test_the_shipped_curve_holds_the_paper_s_finding_for_lesson_9_4():
    """Figure 9: a 3M-token cache reaches under half of the maximum, 50M nearly all of it (docs/traces.md)."""
    curve = read_cache_curve()
    assert curve.trace == "mooncake-conversation" and curve.capacities == (1_000_000, 3_000_000, 10_000_000, 50_000_000)
    share = dict(zip(curve.capacities, (rate / curve.unbounded_engine_hit_rate for rate in curve.engine_hit_rate)))
    assert share[3_000_000] < 0.5 < 0.95 < share[50_000_000]
    assert math.isclose(curve.unbounded_engine_hit_rate, curve.unbounded_trace_hit_rate, abs_tol=0.001)
    (quiz,) = [q for q in resolve_scenario("traffic-kimi-cache").quizzes if q.kind == "cache_share"]
    assert quiz.subject == 3_000_000 and measured_question("cache_share", quiz.subject).answer == "25 % to 50 %"
