"""Predictions graded from measurements (engine/lab/measured_quizzes.py): exact answers and
explanations on the fixture files (tests/fixtures/measurements/), a loud error wherever figures
would not settle an answer, hostile files refused in one line, and the lesson "Will it run in
time?" checked against the real files once the benchmarks have written them."""

import dataclasses
import json
from pathlib import Path

import pytest

from cblab.ui.course.measured_view import rows_figure, rows_summary
from engine.analysis.quiz import QuizError, grade
from engine.analysis.replay import Replay
from engine.lab.measured_files import (
    MEASUREMENTS,
    SLOW,
    VECTORISED,
    MeasurementError,
    read_slow_engines,
    read_vectorised,
)
from engine.lab.measured_quizzes import growth_options, measured_question
from engine.lab.quizzes import questions
from engine.lab.scenario import SCENARIO_DIR, load_scenario, parse_scenario
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError
from tests.lesson_screen import predictions
from tests.measured_spoilers import cause, faster, minutes
from tests.spoiler_rules import Facts
from tests.spoilers import spoilers

FIXTURES = Path(__file__).parent / "fixtures" / "measurements"
LESSON = "will-it-run-in-time"
CHECKS, CHECKS_KEY = "ChecksFinishedInAList", "checks-finished-in-a-list"  # its class name, its key in the file


def written(tmp_path: Path, name: str, change) -> Path:
    """The fixture file `name` in `tmp_path`, its data passed through `change` first."""
    data = json.loads((FIXTURES / name).read_text())
    change(data)
    (tmp_path / name).write_text(json.dumps(data))
    return tmp_path


def test_which_engine_is_faster_at_a_row_count_is_graded_from_the_figures():
    small = measured_question("faster", 8, FIXTURES)
    assert small.options == ("the loop engine", "the vectorised engine") and small.answer == "the loop engine"
    assert small.step == 0 and small.explanation == (
        "At 8 rows the loop engine took 1.0 µs a token and the vectorised one 1.7 µs: the loop engine is 1.7× "
        "faster (measured on 2026-12-04, load average 5.3, on Test CPU).",
    )
    large = measured_question("faster", 100_000, FIXTURES)  # the loop is not run at 100,000: 65,536 stands in
    assert large.answer == "the vectorised engine"
    assert large.explanation[0].startswith(
        "At 65,536 rows (the most measured for both) the loop engine took 650 ns a token and the vectorised one "
        "18 ns: the vectorised engine is 36× faster (measured on"
    )
    assert grade(small, "the loop engine") and not grade(small, "the vectorised engine")


def test_which_engine_takes_minutes_and_why_are_graded_from_the_figures():
    slow = measured_question("minutes", CHECKS, FIXTURES)
    assert slow.options == (CHECKS, "the loop engine", "both", "neither") and slow.answer == CHECKS
    assert slow.explanation == (
        "On 100,000 requests, ChecksFinishedInAList would take about 12 minutes and the loop engine 1.5 s "
        "(measured on 2026-12-04, load average 5.0).",
    )
    assert measured_question("minutes", CHECKS_KEY, FIXTURES).options[0] == CHECKS_KEY  # the file's key works too
    assert measured_question("minutes", "CopiesEveryPrefix", FIXTURES).answer == "neither"  # 1.5 s and 40 ms
    why = measured_question("cause", CHECKS, FIXTURES)
    assert (
        why.options == growth_options("requests") and why.answer == "a token's cost grows in proportion to the requests"
    )
    assert why.explanation == (
        "From 1,000 to 16,000 requests (16×), ChecksFinishedInAList's cost a token went from 5.0 µs to 73 µs (15×), "
        "the loop engine's from 911 ns to 954 ns (measured on 2026-12-04, load average 5.0).",
    )


def loop_at_8(data, ns):
    data["loop_ns_per_token"][0] = ns


def slow(data, **figures):
    data["engines"][CHECKS_KEY].update(figures)


@pytest.mark.parametrize(
    ("name", "change", "kind", "subject", "message"),
    [
        (VECTORISED, lambda d: d.update(crossover_rows=12), "faster", 8, "do not settle it at 8 rows"),
        (VECTORISED, lambda d: loop_at_8(d, 1300.0), "faster", 8, "do not settle it at 8 rows"),  # 1.33x apart
        (VECTORISED, lambda d: d.update(crossover_rows=40_000), "faster", 100_000, "do not settle it at 65,536"),
        (VECTORISED, lambda d: d.update(crossover_rows=None), "faster", 100_000, "faster at none of the row"),
        (VECTORISED, lambda d: None, "faster", 7, "7 rows are not measured for both engines"),
        (VECTORISED, lambda d: None, "faster", 300_000, "300,000 rows are not measured for both engines"),
        (SLOW, lambda d: slow(d, seconds_at_target=90.0), "minutes", CHECKS, "would take 90 s: too near a minute"),
        (SLOW, lambda d: slow(d, reference_seconds_at_target=45.0), "minutes", CHECKS, "45 s: too near"),
        (SLOW, lambda d: slow(d, ns_per_token=[2000.0, 4000.0, 8000.0, None, None]), "cause", CHECKS, "power 0.50"),
        (SLOW, lambda d: slow(d, ns_per_token=[1000.0, 8000.0, 64000.0, None, None]), "cause", CHECKS, "power 1.50"),
        (
            SLOW,
            lambda d: slow(
                d, sizes=[1000, 3000, 16000, 64000, 100000], ns_per_token=[2000.0, 4000.0, None, None, None]
            ),
            "cause",
            CHECKS,
            "too short",
        ),
        (SLOW, lambda d: slow(d, ns_per_token=[2000.0, None, None, None, None]), "cause", CHECKS, "fewer than"),
        (SLOW, lambda d: None, "cause", "NoSuchEngine", "'NoSuchEngine' is not measured"),
    ],
)
def test_figures_that_do_not_settle_an_answer_are_a_loud_error(tmp_path, name, change, kind, subject, message):
    with pytest.raises(QuizError, match=message):
        measured_question(kind, subject, written(tmp_path, name, change))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "vectorised.json is missing: `python benchmarks/vectorised.py --write` measures this machine"),
        ("{", "cannot be read"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"measured_on": "x"}', "rows: must be 1 to 64 increasing"),
        (" " * 300_000, "larger than 200,000 bytes"),
    ],
)
def test_a_missing_or_broken_file_is_one_line_naming_the_command_that_writes_it(tmp_path, text, message):
    if text is not None:
        (tmp_path / VECTORISED).write_text(text)
    with pytest.raises(QuizError, match=message):
        measured_question("faster", 8, tmp_path)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(rows=[8, 8, 64, 512, 4096, 32768, 100000]),
        lambda d: d.update(rows=[True] * 7),
        lambda d: d.update(loop_ns_per_token=[1.0]),
        lambda d: d.update(loop_ns_per_token=[float("nan")] * 7),
        lambda d: d.update(vectorised_ns_per_token=["1"] * 7),
        lambda d: d.update(cpu="x" * 500),
        lambda d: d.update(crossover_rows=-1),
    ],
)
def test_a_hostile_vectorised_file_is_refused(tmp_path, change):
    with pytest.raises(QuizError, match="vectorised.json: "):
        measured_question("faster", 8, written(tmp_path, VECTORISED, change))


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(engines={}),
        lambda d: d.update(engines={"not a name": d["engines"][CHECKS_KEY]}),
        lambda d: slow(d, sizes=[]),
        lambda d: slow(d, seconds_at_target=float("inf")),
        lambda d: slow(d, plain_ns_per_token=[1.0, 2.0]),
        lambda d: d["engines"].update({f"E{i}": d["engines"][CHECKS_KEY] for i in range(40)}),
    ],
)
def test_a_hostile_slow_engines_file_is_refused(tmp_path, change):
    with pytest.raises(MeasurementError, match="slow_zoo.json: "):
        read_slow_engines(written(tmp_path, SLOW, change))


def lesson(monkeypatch, folder: Path | None):
    """The lesson's scenario read with its measurements in `folder` (None: an empty folder)."""
    monkeypatch.setenv("CBL_MEASUREMENTS", str(folder or FIXTURES / "none"))
    return load_scenario(SCENARIO_DIR / f"{LESSON}.toml")


def test_the_lesson_asks_the_measured_predictions_only_while_their_files_are_here(monkeypatch):
    missing = lesson(monkeypatch, None)
    assert [q.kind for q in missing.quizzes] == ["rows"]
    scenario = lesson(monkeypatch, FIXTURES)
    assert [q.kind for q in scenario.quizzes] == ["faster", "faster", "minutes", "cause", "rows"]
    asked = questions(scenario, Replay(simulate(scenario)))
    assert [q.answer for q in asked] == [
        "the loop engine",
        "the vectorised engine",
        CHECKS,
        "a token's cost grows in proportion to the requests",
        2,
    ]


@pytest.mark.parametrize(
    ("quiz", "message"),
    [
        ('kind = "faster"', r"quiz\[0\].rows: is required"),
        ('kind = "faster"\nrows = 0', r"quiz\[0\].rows: must be an integer ≥ 1"),
        ('kind = "minutes"', r"quiz\[0\].engine: is required"),
        ('kind = "cause"\nengine = "ChecksFinishedInAList"\nstep = 1', r"quiz\[0\].step: unknown key"),
    ],
)
def test_a_bad_measured_quiz_table_names_its_field(monkeypatch, quiz, message):
    monkeypatch.setenv("CBL_MEASUREMENTS", str(FIXTURES))
    text = '[[requests]]\nprompt = [1]\nmax_tokens = 1\n[[quiz]]\nask = "?"\n' + quiz + "\n"
    with pytest.raises(ScenarioError, match=message):
        parse_scenario('title = "t"\n' + text, "x.toml")


def test_a_measured_question_that_does_not_fit_names_its_quiz_field(monkeypatch):
    monkeypatch.setenv("CBL_MEASUREMENTS", str(FIXTURES))
    text = 'title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = 1\n[[quiz]]\nask = "?"\nkind = "faster"\nrows = 64\n'
    scenario = parse_scenario(text, "x.toml")
    with pytest.raises(ScenarioError, match=r"x.toml: quiz\[0\].rows: the measurements do not settle it at 64 rows"):
        questions(scenario, Replay(simulate(scenario)))


def test_no_measured_prediction_is_given_away_before_it_is_asked(monkeypatch):
    scenario = lesson(monkeypatch, FIXTURES)
    asked = predictions(LESSON, scenario)
    assert len(asked) == 5
    assert {a.n: spoilers(a) for a in asked} == {n: [] for n in range(1, 6)}
    planted = dataclasses.replace(scenario, lesson=scenario.lesson + "\n\nSo the loop is faster on 8 rows.")
    caught = [a.n for a in predictions(LESSON, planted) if spoilers(a)]
    assert caught == [1]  # (the question about 100,000 rows is not answered by it)


def facts(answer) -> Facts:
    return Facts(None, answer, 0, frozenset())


@pytest.mark.parametrize(
    ("rule", "answer", "sentence", "spoils"),
    [
        (faster, "the loop engine", "At 8 rows the loop wins.", True),
        (faster, "the vectorised engine", "NumPy is faster on a large batch.", True),
        (faster, "the vectorised engine", "At 8 rows the loop engine is 6.2× faster.", False),
        (faster, "the vectorised engine", "There the loop is slower.", True),
        (faster, "the loop engine", "The plain loop engine handles each row in Python.", False),
        (minutes, CHECKS, "ChecksFinishedInAList takes about 12 minutes.", True),
        (minutes, CHECKS, "The loop engine takes 2 s, not minutes.", False),
        (minutes, "the loop engine", "The loop engine takes minutes.", True),
        (minutes, "neither", "Neither takes a minute.", True),
        (cause, growth_options("requests")[1], "A token's cost grows in proportion to the requests.", True),
        (cause, growth_options("requests")[1], "The whole run's time grows with the square of the requests.", True),
        (cause, growth_options("requests")[1], "Each step makes 64 tokens.", False),
        (cause, growth_options("requests")[0], "A token costs the same at any number of requests.", True),
    ],
)
def test_the_measured_spoiler_rules_read_a_sentence_both_ways(rule, answer, sentence, spoils):
    assert rule(sentence, facts(answer)) == spoils


def written_by_the_benchmark(name: str):
    return pytest.mark.skipif(
        not (MEASUREMENTS / name).exists(), reason=f"the benchmark has not written engine/lab/measurements/{name}"
    )


@written_by_the_benchmark(VECTORISED)
def test_the_real_vectorised_figures_settle_the_answers_the_lesson_s_words_assume(monkeypatch):
    """The lesson's whys and reveal are written for these answers: a regenerated file that changes
    one, or makes it too close to call (a QuizError), fails here and names what to look at."""
    monkeypatch.delenv("CBL_MEASUREMENTS", raising=False)
    assert measured_question("faster", 8).answer == "the loop engine"
    assert measured_question("faster", 100_000).answer == "the vectorised engine"


@written_by_the_benchmark(SLOW)
def test_the_real_slow_engine_figures_settle_the_answers_the_lesson_s_words_assume(monkeypatch):
    monkeypatch.delenv("CBL_MEASUREMENTS", raising=False)
    assert measured_question("minutes", CHECKS).answer == CHECKS
    assert measured_question("cause", CHECKS).answer == growth_options("requests")[1]
    checks = read_slow_engines().engines[CHECKS_KEY]
    assert (checks.axis, checks.sizes[-1]) == ("requests", 100_000)  # what the lesson's questions say


def test_the_chart_s_words_come_from_the_file_and_a_missing_crossover_is_said(tmp_path):
    never = read_vectorised(written(tmp_path, VECTORISED, lambda d: d.update(crossover_rows=None)))
    assert "The vectorised engine was faster at none of the row counts measured." in rows_summary(never)
    assert not rows_figure(never).layout.shapes  # no crossover line
    said = rows_summary(read_vectorised(FIXTURES))
    assert said.startswith(
        "On this machine at 8 rows the loop engine took 1.0 µs a token and the vectorised one 1.7 µs"
    )
    assert "at 65,536 rows the loop engine took 650 ns a token and the vectorised one 18 ns" in said
