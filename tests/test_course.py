"""The course: every scenario in exactly one chapter, numbered lessons, predictions answered from the log.

The expected answers below are derived by hand from each scenario's requests (see the
comments), never read back from the code under test; the AppTest walks the whole course
with `next_lesson`, answering every prediction, and checks the grades and chapter scores.
"""

import pathlib
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from cblab.cli.main import main as cli_main
from cblab.ui.course.course import quiz_key
from engine.analysis.quiz import grade
from engine.analysis.replay import Replay
from engine.lab.course import load_course
from engine.lab.quizzes import questions
from engine.lab.scenario import SCENARIO_DIR, list_scenarios, parse_scenario, resolve_scenario
from engine.lab.simulate import simulate
from engine.lab.toml_reader import ScenarioError
from tests.test_app import batch_caption, report_step

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")
COURSE = load_course()


def asked(name: str):
    scenario = resolve_scenario(name)
    return scenario, questions(scenario, Replay(simulate(scenario)))


def answers(name: str) -> list:
    return [q.answer for q in asked(name)[1]]


def test_every_scenario_file_is_in_exactly_one_chapter():
    names = [lesson.name for lesson in COURSE.lessons]
    assert sorted(names) == sorted(path.stem for path in list_scenarios())
    assert len(names) == len(set(names))
    assert "course" not in names  # course.toml is not a scenario


def test_the_course_starts_with_the_seeds_and_numbers_its_lessons():
    first = COURSE.lessons[0]
    assert (first.name, first.number, first.label) == (
        "part1-basic-batch",
        "1.1",
        "1.1 Part 1: one batch, one model call per step",
    )
    assert [c.title for c in COURSE.chapters][:3] == [
        "The interview problem: Part 1 and Part 2",
        "Static vs continuous batching",
        "Stop tokens and stop sequences",
    ]
    assert COURSE.lesson("3.2").name == "stop-sequences" and COURSE.lesson("stop-sequences").number == "3.2"
    assert COURSE.following("part1-basic-batch").name == "part2-slot-refill"
    assert COURSE.following(COURSE.lessons[-1].name) is None
    assert COURSE.following("my-upload.toml") is None  # (an uploaded file has no next lesson)
    assert COURSE.lesson("nope") is None and COURSE.lesson("9.9") is None


def copy_scenarios(tmp_path, names, course: str) -> pathlib.Path:
    for name in names:
        shutil.copy(SCENARIO_DIR / f"{name}.toml", tmp_path)
    (tmp_path / "course.toml").write_text(course)
    return tmp_path


@pytest.mark.parametrize(
    ("course", "message"),
    [
        (
            '[[chapter]]\ntitle = "a"\nlessons = ["part1-basic-batch"]\n',
            "scenarios/course.toml: scenarios/part2-slot-refill.toml is in no chapter",
        ),
        (
            '[[chapter]]\ntitle = "a"\nlessons = ["part1-basic-batch", "part2-slot-refill", "gone"]\n',
            "scenarios/course.toml: chapter[0].lessons[2]: no scenario file scenarios/gone.toml",
        ),
        (
            '[[chapter]]\ntitle = "a"\nlessons = ["part1-basic-batch"]\n'
            '[[chapter]]\ntitle = "b"\nlessons = ["part2-slot-refill", "part1-basic-batch"]\n',
            "scenarios/course.toml: chapter[1].lessons[1]: part1-basic-batch is already in chapter[0]",
        ),
        ('[[chapter]]\ntitle = "a"\nlessons = []\n', "chapter[0].lessons: must be a non-empty list"),
        ('[[chapter]]\nlessons = ["part1-basic-batch"]\n', "chapter[0].title: is required"),
        (
            '[[chapter]]\ntitle = "a"\nlesson = ["part1-basic-batch"]\n',
            "chapter[0].lessons: is required",
        ),
        ('title = "no chapters"\n', "title: unknown key"),
    ],
)
def test_a_broken_course_names_the_chapter_and_the_scenario(tmp_path, course, message):
    directory = copy_scenarios(tmp_path, ["part1-basic-batch", "part2-slot-refill"], course)
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_course(directory)


@pytest.mark.parametrize("name", [lesson.name for lesson in COURSE.lessons])
def test_every_lesson_asks_and_captions_and_its_questions_fit_its_run(name):
    scenario, qs = asked(name)
    assert qs and scenario.captions
    busy = set(map(int, Replay(simulate(scenario)).busy_steps()))
    assert set(scenario.captions) <= busy  # a caption on a step that shows nothing would never be read
    for q in qs:
        assert grade(q, q.answer)
        assert q.options is None or (q.answer in q.options and len(set(q.options)) == len(q.options) >= 2)
        assert q.explanation[0]


def test_the_course_has_at_least_ten_predictions():
    assert sum(lesson.quizzes for lesson in COURSE.lessons) >= 10
    assert all(lesson.quizzes >= 1 for lesson in COURSE.lessons)


def test_answers_come_from_the_log_part2_and_stops():
    # part2: A (1 token) frees slot 0 after step 0, C takes it at step 1; C and B both finish
    # at step 2, so D takes slot 0 at step 3, alone in the batch (1 row).
    assert answers("part2-slot-refill") == ["slot 0", "slot 0", 1]
    assert [q.step for q in asked("part2-slot-refill")[1]] == [1, 3, 3]
    assert asked("part2-slot-refill")[1][2].explanation[0] == "The model gets 1 row at step 3."
    # stop-sequences: D's 8 follows the prompt's 7 (no stop at step 0); C stops on [1, 2]
    # with prompt [22]; B's 1, 1, 1, 2 ends [1, 1, 2] at step 3.
    assert answers("stop-sequences") == ["no", "[22, 1, 2]", "yes"]
    _, (_, delivered, _) = asked("stop-sequences")
    assert set(delivered.options) == {"[22, 1, 2]", "[1, 2]", "[22, 1]", "[22]"}
    # zero budget: A gets its prompt [1, 2, 3]; B, next, takes slot 0.
    assert answers("zero-budget-and-empty-prompt") == ["[1, 2, 3]", "slot 0"]


def test_answers_come_from_the_log_memory():
    # preemption: 7 blocks of 2, three 2-token prompts: at step 3 all need a third block and
    # 1 is free, so C (newest) goes; at step 5 A needs a fourth, B is newest; B recomputes
    # 2 prompt + 5 generated = 7 tokens = 4 blocks at step 6.
    assert answers("preemption") == ["C", "B", 4]
    scenario, qs = asked("preemption")
    assert qs[0].step == 3 and qs[0].options is not None and set(qs[0].options) == {"A", "B", "C", "nobody"}
    assert set(qs[1].options) == {"A", "B", "nobody"}  # C waits at step 5: not a running row
    # block-table: D (1-token prompt) admitted at step 3 into slot 0; at step 9 it has 1 + 6
    # tokens in blocks of 2: 4 blocks.
    assert answers("block-table") == ["slot 0", 4]
    # kv-paged-vs-reserve: 4-token prompts in 4-token blocks, 8 slots: all 8 fit; 16 of 24 wait.
    assert answers("kv-paged-vs-reserve") == [8, 16]
    # anyscale: a 512-token prompt is 32 blocks of 16; 1,293 // 32 = 40 rows.
    assert answers("anyscale-cap32") == [40]
    # multi-turn: A1 wrote 6 + 4 tokens (its last is never written): 2 full blocks of 4 = 8 hit, 14 - 8 = 6
    # computed; B1's first block was reused by L, and a match starts at the first block: 0.
    assert answers("multi-turn-chat") == [8, 6, 0]
    # shared system prompt: r0 computes 512 + 32; r1 finds r0's 32 system-prompt blocks (cached the step r0
    # computed them) and computes its own 32.
    assert answers("shared-system-prompt") == [544, 512, 32]
    # the paper's four systems, this run Orca-Max: 64 + 1,024 tokens = 68 blocks of 16 a row; 800 // 68 = 11.
    assert answers("paper-four-systems") == [68, 11]


def test_answers_come_from_the_log_cancellation_and_static():
    # B is cancelled while waiting: its prompt [2]; A, cancelled before step 3, has its prompt [1] and the
    # 3 tokens of steps 0-2 (the simulated model answers [1] with 45, [1, 45] with 292, ...); D takes A's slot 0.
    assert answers("cancellation") == ["[2]", "[1, 45, 292, 863]", "slot 0"]
    # static, 3 slots: first batch A, B, C lasts B's 8 steps; at step 3 only B runs;
    # second batch D, E, F lasts E's 6 steps: 14 steps.
    assert answers("static-vs-continuous") == [1, 14]


def test_a_wrong_answer_is_graded_wrong():
    _, (rows, delivered) = asked("part1-basic-batch")
    assert grade(rows, 2) and not grade(rows, 3) and not grade(rows, "2") and not grade(rows, None)
    assert grade(delivered, "[1, 2, 3, 4, 5]") and not grade(delivered, "[3, 4, 5]")


BASE = (
    'title = "t"\n[model]\nkind = "scripted"\n[[requests]]\nid = "A"\nprompt = [1]\nmax_tokens = 2\nscript = [5, 6]\n'
)


@pytest.mark.parametrize(
    ("quiz", "message"),
    [
        ('ask = "?"\nkind = "colour"\nrequest = "A"', "x.toml: quiz[0].kind: must be one of"),
        ('ask = "?"\nkind = "blocks"\nrequest = "A"', "x.toml: quiz[0].step: is required for kind 'blocks'"),
        ('ask = "?"\nkind = "slot"\nrequest = "Z"', "x.toml: quiz[0].request: is not a request of this scenario"),
        ('ask = "?"\nkind = "slot"', "x.toml: quiz[0].request: is required"),
        ('kind = "slot"\nrequest = "A"', "x.toml: quiz[0].ask: is required"),
        ('ask = "?"\nkind = "rows"\nstep = -1', "x.toml: quiz[0].step: must be an integer ≥ 0"),
        ('ask = "?"\nkind = "rows"\nstep = 1\nrequest = "A"', "x.toml: quiz[0].request: unknown key"),
        ('ask = 3\nkind = "rows"\nstep = 1', "x.toml: quiz[0].ask: must be a string"),
    ],
)
def test_a_bad_quiz_table_names_its_field(quiz, message):
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_scenario(BASE + "[[quiz]]\n" + quiz + "\n", "x.toml")


def test_too_many_quizzes_are_refused_and_a_misfit_names_its_field():
    many = '[[quiz]]\nask = "?"\nkind = "steps"\n' * 51
    with pytest.raises(ScenarioError, match=r"x.toml: quiz: has 51 tables; the limit is 50"):
        parse_scenario(BASE + many, "x.toml")
    misfit = parse_scenario(
        BASE + '[[quiz]]\nask = "?"\nkind = "steps"\n[[quiz]]\nask = "?"\nkind = "slot"\nrequest = "A"\nstep = 1\n',
        "x.toml",
    )
    with pytest.raises(ScenarioError, match=r"x.toml: quiz\[1\].step: request A is not admitted at step 1"):
        questions(misfit, Replay(simulate(misfit)))
    late = parse_scenario(BASE + '[[quiz]]\nask = "?"\nkind = "rows"\nstep = 99\n', "x.toml")
    with pytest.raises(ScenarioError, match=r"quiz\[0\].step: step 99 is not in this run \(its steps: 0..1\)"):
        questions(late, Replay(simulate(late)))


def test_narrate_prints_the_title_and_the_lesson_before_the_steps(capsys):
    assert cli_main(["run", "part2-slot-refill", "--narrate"]) == 0
    out = capsys.readouterr().out
    lesson = resolve_scenario("part2-slot-refill").lesson.strip()
    assert f"Part 2: a freed slot is refilled at once\n\n{lesson}" in out
    assert out.index(lesson) < out.index("\nstep 0\n")
    assert (
        "  C is admitted into slot 0, the slot A freed one step ago" in out
    )  # the caption replaces step 1's narration


def test_narrate_prints_what_happened_after_the_steps_and_a_reveal_must_be_text(capsys):
    assert cli_main(["run", "static-vs-continuous", "--narrate"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(" ".join(resolve_scenario("static-vs-continuous").reveal.split()))
    assert "\nWhat happened: Static takes 14 steps to continuous batching's 9" in out
    assert "14 steps" not in resolve_scenario("static-vs-continuous").lesson  # the lesson does not give it away
    with pytest.raises(ScenarioError, match=r"^x.toml: reveal: must be a string"):
        parse_scenario('title = "t"\nreveal = 3\n[[requests]]\nprompt = [1]\nmax_tokens = 1\n', "x.toml")


def revealed(app: AppTest, scenario) -> bool:
    """Whether the page shows the lesson's reveal ("What happened")."""
    reveal = " ".join(scenario.reveal.split())
    return bool(reveal) and any(reveal in " ".join(m.value.split()) for m in app.markdown)


def answer(app: AppTest, key: str, value) -> AppTest:
    widget = app.number_input(key=key) if isinstance(value, int) else app.radio(key=key)
    widget.set_value(value).run()
    return app.button(key=key.replace("quiz_", "check_", 1)).click().run()


def verdicts(app: AppTest) -> list[str]:
    return [e.value for e in app.success] + [e.value for e in app.error]


def test_a_learner_walks_the_whole_course_with_next_lesson_answering_every_prediction():
    app = AppTest.from_file(APP, default_timeout=180).run()
    scored = {}
    for lesson in COURSE.lessons:
        assert not app.exception, lesson.name
        assert app.selectbox(key="scenario").value == lesson.name
        if lesson is not COURSE.lessons[0]:  # (a session's first run writes nothing to the URL)
            assert app.query_params["lesson"] == lesson.name
        scenario, qs = asked(lesson.name)
        in_step_order = sorted(enumerate(zip(scenario.quizzes, qs), start=1), key=lambda item: item[1][1].step)
        for n, (quiz, q) in in_step_order:  # (the app asks the earliest step first)
            assert any(quiz.ask in m.value for m in app.markdown), (lesson.name, n)
            assert not revealed(app, scenario), lesson.name  # what happened waits for the last prediction
            app = answer(app, quiz_key(lesson.name, n), q.answer)
            assert [v for v in verdicts(app) if quiz.ask in v][0].startswith(f"{quiz.ask} **Right.**")
        assert revealed(app, scenario) == bool(scenario.reveal), lesson.name
        scored[lesson.chapter] = scored.get(lesson.chapter, 0) + lesson.quizzes
        total = sum(other.quizzes for other in COURSE.lessons if other.chapter == lesson.chapter)
        chapter = f"chapter {lesson.chapter + 1}: {scored[lesson.chapter]}/{total} right"
        assert f"This lesson: {len(qs)}/{len(qs)} right · {chapter}" in [c.value for c in app.caption], lesson.name
        if lesson is not COURSE.lessons[-1]:
            app.button(key="next_lesson").click().run()
    last = app.button(key="next_lesson")
    assert last.disabled and last.label == "Course complete"
    assert app.selectbox(key="scenario").value == COURSE.lessons[-1].name
    summary = [c.value for c in app.sidebar.caption if c.value.startswith("Your predictions")][0]
    for i, chapter in enumerate(COURSE.chapters):
        total = sum(lesson.quizzes for lesson in COURSE.lessons if lesson.chapter == i)
        assert f"{i + 1}. {chapter.title}: {total}/{total} right" in summary


def test_a_wrong_prediction_says_so_and_counts_nothing_and_the_step_stays_hidden_until_answered():
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["lesson"] = "1.2"
    app.run()
    assert app.selectbox(key="scenario").value == "part2-slot-refill"
    report_step(app, 3)  # the stage is played on to step 3 before the answer ...
    assert batch_caption(app) == "The batch as the model sees it at step 0"  # ... the views stop before step 1
    app = answer(app, "quiz_part2_slot_refill_1", "slot 1")
    said = [v for v in verdicts(app) if "Which slot does C take?" in v][0]
    assert said.startswith(
        "A has finished. Which slot does C take? **Not quite: you said slot 1, the answer is slot 0.**"
    )
    assert "Request C is admitted into slot 0." in said and "lowest free slot" in said
    assert "This lesson: 0/3 right · chapter 1: 0/" in "\n".join(c.value for c in app.caption)
    # step 1 is revealed, and the stage moves there: the views show it at once, before the stage reports
    assert batch_caption(app) == "The batch as the model sees it at step 1"


def test_an_unknown_lesson_falls_back_to_lesson_one_with_a_message():
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["lesson"] = "no-such-lesson"
    app.run()
    assert not app.exception
    assert app.selectbox(key="scenario").value == "part1-basic-batch"
    assert any("There is no lesson 'no-such-lesson'; here is lesson 1." in w.value for w in app.warning)


def asked_now(app: AppTest) -> list[str]:
    return [m.value for m in app.markdown if m.value.startswith("**Predict**")]


def test_predictions_are_asked_earliest_step_first_whatever_their_order_in_the_file():
    scenario, qs = asked("static-vs-continuous")
    assert [q.step for q in qs] == [3, 0]  # the file asks about step 3 first
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["lesson"] = "static-vs-continuous"
    app.run()
    assert asked_now(app) == [f"**Predict** (before step 0): {scenario.quizzes[1].ask}"]
    app = answer(app, quiz_key("static-vs-continuous", 2), qs[1].answer)
    assert asked_now(app) == [f"**Predict** (before step 3): {scenario.quizzes[0].ask}"]


def test_changed_settings_drop_the_lesson_s_predictions_and_say_why():
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["lesson"] = "static-vs-continuous"
    app.run()
    assert asked_now(app)
    app.number_input(key="batch_size").set_value(2).run()  # (the lesson has 3)
    assert not app.exception and asked_now(app) == []
    assert "This lesson's predictions are for its own settings" in "\n".join(c.value for c in app.caption)


def test_the_cli_refuses_a_file_whose_prediction_does_not_fit_its_run(tmp_path, capsys):
    path = tmp_path / "x.toml"
    path.write_text(BASE + '[[quiz]]\nask = "?"\nkind = "rows"\nstep = 99\n')
    assert cli_main(["run", str(path)]) == 2
    assert "x.toml: quiz[0].step: step 99 is not in this run (its steps: 0..1)" in capsys.readouterr().err


def test_next_lesson_asks_every_prediction_even_when_the_url_held_a_step():
    """The URL holds the stage's step (here 3, from a link); after Next lesson, lesson 2.1's prediction
    about step 0 is asked: only a link's own lesson skips the predictions before its step."""
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["lesson"] = "1.4"
    app.query_params["step"] = "3"
    app.run()
    assert app.query_params["step"] == "3"
    app.button(key="next_lesson").click().run()
    assert app.selectbox(key="scenario").value == "static-vs-continuous"
    assert asked_now(app) == [f"**Predict** (before step 0): {resolve_scenario('static-vs-continuous').quizzes[1].ask}"]


def test_a_long_prompt_shows_its_first_tokens_and_its_length_in_the_request_table():
    """Chunked prefill's L (4,000 tokens) filled a screen; the multi-turn chat's prompts (up to 20 tokens,
    each turn the last one's prompt and answer and a new question) are read whole."""
    from cblab.ui.frame.lesson_view import requests_table

    chunked = {row["request"]: row["prompt"] for row in requests_table(resolve_scenario("chunked-prefill"))}
    assert chunked["L"] == "[865, 395, 777, 912, 431, 42, 266, 989, …] (4,000 tokens)"
    assert chunked["A"] == "[1]"
    chat = requests_table(resolve_scenario("multi-turn-chat"))
    assert max(len(row["prompt"].strip("[]").split(", ")) for row in chat) == 20
