"""The course in the app: lesson labels, predictions asked before their steps, and scores.

A lesson's predictions (`[[quiz]]`, answered from the run's log by `engine/lab/quizzes.py`)
are asked one at a time, earliest step first, above the stage. Until a prediction is
checked, the stage shows no step at or after the one it asks about (`cap`); its widget is keyed
`quiz_<lesson>_<n>` (the scenario name with `-` written `_`, and n counting from 1) and its
Check button `check_<lesson>_<n>`. Whether each was right is kept in session state, so a
chapter's score ("2/5 right") survives moving between lessons, and in the browser
(`cblab/ui/frame/page.py`), so it survives a reload. A link opened from outside that names a step
(`?lesson=...&step=7`, a session's first page) skips the lesson's predictions up to that
step, so old deep links still show what they showed; a lesson reached inside the app (Next
lesson, the picker, Back) asks them all. The "Predict first" switch turns predictions off.

The cap holds the session's step, the batch view, the URL, the Timeline and Metrics
cursors, and the stage, whose play, step and scrub stop short of it in the browser
(`render_stage(limit=...)`). The tabs that draw the whole run (Timeline, Metrics, Compare,
Event log) say that a prediction is open and wait for "Show the whole run anyway"
(`shows_whole_run`), so a learner does not meet the answer by opening a tab.
"""

from __future__ import annotations

import streamlit as st

from cblab.ui.runs.runs import Run
from engine.analysis.quiz import Question, grade
from engine.lab.course import Course, load_course
from engine.lab.measured_quizzes import MEASURED_KINDS, asked_from
from engine.lab.quizzes import Quiz
from engine.lab.toml_reader import ScenarioError

RESULTS = "quiz_results"  # session state: widget key -> answered right
GIVEN = "quiz_given"  # session state: widget key -> the answer checked
LAST_CHECKED = "quiz_last"  # session state: the widget key checked last (its verdict is shown)


def course() -> Course:
    """The built-in course; a broken course.toml is a message on the page, not a traceback."""
    try:
        return load_course()
    except ScenarioError as exc:
        st.error(str(exc))
        st.stop()


def lesson_label(name: str) -> str:
    lesson = course().lesson(name)
    return lesson.label if lesson is not None else name


def quiz_key(lesson: str, n: int) -> str:
    return f"quiz_{lesson.replace('-', '_')}_{n}"


def chapter_keys(chapter: int) -> list[str]:
    """The widget keys of every prediction in chapter `chapter` (0-based), in course order."""
    lessons = [lesson for lesson in course().lessons if lesson.chapter == chapter]
    return [quiz_key(lesson.name, n) for lesson in lessons for n in range(1, lesson.quizzes + 1)]


def chapter_score(chapter: int) -> tuple[int, int]:
    """(right, predictions) over chapter `chapter`."""
    results = st.session_state.get(RESULTS, {})
    keys = chapter_keys(chapter)
    return sum(results.get(key, False) for key in keys), len(keys)


def before_cap(step: int, cap: int | None) -> int:
    """`step`, held before the first step a prediction still hides (`cap`; None: nothing hidden)."""
    return step if cap is None else min(step, max(cap - 1, 0))


def render_reveal(reveal: str, cap: int | None, projector: bool = False, heading: str = "What happened.") -> None:
    """The lesson's "what happened" (`reveal`: the run's outcomes and numbers, which its predictions
    ask about), shown once no prediction is open, after its `heading`."""
    if cap is not None:
        st.caption("What happened in this run is told here once its predictions are checked.")
    elif projector:  # one click away, as the lesson is
        st.expander(heading.rstrip("."), key="reveal").write(reveal)
    else:
        st.markdown(f"**{heading}** {reveal}")


def shows_whole_run(tab: str, cap: int | None, run: Run) -> bool:
    """Whether a tab that draws the whole run (Timeline, Metrics, Compare, Event log) may draw it:
    always, unless a prediction is still open; then only once the learner asks, per tab and lesson,
    since the answer is in it."""
    if cap is None:
        return True
    st.info(
        f"A prediction about step {cap} is still open above. This tab shows the whole run, and with it the "
        "answer: check the prediction first, or show the run anyway."
    )
    return st.toggle("Show the whole run anyway", key=f"whole_run_{tab}_{run.digest[:8]}")


def render_predictions(run: Run, lesson: str, projector: bool = False) -> int | None:
    """Ask the lesson's next prediction and show the answered ones; return the first step not yet shown.
    For a projector the verdict leaves out the step's narration, which the stage shows beside the grid."""
    split = _predictions(run, lesson)
    if split is None:
        return None
    answered, unanswered = split
    pending = min(unanswered, key=lambda asked: asked[2].step, default=None)  # the earliest step first
    _render_latest(answered, projector)
    if pending is not None:
        _render_question(*pending, projector=projector)
    right = sum(st.session_state[RESULTS][key] for key, _, _ in answered)
    st.caption(f"This lesson: {right}/{len(run.scenario.quizzes)} right" + _chapter_caption(lesson))
    return pending[2].step if pending is not None else None


def render_checked(run: Run, lesson: str, projector: bool = False) -> bool:
    """The last checked prediction about `run`, asking none: the lesson's own run, while the sidebar
    shows another. Return whether none is left open, so the lesson's reveal may show."""
    split = _predictions(run, lesson)
    if split is None:
        return True
    answered, unanswered = split
    _render_latest(answered, projector)
    return not unanswered


def _predictions(run: Run, lesson: str) -> tuple[list, list] | None:
    """The lesson's predictions about `run`, as (answered, still open) lists of (widget key, quiz,
    question); a link's skipped ones are in neither. None when none is asked (predictions off,
    none in the lesson, or none fits the run: said on the page)."""
    scenario = run.scenario
    if scenario is None or not scenario.quizzes or not st.session_state.get("predict", True):
        return None
    try:
        asked = run.questions
    except ScenarioError as exc:  # a file whose question does not fit its own run (settings drop the questions)
        st.error(f"This file's predictions do not fit its run, so none is asked: {exc}")
        return None
    results = st.session_state.setdefault(RESULTS, {})
    skip_to = _skipped_by_link(lesson)
    answered, unanswered = [], []
    for n, (quiz, q) in enumerate(zip(scenario.quizzes, asked), start=1):
        key = quiz_key(lesson, n)
        if key in results:
            answered.append((key, quiz, q))
        elif q.step > skip_to:
            unanswered.append((key, quiz, q))
    return answered, unanswered


def _render_latest(answered: list, projector: bool) -> None:
    """The verdict on the prediction checked last (of `answered`), if any."""
    if answered:
        last = st.session_state.get(LAST_CHECKED)
        _render_last(*next((a for a in answered if a[0] == last), answered[-1]), projector=projector)


def _skipped_by_link(lesson: str) -> int:
    """The step before which a link opened from outside skips this lesson's predictions (-1: none).
    Only the session's first page counts (`cblab/ui/controls/url.py`); a lesson reached inside the app asks all."""
    opened, step = st.session_state.get("link", (None, None))
    found = course().lesson(opened) if opened is not None else course().lessons[0]  # (no lesson named: 1.1)
    return step if step is not None and found is not None and lesson == found.name else -1


def _chapter_caption(lesson: str) -> str:
    found = course().lesson(lesson)
    if found is None:
        return ""
    right, total = chapter_score(found.chapter)
    return f" · chapter {found.chapter + 1}: {right}/{total} right"


def _render_question(key: str, quiz: Quiz, q: Question, projector: bool) -> None:
    """The question, its answer widget and the Check button, on one compact row."""
    with st.container(border=True):
        ask, answer, check = st.columns([4, 3, 3] if projector else [5, 4, 2], vertical_alignment="center")
        when = asked_from(quiz.kind) if quiz.kind in MEASURED_KINDS else f"before step {q.step}"
        ask.markdown(f"**Predict** ({when}): {quiz.ask}")
        if q.options is None:
            answer.number_input(
                "Your answer",
                min_value=0,
                value=None,
                step=1,
                key=key,
                placeholder="a number",
                label_visibility="collapsed",
            )
        else:
            answer.radio("Your answer", q.options, index=None, key=key, horizontal=True, label_visibility="collapsed")
        check.button(
            "Check prediction",
            key=key.replace("quiz_", "check_", 1),
            on_click=_check,
            args=(key, q),
            disabled=st.session_state.get(key) is None,
        )


def _check(key: str, q: Question) -> None:
    given = st.session_state.get(key)
    st.session_state.setdefault(RESULTS, {})[key] = grade(q, given)
    st.session_state.setdefault(GIVEN, {})[key] = given
    st.session_state[LAST_CHECKED] = key
    st.session_state.step = q.step  # the answered step is shown next
    st.session_state.revealed = (key, q.step)  # and a stage already on the page moves there


def _render_last(key: str, quiz: Quiz, q: Question, projector: bool) -> None:
    """The last checked prediction: right or wrong, and why (the fact, the teacher's why, the step's narration)."""
    right = st.session_state[RESULTS][key]
    given = st.session_state.get(GIVEN, {}).get(key)
    verdict = "Right." if right else f"Not quite: you said {given}, the answer is {q.answer}."
    fact, *narration = q.explanation
    text = f"{quiz.ask} **{verdict}** {fact} {quiz.why}".strip()
    if narration and not projector:
        text += f"\n\nStep {q.step}: " + " ".join(narration)
    (st.success if right else st.error)(text, icon=":material/check_circle:" if right else ":material/cancel:")


MAX_GIVEN_TEXT = 200  # characters of a kept answer (the options are short)


def kept_scores() -> dict[str, list]:
    """The session's checked predictions, as the browser keeps them: widget key -> [right, answer]."""
    given = st.session_state.get(GIVEN, {})
    return {key: [right, given.get(key)] for key, right in st.session_state.get(RESULTS, {}).items()}


def restore_scores(saved: object) -> None:
    """Take the predictions a browser kept (`kept_scores`) into the session (`merge_scores`)."""
    results, given = st.session_state.setdefault(RESULTS, {}), st.session_state.setdefault(GIVEN, {})
    merge_scores(saved, results, given, course_keys())


def merge_scores(saved: object, results: dict, given: dict, keys: list[str]) -> None:
    """Merge kept predictions into `results` and `given`, for the questions `keys` only: anything else
    in them (another version's keys, a hand-edited store) is ignored, and what the session has
    already checked wins. Looks at no more entries than there are `keys`."""
    if not isinstance(saved, dict):
        return
    for key in keys:
        entry = saved.get(key)
        if key in results or not isinstance(entry, list) or len(entry) != 2 or type(entry[0]) is not bool:
            continue
        answer = entry[1]
        if type(answer) in (int, float) or type(answer) is str and len(answer) <= MAX_GIVEN_TEXT:
            results[key], given[key] = entry[0], answer


def course_keys() -> list[str]:
    """The widget key of every prediction in the course."""
    return [key for chapter in range(len(course().chapters)) for key in chapter_keys(chapter)]


def render_scores() -> None:
    """Every chapter with a prediction checked, and its score (for the sidebar)."""
    results = st.session_state.get(RESULTS, {})
    if not results:
        return
    lines = [
        f"{i + 1}. {chapter.title}: {'{}/{}'.format(*chapter_score(i))} right"
        for i, chapter in enumerate(course().chapters)
        if any(key in results for key in chapter_keys(i))
    ]
    st.caption("Your predictions\n\n" + "\n\n".join(lines))
