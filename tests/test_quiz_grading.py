"""Grading and explaining a prediction: a number question's tolerance (an estimate, said in the question
and in the fact), and a step's narration kept for the last question about that step."""

import pytest

from engine.analysis.quiz import QuizError, grade, question
from engine.analysis.replay import Replay
from engine.lab.quizzes import questions, tolerance_note
from engine.lab.scenario import parse_scenario, resolve_scenario
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError

BASE = 'title = "t"\n[engine]\nbatch_size = 1\n[[requests]]\nid = "A"\nprompt = [1]\nmax_tokens = 2\n'
BASE += '[[requests]]\nid = "B"\nprompt = [2]\nmax_tokens = 1\n'


def asked(name: str):
    scenario = resolve_scenario(name)
    return scenario, questions(scenario, Replay(simulate(scenario)))


def test_the_replicas_queue_is_an_estimate_within_10_of_the_log_s_111():
    scenario, (_, waiting) = asked("autoscaling-replicas")
    assert (waiting.answer, waiting.tolerance) == (111, 10)
    assert [grade(waiting, n) for n in (100, 101, 111, 121, 122)] == [False, True, True, True, False]
    assert not grade(waiting, "111") and not grade(waiting, True) and not grade(waiting, None)
    assert scenario.quizzes[1].ask.endswith(" (An estimate: answers within 10 of the log's count are right.)")
    assert waiting.explanation[0] == "111 waiting after the admissions of step 366 (answers from 101 to 121 are right)."


def test_the_poisson_queue_at_step_250_is_66_give_or_take_10():
    _, (_, waiting) = asked("poisson-arrivals")
    # 198 arrived by step 250, 116 finished before it and 16 run: 66 wait (the why's estimate: 200 - 118 - 16).
    assert (waiting.step, waiting.answer, waiting.tolerance) == (250, 66, 10)
    assert grade(waiting, 56) and grade(waiting, 76) and not grade(waiting, 55) and not grade(waiting, 77)


def test_without_a_tolerance_a_number_must_be_exact():
    _, (rows, _) = asked("part1-basic-batch")
    assert rows.tolerance == 0 and grade(rows, 2) and not grade(rows, 3) and not grade(rows, 1)


def test_a_tolerance_never_reaches_below_zero_in_the_fact():
    q = question(Replay(simulate(parse_scenario(BASE))), "waiting", step=0, tolerance=5)
    assert (
        q.answer == 1
        and q.explanation[0] == "1 waiting after the admissions of step 0 (answers from 0 to 6 are right)."
    )
    assert tolerance_note(1_000) == "(An estimate: answers within 1,000 of the log's count are right.)"


@pytest.mark.parametrize(
    ("quiz", "message"),
    [
        ('kind = "slot"\nrequest = "A"\ntolerance = 1', "x.toml: quiz[0].tolerance: is for the number kinds only"),
        ('kind = "rows"\nstep = 0\ntolerance = -1', "x.toml: quiz[0].tolerance: must be an integer ≥ 0"),
        ('kind = "rows"\nstep = 0\ntolerance = 1.5', "x.toml: quiz[0].tolerance: must be an integer"),
    ],
)
def test_a_bad_tolerance_names_its_field(quiz, message):
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[")):
        parse_scenario(BASE + '[[quiz]]\nask = "?"\n' + quiz + "\n", "x.toml")


def test_question_refuses_a_tolerance_on_a_choice():
    with pytest.raises(QuizError, match="^is for the number kinds only, not .slot.$") as error:
        question(Replay(simulate(parse_scenario(BASE))), "slot", request="A", tolerance=1)
    assert error.value.field == "tolerance"


def test_a_step_s_narration_joins_only_the_last_question_asked_about_that_step():
    # part2: "Which slot does D take?" and "How many rows ... at step 3?" are both about step 3; the
    # narration of step 3 ("... The model is called with 1 row.") would answer the second.
    _, (c_slot, d_slot, rows) = asked("part2-slot-refill")
    assert d_slot.explanation == ("Request D is admitted into slot 0.",)
    assert (
        rows.explanation[0] == "The model gets 1 row at step 3."
        and "The model is called with 1 row." in rows.explanation
    )
    assert len(c_slot.explanation) > 1  # alone at step 1: the fact, then the step's narration
    # asked earliest step first, then in file order: the file's order decides, not the list's
    text = BASE + '[[quiz]]\nask = "?"\nkind = "rows"\nstep = 1\n[[quiz]]\nask = "?"\nkind = "waiting"\nstep = 0\n'
    text += '[[quiz]]\nask = "?"\nkind = "admitted"\nstep = 1\n'
    scenario = parse_scenario(text)
    first, alone, last = questions(scenario, Replay(simulate(scenario)))
    assert len(first.explanation) == 1 and len(alone.explanation) > 1 and len(last.explanation) > 1
