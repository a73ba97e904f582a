"""What a learner does on a lesson page, found from the widget keys the page shows.

The app keys a lesson's open prediction `quiz_<lesson>_<n>` and its button `check_<lesson>_<n>`
(`cblab/ui/course/course.py`), and the way on `next_lesson` (`cblab/ui/controls/controls.py`). The
classroom client finds their ids among the widgets of the last run (an id ends in `-<key>`).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.streamlit_client import Session


@dataclass(frozen=True)
class LessonKeys:
    answer: str  # the open prediction's widget key
    check: str  # its Check button's key


def lesson_keys(session: Session) -> LessonKeys:
    """The keys of the page's open prediction; LookupError when none is open."""
    answers = [key for key in session.widget_keys() if key.startswith("quiz_")]
    if len(answers) != 1:
        raise LookupError(f"expected one open prediction, the page shows {answers or 'none'}: {session.widget_keys()}")
    return LessonKeys(answers[0], answers[0].replace("quiz_", "check_", 1))


def an_answer(session: Session, key: str):
    """A value to type or choose in the prediction keyed `key`: 2 for a number, else the first option."""
    element = session.elements[session.widget(key)]
    return element.radio.options[0] if element.WhichOneof("type") == "radio" else 2
